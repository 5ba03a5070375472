/**
 * `pact compare --run A.jsonl[,A2.jsonl] --control B.jsonl[,B2.jsonl] [--metric reward]
 *               [--blocks 1-16,17-32] [--digits 3]`
 *
 * The paired comparison of src/experiments/paired.ts over pact train's metrics.jsonl files:
 * the i-th --run file is paired with the i-th --control file (one pair per seed), steps
 * matched by number. Prints a Markdown table: per block of steps and pair, both means, the
 * mean paired difference (each ± its standard error over the steps) and how many steps the
 * run was above the control; with two or more pairs, a row pooled over all of them.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  comparePaired,
  formatPairedTable,
  parseStepBlocks,
  runningDifference,
  type PairedSeries,
  type StepBlock,
} from '../../experiments/paired';
import { parseFlags, registerCommand, type CliIO } from '../registry';
import { type ChartSeries, type LineChartSpec } from '../svgChart';
import { metricPoints, parseMetricsJsonl, writeChartFiles } from './plot';

const USAGE = `usage: pact compare --run A.jsonl[,A2.jsonl] --control B.jsonl[,B2.jsonl]
                    [--metric NAME] [--blocks 1-16,17-32] [--digits N] [--plot FIG.png]

Paired comparison of a run against a control trained on the same prompts (the same seed:
each step's prompts and sampling streams depend only on the seed and the step). The i-th
--run file is paired with the i-th --control file; steps are matched by number.
  --metric NAME    a step metric (default reward) or an eval metric (eval/solve_f1, …)
  --blocks RANGES  inclusive step ranges, comma-separated (default: all paired steps)
  --digits N       decimals in the table (default 3)
  --plot FIG.png   also draw, over the steps, the running mean of the paired difference
                   (every difference up to step t, over all pairs) with a ± standard
                   error band, each pair's own running mean, and the zero line; writes
                   FIG.svg and FIG.png (via Chromium)
Prints a Markdown table: each run's mean, the mean of the per-step differences (± standard
error over the steps) and the count of steps where the run was above the control.`;

interface LoadedSeries {
  name: string;
  points: [number, number][];
}

async function loadSeries(file: string, metric: string): Promise<LoadedSeries> {
  const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${file}: ${e.code ?? e.message}`);
  });
  const rows = parseMetricsJsonl(text, file);
  const points = metricPoints(rows, metric);
  if (points.length === 0) throw new Error(`${file}: no values of metric "${metric}"`);
  return { name: rows[0]?.run ?? path.basename(path.dirname(file)), points };
}

/**
 * The chart of --plot: each pair's running mean of d_t (with two or more pairs), the one
 * over every pair with its ± standard error band, and 0 (no difference) across the steps.
 */
export function buildRunningDifferenceChart(
  pairs: readonly PairedSeries[],
  names: { metric: string; run: string; control: string },
): LineChartSpec {
  const all = runningDifference(pairs);
  if (all.length === 0) throw new Error('--plot: no step is in both series');
  const series: ChartSeries[] = [];
  if (pairs.length > 1) {
    for (const p of pairs)
      series.push({ name: p.label, points: runningDifference([p]).map((r) => [r.step, r.mean] as const) });
  }
  const pooled = pairs.length > 1 ? `all ${pairs.length} pairs` : pairs[0].label;
  series.push({
    name: `${pooled} (band: ± standard error)`,
    points: all.map((r) => [r.step, r.mean] as const),
    band: all.filter((r) => Number.isFinite(r.se)).map((r) => [r.step, r.mean - r.se, r.mean + r.se] as const),
  });
  series.push({
    name: 'no difference',
    points: [
      [all[0].step, 0],
      [all[all.length - 1].step, 0],
    ],
  });
  return {
    title: `${names.run} − ${names.control}: ${names.metric}, running paired mean`,
    subtitle: `mean of ${names.run} − ${names.control} on the same prompts over every step up to t; last point: ${all[all.length - 1].mean.toFixed(3)} ± ${all[all.length - 1].se.toFixed(3)} (n = ${all[all.length - 1].n})`,
    xLabel: 'training step',
    yLabel: `${names.metric} difference (mean up to step)`,
    series,
    width: 760,
    height: 440,
  };
}

