/**
 * The scripted teacher's plan (teacher.ts): which earlier gold calls produce each argument
 * value of a later one, and how the gold calls group into assistant turns (parallel
 * categories run each dependency level together, the others one call per turn).
 */
import type { ToolCall } from '../core/types';
import { getOwn } from '../core/untrustedJson';
import type { Task } from '../envs/types';
import { normalizeText } from './teacherObservations';

/** Expected answers of gold call i: its own entry when the tool's answers line up with its calls. */
export function listExpectedAnswers(task: Task, goldCalls: readonly ToolCall[], i: number): string[] {
  const name = goldCalls[i].name;
  const answers = (task.unsolvedSet && getOwn(task.unsolvedSet, name)) ?? [];
  const sameTool = goldCalls.map((c, j) => (c.name === name ? j : -1)).filter((j) => j >= 0);
  if (answers.length === sameTool.length && sameTool.length > 1) return [answers[sameTool.indexOf(i)]];
  return answers;
}

/** Key of one value slot of a call: the argument name, plus the element index for arrays. */
export function slotKey(arg: string, element?: number): string {
  return element === undefined ? arg : `${arg}[${element}]`;
}

/**
 * For each gold call, each scalar argument and each scalar element of an array argument
 * (e.g. a calculator's `numbers`): the earlier gold calls that produce its value (an
 * expected answer of theirs that the question does not already state).
 */
export function planDependencies(task: Task, goldCalls: readonly ToolCall[]): Array<Map<string, number[]>> {
  const question = normalizeText(task.question);
  const findProducers = (j: number, value: unknown): number[] => {
    if (value === null || typeof value === 'object') return [];
    const text = normalizeText(String(value));
    if (!text || question.includes(text)) return [];
    const producers: number[] = [];
    for (let i = 0; i < j; i++) {
      if (listExpectedAnswers(task, goldCalls, i).some((a) => normalizeText(String(a)) === text)) producers.push(i);
    }
    return producers;
  };
  return goldCalls.map((call, j) => {
    const deps = new Map<string, number[]>();
    for (const [arg, value] of Object.entries(call.arguments ?? {})) {
      const slots: Array<[string, unknown]> = Array.isArray(value)
        ? value.map((el, e) => [slotKey(arg, e), el])
        : [[slotKey(arg), value]];
      for (const [key, slotValue] of slots) {
        const producers = findProducers(j, slotValue);
        if (producers.length > 0) deps.set(key, producers);
      }
    }
    return deps;
  });
}

/**
 * Groups of gold call indices, one group per assistant turn. Parallel categories run
 * each dependency level together (level = 1 + the deepest producer's level); other
 * categories make one call per turn, in gold order.
 */
export function groupCallsIntoTurns(task: Task, deps: Array<Map<string, number[]>>): number[][] {
  const isParallel = task.category === 'parallel_single_hop' || task.category === 'parallel_multi_hop';
  if (!isParallel) return deps.map((_, j) => [j]);
  const levels: number[] = [];
  deps.forEach((slots, j) => {
    const producers = [...slots.values()].flat();
    levels[j] = producers.length === 0 ? 0 : 1 + Math.max(...producers.map((i) => levels[i]));
  });
  const groups: number[][] = [];
  levels.forEach((level, j) => (groups[level] ??= []).push(j));
  return groups.filter((g) => g !== undefined);
}

export type ArgSource = 'question' | 'observation' | 'task';

export interface ResolvedCall {
  goldIndex: number;
  call: ToolCall;
  sources: Map<string, ArgSource>;
}
