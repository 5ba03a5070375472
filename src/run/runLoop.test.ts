// The run loop's rule for when to evaluate and checkpoint, as call sequences listed by hand.
import { describe, expect, it } from 'vitest';
import type { EvalMetrics, StepMetrics } from '../recipes/types';
import { runTrainingLoop, type RunLoopOptions, type RunLoopSinks } from './runLoop';

/** A trainer and sinks that record every call as one line: `step 1`, `eval 2`, `ckpt 4`, … */
function record(startAt = 0, opts: { stopBefore?: number; failAt?: number } = {}) {
  const calls: string[] = [];
  const trainer = {
    completedSteps: startAt,
    async step(): Promise<StepMetrics> {
      const n = this.completedSteps + 1;
      if (n === opts.failAt) throw new Error(`step ${n} failed`);
      this.completedSteps = n;
      calls.push(`step ${n}`);
      return { step: n } as StepMetrics;
    },
    async evaluate(): Promise<EvalMetrics> {
      calls.push(`eval ${this.completedSteps}`);
      return { step: this.completedSteps } as EvalMetrics;
    },
  };
  const sinks: RunLoopSinks = {
    beforeStep: () => trainer.completedSteps + 1 !== opts.stopBefore,
    onStep: (m) => void calls.push(`onStep ${m.step}`),
    onEval: (e, atStart) => void calls.push(`onEval ${e.step}${atStart ? ' (start)' : ''}`),
    onStepDone: (m, e) => void calls.push(`done ${m.step}${e ? ` +eval ${e.step}` : ''}`),
    checkpoint: async (s) => void calls.push(`ckpt ${s}`),
  };
  return { calls, trainer, sinks };
}

const base: RunLoopOptions = { totalSteps: 4, evalEvery: 2, evalAtStart: false, checkpointEvery: 0 };

describe('runTrainingLoop', () => {
  it('evaluates every evalEvery steps and at the last, and checkpoints once at the end', async () => {
    const { calls, trainer, sinks } = record();
    const { last, evals } = await runTrainingLoop(trainer, { ...base, totalSteps: 5 }, sinks);
    expect(calls).toEqual([
      'step 1', 'onStep 1', 'done 1',
      'step 2', 'onStep 2', 'eval 2', 'onEval 2', 'done 2 +eval 2',
      'step 3', 'onStep 3', 'done 3',
      'step 4', 'onStep 4', 'eval 4', 'onEval 4', 'done 4 +eval 4',
      'step 5', 'onStep 5', 'eval 5', 'onEval 5', 'done 5 +eval 5',
      'ckpt 5',
    ]); // prettier-ignore
    expect(last?.step).toBe(5);
    expect(evals.map((e) => e.step)).toEqual([2, 4, 5]);
  });

  it('evaluates the starting policy with evalAtStart, and checkpoints every checkpointEvery steps without saving the last twice', async () => {
    const { calls, trainer, sinks } = record();
    await runTrainingLoop(trainer, { ...base, evalAtStart: true, evalEvery: 0, checkpointEvery: 2 }, sinks);
    expect(calls).toEqual([
      'eval 0', 'onEval 0 (start)',
      'step 1', 'onStep 1', 'done 1',
      'step 2', 'onStep 2', 'done 2', 'ckpt 2',
      'step 3', 'onStep 3', 'done 3',
      'step 4', 'onStep 4', 'done 4', 'ckpt 4',
    ]); // prettier-ignore
  });

  it('checkpointEvery 1 saves every step (the app: a reload loses at most the step under way)', async () => {
    const { calls, trainer, sinks } = record();
    await runTrainingLoop(trainer, { ...base, totalSteps: 3, evalEvery: 0, checkpointEvery: 1 }, sinks);
    expect(calls).toEqual([
      'step 1', 'onStep 1', 'done 1', 'ckpt 1',
      'step 2', 'onStep 2', 'done 2', 'ckpt 2',
      'step 3', 'onStep 3', 'done 3', 'ckpt 3',
    ]); // prettier-ignore
  });

  it('steps 0 evaluates the starting policy and saves it', async () => {
    const { calls, trainer, sinks } = record();
    await runTrainingLoop(trainer, { ...base, totalSteps: 0 }, sinks);
    expect(calls).toEqual(['eval 0', 'onEval 0 (start)', 'ckpt 0']);
  });

  it('a resumed run does not evaluate its start again, and continues the multiples of evalEvery and checkpointEvery', async () => {
    const { calls, trainer, sinks } = record(3);
    await runTrainingLoop(
      trainer,
      { ...base, totalSteps: 6, evalAtStart: true, checkpointEvery: 4, isResumed: true },
      sinks,
    );
    expect(calls).toEqual([
      'step 4', 'onStep 4', 'eval 4', 'onEval 4', 'done 4 +eval 4', 'ckpt 4',
      'step 5', 'onStep 5', 'done 5',
      'step 6', 'onStep 6', 'eval 6', 'onEval 6', 'done 6 +eval 6',
      'ckpt 6',
    ]); // prettier-ignore
    // From a checkpoint at step 0 (an evaluate-only run extended): its evaluation is not repeated.
    const zero = record(0);
    await runTrainingLoop(zero.trainer, { ...base, totalSteps: 1, evalAtStart: true, isResumed: true }, zero.sinks);
    expect(zero.calls).toEqual(['step 1', 'onStep 1', 'eval 1', 'onEval 1', 'done 1 +eval 1', 'ckpt 1']);
  });

  it('a stop before a step ends the loop with a checkpoint of the step reached, and no evaluation', async () => {
    const { calls, trainer, sinks } = record(0, { stopBefore: 3 });
    await runTrainingLoop(trainer, { ...base, totalSteps: 6, evalEvery: 4, checkpointEvery: 2 }, sinks);
    expect(calls).toEqual(['step 1', 'onStep 1', 'done 1', 'step 2', 'onStep 2', 'done 2', 'ckpt 2']);
  });

  it('a failing step propagates and checkpoints nothing more', async () => {
    const { calls, trainer, sinks } = record(0, { failAt: 2 });
    await expect(runTrainingLoop(trainer, { ...base, checkpointEvery: 1 }, sinks)).rejects.toThrow('step 2 failed');
    expect(calls).toEqual(['step 1', 'onStep 1', 'done 1', 'ckpt 1']);
  });
});
