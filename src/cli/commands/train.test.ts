/**
 * `pact train` end to end on a tiny policy: the testKit's 2-layer Qwen3 saved as a Hugging
 * Face folder (model.init = its path), one matchtir step on the wasm backend, then the
 * files it must write: metrics.jsonl (finite step metrics, an eval line) and a checkpoint
 * folder that reads back into a TrainerState at the same step.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '../../model/qwen3/tf';
import { useCpuBackend } from '../../model/qwen3/train/testBackend';
import { createNodeFolderReader } from '../../model/weights/nodeFiles';
import { createRandomQwen3Tensors, writeQwen3Folder } from '../../model/weights/testFolders';
import { buildCheckpointManifest, MANIFEST_FILE, readCheckpointState, TRAINER_STATE_FILE } from '../../run/checkpoint';
import { hasRelaxedSimd } from '../../model/engine/kernelChoice';
import { createTinySetup } from '../../recipes/testing/testKit';
import type { StepMetrics } from '../../recipes/types';
import { main } from '../main';
import { formatMetricsLine, formatProgress, keepMetricsUpTo, pickResumeKernels } from './train';

/** `pact train` of one step of tiny.json on wasm into `out`. */
const tinyStepArgs = (out: string) => [
  'train',
  '--config',
  path.join(dir, 'tiny.json'),
  '--steps',
  '1',
  '--backend',
  'wasm',
  '--out',
  out,
];
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/pact.mjs');
let dir: string;
const out: string[] = [];
const err: string[] = [];
const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };

beforeAll(async () => {
  await useCpuBackend();
  dir = await mkdtemp(path.join(os.tmpdir(), 'pact-train-'));
  const setup = await createTinySetup();
  const tensors = await createRandomQwen3Tensors(setup.modelConfig, 3); // = setup.createModel(3)
  await writeQwen3Folder(path.join(dir, 'policy'), {
    config: setup.modelConfig,
    tensors,
    prunedVocab: setup.tokenizer.toMapping(),
  });
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
  const resumable = {
    ...experiment,
    name: 'resumable',
    base: { ...experiment.base, recipe: 'pact', evalEvery: 0, checkpointEvery: 1, steps: 2 },
  };
  await writeFile(path.join(dir, 'resumable.json'), JSON.stringify(resumable));
}, 60_000);

