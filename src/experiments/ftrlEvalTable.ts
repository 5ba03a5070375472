/**
 * The tables of an FTRL evaluation (src/run/ftrlEval.ts): categories
 * as rows (then `overall`), Solve-R / Solve-P / Solve-F1 (FTRL's metrics, fractions in [0, 1],
 * macro-averaged over the category's tasks) as columns, beside each row's task count and how
 * many of its prompts were over the model's window (scored as making no calls, never dropped).
 * The markdown keeps 3 decimals; the CSV keeps full precision. The app's table shows the same
 * cells (`formatScore`).
 */
import type { FtrlEvalRow, FtrlEvalSummary } from '../run/ftrlEval';

/** A score as the tables show it: 3 decimals ('–' when not finite). */
export function formatScore(x: number, digits = 3): string {
  return Number.isFinite(x) ? x.toFixed(digits) : '–';
}

/** Why Solve-P reads 1 where nothing was called. */
export const NO_CALL_NOTE =
  "A task with no calls (every prompt over the window among them) has Solve-P 1 (no wrong call: FTRL's definition) and Solve-R 0, so read Solve-P beside Solve-R.";

/** One sentence on the prompts over the window (empty when none were). */
export function describePromptTooLong(
  summary: Pick<FtrlEvalSummary, 'selected' | 'promptTooLong' | 'maxPromptTokens'>,
): string {
  if (summary.promptTooLong === 0) return '';
  return (
    `${summary.promptTooLong} of ${summary.selected} task${summary.selected === 1 ? '' : 's'} had a prompt over the model's budget of ` +
    `${summary.maxPromptTokens} prompt tokens (its window minus the response budget): they were not run and are scored as making no calls.`
  );
}

export interface FtrlEvalTableOptions {
  title?: string;
  /** Lines under the table (policy, backend, app version, …). */
  notes?: string[];
}

/** table.md: categories × (tasks, prompt too long, Solve-R, Solve-P, Solve-F1). */
export function formatFtrlEvalMarkdown(summary: FtrlEvalSummary, options: FtrlEvalTableOptions = {}): string {
  const lines: string[] = [];
  if (options.title) lines.push(`# ${options.title}`, '');
  lines.push('| Category | Tasks | Prompt too long | Solve-R | Solve-P | Solve-F1 |');
  lines.push('|---|---:|---:|---:|---:|---:|');
  const row = (r: FtrlEvalRow, name: string) =>
    `| ${name} | ${r.tasks} | ${r.promptTooLong} | ${formatScore(r.solveR)} | ${formatScore(r.solveP)} | ${formatScore(r.solveF1)} |`;
  for (const r of summary.rows) lines.push(row(r, r.category));
  lines.push(row(summary.overall, '**overall**'));
  lines.push('');
  lines.push(
    "Solve-R, Solve-P, Solve-F1: FTRL's metrics (fractions in [0, 1]), the mean over the category's tasks of each task's " +
      "recall, precision and F1 of expected tool answers found in the policy's tool outputs; one greedy rollout per task. " +
      NO_CALL_NOTE,
  );
  const tooLong = describePromptTooLong(summary);
  if (tooLong) lines.push('', tooLong);
  const t = summary.toolCalls;
  lines.push('', `Tool calls: ${t.calls} (${t.errors} answered with an error, ${t.timeouts} past the time limit).`);
  if (summary.lineErrors.length > 0)
    lines.push('', `Task file lines not imported: ${summary.lineErrors.length} (first: ${summary.lineErrors[0]}).`);
  for (const note of options.notes ?? []) lines.push('', note);
  return lines.join('\n') + '\n';
}

/** table.csv: category, tasks, prompt_too_long, solve_r, solve_p, solve_f1 (full precision); last row `overall`. */
export function formatFtrlEvalCsv(summary: FtrlEvalSummary): string {
  const field = (text: string) => (/[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
  const num = (x: number) => (Number.isFinite(x) ? String(x) : '');
  const lines = ['category,tasks,prompt_too_long,solve_r,solve_p,solve_f1'];
  for (const r of [...summary.rows, summary.overall]) {
    lines.push(
      [field(r.category), String(r.tasks), String(r.promptTooLong), num(r.solveR), num(r.solveP), num(r.solveF1)].join(
        ',',
      ),
    );
  }
  return lines.join('\n') + '\n';
}
