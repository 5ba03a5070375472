/**
 * Metric rows → chart series and CSV, for the Live charts and Runs panels.
 *
 * A run's metrics arrive in two shapes: `StepMetrics` / `EvalMetrics` pushed by the
 * worker (the per-step metrics), and `MetricRow`s read back from IndexedDB
 * (`{ step, values }`). Both become `MetricPoint`s (step → numeric values, eval rows
 * merged into the step they were taken at), so a live run, a stored run and the recorded
 * demo run are drawn by the same code. Non-finite values (NaN marks an absent loss term)
 * are gaps, never zeros.
 */
import type { EvalMetrics, StepMetrics } from '../recipes/types';

/** One step of one run: metric name → value. */
export interface MetricPoint {
  step: number;
  values: Record<string, number>;
}

/** The rows of one run, as the charts overlay them. */
export interface RunMetrics {
  runId: string;
  /** What the legend says ("pact · run-3", "recorded demo run"). */
  label: string;
  points: readonly MetricPoint[];
}

/** A metric a chart draws. */
export interface ChartKey {
  key: string;
  label: string;
}

export interface ChartSpec {
  id: string;
  title: string;
  /** The metrics it may draw; only those with at least one finite value are drawn. */
  keys: readonly ChartKey[];
  /** What the y axis measures, in words. */
  yLabel: string;
  /** Left out while no shown run has any of its keys (a metric only some recipes report). */
  isHiddenWhenEmpty?: boolean;
  /** A fixed y range for bounded metrics (scores in 0–1), instead of one fitted to the data. */
  yRange?: readonly [number, number];
  /** A line under the chart on how to read it (a metric's convention). */
  note?: string;
}

/**
 * The charts of the Live charts panel, in order. The held-out chart lists both the
 * tool-use metrics (FTRL Solve-R/P/F1) and ToolSearcher's selection metrics: a run
 * reports one family or the other, and only keys with data are drawn.
 */
export const CHART_SPECS: readonly ChartSpec[] = [
  { id: 'reward', title: 'Reward', yLabel: 'mean rollout reward', keys: [{ key: 'reward', label: 'reward' }] },
  {
    id: 'eval',
    title: 'Held-out evaluation',
    yLabel: 'score (0–1)',
    yRange: [0, 1],
    note: "Solve-P of a task with no tool call is 1 by FTRL's convention (q/p with p = 0 calls).",
    keys: [
      { key: 'eval/solve_r', label: 'Solve-R' },
      { key: 'eval/solve_p', label: 'Solve-P' },
      { key: 'eval/solve_f1', label: 'Solve-F1' },
      { key: 'eval/f1', label: 'selection F1' },
      { key: 'eval/recall', label: 'selection recall' },
      { key: 'eval/precision', label: 'selection precision' },
      { key: 'eval/match', label: 'Match' },
      { key: 'eval/search_recall', label: 'SRecall' },
    ],
  },
  {
    id: 'loss',
    title: 'Loss terms',
    yLabel: 'loss',
    keys: [
      { key: 'loss/Lx', label: 'L^x_RL (prompt-only)' },
      { key: 'loss/Lh', label: 'L^h_RL (trace-conditioned)' },
      { key: 'loss/SFT', label: 'L_SFT (component-aware)' },
    ],
  },
  {
    id: 'trace-gap',
    title: 'Rollout log-prob: c^h against x',
    yLabel: 'nats per token',
    keys: [{ key: 'trace_logprob_gap', label: 'log π(τ | c^h) − log π(τ | x)' }],
    isHiddenWhenEmpty: true, // only PACT's L^h prompts report it
  },
  {
    id: 'kl',
    title: 'KL to the reference',
    yLabel: 'k3 KL',
    keys: [
      { key: 'kl', label: 'KL (the penalty: under c^h on L^h prompts)' },
      { key: 'kl_prompt_only', label: 'KL under x (π_old, every prompt)' },
    ],
  },
  { id: 'entropy', title: 'Entropy', yLabel: 'nats per token', keys: [{ key: 'entropy', label: 'entropy' }] },
  { id: 'clip', title: 'Clip ratio', yLabel: 'fraction clipped', keys: [{ key: 'clip_ratio', label: 'clip ratio' }] },
  {
    id: 'grad',
    title: 'Gradient norm',
    yLabel: '‖g‖ before clipping',
    keys: [{ key: 'grad_norm', label: 'grad norm' }],
  },
  {
    id: 'speed',
    title: 'Tokens per second',
    yLabel: 'generated tokens / s',
    keys: [{ key: 'tokens/s', label: 'tokens/s' }],
  },
  {
    id: 'time',
    title: 'Step time by phase',
    yLabel: 'seconds',
    keys: [
      { key: 'time/rollouts_s', label: 'rollouts + rewards' },
      { key: 'time/logprobs_s', label: 'π_old(c^h), π_ref log-probs' },
      { key: 'time/update_s', label: 'PPO updates' },
    ],
  },
];

