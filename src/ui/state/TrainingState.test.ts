import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import { TrainingState } from './TrainingState.svelte';
import type { TrainerClient } from '../../../workers/client';
import type { WorkerEvent, WorkerRequest, WorkerResponse } from '../../../workers/protocol';
import type { StepMetrics } from '../../recipes/types';
import type { RunRecord } from '../../storage/schema';

type Req = Omit<WorkerRequest, 'id'>;

/** A stand-in for the worker: records requests, answers with `reply`, pushes events on demand. */
function fakeClient(reply: (req: Req) => WorkerResponse | Error) {
  const sent: Req[] = [];
  const listeners = new Set<(e: WorkerEvent) => void>();
  const client = {
    request: async (req: Req) => {
      sent.push(req);
      const r = reply(req);
      if (r instanceof Error) throw r;
      return r;
    },
    subscribe: (l: (e: WorkerEvent) => void) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  } as unknown as TrainerClient;
  return { client, sent, push: (e: WorkerEvent) => listeners.forEach((l) => l(e)) };
}

const RUN: RunRecord = { id: 'run-1', name: 'run', recipe: 'pact', config: {}, createdAt: 0, updatedAt: 0, status: 'running', lastStep: 0 };
const started = (): WorkerResponse => ({ id: 1, type: 'started', run: RUN, backend: 'wasm', nParams: 1000 });
const metrics = (step: number, reward: number) => ({ step, recipe: 'pact', reward, 'tokens/s': 50 }) as unknown as StepMetrics;

