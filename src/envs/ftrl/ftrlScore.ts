/**
 * FTRL's scoring (Ye et al. 2025, `ye2025ftrl`): Solve-R / Solve-P / Solve-F1 of
 * each task's tool calls against its `unsolved_set` (`ftrlSolveMetrics`, src/core/metrics.ts),
 * macro-averaged over tasks per category (the task's `data_source`, else `category`) and
 * overall. Pure (texts in, a report out), shared by `pact eval-ftrl` (both modes), the
 * trainer worker's `eval-ftrl` request and the experiment runner's tables.
 *
 * Tasks: one JSON object a line, `unsolved_set` a JSON string or an object mapping a tool
 * name to its expected answers. A task is found by its `id` field, or when it has none by
 * its 0-based line index (as a string), and always by `index` = its 0-based line index.
 * Predictions: `{"id": …, "calls": [{"name", "output"}]}` or `{"index": n, "calls": …}` a
 * line; a non-string output is compared as its JSON text. A malformed line of either file
 * is reported with its line number and skipped.
 */
import { ftrlSolveMetrics, meanSolveMetrics, type CallOutput, type SolveMetrics } from '../../core/metrics';
import { excerptValue, findJsonHazard, limitText, setOwn, splitJsonlLines } from '../../core/untrustedJson';

export interface FtrlTask {
  /** The task's own `id`, else its line index as a string. */
  id: string;
  /** 0-based line index in the tasks file. */
  index: number;
  category: string;
  unsolvedSet: Record<string, string[]>;
}

export interface LineProblem {
  file: 'tasks' | 'predictions';
  /** 1-based line number. */
  line: number;
  message: string;
}

interface FtrlPrediction {
  task: FtrlTask;
  calls: CallOutput[];
}

export interface CategoryScore {
  category: string;
  tasks: number;
  solveR: number;
  solveP: number;
  solveF1: number;
}

