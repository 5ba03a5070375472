/**
 * `pact eval-ftrl --tasks FILE.jsonl --predictions FILE.jsonl [--json] [--missing-as-empty]`
 *
 * Scores tool-call predictions on FTRL tasks with FTRL's Solve-R / Solve-P / Solve-F1
 * (`ftrlSolveMetrics` in src/core/metrics.ts), macro-averaged over tasks per category
 * (the task's `data_source`, else `category`) and overall.
 *
 * Tasks: one JSON object a line, `unsolved_set` a JSON string or an object mapping a tool
 * name to its expected answers. A task is found by its `id` field, or when it has none by
 * its 0-based line index (as a string), and always by `index` = its 0-based line index.
 * Predictions: `{"id": …, "calls": [{"name", "output"}]}` or `{"index": n, "calls": …}` a
 * line; a non-string output is compared as its JSON text. A malformed line of either file
 * is reported on stderr with its line number and skipped.
 */
import { readFile } from 'node:fs/promises';
import { ftrlSolveMetrics, meanSolveMetrics, type CallOutput, type SolveMetrics } from '../../core/metrics';
import { parseFlags, registerCommand, type CliIO } from '../registry';

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

/** Splits JSONL text into [1-based line number, parsed object] pairs, reporting bad lines. */
function parseJsonLines(text: string, file: LineProblem['file'], problems: LineProblem[]): [number, Record<string, unknown>][] {
  const rows: [number, Record<string, unknown>][] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      problems.push({ file, line: i + 1, message: `invalid JSON (${e instanceof Error ? e.message : String(e)})` });
      return;
    }
    if (!isPlainObject(value)) {
      problems.push({ file, line: i + 1, message: 'not a JSON object' });
      return;
    }
    rows.push([i + 1, value]);
  });
  return rows;
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
  if (!isPlainObject(unsolved)) throw new Error('unsolved_set must be an object (or its JSON text) mapping tool names to answers');
  const unsolvedSet: Record<string, string[]> = {};
  for (const [tool, answers] of Object.entries(unsolved)) {
    if (!Array.isArray(answers) || !answers.every((a) => typeof a === 'string')) {
      throw new Error(`unsolved_set["${tool}"] must be an array of strings`);
    }
    unsolvedSet[tool] = answers;
  }
  const category = obj.data_source ?? obj.category ?? 'unknown';
  if (typeof category !== 'string') throw new Error('data_source must be a string');
  const ownId = obj.id;
  if (ownId !== undefined && typeof ownId !== 'string' && typeof ownId !== 'number') throw new Error('id must be a string or a number');
  return { id: ownId === undefined ? String(index) : String(ownId), index, category, unsolvedSet };
}

function parseCalls(value: unknown): CallOutput[] {
  if (!Array.isArray(value)) throw new Error('calls must be an array of {name, output}');
  return value.map((c, k) => {
    if (!isPlainObject(c) || typeof c.name !== 'string') throw new Error(`calls[${k}].name must be a string`);
    const output = c.output === undefined || c.output === null ? '' : typeof c.output === 'string' ? c.output : JSON.stringify(c.output);
    return { name: c.name, output };
  });
}

/** Scores predictions against tasks; pure apart from its inputs (texts, not paths). */
export function evaluateFtrl(tasksText: string, predictionsText: string, { isMissingScoredEmpty = false } = {}): EvalFtrlReport {
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
        if (typeof obj.id !== 'string' && typeof obj.id !== 'number') throw new Error('id must be a string or a number');
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
    return { category, tasks: list.length, solveR: mean?.solveR ?? 0, solveP: mean?.solveP ?? 0, solveF1: mean?.solveF1 ?? 0 };
  };
  return {
    categories: categoryNames.map((c) => summarize(c, scored.filter(([t]) => t.category === c).map(([, m]) => m))),
    overall: summarize('overall', scored.map(([, m]) => m)),
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
  const line = (r: CategoryScore) => `${r.category.padEnd(width)}  ${String(r.tasks).padStart(5)}  ${pct(r.solveR)}  ${pct(r.solveP)}  ${pct(r.solveF1)}`;
  return [header, ...report.categories.map(line), '-'.repeat(header.length), line(report.overall)];
}

