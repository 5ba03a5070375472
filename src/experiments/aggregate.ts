/**
 * The paper-style table of an experiment, as data: methods (the experiment's run names)
 * as rows, metrics as columns, each cell the mean ± sample standard deviation over the
 * seeds that finished (n − 1 in the denominator: the seeds are a sample of the runs one
 * could have drawn). A run's value of a metric is its value at the last step that logged
 * it (the final held-out evaluation for `eval/*`). Non-finite values (NaN = "no value",
 * e.g. an SFT run's RL loss) are left out of a cell, and the cell says how many were used.
 * Also the curves: per method, the mean over seeds at each step.
 */
import { computeMean, computeSampleStd } from '../core/stats';
import type { ExperimentTable, MeanStd, RunResult } from './types';

export type { ExperimentTable, MeanStd, TableRow } from './types';

/** Mean and sample standard deviation of the finite values. */
export function computeMeanStd(values: readonly number[]): MeanStd {
  const xs = values.filter((v) => Number.isFinite(v));
  const n = xs.length;
  if (n === 0) return { n, mean: Number.NaN, std: Number.NaN };
  const mean = computeMean(xs);
  return { n, mean, std: computeSampleStd(xs, mean) };
}

/** Readable names of the metrics the papers report (PACT Table 1; ToolSearcher Table 1). */
export const METRIC_LABELS: Record<string, string> = {
  'eval/solve_r': 'Solve-R',
  'eval/solve_p': 'Solve-P',
  'eval/solve_f1': 'Solve-F1',
  'eval/answer_correct': 'Answer correct',
  'eval/reward': 'Answer F1',
  'eval/f1': 'F1',
  'eval/recall': 'Recall',
  'eval/precision': 'Precision',
  'eval/match': 'Match',
  'eval/search_recall': 'SRecall',
  'eval/format': 'Format',
  'eval/turns': 'Turns',
  'eval/search_rounds': 'Search rounds',
  reward: 'Train reward (last step)',
  'reward/mean_over_steps': 'Train reward (mean over steps)',
  'reward/answer_f1/mean_over_steps': 'Train answer F1 (mean over steps)',
  'reward/f1/mean_over_steps': 'Train F1 (mean over steps)',
};

/** Column order: the papers' metrics first, then any other eval metric by name, then the train reward. */
const PREFERRED_ORDER = Object.keys(METRIC_LABELS);

export function labelMetric(key: string): string {
  return METRIC_LABELS[key] ?? key;
}

/** A run's value of `key` at the last step that logged it (NaN when none did). */
export function readFinalValue(run: RunResult, key: string): number {
  for (let i = run.steps.length - 1; i >= 0; i--) {
    const v = run.steps[i].values[key];
    if (v !== undefined) return v === null ? Number.NaN : v;
  }
  return Number.NaN;
}

/**
 * The table's columns: every `eval/*` metric to which a finished run gave a finite value
 * (a tool-search run's eval row carries Solve-R/P/F1 as NaN: no column for those), then `reward`.
 */
export function pickTableMetrics(runs: readonly RunResult[]): string[] {
  const keys = new Set<string>();
  for (const r of runs) {
    if (r.status !== 'finished') continue;
    for (const s of r.steps)
      for (const [k, v] of Object.entries(s.values))
        if (k.startsWith('eval/') && v !== null && Number.isFinite(v)) keys.add(k);
  }
  const rank = (k: string) => {
    const i = PREFERRED_ORDER.indexOf(k);
    return i < 0 ? PREFERRED_ORDER.length - 1 : i; // unknown eval metrics before `reward`
  };
  const sorted = [...keys].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const hasReward = runs.some(
    (r) =>
      r.status === 'finished' &&
      r.steps.some((s) => typeof s.values.reward === 'number' && Number.isFinite(s.values.reward)),
  );
  return hasReward ? [...sorted, 'reward'] : sorted;
}

/** One row per method (in the experiment's order), one column per metric. */
export function buildTable(
  runs: readonly RunResult[],
  metrics: readonly string[] = pickTableMetrics(runs),
): ExperimentTable {
  const methods: string[] = [];
  for (const r of runs) if (!methods.includes(r.name)) methods.push(r.name);
  const rows = methods.map((method) => {
    const mine = runs.filter((r) => r.name === method);
    const done = mine.filter((r) => r.status === 'finished');
    const cells: Record<string, MeanStd> = {};
    for (const k of metrics) cells[k] = computeMeanStd(done.map((r) => readFinalValue(r, k)));
    return {
      method,
      n: done.length,
      failed: mine.filter((r) => r.status !== 'finished').map((r) => ({ id: r.id, error: r.error ?? 'unknown error' })),
      cells,
    };
  });
  return { metrics: [...metrics], rows };
}

export interface CurveSeries {
  method: string;
  /** Steps with at least one finite value, ascending. */
  steps: number[];
  /** Mean over the finished seeds at each step. */
  mean: number[];
  /** Sample standard deviation at each step (NaN with one seed). */
  std: number[];
}

/** The curve of `key` per method: mean (and sample std) over finished seeds at each step. */
export function buildCurves(runs: readonly RunResult[], key: string): CurveSeries[] {
  const methods: string[] = [];
  for (const r of runs) if (!methods.includes(r.name)) methods.push(r.name);
  return methods.map((method) => {
    const done = runs.filter((r) => r.name === method && r.status === 'finished');
    const bySteps = new Map<number, number[]>();
    for (const r of done) {
      for (const s of r.steps) {
        const v = s.values[key];
        if (typeof v !== 'number' || !Number.isFinite(v)) continue;
        bySteps.set(s.step, [...(bySteps.get(s.step) ?? []), v]);
      }
    }
    const steps = [...bySteps.keys()].sort((a, b) => a - b);
    const stats = steps.map((s) => computeMeanStd(bySteps.get(s)!));
    return { method, steps, mean: stats.map((m) => m.mean), std: stats.map((m) => m.std) };
  });
}