export interface EvalFtrlReport {
  categories: CategoryScore[];
  overall: CategoryScore;
  /** Tasks without a prediction (scored as making no calls only with --missing-as-empty). */
  tasksWithoutPrediction: number;
  problems: LineProblem[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Splits JSONL text (splitJsonlLines) into [1-based line number, parsed object] pairs, reporting bad lines. */
function parseJsonLines(
  text: string,
  file: LineProblem['file'],
  problems: LineProblem[],
): [number, Record<string, unknown>][] {
  const rows: [number, Record<string, unknown>][] = [];
  for (const { line, text: raw } of splitJsonlLines(text)) {
    if (raw.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      problems.push({ file, line, message: limitText(`invalid JSON (${e instanceof Error ? e.message : String(e)})`) });
      continue;
    }
    if (!isPlainObject(value)) {
      problems.push({ file, line, message: 'not a JSON object' });
      continue;
    }
    const hazard = findJsonHazard(value);
    if (hazard) {
      problems.push({ file, line, message: limitText(`${hazard.path.join('.')}: ${hazard.message}`) });
      continue;
    }
    rows.push([line, value]);
  }
  return rows;
}

/** A task's category in the report: its `data_source` (`self/single_hop`), else `category`, else 'unknown'. */
export function readFtrlCategory(obj: Record<string, unknown>): string {
  const category = obj.data_source ?? obj.category ?? 'unknown';
  if (typeof category !== 'string') throw new Error('data_source must be a string');
  return category;
}

/** Parses one FTRL task object; throws a message naming the bad field. */
export function parseFtrlTask(obj: Record<string, unknown>, index: number): FtrlTask {
  let unsolved: unknown = obj.unsolved_set;
  if (typeof unsolved === 'string') {
    try {
      unsolved = JSON.parse(unsolved);
    } catch {
      throw new Error('unsolved_set is a string but not valid JSON');
    }
  }
  if (!isPlainObject(unsolved))
    throw new Error('unsolved_set must be an object (or its JSON text) mapping tool names to answers');
  const unsolvedSet: Record<string, string[]> = {};
  for (const [tool, answers] of Object.entries(unsolved)) {
    if (!Array.isArray(answers) || !answers.every((a) => typeof a === 'string')) {
      throw new Error(`unsolved_set[${excerptValue(tool)}] must be an array of strings`);
    }
    setOwn(unsolvedSet, tool, answers);
  }
  const category = readFtrlCategory(obj);
  const ownId = obj.id;
  if (ownId !== undefined && typeof ownId !== 'string' && typeof ownId !== 'number')
    throw new Error('id must be a string or a number');
  return { id: ownId === undefined ? String(index) : String(ownId), index, category, unsolvedSet };
}

function parseCalls(value: unknown): CallOutput[] {
  if (!Array.isArray(value)) throw new Error('calls must be an array of {name, output}');
  return value.map((c, k) => {
    if (!isPlainObject(c) || typeof c.name !== 'string') throw new Error(`calls[${k}].name must be a string`);
    const output =
      c.output === undefined || c.output === null
        ? ''
        : typeof c.output === 'string'
          ? c.output
          : JSON.stringify(c.output);
    return { name: c.name, output };
  });
}

/** Scores predictions against tasks; pure apart from its inputs (texts, not paths). */
export function evaluateFtrl(
  tasksText: string,
  predictionsText: string,
  { isMissingScoredEmpty = false } = {},
): EvalFtrlReport {
  const problems: LineProblem[] = [];
  const tasks: FtrlTask[] = [];
  for (const [line, obj] of parseJsonLines(tasksText, 'tasks', problems)) {
    try {
      tasks.push(parseFtrlTask(obj, line - 1));
    } catch (e) {
      problems.push({ file: 'tasks', line, message: (e as Error).message });
    }
  }
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const byIndex = new Map(tasks.map((t) => [t.index, t]));

  const predictions = new Map<FtrlTask, FtrlPrediction>();
  for (const [line, obj] of parseJsonLines(predictionsText, 'predictions', problems)) {
    try {
      let task: FtrlTask | undefined;
      if (obj.index !== undefined) {
        if (!Number.isInteger(obj.index)) throw new Error('index must be an integer');
        task = byIndex.get(obj.index as number);
        if (!task) throw new Error(`no task at index ${obj.index}`);
      } else if (obj.id !== undefined) {
        if (typeof obj.id !== 'string' && typeof obj.id !== 'number')
          throw new Error('id must be a string or a number');
        task = byId.get(String(obj.id));
        if (!task) throw new Error(`no task with id "${obj.id}"`);
      } else {
        throw new Error('needs "id" or "index"');
      }
      const calls = parseCalls(obj.calls);
      if (predictions.has(task)) throw new Error(`a second prediction for task ${task.id}`);
      predictions.set(task, { task, calls });
    } catch (e) {
      problems.push({ file: 'predictions', line, message: (e as Error).message });
    }
  }

  const scored: [FtrlTask, SolveMetrics][] = [];
  for (const task of tasks) {
    const prediction = predictions.get(task);
    if (prediction) scored.push([task, ftrlSolveMetrics(prediction.calls, task.unsolvedSet)]);
    else if (isMissingScoredEmpty) scored.push([task, ftrlSolveMetrics([], task.unsolvedSet)]);
  }
  const categoryNames = [...new Set(scored.map(([t]) => t.category))].sort();
  const summarize = (category: string, list: SolveMetrics[]): CategoryScore => {
    const mean = meanSolveMetrics(list);
    return {
      category,
      tasks: list.length,
      solveR: mean?.solveR ?? 0,
      solveP: mean?.solveP ?? 0,
      solveF1: mean?.solveF1 ?? 0,
    };
  };
  return {
    categories: categoryNames.map((c) =>
      summarize(
        c,
        scored.filter(([t]) => t.category === c).map(([, m]) => m),
      ),
    ),
    overall: summarize(
      'overall',
      scored.map(([, m]) => m),
    ),
    tasksWithoutPrediction: tasks.filter((t) => !predictions.has(t)).length,
    problems,
  };
}

/** The text table: one row per category, then overall, in percent. */
export function formatFtrlTable(report: EvalFtrlReport): string[] {
  const rows = [...report.categories, report.overall];
  const width = Math.max('category'.length, ...rows.map((r) => r.category.length));
  const pct = (x: number) => (100 * x).toFixed(2).padStart(8);
  const header = `${'category'.padEnd(width)}  ${'tasks'.padStart(5)}  ${'Solve-R'.padStart(8)}  ${'Solve-P'.padStart(8)}  ${'Solve-F1'.padStart(8)}`;
  const line = (r: CategoryScore) =>
    `${r.category.padEnd(width)}  ${String(r.tasks).padStart(5)}  ${pct(r.solveR)}  ${pct(r.solveP)}  ${pct(r.solveF1)}`;
  return [header, ...report.categories.map(line), '-'.repeat(header.length), line(report.overall)];
}

/** Picks the first `perCategory` items of each category (data_source), keeping file order. */
export function selectPerCategory<T extends { category: string }>(
  items: readonly T[],
  perCategory: number | undefined,
): T[] {
  if (perCategory === undefined) return [...items];
  const seen = new Map<string, number>();
  return items.filter((t) => {
    const n = seen.get(t.category) ?? 0;
    seen.set(t.category, n + 1);
    return n < perCategory;
  });
}
