import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../storage/schema';
import {
  checkpointStepOf,
  computeRunStatus,
  failureOfRun,
  formatFailureReport,
  planResume,
  STATUS_WORDS,
  type LiveRun,
} from './runStatus';

const run = (patch: Partial<RunRecord> = {}): RunRecord => ({
  id: 'r1',
  name: 'first',
  recipe: 'pact',
  config: { steps: 4, seed: 2 },
  createdAt: 0,
  updatedAt: 1000,
  status: 'running',
  lastStep: 3,
  ...patch,
});

describe('computeRunStatus', () => {
  it("reads the page's own run from the worker, with Pause/Stop pending until the step ends", () => {
    const live = (phase: LiveRun['phase'], pendingControl: LiveRun['pendingControl'] = null): LiveRun => ({
      runId: 'r1',
      phase,
      pendingControl,
    });
    // the stored record may lag (still "running" after the page learned it stopped): the live state wins
    expect(computeRunStatus(run(), live('running'), null)).toBe('running');
    expect(computeRunStatus(run(), live('running', 'pause'), null)).toBe('pausing');
    expect(computeRunStatus(run(), live('running', 'stop'), null)).toBe('stopping');
    expect(computeRunStatus(run({ status: 'paused' }), live('paused'), null)).toBe('paused');
    expect(computeRunStatus(run({ status: 'paused' }), live('paused', 'stop'), null)).toBe('stopping');
    expect(computeRunStatus(run(), live('stopped'), null)).toBe('stopped');
    expect(computeRunStatus(run(), live('starting'), null)).toBe('starting');
  });

  it('a saved "running" run is alive only when some tab holds its lock; else it was interrupted', () => {
    expect(computeRunStatus(run(), null, new Set())).toBe('interrupted');
    expect(computeRunStatus(run(), null, null)).toBe('interrupted'); // no Web Locks: this page holds none
    expect(computeRunStatus(run(), null, new Set(['r1']))).toBe('elsewhere');
    expect(computeRunStatus(run({ status: 'created' }), null, new Set())).toBe('interrupted');
    // another run live in this page does not make r1 live
    expect(computeRunStatus(run(), { runId: 'r2', phase: 'running', pendingControl: null }, new Set(['r2']))).toBe(
      'interrupted',
    );
    for (const s of ['paused', 'stopped', 'finished', 'failed', 'interrupted'] as const)
      expect(computeRunStatus(run({ status: s }), null, new Set())).toBe(s);
    expect(STATUS_WORDS.elsewhere).toBe('running in another tab');
  });
});

describe('planResume', () => {
  it('continues from the checkpoint, naming the steps that will be trained again', () => {
    expect(checkpointStepOf(run({ lastCheckpointId: 'pact-s1-20260101@12' }))).toBe(12);
    expect(checkpointStepOf(run())).toBeNull();
    expect(planResume(run({ lastCheckpointId: 'r1@2', lastStep: 3 }), 'interrupted', false)).toEqual({
      canResume: true,
      label: 'Resume',
      detail: 'continues from its checkpoint at step 2 (step after it, 1 logged, will be trained again)',
    });
    expect(planResume(run({ lastCheckpointId: 'r1@3', lastStep: 3 }), 'paused', false)).toEqual({
      canResume: true,
      label: 'Resume',
      detail: 'continues from its checkpoint at step 3',
    });
    expect(planResume(run({ lastCheckpointId: 'r1@1', lastStep: 4 }), 'stopped', false)).toMatchObject({
      detail: 'continues from its checkpoint at step 1 (steps after it, 3 logged, will be trained again)',
    });
  });

  it('a run with no checkpoint restarts from step 0, said in words; a finished or busy one cannot resume', () => {
    expect(planResume(run({ lastStep: 0 }), 'interrupted', false)).toEqual({
      canResume: true,
      label: 'Restart',
      detail: 'no checkpoint was saved yet: it starts again from step 0 with the same config',
    });
    expect(planResume(run(), 'finished', false)).toEqual({ canResume: false, why: 'finished: every step is done' });
    expect(planResume(run(), 'elsewhere', false)).toMatchObject({
      canResume: false,
      why: 'it is training in another tab of this browser',
    });
    expect(planResume(run(), 'pausing', false)).toMatchObject({ canResume: false });
    expect(planResume(run({ lastCheckpointId: 'r1@1' }), 'stopped', true)).toEqual({
      canResume: false,
      why: 'another run is training in this tab: stop it first',
    });
  });
});

describe('failure reports', () => {
  it("reads a failed run's saved failure, and words it with stack, step, backend and config", () => {
    const failed = run({
      status: 'failed',
      error: 'memory access out of bounds',
      failure: {
        step: 4,
        stack: 'RuntimeError: memory access out of bounds\n    at f',
        at: Date.UTC(2026, 4, 6, 7, 8, 9),
      },
      backend: 'wasm',
    });
    const f = failureOfRun(failed)!;
    expect(f).toEqual({
      runId: 'r1',
      runName: 'first',
      message: 'memory access out of bounds',
      stack: 'RuntimeError: memory access out of bounds\n    at f',
      step: 4,
      config: { steps: 4, seed: 2 },
      backend: 'wasm',
      at: Date.UTC(2026, 4, 6, 7, 8, 9),
    });
    expect(formatFailureReport(f, { userAgent: 'TestBrowser/1' })).toBe(
      [
        'PACT Lab run failure',
        'run: first (r1)',
        'step: 4',
        'backend: wasm',
        'time: 2026-05-06T07:08:09.000Z',
        'browser: TestBrowser/1',
        'message: memory access out of bounds',
        'stack:',
        'RuntimeError: memory access out of bounds',
        '    at f',
        'config:',
        '{',
        '  "steps": 4,',
        '  "seed": 2',
        '}',
      ].join('\n'),
    );
    // a record from before failures were saved: the step after the last logged one, no stack
    const old = failureOfRun(run({ status: 'failed', error: 'x', lastStep: 6 }))!;
    expect([old.step, old.stack, old.at]).toEqual([7, undefined, 1000]);
    expect(formatFailureReport(old)).toContain('stack:\n(none was recorded)\n');
    expect(failureOfRun(run({ status: 'stopped' }))).toBeNull();
  });
});