/** A metrics.jsonl file as records. */
async function readMetrics(file: string): Promise<Record<string, unknown>[]> {
  return (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

/** A step record without its wall-clock fields (seconds, tokens/s, time/…), which differ between runs. */
function withoutTimings(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(record).filter(([k]) => k !== 'seconds' && k !== 'tokens/s' && !k.startsWith('time/')),
  );
}
afterAll(async () => {
  await tf.setBackend('cpu');
  await rm(dir, { recursive: true, force: true });
});

describe('pact train', () => {
  it('trains the runs of an experiment file and writes metrics.jsonl and a checkpoint', async () => {
    const code = await main(tinyStepArgs(path.join(dir, 'runs')), io);
    expect(err).toEqual([]);
    expect(code).toBe(0);
    const runDir = path.join(dir, 'runs', 'tiny', 'matchtir-s1');
    const lines = (await readFile(path.join(runDir, 'metrics.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(['step', 'eval']);
    for (const key of ['reward', 'loss', 'grad_norm', 'entropy', 'kl', 'completions/mean_length'])
      expect(Number.isFinite(lines[0][key]), key).toBe(true);
    expect(lines[0]).toMatchObject({ run: 'matchtir-s1', step: 1, recipe: 'matchtir' });
    expect(lines[1]['eval/solve_f1']).toBeGreaterThanOrEqual(0);
    const state = await readCheckpointState(createNodeFolderReader(path.join(runDir, 'checkpoint-1')));
    expect([state.step, state.dataCursor, state.recipe]).toEqual([1, 1, 'matchtir']);
    expect(state.optimizer.some((a) => a.name.endsWith('.exp_avg_sq'))).toBe(true);
    expect(out.some((l) => l.includes('[####################] 1/1 matchtir-s1'))).toBe(true);
  }, 120_000);

  it('--steps 0 evaluates the starting policy and trains nothing', async () => {
    const code = await main(
      [
        'train',
        '--config',
        path.join(dir, 'tiny.json'),
        '--steps',
        '0',
        '--backend',
        'wasm',
        '--out',
        path.join(dir, 'runs0'),
      ],
      io,
    );
    expect(code).toBe(0);
    const runDir = path.join(dir, 'runs0', 'tiny', 'matchtir-s1');
    const lines = (await readFile(path.join(runDir, 'metrics.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.type, l.step])).toEqual([['eval', 0]]);
    const state = await readCheckpointState(createNodeFolderReader(path.join(runDir, 'checkpoint-0')));
    expect([state.step, state.dataCursor]).toEqual([0, 0]);
  }, 120_000);

  // Node 20 without --experimental-wasm-relaxed-simd (a plain vitest run): the fma kernels cannot run here.
  it.runIf(!hasRelaxedSimd())(
    "--fma without relaxed SIMD: the plain kernels with one warning, recorded in config.json; a resume keeps a run's kernels",
    async () => {
      const outDir = path.join(dir, 'runs-fma');
      const errors: string[] = [];
      const lines: string[] = [];
      const sink = { out: (l: string) => lines.push(l), err: (l: string) => errors.push(l) };
      expect(await main([...tinyStepArgs(outDir), '--fma'], sink)).toBe(0);
      expect(errors).toEqual([
        'warning: fma: relaxed SIMD is unavailable in this runtime (Node 20: bin/pact.mjs turns it on; elsewhere start node with --experimental-wasm-relaxed-simd); the engine runs the plain SIMD kernels',
      ]);
      expect(lines).toContain('engine kernels: simd'); // the line scripts/studyQueue.sh's provenance reads
      const runDir = path.join(outDir, 'tiny', 'matchtir-s1');
      const config = JSON.parse(await readFile(path.join(runDir, 'config.json'), 'utf8'));
      expect(config.engineKernels).toBe('simd'); // what ran, not what was asked
      const checkpoint = path.join(runDir, 'checkpoint-1');
      expect((await readCheckpointState(createNodeFolderReader(checkpoint))).config.engineKernels).toBe('simd');
      // The plain kernels' bits: the same step and weights as the run without --fma (the first test's).
      const plainDir = path.join(dir, 'runs', 'tiny', 'matchtir-s1');
      const [fmaStep] = await readMetrics(path.join(runDir, 'metrics.jsonl'));
      const [plainStep] = await readMetrics(path.join(plainDir, 'metrics.jsonl'));
      expect(withoutTimings(fmaStep)).toEqual(withoutTimings(plainStep));
      const weights = (d: string) => readFile(path.join(d, 'checkpoint-1', 'model.safetensors'));
      expect((await weights(runDir)).equals(await weights(plainDir))).toBe(true);

      // --resume keeps a run's kernels: --fma on this simd run is refused, before anything is written.
      errors.length = 0;
      expect(await main(['train', '--resume', checkpoint, '--steps', '2', '--backend', 'wasm', '--fma'], sink)).toBe(2);
      expect(errors.at(-1)).toMatch(
        /continues a run on the kernels it trained on \(engineKernels "simd"\); drop --fma/,
      );
      // A run that trained on fma resumes on fma, so where relaxed SIMD is missing it is refused, not switched.
      const fmaCheckpoint = path.join(dir, 'fma-run', 'checkpoint-1');
      await cp(checkpoint, fmaCheckpoint, { recursive: true });
      const files: Record<string, Uint8Array> = {};
      for (const name of await readdir(fmaCheckpoint)) files[name] = await readFile(path.join(fmaCheckpoint, name));
      const state = JSON.parse(Buffer.from(files[TRAINER_STATE_FILE]).toString('utf8'));
      state.config.engineKernels = 'fma';
      files[TRAINER_STATE_FILE] = Buffer.from(JSON.stringify(state));
      await writeFile(path.join(fmaCheckpoint, TRAINER_STATE_FILE), files[TRAINER_STATE_FILE]);
      await writeFile(path.join(fmaCheckpoint, MANIFEST_FILE), buildCheckpointManifest(files));
      expect(await main(['train', '--resume', fmaCheckpoint, '--steps', '2', '--backend', 'wasm'], sink)).toBe(2);
      expect(errors.at(-1)).toMatch(
        /this run trained on the fma kernels and relaxed SIMD is unavailable .*; resuming on the plain ones would mix two sets of numerics/,
      );
      expect((await readdir(path.dirname(fmaCheckpoint))).sort()).toEqual(['checkpoint-1']); // nothing written
    },
    120_000,
  );

  // bin/pact.mjs sets Node 20's relaxed-SIMD flag itself (kernelChoice.ts, enableRelaxedSimd): the
  // real command, started without the flag (in a plain environment, as from a shell: under vitest's
  // own variables tsx does not resolve tfjs), runs --fma on the fma kernels and says nothing about it.
  it('bin/pact.mjs train --fma runs the fma kernels in a node started without any flag', () => {
    const outDir = path.join(dir, 'runs-bin-fma');
    const r = spawnSync(process.execPath, [BIN, ...tinyStepArgs(outDir), '--fma'], {
      encoding: 'utf8',
      timeout: 110_000,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/relaxed SIMD is unavailable/);
    expect(r.stdout).toContain('engine kernels: fma');
    return readFile(path.join(outDir, 'tiny', 'matchtir-s1', 'config.json'), 'utf8').then((text) =>
      expect(JSON.parse(text).engineKernels).toBe('fma'),
    );
  }, 120_000);

  it('--resume takes the kernels its checkpoint saved; --fma decides only for a checkpoint from before engineKernels', () => {
    expect(pickResumeKernels('simd', false)).toEqual({ engineKernels: 'simd' });
    expect(pickResumeKernels('fma', false)).toEqual({ engineKernels: 'fma' });
    expect(pickResumeKernels('fma', true)).toEqual({ engineKernels: 'fma' });
    expect(() => pickResumeKernels('simd', true)).toThrow(/drop --fma/);
    expect(pickResumeKernels(undefined, false)).toEqual({ engineKernels: 'simd' });
    expect(pickResumeKernels(undefined, true)).toMatchObject({ engineKernels: 'fma', note: /predates engineKernels/ });
  });

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

  it('--resume continues a run from its checkpoint to the numbers the uninterrupted run reached, and extends it', async () => {
    // The uninterrupted run: 2 PACT steps, a checkpoint after each.
    const whole = path.join(dir, 'whole');
    expect(
      await main(['train', '--config', path.join(dir, 'resumable.json'), '--backend', 'wasm', '--out', whole], io),
    ).toBe(0);
    const wholeRun = path.join(whole, 'resumable', 'pact-s1');
    const wholeLines = await readMetrics(path.join(wholeRun, 'metrics.jsonl'));
    expect(wholeLines.map((l) => l.step)).toEqual([1, 2]);

    // An interrupted copy: checkpoint-1 and both metrics lines (step 2 was written, its checkpoint was not).
    const cut = path.join(dir, 'cut', 'resumable', 'pact-s1');
    await mkdir(cut, { recursive: true });
    await cp(path.join(wholeRun, 'checkpoint-1'), path.join(cut, 'checkpoint-1'), { recursive: true });
    await cp(path.join(wholeRun, 'metrics.jsonl'), path.join(cut, 'metrics.jsonl'));
    out.length = 0;
    expect(await main(['train', '--resume', path.join(cut, 'checkpoint-1'), '--backend', 'wasm'], io)).toBe(0);
    expect(out).toContain('  dropped 1 metrics line(s) written after step 1');
    expect(out).toContain('  resumed at step 1 of 2');
    const cutLines = await readMetrics(path.join(cut, 'metrics.jsonl'));
    expect(cutLines.map((l) => l.step)).toEqual([1, 2]);
    expect(cutLines[0]).toEqual(wholeLines[0]); // kept as it was
    expect(withoutTimings(cutLines[1])).toEqual(withoutTimings(wholeLines[1])); // the same step 2, every metric
    // The same weights after step 2, byte for byte.
    const weights = async (run: string) =>
      Buffer.from(await readFile(path.join(run, 'checkpoint-2', 'model.safetensors')));
    expect((await weights(cut)).equals(await weights(wholeRun))).toBe(true);
    // Every file of checkpoint-2 byte for byte (config.json's key order and so the manifest
    // included), and the run's config.json.
    const wholeFiles = (await readdir(path.join(wholeRun, 'checkpoint-2'))).sort();
    expect((await readdir(path.join(cut, 'checkpoint-2'))).sort()).toEqual(wholeFiles);
    for (const name of [...wholeFiles.map((f) => path.join('checkpoint-2', f)), 'config.json']) {
      const [a, b] = await Promise.all([readFile(path.join(wholeRun, name)), readFile(path.join(cut, name))]);
      expect(a.equals(b), `${name} differs after the resume`).toBe(true);
    }

    // Extending: --steps 3 trains one more step; the saved config keeps the resolved annealing horizon.
    expect(
      await main(['train', '--resume', path.join(cut, 'checkpoint-2'), '--steps', '3', '--backend', 'wasm'], io),
    ).toBe(0);
    expect((await readMetrics(path.join(cut, 'metrics.jsonl'))).map((l) => l.step)).toEqual([1, 2, 3]);
    const config = JSON.parse(await readFile(path.join(cut, 'config.json'), 'utf8'));
    expect([config.steps, config.pact.annealHorizon]).toEqual([3, 2]);
    const state = await readCheckpointState(createNodeFolderReader(path.join(cut, 'checkpoint-3')));
    expect([state.step, state.dataCursor]).toEqual([3, 3]);

    // Errors name what is wrong, and write nothing.
    const errors: string[] = [];
    const sink = { out: () => {}, err: (l: string) => errors.push(l) };
    expect(await main(['train', '--resume', path.join(cut, 'checkpoint-3'), '--backend', 'wasm'], sink)).toBe(2);
    expect(errors.at(-1)).toMatch(
      /the checkpoint is at step 3 of 3; nothing is left to train \(--steps N with N > 3 extends the run\)/,
    );
    expect(
      await main(['train', '--resume', path.join(cut, 'checkpoint-3'), '--config', path.join(dir, 'tiny.json')], sink),
    ).toBe(2);
    expect(errors.at(-1)).toMatch(/drop --config/);
    expect(await main(['train', '--resume', path.join(dir, 'policy'), '--backend', 'wasm'], sink)).toBe(2);
    expect(errors.at(-1)).toMatch(
      /neither a checkpoint folder \(no trainer_state\.json\) nor a run folder with checkpoint-<step> folders/,
    );
    expect((await readMetrics(path.join(cut, 'metrics.jsonl'))).map((l) => l.step)).toEqual([1, 2, 3]);

    // The run folder itself: its last checkpoint that reads back whole. A newer one torn by a
    // crash (model.safetensors cut short) and a leftover temporary folder are passed over, and a
    // torn last metrics line is dropped with a warning.
    await cp(path.join(cut, 'checkpoint-3'), path.join(cut, 'checkpoint-4'), { recursive: true });
    const torn = await readFile(path.join(cut, 'checkpoint-4', 'model.safetensors'));
    await writeFile(path.join(cut, 'checkpoint-4', 'model.safetensors'), torn.subarray(0, torn.length - 100));
    // Folders a killed checkpoint write left: the stale ones go when the run resumes, one still
    // being written (touched just now) stays.
    await mkdir(path.join(cut, '.partial-checkpoint-5-abc123'));
    await writeFile(path.join(cut, '.partial-checkpoint-5-abc123', 'model.safetensors'), 'torn');
    await mkdir(path.join(cut, '.partial-checkpoint-6-def456'));
    const anHourAgo = new Date(Date.now() - 3600_000);
    await utimes(path.join(cut, '.partial-checkpoint-5-abc123', 'model.safetensors'), anHourAgo, anHourAgo);
    await utimes(path.join(cut, '.partial-checkpoint-5-abc123'), anHourAgo, anHourAgo);
    await writeFile(
      path.join(cut, 'metrics.jsonl'),
      (await readFile(path.join(cut, 'metrics.jsonl'), 'utf8')) + '{"type":"step","run":"pact-s1","step":4,"rew',
    );
    err.length = 0;
    out.length = 0;
    expect(await main(['train', '--resume', cut, '--steps', '4', '--backend', 'wasm'], io)).toBe(0);
    expect(
      err.some((l) =>
        /^warning: skipped checkpoint-4: model\.safetensors is \d+ bytes but checkpoint_manifest\.json says \d+ \(a truncated or altered file\)$/.test(
          l,
        ),
      ),
    ).toBe(true);
    expect(err).toContain(
      'warning: metrics.jsonl line 4 was cut by the interruption and is dropped: {"type":"step","run":"pact-s1","step":4,"rew',
    );
    expect(out).toContain('  resumed at step 3 of 4');
    expect((await readdir(cut)).filter((n) => n.startsWith('.partial-'))).toEqual(['.partial-checkpoint-6-def456']);
    expect((await readMetrics(path.join(cut, 'metrics.jsonl'))).map((l) => l.step)).toEqual([1, 2, 3, 4]);
    const resumedState = await readCheckpointState(createNodeFolderReader(path.join(cut, 'checkpoint-4')));
    expect([resumedState.step, resumedState.dataCursor]).toEqual([4, 4]);
  }, 300_000);

  it('keeps the metrics lines up to the resumed step, evaluations included', () => {
    const text = [
      '{"type":"eval","step":0}',
      '{"type":"step","step":1}',
      '{"type":"eval","step":1}',
      '',
      '{"type":"step","step":2}',
      '{"type":"eval","step":2}',
      '',
    ].join('\n');
    expect(keepMetricsUpTo(text, 1)).toEqual({
      text: '{"type":"eval","step":0}\n{"type":"step","step":1}\n{"type":"eval","step":1}\n',
      dropped: 2,
    });
    expect(keepMetricsUpTo('', 4)).toEqual({ text: '', dropped: 0 });
    // A bad line before the last is damage, not an interrupted write: it names the line.
    expect(() => keepMetricsUpTo('{"type":"step","step":1}\n{oops\n{"type":"step","step":2}', 1)).toThrow(
      /metrics\.jsonl line 2: not valid JSON/,
    );
    expect(() => keepMetricsUpTo('{"type":"step"}\n{"type":"step","step":1}', 1)).toThrow(
      /metrics\.jsonl line 1: expected an object with a numeric "step"/,
    );
  });

  it('drops a torn last metrics line (a write cut by a kill) and reports it', () => {
    expect(keepMetricsUpTo('{"type":"step","step":1}\n{"type":"step","step":2}\n{"type":"step","st', 2)).toEqual({
      text: '{"type":"step","step":1}\n{"type":"step","step":2}\n',
      dropped: 0,
      torn: { line: 3, excerpt: '{"type":"step","st' },
    });
    expect(keepMetricsUpTo('{"type":"step","step":1}\r\n{"type":"step","step":2}\r\n{"type":"eval"', 1)).toEqual({
      text: '{"type":"step","step":1}\n',
      dropped: 1,
      torn: { line: 3, excerpt: '{"type":"eval"' },
    });
  });

  it('writes NaN as null and draws the progress bar from the step count', () => {
    expect(formatMetricsLine({ a: Number.NaN, b: 1.5, c: Infinity })).toBe('{"a":null,"b":1.5,"c":null}');
    const m = {
      step: 3,
      reward: 0.5,
      loss: 0.25,
      kl: 0.001,
      grad_norm: 1,
      'completions/mean_length': 12,
      'tokens/s': 40,
      seconds: 2,
    } as unknown as StepMetrics;
    // 3 of 12 steps on a 20-wide bar: round(20·3/12) = 5 filled.
    expect(formatProgress('r', m, 12)).toMatch(/^\[#####-{15}\] 3\/12 r reward 0\.500 loss 0\.2500/);
  });
});
