// An FTRL file as a training source, end to end in Node (the `pact train` platform): a random
// full-vocabulary Qwen3 folder (Qwen3's real tokenizer, a 4,096-token window, hidden 32, 2
// layers) and the two hand-written FTRL lines of ftrlTestLines.ts (not benchmark data; real
// FTRL prompts are 2.6k–5k tokens, too long for a step in seconds): line 1 trains, line 2 is
// held out. One `ftrl` step runs; the forced tool call of rollout 0 is answered by the task's
// Python code in Pyodide (an output only Python writes); rewards are finite and the calling
// rollout's is compute_solve_f1's; the held-out evaluation runs on line 2 only. Then what is
// refused before training: a trace recipe, and prompts over maxPromptTokens (with how many fit).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../model/backend';
import { getNodeWasmPaths } from '../model/qwen3/node';
import { resolveConfig, type TrainConfigInput } from '../recipes/config';
import type { PolicySampler } from '../recipes/types';
import '../recipes/index';
import { createNodePlatform } from './nodeRun';
import { createRunTrainer, prepareRunAssetsWith } from './runAssets';
import { writeRandomFtrlFixture } from './ftrlTestLines';
import type { LanguageRoutingExecutor } from '../envs/ftrl/languageExecutor';

let dir: string;
let folder: string;
let tasksFile: string;

beforeAll(async () => {
  await selectBackend('wasm', { wasmPaths: getNodeWasmPaths() });
  ({ dir, folder, tasksFile } = await writeRandomFtrlFixture('pact-ftrl-train-'));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function ftrlConfig(input: TrainConfigInput = {}) {
  return resolveConfig({
    recipe: 'ftrl',
    seed: 3,
    model: { init: folder },
    tasks: { source: 'ftrl', path: tasksFile, trainLines: '1', testLines: '2', nTrain: 1, nTest: 1 },
    steps: 1,
    batchPrompts: 1,
    miniBatchPrompts: 1,
    rolloutsPerPrompt: 2,
    maxTurns: 2,
    maxPromptTokens: 1024,
    maxResponseTokens: 64,
    ...input,
  });
}

const CALL = '<tool_call>\n{"name": "country_capital", "arguments": {"code": "FR"}}\n</tool_call><|im_end|>';

describe('training on an FTRL file (Node platform, random full-vocabulary Qwen3)', () => {
  it('runs a step whose Python tools run in Pyodide, with finite rewards, and evaluates on the held-out line', async () => {
    const logs: string[] = [];
    const config = ftrlConfig();
    const assets = await prepareRunAssetsWith(createNodePlatform(), config, { log: (l) => logs.push(l) });
    expect(assets.taskSplit!.statement).toMatch(
      /^Trained on lines 1 of .*tasks\.jsonl \(1 tasks\); evaluated on lines 2 of .*tasks\.jsonl \(1 tasks\), disjoint/,
    );
    expect(logs).toContain(assets.taskSplit!.statement);
    expect(assets.trainPrompts.map((p) => p.kind === 'tool-use' && p.task.answer)).toEqual(['Paris']);
    expect(assets.testPrompts.map((p) => p.kind === 'tool-use' && p.task.answer)).toEqual(['6,650']);
    expect(assets.policy.tokenizer.vocabSize).toBeGreaterThan(150_000); // Qwen3's own tokenizer, not a pruned one
    const tokenizer = assets.policy.tokenizer;
    let firstTurn = true;
    // Rollout 0's first turn is a scripted call (a random policy would rarely write one); the rest is sampled.
    const wrapPolicy = (policy: PolicySampler): PolicySampler => ({
      generate: async (prompts, opts) => {
        const rows = await policy.generate(prompts, opts);
        if (firstTurn) {
          firstTurn = false;
          const tokens = tokenizer.encode(CALL);
          rows[0] = {
            tokens,
            logprobs: tokens.map(() => -1),
            samplingLogprobs: tokens.map(() => -1),
            finishReason: 'stop',
          };
        }
        return rows;
      },
    });
    const trainer = createRunTrainer(config, assets, { wrapPolicy });
    try {
      const m = await trainer.step();
      const [group] = trainer.lastGroups;
      const call = group.rollouts[0].callOutputs[0];
      // The task's Python code answered: sorted() and an f-string, in Pyodide.
      expect(call).toMatchObject({ name: 'country_capital' });
      expect(call.output).toContain('Paris (of BE, DE, FR)');
      expect((assets.executor as LanguageRoutingExecutor).pythonCounts.calls).toBeGreaterThanOrEqual(1);
      const rewards = trainer.lastScores[0]!.rewards;
      expect(rewards).toHaveLength(2);
      for (const r of rewards) expect(Number.isFinite(r)).toBe(true);
      // compute_solve_f1 of the calling turn: 2·1 solved / (1 call + 1) = 1, then its second turn's.
      expect(trainer.lastScores[0]!.rewardParts!.solve_r[0]).toBe(1);
      expect(Number.isFinite(m.loss)).toBe(true);
      expect(Number.isFinite(m.grad_norm)).toBe(true);
      const e = await trainer.evaluate();
      expect(e.nTasks).toBe(1);
      const evalTask = trainer.lastEvalGroups[0].prompt;
      expect(evalTask.kind === 'tool-use' && evalTask.task.answer).toBe('6,650'); // the held-out line, never the trained one
      expect(Number.isFinite(e['eval/solve_f1'])).toBe(true);
    } finally {
      trainer.dispose();
      assets.policy.model.dispose();
      assets.executor.dispose();
    }
  }, 120_000);

  it('refuses prompts over maxPromptTokens before training, naming how many fit', async () => {
    const run = prepareRunAssetsWith(createNodePlatform(), ftrlConfig({ maxPromptTokens: 128 }));
    await expect(run).rejects.toThrow(
      /^config\.tasks: 0 of 2 FTRL tasks fit maxPromptTokens 128 \(train 0 of 1, held out 0 of 1\); the longest prompt is \d+ tokens; set maxPromptTokens to at least \d+ \(folder .*'s window of 4,096/,
    );
  }, 60_000);

  it('refuses a recipe that needs expert traces, before loading the model', async () => {
    const platform = createNodePlatform();
    let loaded = false;
    platform.loadSourceTokenizer = async () => {
      loaded = true;
      throw new Error('not reached');
    };
    await expect(prepareRunAssetsWith(platform, ftrlConfig({ recipe: 'pact' }))).rejects.toThrow(
      /^config\.recipe: recipe "pact" cannot train on FTRL tasks: it needs expert traces h\*/,
    );
    await expect(prepareRunAssetsWith(platform, ftrlConfig({ recipe: 'matchtir' }))).rejects.toThrow(
      /^config\.recipe: recipe "matchtir" cannot train on FTRL tasks: .*1 of 1 train tasks carry none/,
    );
    expect(loaded).toBe(false);
  });
});
