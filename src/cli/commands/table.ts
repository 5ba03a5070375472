/**
 * `pact table --runs DIR[,DIR…] [--out FILE.md] [--digits N]`
 *
 * The table of an experiment trained with `pact train` (or copied from one): every
 * DIR/<run id>/ folder holding metrics.jsonl and config.json is a run (its name and seed from
 * config.json), read into the experiment runner's run records, so the cells and the paired
 * rows are exactly those of `npm run experiment`'s table.md (src/experiments: mean ±
 * standard error over seeds; rows paired by seed with the frozen or vanilla control, and PACT
 * with MatchTIR). A run counts as finished when its last step reached its config's steps.
 * --plot draws one metric's paired rows as a forest plot (svgForestChart.ts).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildTable, labelMetric } from '../../experiments/aggregate';
import { formatTableMarkdown } from '../../experiments/format';
import {
  buildSeedPairs,
  defaultSeedPairs,
  MEAN_TRAIN_ANSWER_F1,
  MEAN_TRAIN_REWARD,
  nameRunReward,
  pairedControl,
  type SeedPairRow,
} from '../../experiments/seedPairs';
import type { RunResult, StepRecord } from '../../experiments/types';
import type { TrainConfig } from '../../recipes/config';
import { parseFlags, registerCommand, type CliIO } from '../registry';
import { renderForestChartSvg, forestGeometry, type ForestChartSpec } from '../svgForestChart';
import { parseMetricsJsonl, writeSvgFiles } from './plot';

const USAGE = `usage: pact table --runs DIR[,DIR…] [--out FILE.md] [--digits N] [--plot FIG.png [--plot-metric KEY]]

The table over seeds of the runs under DIR (each DIR/<run id>/ with metrics.jsonl and
config.json, as pact train writes them; a link to such a folder counts; several DIRs,
comma-separated, pool their runs, e.g. an ablation's with Table 1's frozen control): methods as rows (a run's config name), metrics as
columns, each cell mean ± standard error over the seeds that finished; then every row paired
by seed with the frozen (or vanilla) control and pact with matchtir: the mean difference ±
its standard error and how many seeds were above. Prints Markdown; --out also writes it.
  --plot FIG.png      also draw the paired rows of one metric as a forest plot: each seed's
                      difference, the mean ± 1 standard error (bar) and ± 2 SE (whisker);
                      writes FIG.svg and FIG.png (via Chromium)
  --plot-metric KEY   the metric drawn (default eval/solve_f1; e.g. eval/answer_correct,
                      reward/mean_over_steps, reward/answer_f1/mean_over_steps)`;

/** The default metric of --plot: the held-out tool-call F1 (Solve-F1). */
const DEFAULT_PLOT_METRIC = 'eval/solve_f1';

/**
 * The forest plot of --plot: the paired rows in the table's order, each labelled with the
 * control `key` was paired with (`pact − vanilla` for a held-out metric whose table row reads
 * `pact − frozen (held out: − vanilla)`), its seeds' differences, mean ± SE, and n.
 */
