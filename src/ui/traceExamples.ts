/**
 * Example expert traces for the Prefix levels and Token masks panels: real data, made on
 * demand. A handful of generated tasks (src/envs/generator.ts, FTRL's four categories,
 * cycled) and, for the one the user picks, the scripted teacher's verified expert trace
 * h* (src/traces/teacher.ts, PACT App. C "Expert trajectory generation"), with the trace
 * seed `${seed}/${index}` exactly as `pact tasks` uses it, so the CLI prints the same trace.
 *
 * The page imports this module lazily (TraceState), so the generator and the teacher
 * load only when a trace panel comes into view. The views are in prefixView.ts.
 */
import { generateTasks } from '../envs/generator';
import type { Task } from '../envs/types';
import { bindTaskRunner, buildVerifiedTrace, isErrorObservation, type StubExecutor } from '../traces/teacher';
import type { ExpertTrace } from '../traces/types';
import type { TraceVerdict } from '../traces/verify';
import { EXAMPLE_TASK_COUNT } from './prefixView';

/** The example tasks of a seed: tasks 0..11 of the built-in generator's train split. */
export function generateExampleTasks(seed: number, count = EXAMPLE_TASK_COUNT): Task[] {
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`seed must be a whole number ≥ 0, got ${String(seed)}`);
  return generateTasks({ seed, n: count, split: 'train' });
}

/** The teacher's verified trace for task `index` of `seed` (same trace seed as `pact tasks`). */
export function buildExampleTrace(
  task: Task,
  index: number,
  seed: number,
  executor: StubExecutor,
): Promise<{ trace: ExpertTrace; verdict: TraceVerdict }> {
  return buildVerifiedTrace(task, bindTaskRunner(task, executor), { seed: `${seed}/${index}` });
}

/** [turn][call]: true where the observation reads as a failed call (the teacher's retry follows). */
export function listFailedObservations(trace: ExpertTrace): boolean[][] {
  return trace.turns.map((t) => t.observations.map((o) => isErrorObservation(o)));
}
