/**
 * A policy on FTRL test tasks, the same loop in Node
 * (`pact eval-ftrl --model`, src/cli/commands/evalFtrlPolicy.ts) and in the trainer worker
 * (the `eval-ftrl` request, workers/ftrlEvalSession.ts): for each selected task, one greedy
 * prompt-only rollout (collectToolUseRollouts, temperature 0) against the task's own tools
 * through the given executor (Python tools in Pyodide: LanguageRoutingExecutor); the
 * episode's calls become an FTRL prediction line `{index, calls: [{name, output}]}`, scored
 * by `evaluateFtrl` (src/envs/ftrl/ftrlScore.ts): Solve-R / Solve-P / Solve-F1 per category
 * (data_source) and overall.
 *
 * Platform-free: the caller loads the policy, the tokenizer and the executor.
 *
 * Tasks whose prompt does not fit the window: docs/runs.md.
 */
import { createRng } from '../core/rng';
import { splitJsonlLines } from '../core/untrustedJson';
import { formatFtrlLineError, parseFtrlJsonl } from '../envs/ftrl/importFtrl';
import { evaluateFtrl, readFtrlCategory, selectPerCategory, type CategoryScore } from '../envs/ftrl/ftrlScore';
import { RolloutEnv, listCallOutputs, type RenderChat } from '../envs/rollout';
import type { ToolExecutor } from '../envs/sandbox/types';
import type { Task } from '../envs/types';
import type { TextTokenizer } from '../model/tokenizer/types';
import { collectToolUseRollouts } from '../recipes/rollouts/rollouts';
import type { PolicySampler } from '../recipes/types';

export { DEFAULT_FTRL_EVAL_SETTINGS, type FtrlEvalSettings } from './ftrlEvalSettings';

/** One row of the evaluation table: FTRL's scores plus how many prompts were over the window. */
export interface FtrlEvalRow extends CategoryScore {
  /** Tasks of this row whose prompt did not fit (scored as making no calls). */
  promptTooLong: number;
}

/** Tool calls the policy made, as the executor answered them. */
export interface ToolCallCounts {
  calls: number;
  /** Calls answered with FTRL's error observation (a Python exception, an unknown tool, a timeout). */
  errors: number;
  /** Calls stopped at the time limit. */
  timeouts: number;
}

/** Everything an evaluation produced; plain data (crosses postMessage, goes into results.json). */
export interface FtrlEvalSummary {
  /** One row per category (sorted by name), then `overall`. */
  rows: FtrlEvalRow[];
  overall: FtrlEvalRow;
  /** Tasks selected (every category's first `perCategory`, or all). */
  selected: number;
  /** Selected tasks whose prompt was over `maxPromptTokens`. */
  promptTooLong: number;
  /** The prompt budget: the model's window minus `maxResponseTokens`. */
  maxPromptTokens: number;
  /** Lines of the task file that were not imported ("line N, field F: reason"). */
  lineErrors: string[];
  /** Prediction lines (JSONL), one per task run, in the `pact eval-ftrl --predictions` format. */
  predictions: string[];
  toolCalls: ToolCallCounts;
}

export interface FtrlEvalProgress {
  /** Tasks run so far (of `total`, the tasks that fit the window). */
  done: number;
  total: number;
  selected: number;
  promptTooLong: number;
  /** The task just finished (its 1-based line in the file, its id), and how many calls it made. */
  line?: number;
  taskId?: string;
  category?: string;
  calls?: number;
}

export interface FtrlEvalOptions {
  /** The FTRL file's text (JSONL). */
  tasksText: string;
  policy: PolicySampler;
  tokenizer: TextTokenizer;
  /** The model's window (config.max_position_embeddings). */
  contextTokens: number;
  renderChat: RenderChat;
  executor: ToolExecutor;
  /** The first N tasks of each category, in file order; undefined = every task. */
  perCategory?: number;
  maxTurns: number;
  maxResponseTokens: number;
  /** Called once after the selection (done 0) and after each task. */
  onProgress?: (p: FtrlEvalProgress) => void;
  /** Awaited once before the first rollout, only when some task fits (e.g. to load Pyodide). */
  beforeRollouts?: () => Promise<void>;
  /** Checked between tasks: true stops the evaluation with an error. */
  isCancelled?: () => boolean;
  /** Counts of the executor's Python calls, read at the end (LanguageRoutingExecutor.pythonCounts). */
  readToolCounts?: () => ToolCallCounts;
}

