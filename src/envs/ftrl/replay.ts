/**
 * Replays gold tool calls of FTRL tasks in Pyodide and scores them with FTRL's solve
 * metric (`ftrlSolveMetrics`, PACT App. A: Solve-P/R/F1 over the `unsolved_set`).
 *
 * FTRL's test file carries no gold calls, so they are reconstructed first
 * (`goldCallSearch.ts`: the data author's example calls, else a bounded argument search
 * over literals in the tool code). A task counts as reconstructed when every expected
 * answer got a call. The replay then executes those calls through the ordinary executor
 * path, exactly as a policy's calls would run, and scores them with the core metric.
 * Since each call was found by verifying its own answer, a reconstructed task should be
 * solved completely; a shortfall means the data or the greedy metric disagree (one call's
 * output also verifies another expected answer of the same tool and takes it first).
 */
import { answerVerify, ftrlSolveMetrics, meanSolveMetrics, type CallOutput, type SolveMetrics } from '../../core';
import { setOwn } from '../../core/untrustedJson';
import { TASK_CATEGORIES, type Task, type TaskCategory, type ToolCall } from '../types';
import { GOLD_CALL_SEARCH_SOURCE, type FtrlGoldCall } from './goldCallSearch';
import { callTaskTool, type PyodideExecutor } from './pyodideExecutor';

export interface FtrlReconstruction {
  taskId: string;
  category: TaskCategory;
  /** One call per expected answer found, in `unsolvedSet` order. */
  calls: FtrlGoldCall[];
  /** Expected answers no call was found for. */
  missing: { name: string; expected: string }[];
  /** Every expected answer has a call. */
  isComplete: boolean;
  /** Set when the search itself failed (e.g. timed out). */
  failure?: string;
}

interface SearchEntry {
  name: string;
  gold: string;
  found: null | { arguments: Record<string, unknown>; argumentsJson: string; how: 'example' | 'search'; tried: number };
}

export const DEFAULT_SEARCH_TIMEOUT_MS = 30_000;

function listExpected(task: Task): { name: string; expected: string }[] {
  return Object.entries(task.unsolvedSet).flatMap(([name, answers]) => answers.map((expected) => ({ name, expected })));
}

/** Reconstructs the gold calls of one FTRL task (see `goldCallSearch.ts`). */
export async function reconstructFtrlGoldCalls(
  executor: PyodideExecutor,
  task: Task,
  options: { timeoutMs?: number } = {},
): Promise<FtrlReconstruction> {
  const codes: Record<string, string> = {};
  for (const [name, impl] of Object.entries(task.implementations))
    if (impl.language === 'python') setOwn(codes, name, impl.source);
  const input = JSON.stringify({ question: task.question, codes, tools: task.tools, unsolvedSet: task.unsolvedSet });
  let entries: SearchEntry[];
  try {
    const output = await executor.runScript(GOLD_CALL_SEARCH_SOURCE, 'reconstruct_gold_calls', input, {
      timeoutMs: options.timeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS,
    });
    entries = JSON.parse(output) as SearchEntry[];
  } catch (err) {
    const missing = listExpected(task);
    return {
      taskId: task.id,
      category: task.category,
      calls: [],
      missing,
      isComplete: missing.length === 0,
      failure: (err as Error).message,
    };
  }
  const calls: FtrlGoldCall[] = [];
  const missing: { name: string; expected: string }[] = [];
  for (const e of entries) {
    if (e.found)
      calls.push({
        name: e.name,
        arguments: e.found.arguments,
        argumentsJson: e.found.argumentsJson,
        expected: e.gold,
        how: e.found.how,
        tried: e.found.tried,
      });
    else missing.push({ name: e.name, expected: e.gold });
  }
  return { taskId: task.id, category: task.category, calls, missing, isComplete: missing.length === 0 };
}

export interface FtrlReplayResult {
  taskId: string;
  outputs: CallOutput[];
  metrics: SolveMetrics;
  /** n: expected answers of the task. */
  nExpected: number;
}

/**
 * Executes calls of one task in order and scores them with `ftrlSolveMetrics`. A call
 * carrying `argumentsJson` is sent as that text (keeps Python's int/float distinction).
 */
export async function replayFtrlCalls(
  executor: PyodideExecutor,
  task: Task,
  calls: readonly (ToolCall & { argumentsJson?: string })[],
): Promise<FtrlReplayResult> {
  const outputs: CallOutput[] = [];
  for (const call of calls) {
    const args = call.argumentsJson ?? call.arguments;
    const result = await callTaskTool(executor, task, { name: call.name, arguments: args } as ToolCall);
    outputs.push({ name: call.name, output: result.observation });
  }
  const nExpected = listExpected(task).length;
  return { taskId: task.id, outputs, metrics: ftrlSolveMetrics(outputs, task.unsolvedSet), nExpected };
}

export interface FtrlCategoryReplay {
  tasks: number;
  /** Tasks whose every expected answer got a call. */
  reconstructed: number;
  expected: number;
  callsFound: number;
  /** Over reconstructed tasks only. */
  expectedReconstructed: number;
  solvedReconstructed: number;
}