describe('TrainingState', () => {
  it('sends start with the config, follows progress, and keeps metric rows and rollouts of its run', async () => {
    const w = fakeClient((req) => (req.type === 'start' ? started() : { id: 2, type: 'ok' }));
    let changes = 0;
    const t = new TrainingState({ onRunChanged: () => changes++ });
    t.attach(w.client);
    await t.start({ recipe: 'pact', steps: 2 });
    expect(w.sent).toEqual([{ type: 'start', config: { recipe: 'pact', steps: 2 } }]);
    expect([t.runId, t.phase, t.backend]).toEqual(['run-1', 'running', 'wasm']);

    w.push({ type: 'progress', runId: 'run-1', step: 1, totalSteps: 2, phase: 'rollouts', state: 'running' });
    w.push({ type: 'metrics', runId: 'run-1', metrics: metrics(1, 0.25) });
    w.push({ type: 'metrics', runId: 'other', metrics: metrics(1, 9) }); // a stale run: ignored
    w.push({ type: 'eval', runId: 'run-1', metrics: { step: 1, nTasks: 2, nRollouts: 2, 'eval/solve_r': 0.5, 'eval/solve_p': 1, 'eval/solve_f1': 2 / 3, 'eval/answer_correct': 0, 'eval/reward': 0 } });
    w.push({ type: 'metrics', runId: 'run-1', metrics: metrics(1, 0.3) }); // a replayed step replaces
    w.push({ type: 'rollouts', runId: 'run-1', groups: [{ step: 1, promptIndex: 0, taskId: 't', question: 'q', goldCalls: [], rollouts: [] }] });
    flushSync();
    expect(t.metrics.map((m) => m.reward)).toEqual([0.3]);
    expect(t.points).toEqual([{ step: 1, values: { reward: 0.3, 'tokens/s': 50, nTasks: 2, nRollouts: 2, 'eval/solve_r': 0.5, 'eval/solve_p': 1, 'eval/solve_f1': 2 / 3, 'eval/answer_correct': 0, 'eval/reward': 0 } }]);
    expect(t.groups).toHaveLength(1);
    expect(t.latestMetrics?.reward).toBe(0.3);
    expect([t.step, t.totalSteps, t.runPhase]).toEqual([1, 2, 'rollouts']);

    await t.pause();
    expect(t.phase).toBe('paused');
    expect(t.controls).toMatchObject({ canStep: true, isResume: true, canPause: false });
    await t.stepOnce();
    await t.resume();
    expect(w.sent.map((r) => r.type)).toEqual(['start', 'pause', 'step', 'resume']);
    expect(t.memory).toBeNull();
    const memory = { backend: 'wasm', numBytes: 5 * 2 ** 20, numTensors: 80 };
    w.push({ type: 'progress', runId: 'run-1', step: 2, totalSteps: 2, phase: 'rollouts', state: 'running', memory });
    w.push({ type: 'progress', runId: 'other', step: 9, totalSteps: 9, phase: 'rollouts', state: 'running', memory: { ...memory, numBytes: 1 } });
    expect(t.memory).toEqual(memory); // the stale run's reading is ignored
    w.push({ type: 'progress', runId: 'run-1', step: 2, totalSteps: 2, phase: 'idle', state: 'finished' });
    expect(t.memory).toEqual(memory); // a progress event without a reading keeps the last one
    expect(t.phase).toBe('finished');
    expect(changes).toBe(2); // started, then finished (the running→running progress is no change)
  });

  it('a failed start names the config field, and a local setup error sends nothing', async () => {
    const w = fakeClient(() => new Error('invalid training config:\n  config.pact.anchorProb: must be ≤ 1 (got 1.5)'));
    const t = new TrainingState();
    t.attach(w.client);
    await t.start({}, { localError: 'q must be ≤ 1 (got "1.5")' });
    expect(w.sent).toEqual([]);
    expect(t.startError).toBe('Cannot start: q must be ≤ 1 (got "1.5")');
    await t.start({ pact: { anchorProb: 1.5 } });
    expect(t.startError).toBe('Could not start training: invalid training config: q (config.pact.anchorProb): must be ≤ 1 (got 1.5)');
    expect([t.phase, t.runId]).toEqual(['idle', null]);
  });

  it('a resumed run starts from its stored rows; a run error fails the run where it happened', async () => {
    const w = fakeClient(() => started());
    const t = new TrainingState({ loadStoredPoints: async () => [{ step: 3, values: { reward: 0.7 } }] });
    t.attach(w.client);
    await t.start({ recipe: 'pact' }, { resumeRunId: 'run-1' });
    expect(w.sent[0]).toEqual({ type: 'start', config: { recipe: 'pact' }, resumeRunId: 'run-1' });
    w.push({ type: 'metrics', runId: 'run-1', metrics: metrics(4, 0.8) });
    flushSync();
    expect(t.points.map((p) => [p.step, p.values.reward])).toEqual([[3, 0.7], [4, 0.8]]);
    w.push({ type: 'progress', runId: 'run-1', step: 4, totalSteps: 9, phase: 'update', state: 'running', memory: { backend: 'cpu', numBytes: 64, numTensors: 2 } });
    expect(t.memory?.numBytes).toBe(64);
    w.push({ type: 'run-error', runId: 'run-1', message: 'out of memory' });
    expect([t.phase, t.runError]).toEqual(['failed', 'out of memory']);
    await t.reset();
    expect([t.phase, t.runId, t.metrics.length, t.runError, t.memory]).toEqual(['idle', null, 0, null, null]);
  });

  it('a picked Qwen3 folder goes with the start: model.init names it and its files are sent', async () => {
    const w = fakeClient(() => started());
    const t = new TrainingState();
    t.attach(w.client);
    const files = [new File(['{}'], 'config.json'), new File([new Uint8Array(8)], 'model.safetensors')];
    await t.start({ recipe: 'pact', model: { preset: 'qwen3-nano', vocabTasks: 10 } }, { modelFolder: { name: 'my-qwen3', files } });
    expect(w.sent).toEqual([
      { type: 'start', config: { recipe: 'pact', model: { preset: 'qwen3-nano', vocabTasks: 10, init: 'folder:my-qwen3' } }, modelFiles: files },
    ]);
    // Without a folder the config goes as it is, with no files.
    await t.start({ recipe: 'pact' }, { modelFolder: null });
    expect(w.sent[1]).toEqual({ type: 'start', config: { recipe: 'pact' } });
  });

  it('a refused control is reported, not swallowed', async () => {
    const w = fakeClient((req) => (req.type === 'start' ? started() : new Error('no run is paused')));
    const t = new TrainingState();
    t.attach(w.client);
    await t.start({});
    await t.stepOnce();
    expect(t.controlError).toBe('Step failed: no run is paused');
  });
});