/** The tasks of an FTRL file with their category (data_source) and 0-based line index. */
export function readFtrlTaskLines(tasksText: string): {
  items: { task: Task; category: string; index: number }[];
  lineErrors: string[];
} {
  const items: { task: Task; category: string; index: number }[] = [];
  const lineErrors: string[] = [];
  // Line by line (cut as the scorer cuts them), so each task keeps its 0-based line index: the prediction's `index`.
  for (const { line: lineNumber, text: line } of splitJsonlLines(tasksText)) {
    if (line.trim() === '') continue;
    const index = lineNumber - 1;
    const { tasks, errors } = parseFtrlJsonl(line);
    for (const e of errors) lineErrors.push(formatFtrlLineError({ ...e, line: lineNumber }));
    // The report's category rule (data_source, else category), so per-category counts line up.
    for (const task of tasks)
      items.push({ task, category: readFtrlCategory(JSON.parse(line) as Record<string, unknown>), index });
  }
  return { items, lineErrors };
}

/** Runs the policy on the selected tasks and scores them; see the file header. */
export async function evaluatePolicyOnFtrlTasks(options: FtrlEvalOptions): Promise<FtrlEvalSummary> {
  const { items, lineErrors } = readFtrlTaskLines(options.tasksText);
  if (items.length === 0) {
    throw new Error(
      `the task file holds no FTRL task${lineErrors.length > 0 ? `: ${lineErrors.slice(0, 3).join('; ')}` : ''}`,
    );
  }
  const chosen = selectPerCategory(items, options.perCategory);
  const maxPromptTokens = options.contextTokens - options.maxResponseTokens;
  if (maxPromptTokens <= 0) {
    throw new Error(
      `maxResponseTokens ${options.maxResponseTokens} leaves no room for a prompt in the model's window of ${options.contextTokens} tokens`,
    );
  }
  const tooLong = new Set<number>();
  const fits = chosen.filter(({ task, index }) => {
    const { promptText } = new RolloutEnv({ executor: options.executor, renderChat: options.renderChat }).reset(task);
    const isFit = options.tokenizer.encode(promptText).length <= maxPromptTokens;
    if (!isFit) tooLong.add(index);
    return isFit;
  });
  const base = { total: fits.length, selected: chosen.length, promptTooLong: tooLong.size };
  options.onProgress?.({ done: 0, ...base });

  const predictions: string[] = [];
  if (fits.length > 0) await options.beforeRollouts?.();
  for (const [k, item] of fits.entries()) {
    if (options.isCancelled?.()) throw new Error(`stopped after ${k} of ${fits.length} tasks`);
    // One task at a time: FTRL prompts are long and the KV cache is sized by the batch.
    const [group] = await collectToolUseRollouts({
      prompts: [{ kind: 'tool-use', index: 0, task: item.task }],
      rolloutsPerPrompt: 1,
      policy: options.policy,
      tokenizer: options.tokenizer,
      executor: options.executor,
      renderChat: options.renderChat,
      maxTurns: options.maxTurns,
      maxPromptTokens,
      maxResponseTokens: options.maxResponseTokens,
      temperature: 0,
      topP: 1,
      rng: createRng('ftrl-eval'),
      isGreedy: true,
    });
    const transcript = group.rollouts[0].transcript;
    const calls = transcript ? listCallOutputs(transcript) : [];
    predictions.push(JSON.stringify({ index: item.index, calls }));
    options.onProgress?.({
      done: k + 1,
      ...base,
      line: item.index + 1,
      taskId: item.task.id,
      category: item.category,
      calls: calls.length,
    });
  }

  // Score every selected task: those not run count as making no calls.
  const selectedLines = new Set(chosen.map((c) => c.index));
  const selectedTasksText = options.tasksText
    .split(/\r?\n/)
    .map((line, i) => (selectedLines.has(i) ? line : ''))
    .join('\n');
  const report = evaluateFtrl(selectedTasksText, predictions.join('\n'), { isMissingScoredEmpty: true });
  const tooLongByCategory = new Map<string, number>();
  for (const c of chosen) {
    if (!tooLong.has(c.index)) continue;
    tooLongByCategory.set(c.category, (tooLongByCategory.get(c.category) ?? 0) + 1);
  }
  return {
    rows: report.categories.map((r) => ({ ...r, promptTooLong: tooLongByCategory.get(r.category) ?? 0 })),
    overall: { ...report.overall, promptTooLong: tooLong.size },
    selected: chosen.length,
    promptTooLong: tooLong.size,
    maxPromptTokens,
    lineErrors,
    predictions,
    toolCalls: options.readToolCounts?.() ?? { calls: 0, errors: 0, timeouts: 0 },
  };
}
