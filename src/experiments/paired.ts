/**
 * Paired comparison of a run against a control on the same prompts (`pact compare`).
 *
 * A run's prompts and sampling streams at step t depend only on its seed and t
 * (src/recipes/train/trainer.ts splits the root RNG by step), so two runs of one seed — e.g.
 * PACT and the frozen warm start (the same file at lr 1e-12) — draw the same prompts at
 * every step, and the per-step difference d_t = run_t − control_t removes the swing of the
 * step reward with how hard the drawn prompts are. For each block of steps this gives the
 * mean of each run, the mean of d_t, each ± its standard error over the steps (sample
 * standard deviation / √n, the steps taken as independent draws), and how many steps had
 * d_t > 0. Several (run, control) pairs (one per seed) are reported one by one and pooled
 * over every (pair, step).
 */
import { computeMeanStd } from './aggregate';
import type { MeanStd } from './types';

/** [step, value] points of one metric (pact plot's metricPoints). */
export type StepPoints = readonly (readonly [number, number])[];

/** Inclusive step range. */
export interface StepBlock {
  from: number;
  to: number;
}

export interface PairedSeries {
  /** Label of the pair, e.g. "pact-s2 − frozen-s2". */
  label: string;
  run: StepPoints;
  control: StepPoints;
}

export interface PairedRow {
  block: StepBlock;
  /** The pair's label, or `all N pairs` for the pooled row. */
  label: string;
  /** Steps of the block present in both series (pooled: over every pair). */
  n: number;
  run: MeanStd;
  control: MeanStd;
  diff: MeanStd;
  /** Steps with run > control. */
  positive: number;
}

/** Parses `1-16,17-32` (inclusive ranges; a single number is a one-step block). */
export function parseStepBlocks(text: string): StepBlock[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(part);
    if (!m) throw new Error(`--blocks: "${part}" is not a step range like 1-16`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new Error(`--blocks: "${part}" ends before it starts`);
    return { from, to };
  });
}

/** [step, run, control] at the steps of `block` that both series have, in the run's order. */
function pairedValues(series: PairedSeries, block: StepBlock): [number, number, number][] {
  const control = new Map(series.control.map(([s, v]) => [s, v]));
  const out: [number, number, number][] = [];
  for (const [step, value] of series.run) {
    const c = control.get(step);
    if (step >= block.from && step <= block.to && c !== undefined) out.push([step, value, c]);
  }
  return out;
}

function summarize(block: StepBlock, label: string, values: [number, number, number][]): PairedRow {
  const diffs = values.map(([, r, c]) => r - c);
  return {
    block,
    label,
    n: values.length,
    run: computeMeanStd(values.map(([, r]) => r)),
    control: computeMeanStd(values.map(([, , c]) => c)),
    diff: computeMeanStd(diffs),
    positive: diffs.filter((d) => d > 0).length,
  };
}

/** Per block: one row per pair, then (with two or more pairs) the row pooled over all. */
export function comparePaired(pairs: readonly PairedSeries[], blocks: readonly StepBlock[]): PairedRow[] {
  if (pairs.length === 0) throw new Error('comparePaired: no (run, control) pairs');
  const rows: PairedRow[] = [];
  for (const block of blocks) {
    const perPair = pairs.map((p) => pairedValues(p, block));
    pairs.forEach((p, i) => rows.push(summarize(block, p.label, perPair[i])));
    if (pairs.length > 1) rows.push(summarize(block, `all ${pairs.length} pairs`, perPair.flat()));
  }
  return rows;
}

/** d_t = run_t − control_t at every step both series have, in step order. */
export function pairedDifferences(series: PairedSeries): [number, number][] {
  const all = { from: Number.NEGATIVE_INFINITY, to: Number.POSITIVE_INFINITY };
  return pairedValues(series, all)
    .map(([step, r, c]): [number, number] => [step, r - c])
    .sort((a, b) => a[0] - b[0]);
}

/** One point of a running paired difference: over every d_s with s ≤ step. */
export interface RunningDifference {
  step: number;
  /** Differences pooled so far (over every pair given). */
  n: number;
  mean: number;
  /** Standard error of `mean` (NaN below 2 differences). */
  se: number;
}

/**
 * The running mean of the paired differences: at each step t that any pair has, the mean
 * ± standard error of d_s over every pair and every s ≤ t. Its last point is the
 * all-steps row of comparePaired; a curve that climbs away from 0 and stays there is the
 * run pulling ahead of the control on the same prompts.
 */
export function runningDifference(pairs: readonly PairedSeries[]): RunningDifference[] {
  const diffs = pairs.flatMap((p) => pairedDifferences(p)).sort((a, b) => a[0] - b[0]);
  const out: RunningDifference[] = [];
  for (let i = 0; i < diffs.length; i++) {
    if (i + 1 < diffs.length && diffs[i + 1][0] === diffs[i][0]) continue; // the last difference of this step
    const m = computeMeanStd(diffs.slice(0, i + 1).map(([, d]) => d));
    out.push({ step: diffs[i][0], n: m.n, mean: m.mean, se: standardError(m) });
  }
  return out;
}

/** Standard error of a MeanStd (NaN below 2 values). */
export function standardError(m: MeanStd): number {
  return m.n < 2 ? Number.NaN : m.std / Math.sqrt(m.n);
}

function formatMeanSe(m: MeanStd, digits: number, signed = false): string {
  if (m.n === 0) return '–';
  const mean = (signed && m.mean > 0 ? '+' : '') + m.mean.toFixed(digits);
  const se = standardError(m);
  return Number.isFinite(se) ? `${mean} ± ${se.toFixed(digits)}` : mean;
}

/** The rows as a Markdown table (± = standard error over the steps). */
export function formatPairedTable(
  rows: readonly PairedRow[],
  names: { metric: string; run: string; control: string },
  digits = 3,
): string {
  const lines = [
    `| steps | pair | n | ${names.run} ${names.metric} | ${names.control} | ${names.run} − ${names.control} | steps ${names.run} > ${names.control} |`,
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const steps = r.block.from === r.block.to ? `${r.block.from}` : `${r.block.from}–${r.block.to}`;
    lines.push(
      `| ${steps} | ${r.label} | ${r.n} | ${formatMeanSe(r.run, digits)} | ${formatMeanSe(r.control, digits)} | ${formatMeanSe(r.diff, digits, true)} | ${r.positive}/${r.n} |`,
    );
  }
  return lines.join('\n');
}
