/**
 * `pact export verl` end to end on a small run: the data files read back (hyparquet) equal to
 * the tasks the app generates for the run, in the app's data order with its gates and
 * schedules; the trainer YAML carries the run's hyperparameters; the exported tool server
 * answers every call as the app's RolloutEnv does (and through the Python client, which
 * also recomputes each row's gate from the seed, when a torch python is present).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { sampleStepGates } from '../../core/gates';
import { createRng, permutation } from '../../core/rng';
import { toolCallScale } from '../../core/schedules';
import { RolloutEnv } from '../../envs/rollout';
import { InProcessExecutor } from '../../envs/sandbox/inProcessExecutor';
import type { Task } from '../../envs/types';
import { resolveConfig } from '../../recipes/config';
import { formatToolCallBlock, renderPrivilegedTrace } from '../../traces/render';
import { exportVerl, generateRunTasks, type ExportResult } from './exportVerl';
import { askToolServer, findVerlTestPython, readParquet, runPythonCheck, VERL_ROOT } from './testPython';

const EXPERIMENT = {
  name: 'tiny',
  base: {
    recipe: 'pact',
    tasks: { source: 'generated', trainSeed: 4, testSeed: 6, nTrain: 5, nTest: 3, categories: ['multi_hop'] },
    steps: 7,
    batchPrompts: 2,
    miniBatchPrompts: 1,
    rolloutsPerPrompt: 4,
    lr: 3e-5,
    klCoef: 0.002,
    clipEps: 0.25,
    maxTurns: 5,
    maxResponseTokens: 512,
    pact: { anchorProb: 0.4, betaSft: 0.2, toolCallScaleStart: 0.9, toolCallScaleEnd: 0.1 },
  },
  runs: [{ name: 'matchtir', recipe: 'matchtir' }, { name: 'pact' }],
  seeds: [3],
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = Record<string, any>;

let dir: string;
let result: ExportResult;
let trainRows: Row[];
let testRows: Row[];
let sftRows: Row[];

beforeAll(async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'pact-export-'));
  const configPath = path.join(root, 'tiny.json');
  writeFileSync(configPath, JSON.stringify(EXPERIMENT));
  dir = path.join(root, 'out');
  result = await exportVerl({ configPath, outDir: dir, run: 'pact' });
  trainRows = await readParquet<Row>(path.join(dir, 'data/train.parquet'));
  testRows = await readParquet<Row>(path.join(dir, 'data/test.parquet'));
  sftRows = await readParquet<Row>(path.join(dir, 'data/sft.parquet'));
}, 120_000);

describe('pact export verl', () => {
  it('exports the run named, and its tasks are the ones the app generates for it', async () => {
    expect(result.run.id).toBe('pact-s3');
    const config = resolveConfig({ ...EXPERIMENT.base, seed: 3 });
    const again = await generateRunTasks(config);
    expect(result.trainTasks).toEqual(again.train);
    expect(result.testTasks).toEqual(again.test);
    expect(again.train.length).toBeGreaterThan(0);
  });

  it('train rows read back equal to the tasks, in the app order, with its gates and λa', () => {
    const config = resolveConfig({ ...EXPERIMENT.base, seed: 3 });
    const train = result.trainTasks;
    expect(trainRows.length).toBe(config.steps * config.batchPrompts);
    const orders = new Map<number, number[]>();
    trainRows.forEach((row, r) => {
      const s = Math.floor(r / config.batchPrompts);
      const j = r % config.batchPrompts;
      const epoch = Math.floor(r / train.length);
      if (!orders.has(epoch)) orders.set(epoch, permutation(train.length, createRng(3).split(`data/epoch${epoch}`)));
      const index = orders.get(epoch)![r % train.length];
      const task: Task = train[index];
      const e = row.extra_info;
      expect(Number(e.index)).toBe(index);
      expect(Number(e.step)).toBe(s + 1);
      expect(Number(e.position)).toBe(j);
      expect(e.task_id).toBe(task.id);
      expect(row.data_source).toBe('pact/generated');
      expect(row.prompt).toEqual([
        { role: 'system', content: expect.any(String) },
        { role: 'user', content: expect.stringContaining(task.question) },
      ]);
      expect(JSON.parse(row.reward_model.ground_truth)).toEqual({
        answer: task.answer,
        gold_calls: task.goldCalls,
        unsolved_set: task.unsolvedSet,
      });
      expect(JSON.parse(e.tools)).toEqual(task.tools);
      expect(JSON.parse(e.implementations)).toEqual(task.implementations);
      expect(Number(e.tool_timeout_ms)).toBe(2000); // the sandboxes' limit for the stubs
      const trace = JSON.parse(e.expert_trace);
      expect(trace.spans.map((x: { text: string }) => x.text).join('')).toBe(
        renderPrivilegedTrace(task.expertTrace!).text,
      );
      expect(trace.prefix_chunk_counts).toEqual(task.expertTrace!.turns.map((t) => t.prefixChunkCounts));
      expect(Number(e.pact_gate)).toBe(sampleStepGates(3, s + 1, config.batchPrompts, 0.4)[j]);
      expect(e.lambda_a).toBe(toolCallScale(s + 1, { start: 0.9, end: 0.1, horizon: config.steps }));
    });
    expect(new Set(trainRows.map((r) => Number(r.extra_info.pact_gate)))).toEqual(new Set([0, 1]));
  });

  it('held-out and SFT rows read back equal to the tasks', () => {
    expect(testRows.map((r) => r.extra_info.task_id)).toEqual(result.testTasks.map((t) => t.id));
    testRows.forEach((row, i) => {
      const task = result.testTasks[i];
      expect(row.extra_info.split).toBe('test');
      expect(JSON.parse(row.reward_model.ground_truth).answer).toBe(task.answer);
      expect(JSON.parse(row.extra_info.tools)).toEqual(task.tools);
    });
    expect(sftRows.length).toBe(result.trainTasks.length);
    sftRows.forEach((row, i) => {
      const task = result.trainTasks[i];
      const assistant = row.messages.filter((m: { role: string }) => m.role === 'assistant');
      expect(assistant.at(-1).content).toContain(`<answer>${task.expertTrace!.finalAnswer}</answer>`);
      expect(JSON.parse(row.tools_json)).toEqual(task.tools);
    });
    const jsonRows = readFileSync(path.join(dir, 'data/train.json'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(jsonRows.map((r) => r.extra_info.task_id)).toEqual(trainRows.map((r) => r.extra_info.task_id));
  });

  it('the trainer YAML carries the run hyperparameters one by one', () => {
    const yaml = readFileSync(path.join(dir, 'config/pact_trainer.yaml'), 'utf8');
    for (const line of [
      'train_batch_size: 2',
      'ppo_mini_batch_size: 1',
      '    n: 4',
      'lr: 0.00003',
      'clip_ratio_low: 0.25',
      'kl_loss_coef: 0.002',
      'adv_estimator: "pact_matchtir_sum"',
      'loss_mode: "pact"',
      'total_training_steps: 7',
      'max_assistant_turns: 5',
      'response_length: 512',
      'anchor_prob: 0.4',
      'beta_sft: 0.2',
      'tool_call_scale_start: 0.9',
      'tool_call_scale_end: 0.1',
      'anneal_horizon: 7',
      'kl_context: "prompt"',
      'prefix_reveal: "remove"',
      'shuffle: false',
    ])
      expect(yaml).toContain(line);
    expect(yaml).toContain('reward_kwargs:\n    pact: "${pact}"');
    const readme = readFileSync(path.join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('bash launch.sh');
    expect(readme).toContain('Not carried over');
  });

  it('the exported tool server answers as the app environment does (and through the Python client)', async () => {
    const { spawn } = await import('node:child_process');
    const task = result.trainTasks[0];
    const gold = task.goldCalls ?? [];
    const calls = [
      ...gold,
      { name: gold[0].name, arguments: {} },
      { name: gold[0].name, arguments: { ...gold[0].arguments, unexpected: 1 } },
      { name: 'no_such_tool', arguments: {} },
      ...task.tools.map((t) => ({
        name: t.function.name,
        arguments: Object.fromEntries(Object.keys(t.function.parameters.properties).map((k) => [k, 'Zzyzx'])),
      })),
    ];
    // The app's answers: RolloutEnv.step on a turn holding the call.
    const env = new RolloutEnv({ executor: new InProcessExecutor(), renderChat: () => '', maxTurns: 10 });
    const expected: [boolean, string][] = [];
    for (const call of calls) {
      env.reset(task);
      const { turn } = await env.step(`<think>x</think>${formatToolCallBlock(call)}<|im_end|>`);
      expected.push([turn.outputs[0].ok, turn.outputs[0].output]);
    }
    expect(new Set(expected.map((e) => e[0]))).toEqual(new Set([true, false]));
    // The server, spoken to directly.
    const server = spawn('node', [path.join(dir, 'pact_verl/tool_server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
    const answers = await askToolServer(
      server,
      calls.map((c) => ({ ...c, tools: task.tools, implementations: task.implementations })),
    );
    server.stdin.end();
    expect(answers).toEqual(expected);

    const py = findVerlTestPython();
    if (!py.python) {
      console.warn(`exportVerl.test.ts: Python client not checked: ${py.reason}`);
      return;
    }
    const out = runPythonCheck(py.python, {
      tools: {
        server: path.join(dir, 'pact_verl/tool_server.mjs'),
        calls: calls.map((c) => ({ ...c, tools: task.tools, implementations: task.implementations })),
      },
      exportedRows: { trainJson: path.join(dir, 'data/train.json'), seed: 3, batchPrompts: 2, q: 0.4 },
    });
    expect(out.tools).toEqual(expected);
    expect(out.exportedGates).toEqual(out.exportedRowGates);
    expect(out.exportedRowGates).toEqual(trainRows.map((r) => Number(r.extra_info.pact_gate)));
  }, 60_000);

  it("composes over VeRL's own ppo_trainer as Hydra would: every key it sets is one VeRL has (two added on purpose), and VeRL reads the run's values", () => {
    const py = findVerlTestPython();
    if (!py.python) {
      console.warn(`exportVerl.test.ts: composition not checked: ${py.reason}`);
      return;
    }
    const script = fileURLToPath(new URL('./python/tests/check_compose.py', import.meta.url));
    const configDir = path.join(VERL_ROOT, 'verl/trainer/config');
    const compose = (yamlPath: string) => {
      const r = spawnSync(py.python!, [script, configDir, yamlPath], { encoding: 'utf8', maxBuffer: 64 << 20 });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { defaults: string[]; not_in_verl: string[]; config: Row };
    };
    const yamlPath = path.join(dir, 'config/pact_trainer.yaml');
    const got = compose(yamlPath);
    expect(got.defaults).toEqual(['ppo_trainer', '_self_']);
    // The only keys VeRL's schema lacks: the run's PACT block (read by pact_verl) and the reward
    // manager's kwargs (VeRL's main_ppo reads them with reward_model.get("reward_kwargs", {})).
    expect(got.not_in_verl).toEqual(['pact', 'reward_model.reward_kwargs']);
    const c = got.config;
    const actor = c.actor_rollout_ref.actor;
    // EXPERIMENT.base, as VeRL's trainer reads it after composition.
    expect(actor.optim.lr).toBe(3e-5);
    expect([actor.clip_ratio_low, actor.clip_ratio_high, actor.kl_loss_coef]).toEqual([0.25, 0.25, 0.002]);
    expect(actor.policy_loss.loss_mode).toBe('pact');
    expect(c.actor_rollout_ref.rollout.n).toBe(4);
    expect(c.actor_rollout_ref.rollout.response_length).toBe(512);
    expect(c.actor_rollout_ref.rollout.multi_turn.max_assistant_turns).toBe(5);
    expect([c.data.train_batch_size, c.data.shuffle, c.trainer.total_training_steps]).toEqual([2, false, 7]);
    expect(c.algorithm.adv_estimator).toBe('pact_matchtir_sum');
    // ${pact} resolved: the reward manager gets the run's PACT block itself.
    expect(c.reward_model.reward_kwargs.pact).toEqual(c.pact);
    expect(c.pact).toMatchObject({ anchor_prob: 0.4, beta_sft: 0.2, seed: 3 });
    // What the export leaves alone keeps VeRL's default (read from VeRL's file, not restated here).
    const verlDefault = compose(path.join(configDir, '_generated_ppo_trainer.yaml')).config;
    expect(actor.ppo_micro_batch_size_per_gpu).toEqual(
      verlDefault.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu,
    );
    expect(c.critic.optim.lr).toEqual(verlDefault.critic.optim.lr);
    // A misspelt key is caught: it would merge in silently and VeRL would never read it.
    const typo = path.join(mkdtempSync(path.join(tmpdir(), 'pact-compose-')), 'pact_trainer.yaml');
    writeFileSync(typo, readFileSync(yamlPath, 'utf8').replace('kl_loss_coef:', 'kl_loss_coeff:'));
    expect(compose(typo).not_in_verl).toEqual([
      'actor_rollout_ref.actor.kl_loss_coeff',
      'pact',
      'reward_model.reward_kwargs',
    ]);
  }, 60_000);

  it("VeRL's main_ppo way of building the reward manager (**reward_model.reward_kwargs) hands it the run's reward settings", () => {
    const py = findVerlTestPython();
    if (!py.python) {
      console.warn(`exportVerl.test.ts: reward manager not built: ${py.reason}`);
      return;
    }
    // As verl/trainer/main_ppo.py: load_reward_manager(config, tokenizer, num_examine=0,
    // **config.reward_model.get("reward_kwargs", {})), which passes them to the class.
    const script = `
import json, sys
from omegaconf import OmegaConf
sys.path.insert(0, sys.argv[1])
from pact_verl.reward_manager import PactTurnRewardManager
cfg = OmegaConf.load(sys.argv[1] + "/config/pact_trainer.yaml")
m = PactTurnRewardManager(tokenizer=None, num_examine=0, compute_score=None, reward_fn_key="data_source",
                          **cfg.reward_model.get("reward_kwargs", {}))
print(json.dumps({"kind": m.kind, "options": dict(m.options)}, default=lambda o: OmegaConf.to_container(o, resolve=True)))
`;
    const r = spawnSync(py.python, ['-c', script, dir], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const got = JSON.parse(r.stdout) as { kind: string; options: Record<string, unknown> };
    const config = resolveConfig({ ...EXPERIMENT.base, seed: 3 });
    expect(got.kind).toBe('matchtir');
    expect(got.options).toMatchObject({
      reward: 'matchtir',
      matching: config.matching,
      unmatched_penalty: config.unmatchedPenalty,
      toolrl_rule: config.toolrlRule,
      seed: 3,
    });
  }, 60_000);
});
