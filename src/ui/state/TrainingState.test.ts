import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import { TrainingState } from './TrainingState.svelte';
import { createFakeClient } from './testClient';
import type { WorkerResponse } from '../../../workers/protocol';
import type { StepMetrics } from '../../recipes/types';
import type { RunRecord } from '../../storage/schema';

const RUN: RunRecord = {
  id: 'run-1',
  name: 'run',
  recipe: 'pact',
  config: {},
  createdAt: 0,
  updatedAt: 0,
  status: 'running',
  lastStep: 0,
};
const started = (): WorkerResponse => ({ id: 1, type: 'started', run: RUN, backend: 'wasm', nParams: 1000 });
const metrics = (step: number, reward: number) =>
  ({ step, recipe: 'pact', reward, 'tokens/s': 50 }) as unknown as StepMetrics;

describe('TrainingState', () => {
  it('keeps the engine kernels the worker reports, and why they are not those asked for, until the next start', async () => {
    const warning = 'fma: relaxed SIMD is unavailable; the engine runs the plain SIMD kernels';
    let reply: WorkerResponse = {
      ...started(),
      engineKernels: 'simd',
      engineKernelsWarning: warning,
    } as WorkerResponse;
    const w = createFakeClient(() => reply);
    const t = new TrainingState();
    t.attach(w.client);
    await t.start({ engineKernels: 'fma' });
    expect([t.engineKernels, t.engineKernelsWarning]).toEqual(['simd', warning]);
    reply = { ...started(), backend: 'webgpu' } as WorkerResponse; // the engine does not serve WebGPU runs
    await t.start({ backend: 'webgpu' });
    expect([t.engineKernels, t.engineKernelsWarning]).toEqual([null, null]);
  });

  it('sends start with the config, follows progress, and keeps metric rows and rollouts of its run', async () => {
    const w = createFakeClient((req) => (req.type === 'start' ? started() : { id: 2, type: 'ok' }));
    let changes = 0;
    const t = new TrainingState({ onRunChanged: () => changes++ });
    t.attach(w.client);
    await t.start({ recipe: 'pact', steps: 2 });
    expect(w.sent).toEqual([{ type: 'start', config: { recipe: 'pact', steps: 2 } }]);
    expect([t.runId, t.phase, t.backend]).toEqual(['run-1', 'running', 'wasm']);

    w.push({ type: 'progress', runId: 'run-1', step: 1, totalSteps: 2, phase: 'rollouts', state: 'running' });
    w.push({ type: 'metrics', runId: 'run-1', metrics: metrics(1, 0.25) });
    w.push({ type: 'metrics', runId: 'other', metrics: metrics(1, 9) }); // a stale run: ignored
    w.push({
      type: 'eval',
      runId: 'run-1',
      metrics: {
        step: 1,
        nTasks: 2,
        nRollouts: 2,
        'eval/solve_r': 0.5,
        'eval/solve_p': 1,
        'eval/solve_f1': 2 / 3,
        'eval/answer_correct': 0,
        'eval/reward': 0,
      },
    });
    w.push({ type: 'metrics', runId: 'run-1', metrics: metrics(1, 0.3) }); // a replayed step replaces
    w.push({
      type: 'rollouts',
      runId: 'run-1',
      groups: [{ step: 1, promptIndex: 0, taskId: 't', question: 'q', goldCalls: [], rollouts: [] }],
    });
    flushSync();
    expect(t.metrics.map((m) => m.reward)).toEqual([0.3]);
    expect(t.points).toEqual([
      {
        step: 1,
        values: {
          reward: 0.3,
          'tokens/s': 50,
          nTasks: 2,
          nRollouts: 2,
          'eval/solve_r': 0.5,
          'eval/solve_p': 1,
          'eval/solve_f1': 2 / 3,
          'eval/answer_correct': 0,
          'eval/reward': 0,
        },
      },
    ]);
    expect(t.groups).toHaveLength(1);
    expect(t.latestMetrics?.reward).toBe(0.3);
    expect([t.step, t.totalSteps, t.runPhase]).toEqual([1, 2, 'rollouts']);

    await t.pause();
    // Accepted, but the worker pauses only when the step ends: until it says so, "pausing".
    expect([t.phase, t.displayStatus]).toEqual(['running', 'pausing']);
    expect(t.statusText).toBe('Step 1 of 2 · pausing after this step · rollouts');
    expect(t.controls).toMatchObject({ canPause: false, canStop: true, canStep: false });
    w.push({ type: 'progress', runId: 'run-1', step: 1, totalSteps: 2, phase: 'idle', state: 'paused' });
    expect([t.phase, t.displayStatus, t.pendingControl]).toEqual(['paused', 'paused', null]);
    expect(t.controls).toMatchObject({ canStep: true, isResume: true, canPause: false });
    await t.stepOnce();
    await t.resume();
    expect(t.phase).toBe('running');
    expect(w.sent.map((r) => r.type)).toEqual(['start', 'pause', 'step', 'resume']);
    expect(t.memory).toBeNull();
    const memory = { backend: 'wasm', numBytes: 5 * 2 ** 20, numTensors: 80 };
    w.push({ type: 'progress', runId: 'run-1', step: 2, totalSteps: 2, phase: 'rollouts', state: 'running', memory });
    w.push({
      type: 'progress',
      runId: 'other',
      step: 9,
      totalSteps: 9,
      phase: 'rollouts',
      state: 'running',
      memory: { ...memory, numBytes: 1 },
    });
    expect(t.memory).toEqual(memory); // the stale run's reading is ignored
    w.push({ type: 'progress', runId: 'run-1', step: 2, totalSteps: 2, phase: 'idle', state: 'finished' });
    expect(t.memory).toEqual(memory); // a progress event without a reading keeps the last one
    expect(t.phase).toBe('finished');
    expect(changes).toBe(3); // started, paused, then finished (running→running progress is no change)
  });

  it('a failed start names the config field, and a local setup error sends nothing', async () => {
    const w = createFakeClient(
      () => new Error('invalid training config:\n  config.pact.anchorProb: must be ≤ 1 (got 1.5)'),
    );
    const t = new TrainingState();
    t.attach(w.client);
    await t.start({}, { localError: 'q must be ≤ 1 (got "1.5")' });
    expect(w.sent).toEqual([]);
    expect(t.startError).toBe('Cannot start: q must be ≤ 1 (got "1.5")');
    await t.start({ pact: { anchorProb: 1.5 } });
    expect(t.startError).toBe(
      'Could not start training: invalid training config: q (config.pact.anchorProb): must be ≤ 1 (got 1.5)',
    );
    expect([t.phase, t.runId]).toEqual(['idle', null]);
  });

  it('a resumed run starts from its stored rows; a run error fails the run where it happened', async () => {
    const w = createFakeClient(() => started());
    const t = new TrainingState({
      loadStoredPoints: async () => [{ step: 3, values: { reward: 0.7 } }],
      logError: () => {},
    });
    t.attach(w.client);
    await t.start({ recipe: 'pact' }, { resumeRunId: 'run-1' });
    expect(w.sent[0]).toEqual({ type: 'start', config: { recipe: 'pact' }, resumeRunId: 'run-1' });
    w.push({ type: 'metrics', runId: 'run-1', metrics: metrics(4, 0.8) });
    flushSync();
    expect(t.points.map((p) => [p.step, p.values.reward])).toEqual([
      [3, 0.7],
      [4, 0.8],
    ]);
    w.push({
      type: 'progress',
      runId: 'run-1',
      step: 4,
      totalSteps: 9,
      phase: 'update',
      state: 'running',
      memory: { backend: 'cpu', numBytes: 64, numTensors: 2 },
    });
    expect(t.memory?.numBytes).toBe(64);
    w.push({
      type: 'run-error',
      runId: 'run-1',
      message: 'out of memory',
      failure: { runId: 'run-1', runName: 'run', message: 'out of memory', step: 5, config: {}, at: 0 },
    });
    expect([t.phase, t.runError]).toEqual(['failed', 'out of memory']);
    await t.reset();
    expect([t.phase, t.runId, t.metrics.length, t.runError, t.memory]).toEqual(['idle', null, 0, null, null]);
  });

  it('a picked Qwen3 folder goes with the start: model.init names it and its files are sent', async () => {
    const w = createFakeClient(() => started());
    const t = new TrainingState();
    t.attach(w.client);
    const files = [new File(['{}'], 'config.json'), new File([new Uint8Array(8)], 'model.safetensors')];
    await t.start(
      { recipe: 'pact', model: { preset: 'qwen3-nano', vocabTasks: 10 } },
      { modelFolder: { name: 'my-qwen3', files } },
    );
    expect(w.sent).toEqual([
      {
        type: 'start',
        config: { recipe: 'pact', model: { preset: 'qwen3-nano', vocabTasks: 10, init: 'folder:my-qwen3' } },
        modelFiles: files,
      },
    ]);
    // Without a folder the config goes as it is, with no files.
    await t.start({ recipe: 'pact' }, { modelFolder: null });
    expect(w.sent[1]).toEqual({ type: 'start', config: { recipe: 'pact' } });
  });

  it('a refused control is reported, not swallowed', async () => {
    const w = createFakeClient((req) => (req.type === 'start' ? started() : new Error('no run is paused')));
    const t = new TrainingState();
    t.attach(w.client);
    await t.start({});
    await t.stepOnce();
    expect(t.controlError).toBe('Step failed: no run is paused');
  });
  it('a Stop is "stopping" until the worker has stopped; then the run reads "stopped", never "paused"', async () => {
    const w = createFakeClient((req) => (req.type === 'start' ? started() : { id: 2, type: 'ok' }));
    const t = new TrainingState();
    t.attach(w.client);
    await t.start({});
    await t.stop();
    expect([t.phase, t.displayStatus]).toEqual(['running', 'stopping']);
    expect(t.controls).toMatchObject({ canTrain: false, canPause: false, canStop: false, canReset: false });
    w.push({ type: 'progress', runId: 'run-1', step: 3, totalSteps: 9, phase: 'checkpoint', state: 'running' });
    expect(t.displayStatus).toBe('stopping'); // the checkpoint of the stop is still being written
    w.push({ type: 'progress', runId: 'run-1', step: 3, totalSteps: 9, phase: 'idle', state: 'stopped' });
    expect([t.phase, t.displayStatus, t.pendingControl, t.statusText]).toEqual([
      'stopped',
      'stopped',
      null,
      'Step 3 of 9 · stopped',
    ]);
    expect(t.controls).toMatchObject({ canTrain: true, isResume: false });
  });

  it('keeps the in-step progress and the memory readings the worker sends during a step', async () => {
    const w = createFakeClient(() => started());
    const t = new TrainingState();
    t.attach(w.client);
    await t.start({});
    w.push({
      type: 'step-progress',
      runId: 'run-1',
      step: 1,
      progress: { phase: 'rollouts', done: 3, total: 8, tokens: 412, turn: 2 },
      elapsedMs: 5000,
    });
    w.push({
      type: 'memory',
      runId: 'run-1',
      memory: { backend: 'wasm', numBytes: 7, numTensors: 3, peakBytes: 9, sampledAt: 1 },
    });
    w.push({ type: 'memory', runId: 'other', memory: { backend: 'wasm', numBytes: 99, numTensors: 3 } });
    expect(t.stepProgress).toMatchObject({
      step: 1,
      progress: { phase: 'rollouts', done: 3, total: 8, tokens: 412, turn: 2 },
      elapsedMs: 5000,
    });
    expect(t.memory).toEqual({ backend: 'wasm', numBytes: 7, numTensors: 3, peakBytes: 9, sampledAt: 1 });
    w.push({ type: 'metrics', runId: 'run-1', metrics: { ...metrics(1, 0.5), seconds: 12 } as StepMetrics });
    flushSync();
    expect(t.stepProgress).toBeNull(); // that step is done
    expect(t.stepSeconds).toEqual([12]);
    // A step's start is when the worker says its rollouts begin (the time left counts from it).
    expect(t.stepStartedAt).toBeNull();
    const before = Date.now();
    w.push({ type: 'progress', runId: 'run-1', step: 1, totalSteps: 4, phase: 'rollouts', state: 'running' });
    expect(t.stepStartedAt).toBeGreaterThanOrEqual(before);
  });

  it('logs a failed run with its stack, step and config, and keeps the report for the page', async () => {
    const w = createFakeClient(() => started());
    const logged: unknown[][] = [];
    const t = new TrainingState({ logError: (...a) => logged.push(a) });
    t.attach(w.client);
    await t.start({});
    const failure = {
      runId: 'run-1',
      runName: 'my run',
      message: 'memory access out of bounds',
      stack: 'RuntimeError: memory access out of bounds\n    at wasm-function[123]',
      step: 4,
      config: { recipe: 'pact', seed: 3 },
      backend: 'wasm',
      at: Date.UTC(2026, 0, 2, 3, 4, 5),
    };
    w.push({ type: 'run-error', runId: 'run-1', message: failure.message, failure });
    expect([t.phase, t.runError, t.failure]).toEqual(['failed', failure.message, failure]);
    expect(logged).toHaveLength(1);
    const text = String(logged[0][0]);
    expect(text).toContain('PACT Lab: run "my run" failed at step 4: memory access out of bounds');
    expect(text).toContain('at wasm-function[123]');
    expect(text).toContain('"seed": 3');
    expect(text).toContain('time: 2026-01-02T03:04:05.000Z');
  });

  it('after a reload shows the newest saved run detached; an interrupted one resumes from its checkpoint', async () => {
    const w = createFakeClient(() => started());
    const t = new TrainingState({
      loadStoredPoints: async (id) =>
        id === 'run-1'
          ? [
              { step: 1, values: { reward: 0.25 } },
              { step: 3, values: { reward: 0.5 } },
            ]
          : [],
    });
    t.attach(w.client);
    const saved: RunRecord = {
      ...RUN,
      status: 'running',
      lastStep: 3,
      lastCheckpointId: 'run-1@2',
      config: { recipe: 'pact', steps: 8 },
    };
    await t.restore([saved, { ...RUN, id: 'older' }], new Set());
    flushSync();
    expect([t.runId, t.phase, t.isDetached, t.displayStatus, t.step, t.totalSteps]).toEqual([
      'run-1',
      'saved',
      true,
      'interrupted',
      3,
      8,
    ]);
    expect(t.points.map((p) => p.step)).toEqual([1, 3]); // its stored rows on the charts, not the demo
    expect(t.statusText).toBe(
      'Step 3 of 8 · interrupted · Resume continues from its checkpoint at step 2 (step after it, 1 logged, will be trained again)',
    );
    expect(t.controls).toEqual({
      canTrain: true,
      isResume: true,
      canPause: false,
      canStep: false,
      canStop: false,
      canReset: true,
    });
    // Events of whatever the worker runs are not this saved run's.
    w.push({ type: 'progress', runId: 'run-1', step: 9, totalSteps: 9, phase: 'rollouts', state: 'running' });
    expect(t.step).toBe(3);
    await t.restore([], null); // only once per page
    expect(t.runId).toBe('run-1');

    await t.resume();
    expect(w.sent).toEqual([{ type: 'start', config: { recipe: 'pact', steps: 8 }, resumeRunId: 'run-1' }]);
    expect([t.isDetached, t.phase, t.displayStatus]).toEqual([false, 'running', 'running']);
  });

  it('a saved FTRL run resumes with the loaded file of its name, and without a file of another name', async () => {
    const w = createFakeClient(() => started());
    let loaded: { name: string; text: string } | null = { name: 'tasks.jsonl', text: 'line\n' };
    const t = new TrainingState({ readTaskFile: () => loaded });
    t.attach(w.client);
    const config = { recipe: 'ftrl', tasks: { source: 'ftrl', path: 'tasks.jsonl', trainFraction: 0.8 } };
    const saved: RunRecord = { ...RUN, status: 'paused', lastStep: 1, lastCheckpointId: 'run-1@1', config };
    await t.restore([saved], new Set());
    await t.resume();
    expect(w.sent).toEqual([
      { type: 'start', config, resumeRunId: 'run-1', taskFile: { name: 'tasks.jsonl', text: 'line\n' } },
    ]);
    // Another file is loaded: it is not sent (the worker then says which file the run reads).
    const u = new TrainingState({ readTaskFile: () => loaded });
    const w2 = createFakeClient(() => started());
    u.attach(w2.client);
    loaded = { name: 'other.jsonl', text: 'x\n' };
    await u.restore([saved], new Set());
    await u.resume();
    expect(w2.sent).toEqual([{ type: 'start', config, resumeRunId: 'run-1' }]);
  });

  it('a saved run another tab is training shows as such and cannot be resumed here', async () => {
    const w = createFakeClient(() => started());
    const t = new TrainingState();
    t.attach(w.client);
    await t.restore([{ ...RUN, status: 'running', lastCheckpointId: 'run-1@1' }], new Set(['run-1']));
    expect([t.displayStatus, t.controls.isResume, t.controls.canTrain]).toEqual(['elsewhere', false, true]);
    expect(t.statusText).toBe('Step 0 · running in another tab');
    // Stopped there: the next refresh brings the stored record, and this page can resume it.
    t.syncSaved([{ ...RUN, status: 'stopped', lastStep: 1, lastCheckpointId: 'run-1@1' }], new Set());
    expect([t.displayStatus, t.controls.isResume, t.step]).toEqual(['stopped', true, 1]);
    t.syncSaved([], new Set()); // deleted
    expect([t.runId, t.phase]).toEqual([null, 'idle']);
  });
});
