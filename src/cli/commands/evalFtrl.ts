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
import { evaluateFtrl, formatFtrlTable } from '../../envs/ftrl/ftrlScore';
import { parseFlags, registerCommand, type CliIO } from '../registry';

// The scoring itself is shared with the browser (the trainer worker's eval-ftrl request).
export {
  evaluateFtrl,
  formatFtrlTable,
  parseFtrlTask,
  type CategoryScore,
  type EvalFtrlReport,
  type FtrlTask,
  type LineProblem,
} from '../../envs/ftrl/ftrlScore';

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

       pact eval-ftrl --config experiments/ftrl-eval.json --tasks FILE.jsonl [--smoke] [--out DIR]
An evaluation experiment file ("kind": "ftrl-eval") headless: its policy and sizes, the
tasks from --tasks (else $PACT_FTRL_TASKS); prints table.md, and writes table.md, table.csv
and results.json to --out DIR when given. --smoke: at most 2 tasks per category.

Malformed lines are reported on stderr with their line number and skipped.`;

async function readInput(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read --${flag} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function readPositiveInt(
  flags: Record<string, string | boolean>,
  name: string,
  fallback: number | undefined,
): number | undefined {
  const v = flags[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !/^[1-9]\d*$/.test(v))
    throw new Error(`--${name} must be a positive integer, got "${String(v)}"`);
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
  if (typeof flags['write-predictions'] === 'string')
    await writePredictions(flags['write-predictions'], result.predictions);
  const { report } = result;
  if (flags.json === true)
    io.out(
      JSON.stringify(
        {
          ...report,
          model: flags.model,
          backend: result.backend,
          selected: result.selected,
          promptTooLong: result.promptTooLong,
          rows: result.summary.rows,
          toolCalls: result.summary.toolCalls,
        },
        null,
        2,
      ),
    );
  else {
    io.out(
      `policy ${flags.model} on ${result.selected} FTRL tasks (${result.promptTooLong} over the prompt window, scored as no calls), greedy, ${result.backend}`,
    );
    for (const line of formatFtrlTable(report)) io.out(line);
  }
  return report.overall.tasks === 0 ? 1 : 0;
}

/** `--config experiments/ftrl-eval.json`: an evaluation experiment file (also `pact train --config`). */
async function runConfigMode(flags: Record<string, string | boolean>, io: CliIO): Promise<number> {
  for (const other of ['predictions', 'model', 'per-category', 'max-turns', 'max-response-tokens', 'tool-timeout-ms']) {
    if (flags[other] !== undefined)
      throw new Error(`--${other} cannot be given with --config: the experiment file sets it`);
  }
  const configPath = flags.config as string;
  let json: unknown;
  try {
    json = JSON.parse(await readFile(configPath, 'utf8'));
  } catch (e) {
    throw new Error(`cannot read --config ${configPath}: ${(e as Error).message}`);
  }
  const backend = (flags.backend ?? 'wasm') as string;
  if (backend !== 'wasm' && backend !== 'cpu') throw new Error(`--backend must be wasm or cpu, got "${backend}"`);
  const { runFtrlEvalConfig } = await import('./evalFtrlPolicy');
  return runFtrlEvalConfig(
    configPath,
    json,
    {
      tasks: flags.tasks as string | undefined,
      isSmoke: flags.smoke === true,
      outDir: flags.out as string | undefined,
      backend,
    },
    io,
  );
}

async function runEvalFtrl(args: string[], io: CliIO): Promise<number> {
  const { flags, positional } = parseFlags(args, {
    values: [
      'tasks',
      'predictions',
      'model',
      'per-category',
      'max-turns',
      'max-response-tokens',
      'backend',
      'tool-timeout-ms',
      'write-predictions',
      'config',
      'out',
    ],
    booleans: ['json', 'missing-as-empty', 'smoke'],
  });
  if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"; see pact eval-ftrl --help`);
  if (typeof flags.config === 'string') return runConfigMode(flags, io);
  if (typeof flags.tasks === 'string' && typeof flags.model === 'string') return runPolicyMode(flags, io);
  if (typeof flags.tasks !== 'string' || typeof flags.predictions !== 'string') {
    throw new Error(
      'needs --tasks FILE.jsonl and either --predictions FILE.jsonl or --model DIR; see pact eval-ftrl --help',
    );
  }
  // One after the other, so that when both are missing the error always names --tasks first.
  const tasksText = await readInput(flags.tasks, 'tasks');
  const predictionsText = await readInput(flags.predictions, 'predictions');
  const report = evaluateFtrl(tasksText, predictionsText, { isMissingScoredEmpty: flags['missing-as-empty'] === true });

  for (const p of report.problems) io.err(`${p.file} line ${p.line}: ${p.message} (skipped)`);
  if (report.tasksWithoutPrediction > 0 && flags['missing-as-empty'] !== true) {
    io.err(
      `${report.tasksWithoutPrediction} tasks have no prediction and were not scored (--missing-as-empty scores them as making no calls)`,
    );
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
