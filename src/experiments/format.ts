/**
 * table.md and table.csv of an experiment (aggregate.ts buildTable): methods as rows,
 * metrics as columns. Markdown cells read `mean ± se` (the standard error of the mean over
 * seeds: sample standard deviation, n − 1, over √n); a cell with one value reads
 * `0.250 (n=1)`, never a made-up ± 0; a cell with no finite value reads `–`. Under it, the
 * rows paired by seed (seedPairs.ts). The CSV keeps full precision: `<metric>_mean`,
 * `<metric>_std`, `<metric>_se` (empty when n < 2) and `<metric>_n` per metric.
 */
import { labelMetric } from './aggregate';
import { standardError } from './paired';
import {
  formatSeedPairCell,
  MEAN_TRAIN_ANSWER_F1,
  MEAN_TRAIN_F1,
  MEAN_TRAIN_REWARD,
  type SeedPairRow,
} from './seedPairs';
import type { ExperimentTable, MeanStd } from './types';

/** A number with `digits` decimals ('–' when not finite). */
export function formatFixed(x: number, digits = 3): string {
  return Number.isFinite(x) ? x.toFixed(digits) : '–';
}

/** One markdown cell: `0.300 ± 0.153` (mean ± standard error), `0.250 (n=1)`, `–`; `(n=k)` added when fewer than the row's seeds. */
export function formatCell(c: MeanStd, rowN: number, digits = 3): string {
  if (c.n === 0) return '–';
  const base =
    c.n === 1
      ? `${formatFixed(c.mean, digits)} (n=1)`
      : `${formatFixed(c.mean, digits)} ± ${formatFixed(standardError(c), digits)}`;
  return c.n > 1 && c.n < rowN ? `${base} (n=${c.n})` : base;
}

export interface TableTextOptions {
  title?: string;
  /** Lines under the table (backend, app version, …). */
  notes?: string[];
  /** The rows paired by seed (seedPairs.ts buildSeedPairs), as a second table. */
  pairs?: readonly SeedPairRow[];
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
    'Cells: mean ± standard error over the seeds that finished (sample standard deviation, n − 1 in the denominator, over √n); ' +
      '"(n=1)" marks a single seed (no spread to report); "–" means no finite value. ' +
      'Values are fractions in [0, 1] (turns and rewards excepted), taken at the last step that logged them (the final held-out evaluation for eval metrics).',
  );
  if (options.pairs && options.pairs.length > 0) {
    // A step-mean column only where some pair has a value (search runs log no answer F1, tool-use runs no train F1).
    const stepMeans = [MEAN_TRAIN_REWARD, MEAN_TRAIN_ANSWER_F1, MEAN_TRAIN_F1].filter((k) =>
      options.pairs!.some((p) => (p.cells[k]?.diff.n ?? 0) > 0),
    );
    const keys = [...table.metrics.filter((k) => k !== 'reward'), ...stepMeans];
    lines.push('', '## Paired by seed', '');
    lines.push(`| Row − control | ${keys.map(labelMetric).join(' | ')} |`);
    lines.push(`|---|${keys.map(() => '---:').join('|')}|`);
    for (const p of options.pairs) {
      lines.push(
        `| ${p.run} − ${p.control}${p.heldOutControl ? ` (held out: − ${p.heldOutControl})` : ''} | ${keys.map((k) => (p.cells[k] ? formatSeedPairCell(p.cells[k], digits) : '–')).join(' | ')} |`,
      );
    }
    lines.push(
      '',
      'Each cell: the mean over seeds of d_s = row_s − control_s (the same held-out tasks; for the train reward, ' +
        'the same prompts step by step, averaged over the steps) ± its standard error, and (seeds with d_s > 0 / seeds paired).',
    );
    const notes = options.pairs.flatMap((p) => p.notes ?? []);
    if (notes.length > 0) lines.push('', ...notes.map((n) => `- ${n}`));
  }
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

/** table.csv: method, n, then `<metric>_mean, <metric>_std, <metric>_se, <metric>_n` per metric. */
export function formatTableCsv(table: ExperimentTable): string {
  const header = ['method', 'n', ...table.metrics.flatMap((k) => [`${k}_mean`, `${k}_std`, `${k}_se`, `${k}_n`])];
  const rows = table.rows.map((r) => [
    csvField(r.method),
    String(r.n),
    ...table.metrics.flatMap((k) => [
      csvNumber(r.cells[k].mean),
      csvNumber(r.cells[k].std),
      csvNumber(standardError(r.cells[k])),
      String(r.cells[k].n),
    ]),
  ]);
  return [header.map(csvField).join(','), ...rows.map((r) => r.join(','))].join('\n') + '\n';
}