export function buildSeedPairForest(pairs: readonly SeedPairRow[], key: string, title: string): ForestChartSpec {
  const rows = pairs.map((p) => ({
    label: `${p.run} − ${pairedControl(p, key)}`,
    values: (p.cells[key]?.values ?? []).map((v) => v.d),
  }));
  const ns = [...new Set(rows.map((r) => r.values.length).filter((n) => n > 0))].sort((a, b) => a - b);
  const seeds =
    ns.length === 0
      ? 'no seeds'
      : ns.length === 1
        ? `n = ${ns[0]} seed${ns[0] === 1 ? '' : 's'} per row`
        : `n = ${ns[0]}–${ns[ns.length - 1]} seeds per row, given at right`;
  const metric = labelMetric(key);
  const isHeldOut = key.startsWith('eval/');
  // Rows the table pairs with one control but whose held-out scores it takes from another.
  const substituted = pairs.filter((p) => isHeldOut && p.heldOutControl);
  const named = (xs: string[]) => [...new Set(xs)].join(', ');
  const substitution =
    substituted.length === 0
      ? ''
      : `; ${named(substituted.map((p) => p.heldOutControl!))} (the warm start, evaluated) stands in for ` +
        `${named(substituted.map((p) => p.control))}, which is never evaluated (the table's "held out: − ${substituted[0].heldOutControl}")`;
  const control = isHeldOut
    ? `Each row minus the control in its label, on the same held-out tasks${substitution}.`
    : 'Each row minus the control in its label, on the same train prompts step by step, averaged over the steps.';
  return {
    title: `${title}: ${metric}, each row minus its control, paired by seed`,
    subtitle: [
      ns.every((n) => n === 1)
        ? `Open circle: the one seed's d_s = row_s − control_s (${seeds}: no standard error to draw).`
        : `Open circle: one seed's d_s = row_s − control_s (${seeds}). Diamond and bar: mean ± 1 standard error (sd / √n); whisker: ± 2 SE; none with one seed.`,
      control,
    ],
    xLabel: `${metric} difference, row − control (${key})`,
    rows,
    hasTwoSeWhisker: true,
    // Why a row's train reward is not paired (the only notes the pairs carry).
    notes: key === MEAN_TRAIN_REWARD ? pairs.flatMap((p) => p.notes ?? []) : [],
    width: 860,
  };
}

/** DIR/<name>/'s metrics.jsonl and config.json as a run record; null (said on io.err) when either is missing. */
async function readRunFolderFiles(folder: string, name: string, io: CliIO): Promise<RunResult | null> {
  const metricsFile = path.join(folder, 'metrics.jsonl');
  const [metrics, configText] = await Promise.all([
    readFile(metricsFile, 'utf8').catch(() => null),
    readFile(path.join(folder, 'config.json'), 'utf8').catch(() => null),
  ]);
  if (metrics === null || configText === null) {
    io.err(`skipped ${folder}: no metrics.jsonl and config.json`);
    return null;
  }
  return readRunFolder(name, metrics, JSON.parse(configText) as TrainConfig, metricsFile);
}

/** One run folder as the runner's run record: steps merged from the step and eval lines. */
export function readRunFolder(id: string, metricsText: string, config: TrainConfig, file: string): RunResult {
  const bySteps = new Map<number, Record<string, number | null>>();
  for (const row of parseMetricsJsonl(metricsText, file)) {
    const values = bySteps.get(row.step) ?? {};
    for (const [k, v] of Object.entries(row)) {
      if (k === 'step') continue;
      if (typeof v === 'number') values[k] = Number.isFinite(v) ? v : null;
      else if (v === null) values[k] = null;
    }
    bySteps.set(row.step, values);
  }
  const steps: StepRecord[] = [...bySteps.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([step, values]) => ({ step, values }));
  const lastStep = steps.length > 0 ? steps[steps.length - 1].step : -1;
  const isFinished = lastStep >= config.steps;
  const seconds = steps.reduce((s, r) => s + (typeof r.values.seconds === 'number' ? r.values.seconds : 0), 0);
  return {
    id,
    name: config.name,
    seed: config.seed,
    status: isFinished ? 'finished' : 'failed',
    ...(isFinished ? {} : { error: `unfinished: last step ${lastStep} of ${config.steps}` }),
    config,
    seconds,
    steps,
  };
}