/**
 * The step metric that carries the trainer's memory in use, in bytes (tfjs
 * `memory().numBytes` in the worker); the Device panel shows it when a run reports it.
 */
export const MEMORY_METRIC = 'memory/bytes';

/** The numeric fields of a worker row (drops `recipe` and any other text). */
export function toMetricPoint(row: StepMetrics | EvalMetrics): MetricPoint {
  const values: Record<string, number> = {};
  for (const [k, v] of Object.entries(row)) {
    if (k !== 'step' && typeof v === 'number') values[k] = v;
  }
  return { step: row.step, values };
}

/**
 * Merges rows by step (a later row's values overwrite an earlier row's for the same
 * name), sorted by step. Used to fold eval rows into the training rows, and live rows
 * onto stored ones.
 */
export function mergeMetricPoints(...lists: readonly (readonly MetricPoint[])[]): MetricPoint[] {
  const byStep = new Map<number, Record<string, number>>();
  for (const list of lists) {
    for (const p of list) {
      if (!Number.isFinite(p.step)) throw new Error(`metric row has a non-numeric step (${String(p.step)})`);
      byStep.set(p.step, { ...(byStep.get(p.step) ?? {}), ...p.values });
    }
  }
  return [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([step, values]) => ({ step, values }));
}

/** The keys of `spec` with at least one finite value in any run. */
export function selectChartKeys(spec: ChartSpec, runs: readonly RunMetrics[]): ChartKey[] {
  return spec.keys.filter((k) => runs.some((r) => r.points.some((p) => Number.isFinite(p.values[k.key]))));
}

/** One drawn line: a metric of a run, aligned on the chart's shared x values. */
export interface AlignedSeries {
  runId: string;
  runIndex: number;
  key: string;
  label: string;
  /** One per x; null where the run has no finite value at that step (a gap). */
  ys: (number | null)[];
}

export interface AlignedChartData {
  /** The union of the steps that carry a drawn value, ascending. */
  xs: number[];
  series: AlignedSeries[];
}

/**
 * uPlot's aligned data for one chart: every (run, key) pair with data becomes a series
 * over the union of steps; a run missing a step gets null there. Series are ordered run
 * by run, keys in the spec's order.
 */
export function buildAlignedSeries(runs: readonly RunMetrics[], keys: readonly ChartKey[]): AlignedChartData {
  const steps = new Set<number>();
  for (const r of runs) {
    for (const p of r.points) {
      if (keys.some((k) => Number.isFinite(p.values[k.key]))) steps.add(p.step);
    }
  }
  const xs = [...steps].sort((a, b) => a - b);
  const series: AlignedSeries[] = [];
  runs.forEach((r, runIndex) => {
    const byStep = new Map(r.points.map((p) => [p.step, p.values]));
    for (const k of keys) {
      const ys = xs.map((x) => {
        const v = byStep.get(x)?.[k.key];
        return v !== undefined && Number.isFinite(v) ? v : null;
      });
      if (ys.every((y) => y === null)) continue;
      const label = keys.length > 1 ? `${r.label} — ${k.label}` : r.label;
      series.push({ runId: r.runId, runIndex, key: k.key, label, ys });
    }
  });
  return { xs, series };
}

/** The last finite value of each series, with its step (the text under a chart). */
export function readLatestValues(data: AlignedChartData): { label: string; step: number; value: number }[] {
  const out: { label: string; step: number; value: number }[] = [];
  for (const s of data.series) {
    for (let i = s.ys.length - 1; i >= 0; i--) {
      const y = s.ys[i];
      if (y !== null) {
        out.push({ label: s.label, step: data.xs[i], value: y });
        break;
      }
    }
  }
  return out;
}

/** A number as a chart or table shows it: 4 significant digits, small/large in e-notation. */
export function formatMetricValue(x: number): string {
  if (!Number.isFinite(x)) return '—';
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) return x.toExponential(2);
  return String(Number(x.toPrecision(4)));
}

