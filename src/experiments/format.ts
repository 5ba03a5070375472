/**
 * table.md and table.csv of an experiment (aggregate.ts buildTable): methods as rows,
 * metrics as columns. Markdown cells read `mean ± std` (sample standard deviation over
 * seeds, n − 1); a cell with one value reads `0.250 (n=1)`, never a made-up ± 0; a cell
 * with no finite value reads `–`. The CSV keeps full precision: `<metric>_mean`,
 * `<metric>_std` (empty when n < 2) and `<metric>_n` per metric.
 */
import { labelMetric } from './aggregate';
import type { ExperimentTable, MeanStd } from './types';

/** A number with `digits` decimals ('–' when not finite). */
export function formatFixed(x: number, digits = 3): string {
  return Number.isFinite(x) ? x.toFixed(digits) : '–';
}

/** One markdown cell: `0.300 ± 0.265`, `0.250 (n=1)`, `–`; `(n=k)` added when fewer than the row's seeds. */
export function formatCell(c: MeanStd, rowN: number, digits = 3): string {
  if (c.n === 0) return '–';
  const base =
    c.n === 1
      ? `${formatFixed(c.mean, digits)} (n=1)`
      : `${formatFixed(c.mean, digits)} ± ${formatFixed(c.std, digits)}`;
  return c.n > 1 && c.n < rowN ? `${base} (n=${c.n})` : base;
}

export interface TableTextOptions {
  title?: string;
  /** Lines under the table (backend, app version, …). */
  notes?: string[];
  digits?: number;
}

/** table.md: a title, the table, what the cells mean, and the failed runs. */
export function formatTableMarkdown(table: ExperimentTable, options: TableTextOptions = {}): string {
  const digits = options.digits ?? 3;
  const lines: string[] = [];
  if (options.title) lines.push(`# ${options.title}`, '');
  lines.push(`| Method | n | ${table.metrics.map(labelMetric).join(' | ')} |`);
  lines.push(`|---|---:|${table.metrics.map(() => '---:').join('|')}|`);
  for (const row of table.rows) {
    lines.push(
      `| ${row.method} | ${row.n} | ${table.metrics.map((k) => formatCell(row.cells[k], row.n, digits)).join(' | ')} |`,
    );
  }
  lines.push('');
  lines.push(
    'Cells: mean ± sample standard deviation (n − 1 in the denominator) over the seeds that finished; ' +
      '"(n=1)" marks a single seed (no spread to report); "–" means no finite value. ' +
      'Values are fractions in [0, 1] (turns and rewards excepted), taken at the last step that logged them (the final held-out evaluation for eval metrics).',
  );
  const failed = table.rows.flatMap((r) => r.failed);
  if (failed.length > 0) {
    lines.push('', `Failed runs (${failed.length}, left out of the cells):`);
    for (const f of failed) lines.push(`- ${f.id}: ${f.error.replace(/\s+/g, ' ')}`);
  }
  for (const note of options.notes ?? []) lines.push('', note);
  return lines.join('\n') + '\n';
}

function csvField(text: string): string {
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvNumber(x: number): string {
  return Number.isFinite(x) ? String(x) : '';
}

/** table.csv: method, n, then `<metric>_mean, <metric>_std, <metric>_n` per metric. */
export function formatTableCsv(table: ExperimentTable): string {
  const header = ['method', 'n', ...table.metrics.flatMap((k) => [`${k}_mean`, `${k}_std`, `${k}_n`])];
  const rows = table.rows.map((r) => [
    csvField(r.method),
    String(r.n),
    ...table.metrics.flatMap((k) => [csvNumber(r.cells[k].mean), csvNumber(r.cells[k].std), String(r.cells[k].n)]),
  ]);
  return [header.map(csvField).join(','), ...rows.map((r) => r.join(','))].join('\n') + '\n';
}