export interface FtrlReplayReport {
  nTasks: number;
  /** Expected answers (sub-questions) over all tasks. */
  nExpected: number;
  /** Expected answers that got a reconstructed call. */
  nCallsFound: number;
  /** Of those, calls written by the data's author (comments or module-level calls). */
  nFoundByExample: number;
  reconstructedTaskIds: string[];
  /** Sub-questions of reconstructed tasks, and how many their replayed calls solve. */
  expectedReconstructed: number;
  solvedReconstructed: number;
  /** Sub-questions solved when replaying every found call of every task (complete or not). */
  solvedAllFound: number;
  /** Macro-averaged Solve metrics of the reconstructed tasks. */
  meanReconstructed: SolveMetrics | null;
  perCategory: Record<TaskCategory, FtrlCategoryReplay>;
  /** Reconstructed tasks whose replay solved fewer sub-questions than expected. */
  inconsistencies: { taskId: string; detail: string }[];
  missing: { taskId: string; name: string; expected: string }[];
  reconstructions: FtrlReconstruction[];
}

/** Reconstructs, replays and scores every task; `onTask` reports progress. */
export async function replayFtrlTasks(
  executor: PyodideExecutor,
  tasks: readonly Task[],
  options: { timeoutMs?: number; onTask?: (done: number, total: number) => void } = {},
): Promise<FtrlReplayReport> {
  const perCategory = Object.fromEntries(
    TASK_CATEGORIES.map((c) => [
      c,
      { tasks: 0, reconstructed: 0, expected: 0, callsFound: 0, expectedReconstructed: 0, solvedReconstructed: 0 },
    ]),
  ) as Record<TaskCategory, FtrlCategoryReplay>;
  const report: FtrlReplayReport = {
    nTasks: tasks.length,
    nExpected: 0,
    nCallsFound: 0,
    nFoundByExample: 0,
    reconstructedTaskIds: [],
    expectedReconstructed: 0,
    solvedReconstructed: 0,
    solvedAllFound: 0,
    meanReconstructed: null,
    perCategory,
    inconsistencies: [],
    missing: [],
    reconstructions: [],
  };
  const metricsReconstructed: SolveMetrics[] = [];
  for (const [k, task] of tasks.entries()) {
    const rec = await reconstructFtrlGoldCalls(executor, task, options);
    report.reconstructions.push(rec);
    const replay = await replayFtrlCalls(executor, task, rec.calls);
    const cat = perCategory[task.category];
    cat.tasks++;
    cat.expected += replay.nExpected;
    cat.callsFound += rec.calls.length;
    report.nExpected += replay.nExpected;
    report.nCallsFound += rec.calls.length;
    report.nFoundByExample += rec.calls.filter((c) => c.how === 'example').length;
    report.solvedAllFound += replay.metrics.solved;
    for (const m of rec.missing) report.missing.push({ taskId: task.id, ...m });
    if (rec.isComplete) {
      report.reconstructedTaskIds.push(task.id);
      cat.reconstructed++;
      cat.expectedReconstructed += replay.nExpected;
      cat.solvedReconstructed += replay.metrics.solved;
      report.expectedReconstructed += replay.nExpected;
      report.solvedReconstructed += replay.metrics.solved;
      metricsReconstructed.push(replay.metrics);
      if (replay.metrics.solved < replay.nExpected) {
        const unverified = rec.calls
          .filter((c, i) => !answerVerify(replay.outputs[i].output, c.expected))
          .map((c) => c.name);
        report.inconsistencies.push({
          taskId: task.id,
          detail:
            `replay solved ${replay.metrics.solved}/${replay.nExpected}; ` +
            (unverified.length > 0
              ? `outputs no longer verifying their own answer: ${unverified.join(', ')}`
              : 'a call verified another expected answer of the same tool first'),
        });
      }
    }
    options.onTask?.(k + 1, tasks.length);
  }
  report.meanReconstructed = meanSolveMetrics(metricsReconstructed);
  return report;
}

/** A plain-text table of the report, one line per category and a total. */
export function formatFtrlReplayReport(report: FtrlReplayReport): string {
  const lines = ['category              tasks  reconstructed  expected  found  solved/expected (reconstructed tasks)'];
  for (const c of TASK_CATEGORIES) {
    const r = report.perCategory[c];
    lines.push(
      `${c.padEnd(22)}${String(r.tasks).padStart(5)}  ${String(r.reconstructed).padStart(13)}  ${String(r.expected).padStart(8)}  ${String(r.callsFound).padStart(5)}  ${r.solvedReconstructed}/${r.expectedReconstructed}`,
    );
  }
  lines.push(
    `${'all'.padEnd(22)}${String(report.nTasks).padStart(5)}  ${String(report.reconstructedTaskIds.length).padStart(13)}  ${String(report.nExpected).padStart(8)}  ${String(report.nCallsFound).padStart(5)}  ${report.solvedReconstructed}/${report.expectedReconstructed}`,
  );
  lines.push(
    `calls from the data's own examples: ${report.nFoundByExample}/${report.nCallsFound}; solved replaying every found call: ${report.solvedAllFound}/${report.nExpected}`,
  );
  if (report.inconsistencies.length)
    lines.push(`inconsistencies: ${report.inconsistencies.map((i) => `${i.taskId} (${i.detail})`).join('; ')}`);
  return lines.join('\n');
}
