/**
 * `pact train` end to end on a tiny policy: the testKit's 2-layer Qwen3 saved as a Hugging
 * Face folder (model.init = its path), one matchtir step on the wasm backend, then the
 * files it must write: metrics.jsonl (finite step metrics, an eval line) and a checkpoint
 * folder that reads back into a TrainerState at the same step.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '../../model/qwen3/tf';
import { useCpuBackend } from '../../model/qwen3/train/testBackend';
import { createNodeFolderReader } from '../../model/weights/nodeFiles';
import { createRandomQwen3Tensors, writeQwen3Folder } from '../../model/weights/testFolders';
import { readCheckpointState } from '../../recipes/checkpoint';
import { createTinySetup } from '../../recipes/testKit';
import type { StepMetrics } from '../../recipes/types';
import { main } from '../main';
import { formatMetricsLine, formatProgress } from './train';

let dir: string;
const out: string[] = [];
const err: string[] = [];
const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };

beforeAll(async () => {
  await useCpuBackend();
  dir = await mkdtemp(path.join(os.tmpdir(), 'pact-train-'));
  const setup = await createTinySetup();
  const tensors = await createRandomQwen3Tensors(setup.modelConfig, 3); // = setup.createModel(3)
  await writeQwen3Folder(path.join(dir, 'policy'), { config: setup.modelConfig, tensors, prunedVocab: setup.tokenizer.toMapping() });
  const experiment = {
    name: 'tiny',
    base: {
      recipe: 'matchtir',
      model: { init: path.join(dir, 'policy') },
      tasks: { nTrain: 2, nTest: 1 },
      batchPrompts: 1,
      miniBatchPrompts: 1,
      rolloutsPerPrompt: 2,
      maxTurns: 2,
      maxPromptTokens: 1024,
      maxResponseTokens: 12,
      evalEvery: 1,
      checkpointEvery: 0,
    },
  };
  await writeFile(path.join(dir, 'tiny.json'), JSON.stringify(experiment));
}, 60_000);
afterAll(async () => {
  await tf.setBackend('cpu');
  await rm(dir, { recursive: true, force: true });
});

describe('pact train', () => {
  it('trains the runs of an experiment file and writes metrics.jsonl and a checkpoint', async () => {
    const code = await main(['train', '--config', path.join(dir, 'tiny.json'), '--steps', '1', '--backend', 'wasm', '--out', path.join(dir, 'runs')], io);
    expect(err).toEqual([]);
    expect(code).toBe(0);
    const runDir = path.join(dir, 'runs', 'tiny', 'matchtir-s1');
    const lines = (await readFile(path.join(runDir, 'metrics.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(['step', 'eval']);
    for (const key of ['reward', 'loss', 'grad_norm', 'entropy', 'kl', 'completions/mean_length']) expect(Number.isFinite(lines[0][key]), key).toBe(true);
    expect(lines[0]).toMatchObject({ run: 'matchtir-s1', step: 1, recipe: 'matchtir' });
    expect(lines[1]['eval/solve_f1']).toBeGreaterThanOrEqual(0);
    const state = await readCheckpointState(createNodeFolderReader(path.join(runDir, 'checkpoint-1')));
    expect([state.step, state.dataCursor, state.recipe]).toEqual([1, 1, 'matchtir']);
    expect(state.optimizer.some((a) => a.name.endsWith('.exp_avg_sq'))).toBe(true);
    expect(out.some((l) => l.includes('[####################] 1/1 matchtir-s1'))).toBe(true);
  }, 120_000);

  it('--steps 0 evaluates the starting policy and trains nothing', async () => {
    const code = await main(['train', '--config', path.join(dir, 'tiny.json'), '--steps', '0', '--backend', 'wasm', '--out', path.join(dir, 'runs0')], io);
    expect(code).toBe(0);
    const runDir = path.join(dir, 'runs0', 'tiny', 'matchtir-s1');
    const lines = (await readFile(path.join(runDir, 'metrics.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.type, l.step])).toEqual([['eval', 0]]);
    const state = await readCheckpointState(createNodeFolderReader(path.join(runDir, 'checkpoint-0')));
    expect([state.step, state.dataCursor]).toEqual([0, 0]);
  }, 120_000);

  it('names what is wrong with its flags and files', async () => {
    const errors: string[] = [];
    const sink = { out: () => {}, err: (l: string) => errors.push(l) };
    expect(await main(['train'], sink)).toBe(2);
    expect(errors.at(-1)).toMatch(/--config is required/);
    expect(await main(['train', '--config', path.join(dir, 'missing.json')], sink)).toBe(2);
    expect(errors.at(-1)).toMatch(/cannot read experiment file/);
    expect(await main(['train', '--config', path.join(dir, 'tiny.json'), '--steps', 'x'], sink)).toBe(2);
    expect(errors.at(-1)).toMatch(/--steps must be an integer/);
  });

  it('writes NaN as null and draws the progress bar from the step count', () => {
    expect(formatMetricsLine({ a: Number.NaN, b: 1.5, c: Infinity })).toBe('{"a":null,"b":1.5,"c":null}');
    const m = { step: 3, reward: 0.5, loss: 0.25, kl: 0.001, grad_norm: 1, 'completions/mean_length': 12, 'tokens/s': 40, seconds: 2 } as unknown as StepMetrics;
    // 3 of 12 steps on a 20-wide bar: round(20·3/12) = 5 filled.
    expect(formatProgress('r', m, 12)).toMatch(/^\[#####-{15}\] 3\/12 r reward 0\.500 loss 0\.2500/);
  });
});
