/**
 * `pact tasks [--n 5] [--seed 1] [--split train|test] [--length short|long]
 *             [--categories a,b] [--hops N|MIN-MAX] [--branches N|MIN-MAX]
 *             [--distractors N|MIN-MAX] [--json]`
 *
 * Prints generated tasks (src/envs/generator.ts): question, category, tools, gold calls,
 * sub-answers (`unsolvedSet`) and answer; `--json` prints one task a line (JSONL).
 * All printing goes through `formatTasks`, so later additions (expert traces, prefix
 * levels) go in one place.
 */
import { generateTasks, type CountKnob } from '../../envs/generator';
import { createWorkerExecutor } from '../../envs/sandbox';
import type { Task, TaskCategory } from '../../envs/types';
import { bindTaskRunner, buildVerifiedTrace } from '../../traces/teacher';
import { formatTraceForConsole } from '../../traces/render';
import { parseFlags, registerCommand, type CliIO } from '../registry';

const USAGE = `usage: pact tasks [--n 5] [--seed 1] [--split train|test] [--length short|long]
                  [--categories single_hop,multi_hop,parallel_single_hop,parallel_multi_hop]
                  [--hops N|MIN-MAX] [--branches N|MIN-MAX] [--distractors N|MIN-MAX] [--json]

Prints generated tool-use tasks with the teacher's expert trace (reasoning chunks,
calls, observations, prefix levels L0..L4). Same flags, same tasks and traces.`;

function parseInteger(flag: string, text: string): number {
  if (!/^-?\d+$/.test(text)) throw new Error(`--${flag} must be an integer, got "${text}"`);
  return Number(text);
}

function parseKnob(flag: string, text: string): CountKnob {
  const m = /^(\d+)-(\d+)$/.exec(text);
  if (m) return [Number(m[1]), Number(m[2])];
  return parseInteger(flag, text);
}

/**
 * Attaches the scripted teacher's expert trace to each task (tools run in the
 * sandbox worker; the trace seed is the task seed plus the task's index).
 */
export async function attachExpertTraces(tasks: Task[], seed: number): Promise<Task[]> {
  const executor = await createWorkerExecutor();
  try {
    const out: Task[] = [];
    for (const [i, task] of tasks.entries()) {
      const { trace } = await buildVerifiedTrace(task, bindTaskRunner(task, executor), { seed: `${seed}/${i}` });
      out.push({ ...task, expertTrace: trace });
    }
    return out;
  } finally {
    executor.dispose();
  }
}

/** The text `pact tasks` prints for `tasks`: JSONL with `json`, else a readable block per task. */
export function formatTasks(tasks: Task[], options: { json: boolean }): string[] {
  if (options.json) return tasks.map((t) => JSON.stringify(t));
  const lines: string[] = [];
  for (const t of tasks) {
    lines.push(`# ${t.id} (${t.category})`);
    lines.push(`question: ${t.question}`);
    lines.push(`tools: ${t.tools.map((x) => x.function.name).join(', ')}`);
    for (const [i, call] of (t.goldCalls ?? []).entries())
      lines.push(`gold call ${i + 1}: ${call.name} ${JSON.stringify(call.arguments)}`);
    lines.push(`sub-answers: ${JSON.stringify(t.unsolvedSet)}`);
    lines.push(`answer: ${t.answer}`);
    if (t.expertTrace) lines.push(formatTraceForConsole(t.expertTrace));
    lines.push('');
  }
  return lines;
}

registerCommand({
  name: 'tasks',
  summary: 'print generated tool-use tasks (question, tools, gold calls, answer)',
  usage: USAGE,
  async run(args: string[], io: CliIO): Promise<number> {
    const { flags, positional } = parseFlags(args, {
      values: ['n', 'seed', 'split', 'length', 'categories', 'hops', 'branches', 'distractors'],
      booleans: ['json'],
    });
    if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"`);
    const str = (name: string): string | undefined =>
      typeof flags[name] === 'string' ? (flags[name] as string) : undefined;
    const split = str('split') ?? 'train';
    if (split !== 'train' && split !== 'test') throw new Error(`--split must be train or test, got "${split}"`);
    const length = str('length') ?? 'short';
    if (length !== 'short' && length !== 'long') throw new Error(`--length must be short or long, got "${length}"`);
    const seed = parseInteger('seed', str('seed') ?? '1');
    const generated = generateTasks({
      n: parseInteger('n', str('n') ?? '5'),
      seed,
      split,
      length,
      categories: str('categories')
        ?.split(',')
        .map((c) => c.trim()) as TaskCategory[] | undefined,
      hops: str('hops') !== undefined ? parseKnob('hops', str('hops')!) : undefined,
      branches: str('branches') !== undefined ? parseKnob('branches', str('branches')!) : undefined,
      distractors: str('distractors') !== undefined ? parseKnob('distractors', str('distractors')!) : undefined,
    });
    const tasks = await attachExpertTraces(generated, seed);
    for (const line of formatTasks(tasks, { json: flags.json === true })) io.out(line);
    return 0;
  },
});
