// An FTRL file as a training source, end to end in Node (the `pact train` platform): a random
// full-vocabulary Qwen3 folder (Qwen3's real tokenizer, a 4,096-token window, hidden 32, 2
// layers) and the two hand-written FTRL lines of ftrlTestLines.ts (not benchmark data; real
// FTRL prompts are 2.6k–5k tokens, too long for a step in seconds): line 1 trains, line 2 is
// held out. One `ftrl` step runs; the forced tool call of rollout 0 is answered by the task's
// Python code in Pyodide (an output only Python writes); rewards are finite and the calling
// rollout's is compute_solve_f1's; the held-out evaluation runs on line 2 only. Then what is
// refused before training: a trace recipe, and prompts over maxPromptTokens (with how many fit).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../model/backend';
import { getNodeWasmPaths } from '../model/qwen3/node';
import type { Qwen3Config } from '../model/qwen3/config';
import { createRandomQwen3Tensors, writeQwen3Folder } from '../model/weights/testFolders';
import { loadQwen3TokenizerFromPackage } from '../model/tokenizer/nodeLoader';
import { resolveConfig, type TrainConfigInput } from '../recipes/config';
import type { PolicySampler } from '../recipes/types';
import '../recipes/index';
import { createNodePlatform } from './nodeRun';
import { createRunTrainer, prepareRunAssetsWith } from './runAssets';
import { HAND_WRITTEN_FTRL } from './ftrlTestLines';
import { main } from '../cli/main';
import type { LanguageRoutingExecutor } from '../envs/ftrl/languageExecutor';

/**
 * Qwen3's vocabulary without the padding rows of Qwen/Qwen3-0.6B (151,936): a random model
 * samples those ids (no token behind them), which the tokenizer cannot decode.
 */
const FULL_VOCAB: Omit<Qwen3Config, 'vocab_size'> = {
  hidden_size: 32,
  intermediate_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 16,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 4096,
  initializer_range: 0.02,
};

let dir: string;
let folder: string;
let tasksFile: string;

beforeAll(async () => {
  await selectBackend('wasm', { wasmPaths: getNodeWasmPaths() });
  dir = mkdtempSync(path.join(os.tmpdir(), 'pact-ftrl-train-'));
  folder = path.join(dir, 'qwen3-random');
  const config = { ...FULL_VOCAB, vocab_size: (await loadQwen3TokenizerFromPackage()).vocabSize };
  await writeQwen3Folder(folder, { config, tensors: await createRandomQwen3Tensors(config, 5) });
  tasksFile = path.join(dir, 'tasks.jsonl');
  writeFileSync(tasksFile, HAND_WRITTEN_FTRL);
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

  it('pact train --config: an FTRL source trains, evaluates and writes task-split.json beside metrics.jsonl', async () => {
    const experiment = {
      name: 'ftrl-cli',
      base: {
        recipe: 'ftrl',
        model: { init: folder },
        tasks: { source: 'ftrl', path: tasksFile, trainLines: '2', testLines: '1' },
        batchPrompts: 1,
        miniBatchPrompts: 1,
        rolloutsPerPrompt: 2,
        maxTurns: 2,
        maxPromptTokens: 512,
        maxResponseTokens: 16,
        steps: 1,
        evalEvery: 1,
        checkpointEvery: 0,
      },
    };
    const file = path.join(dir, 'ftrl-cli.json');
    writeFileSync(file, JSON.stringify(experiment));
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['train', '--config', file, '--out', path.join(dir, 'runs'), '--threads', '1'], {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    });
    expect(err.filter((l) => l.includes('failed'))).toEqual([]);
    expect(code).toBe(0);
    const runDir = path.join(dir, 'runs', 'ftrl-cli', 'ftrl-s1');
    const split = JSON.parse(readFileSync(path.join(runDir, 'task-split.json'), 'utf8'));
    expect(split).toMatchObject({ trainFile: tasksFile, testFile: tasksFile, trainLines: [2], testLines: [1] });
    expect(out.join('\n')).toContain(
      `Trained on lines 2 of ${tasksFile} (1 tasks); evaluated on lines 1 of ${tasksFile}`,
    );
    const rows = readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.type)).toEqual(['step', 'eval']);
    expect(Number.isFinite(rows[0].loss)).toBe(true);
    expect(rows[1].nTasks).toBe(1);
  }, 120_000);

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