const USAGE = `usage: pact eval-ftrl --tasks FILE.jsonl --predictions FILE.jsonl [--json] [--missing-as-empty]
       pact eval-ftrl --tasks FILE.jsonl --model DIR [--per-category N] [--max-turns 6]
                      [--max-response-tokens 512] [--backend wasm|cpu] [--tool-timeout-ms 5000]
                      [--write-predictions FILE.jsonl] [--json]

Scores FTRL tool-call predictions: Solve-R, Solve-P, Solve-F1 (FTRL's metrics), macro-averaged
over tasks per category (data_source) and overall.

  --tasks FILE         FTRL tasks, one JSON object a line (unsolved_set: JSON string or object)
  --predictions FILE   one {"id" | "index", "calls": [{"name", "output"}]} a line;
                       index = 0-based line of the task, id = the task's id (else its index)
  --json               print the report as JSON instead of a table
  --missing-as-empty   score tasks without a prediction as making no calls (default: not scored)

With --model DIR instead of --predictions, the predictions come from the policy in DIR (a
Qwen3 folder: a pact checkpoint, public/warm-start, or a Hugging Face Qwen3 folder): one
greedy prompt-only rollout per task against the task's Python tools, run in Pyodide.
  --per-category N     only the first N tasks of each category (default: all)
  --write-predictions  also write the policy's predictions, in the --predictions format
A task whose prompt does not fit the model's window is scored as making no calls.

Malformed lines are reported on stderr with their line number and skipped.`;

async function readInput(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read --${flag} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function readPositiveInt(flags: Record<string, string | boolean>, name: string, fallback: number | undefined): number | undefined {
  const v = flags[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !/^[1-9]\d*$/.test(v)) throw new Error(`--${name} must be a positive integer, got "${String(v)}"`);
  return Number(v);
}

async function runPolicyMode(flags: Record<string, string | boolean>, io: CliIO): Promise<number> {
  if (flags.predictions !== undefined) throw new Error('give either --predictions or --model, not both');
  const backend = (flags.backend ?? 'wasm') as string;
  if (backend !== 'wasm' && backend !== 'cpu') throw new Error(`--backend must be wasm or cpu, got "${backend}"`);
  const { evaluatePolicyOnFtrl, writePredictions } = await import('./evalFtrlPolicy');
  const result = await evaluatePolicyOnFtrl(
    {
      modelDir: flags.model as string,
      tasksPath: flags.tasks as string,
      perCategory: readPositiveInt(flags, 'per-category', undefined),
      maxTurns: readPositiveInt(flags, 'max-turns', 6)!,
      maxResponseTokens: readPositiveInt(flags, 'max-response-tokens', 512)!,
      backend,
      toolTimeoutMs: readPositiveInt(flags, 'tool-timeout-ms', 5000)!,
    },
    io,
  );
  if (typeof flags['write-predictions'] === 'string') await writePredictions(flags['write-predictions'], result.predictions);
  const { report } = result;
  if (flags.json === true) io.out(JSON.stringify({ ...report, model: flags.model, backend: result.backend, selected: result.selected, promptTooLong: result.promptTooLong }, null, 2));
  else {
    io.out(`policy ${flags.model} on ${result.selected} FTRL tasks (${result.promptTooLong} over the prompt window, scored as no calls), greedy, ${result.backend}`);
    for (const line of formatFtrlTable(report)) io.out(line);
  }
  return report.overall.tasks === 0 ? 1 : 0;
}

async function runEvalFtrl(args: string[], io: CliIO): Promise<number> {
  const { flags, positional } = parseFlags(args, {
    values: ['tasks', 'predictions', 'model', 'per-category', 'max-turns', 'max-response-tokens', 'backend', 'tool-timeout-ms', 'write-predictions'],
    booleans: ['json', 'missing-as-empty'],
  });
  if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"; see pact eval-ftrl --help`);
  if (typeof flags.tasks === 'string' && typeof flags.model === 'string') return runPolicyMode(flags, io);
  if (typeof flags.tasks !== 'string' || typeof flags.predictions !== 'string') {
    throw new Error('needs --tasks FILE.jsonl and either --predictions FILE.jsonl or --model DIR; see pact eval-ftrl --help');
  }
  // One after the other, so that when both are missing the error always names --tasks first.
  const tasksText = await readInput(flags.tasks, 'tasks');
  const predictionsText = await readInput(flags.predictions, 'predictions');
  const report = evaluateFtrl(tasksText, predictionsText, { isMissingScoredEmpty: flags['missing-as-empty'] === true });

  for (const p of report.problems) io.err(`${p.file} line ${p.line}: ${p.message} (skipped)`);
  if (report.tasksWithoutPrediction > 0 && flags['missing-as-empty'] !== true) {
    io.err(`${report.tasksWithoutPrediction} tasks have no prediction and were not scored (--missing-as-empty scores them as making no calls)`);
  }
  if (flags.json === true) io.out(JSON.stringify(report, null, 2));
  else for (const line of formatFtrlTable(report)) io.out(line);
  if (report.overall.tasks === 0) {
    io.err('no task was scored: no prediction matched a task');
    return 1;
  }
  return 0;
}

registerCommand({
  name: 'eval-ftrl',
  summary: 'score FTRL predictions, or a policy run on FTRL tasks: Solve-R/P/F1 per category and overall',
  usage: USAGE,
  run: runEvalFtrl,
});
