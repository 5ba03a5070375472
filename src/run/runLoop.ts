/**
 * The one loop that trains, evaluates and checkpoints a run, for `pact train`
 * (src/cli/commands/train.ts), the app's trainer worker (workers/trainingSession.ts) and
 * `npm run record-demo` (scripts/recordDemo.ts). Browser- and Node-safe: what to do with the
 * metrics and where a checkpoint goes come in `RunLoopSinks`.
 *
 * The rule (docs/runs.md):
 *   - step 0: the starting policy is evaluated when the loop starts at step 0, not from a
 *     checkpoint, and `evalAtStart` is set or `totalSteps` is 0 (steps 0 = evaluate only);
 *   - after step s: evaluated when `evalEvery` > 0 and s is a multiple of it or the last step;
 *     then checkpointed when `checkpointEvery` > 0 and s is a multiple of it;
 *   - when the loop ends (the last step taken, or stopped by `beforeStep`): checkpointed at the
 *     step reached unless that step was just checkpointed (so a finished, stopped or
 *     evaluate-only run always has its last state saved).
 * Per step the calls are: beforeStep → step → onStep → [beforeEval → evaluate → onEval] →
 * onStepDone → [checkpoint].
 */
import type { EvalMetrics, StepMetrics } from '../recipes/types';

/** The trainer as the loop drives it (Trainer, or a fake in tests). */
export interface RunLoopTrainer {
  readonly completedSteps: number;
  step(): Promise<StepMetrics>;
  evaluate(): Promise<EvalMetrics>;
}

export interface RunLoopOptions {
  /** The step the loop trains to (the config's steps, or fewer). */
  totalSteps: number;
  evalEvery: number;
  evalAtStart: boolean;
  checkpointEvery: number;
  /** The trainer's state came from a checkpoint: its step-0 evaluation, if any, is already recorded. */
  isResumed?: boolean;
}

export interface RunLoopSinks {
  /** Before each step; false stops the loop (the end checkpoint is still taken). May wait (a pause). */
  beforeStep?(): Promise<boolean> | boolean;
  /** A step's metrics, as soon as it is taken. */
  onStep?(metrics: StepMetrics): Promise<void> | void;
  /** Before an evaluation at `step` starts. */
  beforeEval?(step: number): Promise<void> | void;
  /** An evaluation; `atStart` for the starting policy's (step 0, no step of its own). */
  onEval?(metrics: EvalMetrics, atStart: boolean): Promise<void> | void;
  /** A step with its evaluation (if one followed it), before its checkpoint. */
  onStepDone?(metrics: StepMetrics, evaluation: EvalMetrics | undefined): Promise<void> | void;
  /** Saves the trainer's state at `step`. */
  checkpoint(step: number): Promise<void>;
}

/** Whether the starting policy is evaluated (RunLoopOptions' rule for step 0). */
export function isStartEvaluated(o: RunLoopOptions, completedSteps: number): boolean {
  return completedSteps === 0 && !o.isResumed && (o.evalAtStart || o.totalSteps === 0);
}

/** Whether step `s` (just taken) is followed by an evaluation. */
export function isEvaluatedAfter(o: RunLoopOptions, s: number): boolean {
  return o.evalEvery > 0 && (s % o.evalEvery === 0 || s === o.totalSteps);
}

/** Whether step `s` (just taken) is checkpointed inside the loop (the end checkpoint aside). */
export function isCheckpointedAfter(o: RunLoopOptions, s: number): boolean {
  return o.checkpointEvery > 0 && s % o.checkpointEvery === 0;
}

/**
 * Trains `trainer` from its completed steps to `totalSteps` by the rule above. Returns the
 * last step's metrics (undefined when none was taken) and every evaluation, in order. A
 * failure in the trainer or a sink propagates (nothing more is checkpointed).
 */
export async function runTrainingLoop(
  trainer: RunLoopTrainer,
  options: RunLoopOptions,
  sinks: RunLoopSinks,
): Promise<{ last?: StepMetrics; evals: EvalMetrics[] }> {
  const evals: EvalMetrics[] = [];
  let last: StepMetrics | undefined;
  let savedStep: number | undefined;
  const evaluate = async (step: number, atStart: boolean): Promise<EvalMetrics> => {
    await sinks.beforeEval?.(step);
    const e = await trainer.evaluate();
    evals.push(e);
    await sinks.onEval?.(e, atStart);
    return e;
  };
  const checkpoint = async (step: number) => {
    await sinks.checkpoint(step);
    savedStep = step;
  };
  if (isStartEvaluated(options, trainer.completedSteps)) await evaluate(0, true);
  while (trainer.completedSteps < options.totalSteps) {
    if (sinks.beforeStep && !(await sinks.beforeStep())) break;
    const metrics = await trainer.step();
    last = metrics;
    await sinks.onStep?.(metrics);
    const s = trainer.completedSteps;
    const evaluation = isEvaluatedAfter(options, s) ? await evaluate(s, false) : undefined;
    await sinks.onStepDone?.(metrics, evaluation);
    if (isCheckpointedAfter(options, s)) await checkpoint(s);
  }
  if (savedStep !== trainer.completedSteps) await checkpoint(trainer.completedSteps);
  return { last, evals };
}