/** One CSV cell (RFC 4180): numbers as the shortest round-trip text, non-finite empty, text quoted when needed. */
export function formatCsvCell(value: string | number | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * The metrics of one or more runs as CSV: `run_id,run_label,step,<metric…>`, one line
 * per (run, step), the metric columns sorted by name, empty where a run lacks a value. A
 * value named like one of the first three columns (the worker stores `step` among a row's
 * values) is that column already: it gets no second one.
 */
export function formatMetricsCsv(runs: readonly RunMetrics[]): string {
  const fixed = ['run_id', 'run_label', 'step'];
  const names = [...new Set(runs.flatMap((r) => r.points.flatMap((p) => Object.keys(p.values))))]
    .filter((n) => !fixed.includes(n))
    .sort();
  const lines = [[...fixed, ...names].map(formatCsvCell).join(',')];
  for (const r of runs) {
    for (const p of r.points) {
      lines.push([r.runId, r.label, p.step, ...names.map((n) => p.values[n])].map(formatCsvCell).join(','));
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A file name from free text: letters, digits, dot, dash and underscore only. */
export function toFileName(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'export';
}

/**
 * The y range of a chart whose values are all equal (every KL 0 at the first step): the
 * value at the bottom of [0, 1] for 0, else ±50 % around it, instead of a plotting
 * library's 0–100. null when the values differ (the library's own fit is used) or when
 * there are none.
 */
export function fitFlatRange(min: number | null, max: number | null): [number, number] | null {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return null;
  if (max - min > 1e-12 * Math.max(1, Math.abs(max))) return null;
  if (max === 0) return [0, 1];
  const half = Math.abs(max) / 2;
  return [max - half, max + half];
}

/** A tick value as the axis writes it: at most 4 significant digits, no trailing zeros ("0.0002", "1.5e-7"). */
export function formatTickValue(x: number): string {
  if (!Number.isFinite(x)) return '';
  return String(Number(x.toPrecision(4)));
}

/**
 * Width of a y axis (uPlot's `size`, the label band not included) that holds its widest
 * tick label: tick length + gap + the text + 2 px, so the tick labels never run into the
 * axis title beside them.
 */
export function computeYAxisSize(widestLabelPx: number, opts: { tickPx: number; gapPx: number }): number {
  return Math.ceil(opts.tickPx + opts.gapPx + widestLabelPx + 2);
}

/**
 * Lines under the held-out chart that say what its points are: how many held-out tasks
 * each point averages, when every task is solved at every evaluation (lines flat at 1 are
 * the data, not a placeholder), and when Solve-P is 1 with Solve-R 0 (no tool call on any
 * task: FTRL's Solve-P of a task without calls is 1, src/core/metrics.ts).
 */
export function describeEvalPoints(runs: readonly RunMetrics[]): string[] {
  const notes: string[] = [];
  const isOne = (v: number | undefined) => v !== undefined && Math.abs(v - 1) < 1e-9;
  const isZero = (v: number | undefined) => v !== undefined && Math.abs(v) < 1e-9;
  for (const r of runs) {
    const evals = r.points.filter((p) => Number.isFinite(p.values['eval/solve_f1']));
    if (evals.length === 0) continue;
    const nTasks = [...new Set(evals.map((p) => p.values.nTasks).filter((n) => Number.isFinite(n)))];
    const perTask = evals.map((p) =>
      Number.isFinite(p.values.nRollouts) && p.values.nTasks > 0 ? p.values.nRollouts / p.values.nTasks : 1,
    );
    const how = perTask.every((k) => k === 1)
      ? 'one greedy rollout each'
      : `${Math.max(...perTask)} sampled rollouts each`;
    const steps = (ps: readonly MetricPoint[]) => ps.map((p) => p.step).join(', ');
    const n = nTasks.length > 0 ? nTasks.join(' or ') : 'the';
    const sentences = [`${n} held-out tasks per point, ${how} (step ${steps(evals)}).`];
    if (
      evals.every(
        (p) => isOne(p.values['eval/solve_r']) && isOne(p.values['eval/solve_p']) && isOne(p.values['eval/solve_f1']),
      )
    ) {
      sentences.push('Every task is solved at every evaluation: the lines at 1 are measured, not a placeholder.');
    }
    const noCalls = evals.filter((p) => isOne(p.values['eval/solve_p']) && isZero(p.values['eval/solve_r']));
    if (noCalls.length > 0) {
      sentences.push(
        `Step ${steps(noCalls)}: Solve-P 1 with Solve-R 0 means no tool call on any task (a task without calls has Solve-P 1).`,
      );
    }
    notes.push(`${runs.length > 1 ? `${r.label}: ` : ''}${sentences.join(' ')}`);
  }
  return notes;
}