async function runTable(args: string[], io: CliIO): Promise<number> {
  const { flags, positional } = parseFlags(args, { values: ['runs', 'out', 'digits', 'plot', 'plot-metric'] });
  if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"; see pact table --help`);
  if (typeof flags.runs !== 'string') throw new Error('needs --runs DIR; see pact table --help');
  const digits = flags.digits === undefined ? 3 : Number(flags.digits);
  if (!Number.isInteger(digits) || digits < 0 || digits > 10)
    throw new Error(`--digits must be an integer 0–10, got "${String(flags.digits)}"`);
  if (flags.plot !== undefined && (typeof flags.plot !== 'string' || !flags.plot.endsWith('.png')))
    throw new Error(`--plot must end in .png, got "${String(flags.plot)}"`);
  if (flags['plot-metric'] !== undefined && flags.plot === undefined)
    throw new Error('--plot-metric needs --plot FIG.png');
  const plotMetric = typeof flags['plot-metric'] === 'string' ? flags['plot-metric'] : DEFAULT_PLOT_METRIC;
  const dirs = flags.runs.split(',').filter((d) => d !== '');
  const runs: RunResult[] = [];
  const seen = new Map<string, string>();
  for (const dir of dirs) {
    const entries = await readdir(dir, { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
      throw new Error(`cannot read ${dir}: ${e.code ?? e.message}`);
    });
    const folders = entries.filter((x) => x.isDirectory() || x.isSymbolicLink()).map((x) => x.name);
    for (const name of folders.sort((a, b) => a.localeCompare(b))) {
      const folder = path.join(dir, name);
      const before = seen.get(name);
      if (before !== undefined) throw new Error(`run ${name} is in both ${before} and ${dir}: keep one`);
      const run = await readRunFolderFiles(folder, name, io);
      if (run) {
        runs.push(run);
        seen.set(name, dir);
      }
    }
  }
  if (runs.length === 0)
    throw new Error(`${dirs.join(', ')}: no run folders (DIR/<run id>/metrics.jsonl + config.json)`);
  const table = buildTable(runs);
  const pairedMetrics = [...table.metrics.filter((k) => k !== 'reward'), MEAN_TRAIN_REWARD, MEAN_TRAIN_ANSWER_F1];
  const pairs = buildSeedPairs(runs, pairedMetrics, defaultSeedPairs(table.rows.map((r) => r.method)), {
    rewardName: nameRunReward,
  });
  const config = runs[0].config;
  const heldOut = [...new Set(runs.map((r) => `${r.config.tasks.nTest} tasks of seed ${r.config.tasks.testSeed}`))];
  const notes = [
    `Held out: ${config.tasks.nTest} tasks of the test world of seed ${config.tasks.testSeed}, ` +
      (config.evalSamples > 0 ? `${config.evalSamples} sampled rollouts each.` : 'one greedy rollout each.'),
    ...(heldOut.length > 1 ? [`Warning: the runs' held-out sets differ (${heldOut.join('; ')}).`] : []),
    `Runs read from ${dirs.join(', ')} (pact train).`,
  ];
  const title = path.basename(path.dirname(path.resolve(dirs[0])));
  const md = formatTableMarkdown(table, {
    title,
    notes,
    pairs,
    digits,
  });
  io.out(md);
  if (typeof flags.out === 'string') {
    await writeFile(flags.out, md);
    io.out(`wrote ${flags.out}`);
  }
  if (typeof flags.plot === 'string') {
    if (pairs.length === 0) throw new Error('--plot: no paired rows (no frozen or vanilla control among the runs)');
    if (!pairedMetrics.includes(plotMetric))
      throw new Error(`--plot-metric ${plotMetric}: not a paired metric here; one of: ${pairedMetrics.join(', ')}`);
    const spec = buildSeedPairForest(pairs, plotMetric, title);
    const { width, height } = forestGeometry(spec);
    const svgPath = await writeSvgFiles(renderForestChartSvg(spec), { width, height }, flags.plot);
    io.out(`wrote ${svgPath} and ${flags.plot} (${plotMetric}, ${pairs.length} rows)`);
  }
  return 0;
}

registerCommand({
  name: 'table',
  summary: 'the table over seeds of pact train runs, with the rows paired by seed against the control',
  usage: USAGE,
  run: runTable,
});