/** A run id without its seed suffix (`pact-s2` → `pact`), for the table's header. */
function withoutSeed(id: string): string {
  return id.replace(/-s\d+$/, '');
}

async function runCompare(args: string[], io: CliIO): Promise<number> {
  const { flags, positional } = parseFlags(args, { values: ['run', 'control', 'metric', 'blocks', 'digits', 'plot'] });
  if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"; see pact compare --help`);
  if (typeof flags.run !== 'string' || typeof flags.control !== 'string') {
    throw new Error('needs --run A.jsonl and --control B.jsonl; see pact compare --help');
  }
  const runFiles = flags.run.split(',');
  const controlFiles = flags.control.split(',');
  if (runFiles.length !== controlFiles.length) {
    throw new Error(
      `--run has ${runFiles.length} file(s) but --control has ${controlFiles.length}; give one control per run, in the same order`,
    );
  }
  const metric = typeof flags.metric === 'string' ? flags.metric : 'reward';
  const digits = flags.digits === undefined ? 3 : Number(flags.digits);
  if (!Number.isInteger(digits) || digits < 0 || digits > 10)
    throw new Error(`--digits must be an integer 0–10, got "${String(flags.digits)}"`);
  if (flags.plot !== undefined && (typeof flags.plot !== 'string' || !flags.plot.endsWith('.png')))
    throw new Error(`--plot must end in .png, got "${String(flags.plot)}"`);
  const pairs: PairedSeries[] = [];
  let names = { run: 'run', control: 'control' };
  for (let i = 0; i < runFiles.length; i++) {
    // Both files are read at once; a failure is reported for every file that failed, run first,
    // so the message does not depend on which read finished first.
    const settled = await Promise.allSettled([loadSeries(runFiles[i], metric), loadSeries(controlFiles[i], metric)]);
    const failures = settled.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    if (failures.length > 0) throw new Error(failures.join('; '));
    const [run, control] = settled.map((r) => (r as PromiseFulfilledResult<LoadedSeries>).value);
    if (i === 0) names = { run: withoutSeed(run.name), control: withoutSeed(control.name) };
    pairs.push({ label: `${run.name} − ${control.name}`, run: run.points, control: control.points });
  }
  let blocks: StepBlock[];
  if (typeof flags.blocks === 'string') {
    blocks = parseStepBlocks(flags.blocks);
  } else {
    const steps = pairs.flatMap((p) => p.run.map(([s]) => s));
    blocks = [{ from: Math.min(...steps), to: Math.max(...steps) }];
  }
  const rows = comparePaired(pairs, blocks);
  const empty = rows.filter((r) => r.n === 0).map((r) => `${r.label} (steps ${r.block.from}–${r.block.to})`);
  if (empty.length === rows.length)
    throw new Error(`no step is in both series within --blocks; check the files and ranges`);
  io.out(formatPairedTable(rows, { metric, ...names }, digits));
  io.out('');
  io.out(
    `± is the standard error over the steps of each row (sample sd / √n).${empty.length ? ` No paired steps: ${empty.join(', ')}.` : ''}`,
  );
  if (typeof flags.plot === 'string') {
    const svgPath = await writeChartFiles(buildRunningDifferenceChart(pairs, { metric, ...names }), flags.plot);
    io.out(`wrote ${svgPath} and ${flags.plot}`);
  }
  return 0;
}

registerCommand({
  name: 'compare',
  summary: 'paired comparison of runs against controls on the same prompts (Markdown table)',
  usage: USAGE,
  run: runCompare,
});
