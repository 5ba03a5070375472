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
 *
 * The header under the title says which numerics the runs were made with (describeNumerics):
 * the engine kernels from each config.json (absent: 'simd', the config's default), and the
 * engine, backend, threads and commit from each provenance.json (scripts/studyQueue.sh writes
 * it; pact train itself records only the kernels, in config.json). Runs that differ in kernels,
 * engine or backend are not comparable bit for bit: a warning, on stderr and in the header.
 * Commits are listed with their run counts, not warned on (most commits leave the arithmetic
 * alone); nor are threads (the engine gives the same bits on any thread count).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildTable, labelMetric } from '../../experiments/aggregate';
import { formatTableMarkdown } from '../../experiments/format';
import { describeHeldOut, formatHeldOutNote } from '../../experiments/heldOut';
import {
  buildSeedPairs,
  defaultSeedPairs,
  MEAN_TRAIN_ANSWER_F1,
  MEAN_TRAIN_F1,
  MEAN_TRAIN_REWARD,
  nameRunReward,
  pairedControl,
  type SeedPairRow,
} from '../../experiments/seedPairs';
import type { RunResult, StepRecord } from '../../experiments/types';
import { KERNEL_VARIANTS } from '../../model/engine/kernelChoice';
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
Under the title, the numerics the runs were made with (engine kernels from config.json, 'simd'
where absent; engine, backend, threads and commit from provenance.json, which
scripts/studyQueue.sh writes) and the commits with their run counts; runs that differ in
engine kernels, engine or backend are named in a warning, on stderr and in the header (their
rows are not comparable bit for bit). A run without provenance.json is said to have none.
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

/** What one run was made with, as its folder records it (config.json and provenance.json). */
export interface RunNumerics {
  id: string;
  /** Its row: the config's name. */
  name: string;
  /** The CPU engine's kernels: config.json's engineKernels; where absent, provenance's "+fma", else 'simd' (the config's default). */
  kernels: string;
  /** provenance.json's engine, without its "+fma" (the kernels say that). */
  engine?: string;
  /** provenance.json's backend, else config.json's. */
  backend?: string;
  threads?: number;
  commit?: string;
  /** No provenance.json in the folder (or one that does not read as a JSON object). */
  isProvenanceMissing: boolean;
  /** config.json's engineKernels and provenance.json's engine disagree: the sentence that says how. */
  kernelConflict?: string;
}

const DEFAULT_KERNELS: string = KERNEL_VARIANTS[0];
const FMA_SUFFIX = '+fma';

/** A run's numerics from its config and provenance.json (null: the folder has none; not an object: read as none). */
export function readRunNumerics(id: string, config: Partial<TrainConfig>, provenance: unknown): RunNumerics {
  const prov = provenance !== null && typeof provenance === 'object' ? (provenance as Record<string, unknown>) : null;
  const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
  const rawEngine = str(prov?.engine);
  const provKernels = rawEngine === undefined ? undefined : rawEngine.endsWith(FMA_SUFFIX) ? 'fma' : DEFAULT_KERNELS;
  const configKernels = str(config.engineKernels);
  const kernels = configKernels ?? provKernels ?? DEFAULT_KERNELS;
  const threads = prov?.threads;
  return {
    id,
    name: typeof config.name === 'string' ? config.name : id,
    kernels,
    ...(rawEngine !== undefined
      ? { engine: rawEngine.endsWith(FMA_SUFFIX) ? rawEngine.slice(0, -FMA_SUFFIX.length) : rawEngine }
      : {}),
    ...((str(prov?.backend) ?? str(config.backend)) !== undefined
      ? { backend: str(prov?.backend) ?? str(config.backend) }
      : {}),
    ...(typeof threads === 'number' && Number.isInteger(threads) && threads > 0 ? { threads } : {}),
    ...(str(prov?.commit) !== undefined ? { commit: str(prov?.commit)!.toLowerCase() } : {}),
    isProvenanceMissing: prov === null,
    ...(configKernels !== undefined && provKernels !== undefined && configKernels !== provKernels
      ? {
          kernelConflict:
            `${id}'s config.json says engineKernels ${configKernels} but its provenance.json's engine is ` +
            `${rawEngine} (${provKernels} kernels); the table takes ${configKernels}`,
        }
      : {}),
  };
}

/** `a, b (row x)` / `a, b (rows x, y)`: runs and the rows they are in. */
function nameRuns(runs: readonly RunNumerics[]): string {
  const rows = [...new Set(runs.map((r) => r.name))];
  return `${runs.map((r) => r.id).join(', ')} (row${rows.length === 1 ? '' : 's'} ${rows.join(', ')})`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Runs grouped by a value (undefined: not recorded, left out), the largest group first. */
function groupBy(runs: readonly RunNumerics[], get: (r: RunNumerics) => string | undefined): [string, RunNumerics[]][] {
  const groups = new Map<string, RunNumerics[]>();
  for (const r of runs) {
    const v = get(r);
    if (v !== undefined) groups.set(v, [...(groups.get(v) ?? []), r]);
  }
  return [...groups.entries()].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
}

/** Commits grouped, a short hash and its full form counting as one (`b04d4d8` = `b04d4d86…`), the most runs first. */
function groupCommits(runs: readonly RunNumerics[]): { commit: string; runs: RunNumerics[] }[] {
  const groups: { commit: string; runs: RunNumerics[] }[] = [];
  const withCommit = runs.filter((r) => r.commit !== undefined);
  for (const r of [...withCommit].sort((a, b) => b.commit!.length - a.commit!.length)) {
    const group = groups.find((g) => g.commit.startsWith(r.commit!));
    if (group) group.runs.push(r);
    else groups.push({ commit: r.commit!, runs: [r] });
  }
  return groups.sort((a, b) => b.runs.length - a.runs.length || a.commit.localeCompare(b.commit));
}

/**
 * The table's header on numerics: one line with the numerics every run shares, or a warning
 * naming the runs that differ in engine kernels, engine or backend (their rows are not
 * comparable bit for bit); the commits with their run counts; the runs without provenance.json.
 * `warnings` are the lines to say on stderr too.
 */
export function describeNumerics(runs: readonly RunNumerics[]): {
  header: string[];
  warnings: string[];
  notes: string[];
} {
  const header: string[] = [];
  const warnings: string[] = [];
  const notes: string[] = [];
  const dimensions: { label: string; get: (r: RunNumerics) => string | undefined }[] = [
    { label: 'engine kernels', get: (r) => r.kernels },
    { label: 'engine', get: (r) => r.engine },
    { label: 'backend', get: (r) => r.backend },
  ];
  const differences = dimensions.flatMap(({ label, get }) => {
    const groups = groupBy(runs, get);
    if (groups.length < 2) return [];
    // The smaller groups first, by their runs; the largest last, by its count where it is big.
    const [largest, next] = groups;
    const others = groups
      .slice(1)
      .reverse()
      .map(([v, rs]) => `${v} in ${nameRuns(rs)}`);
    const largestText =
      largest[1].length > 3 && largest[1].length > next[1].length
        ? `${largest[0]} in the other ${plural(largest[1].length, 'run')}`
        : `${largest[0]} in ${nameRuns(largest[1])}`;
    return [`${label} ${[...others, largestText].join(', ')}`];
  });
  if (differences.length > 0) {
    const line = `Warning: the runs were not all made with the same numerics, so these rows are not comparable bit for bit: ${differences.join('; ')}.`;
    header.push(line);
    warnings.push(line);
  } else {
    const one = (get: (r: RunNumerics) => string | undefined, missing: string) => groupBy(runs, get)[0]?.[0] ?? missing;
    const threads = [...new Set(runs.flatMap((r) => (r.threads === undefined ? [] : [r.threads])))].sort(
      (a, b) => a - b,
    );
    const threadText =
      threads.length === 0
        ? []
        : threads.length === 1
          ? [plural(threads[0], 'thread')]
          : [`${threads[0]}–${threads[threads.length - 1]} threads (the same bits on any count)`];
    const recorded = runs.filter((r) => !r.isProvenanceMissing).length;
    const scope =
      recorded === runs.length
        ? `all ${plural(runs.length, 'run')}`
        : recorded === 0
          ? 'engine kernels from config.json; engine and backend not recorded'
          : `engine and backend as the ${plural(recorded, 'run')} with provenance.json record them`;
    header.push(
      `Numerics: ${[
        one((r) => r.engine, 'engine not recorded'),
        one((r) => r.backend, 'backend not recorded'),
        `${one((r) => r.kernels, DEFAULT_KERNELS)} kernels`,
        ...threadText,
      ].join(', ')} (${scope}).`,
    );
  }
  for (const r of runs) {
    if (r.kernelConflict) {
      const line = `Warning: ${r.kernelConflict}.`;
      header.push(line);
      warnings.push(line);
    }
  }
  const commits = groupCommits(runs);
  const noCommit = runs.filter((r) => r.commit === undefined);
  const commitText =
    commits.length === 0
      ? 'No run records the commit it was made at'
      : `Runs made at commit${commits.length === 1 ? '' : 's'} ${commits
          .map((g) => `${g.commit.slice(0, 7)} (${plural(g.runs.length, 'run')})`)
          .join(', ')}` +
        (noCommit.length === 0
          ? ''
          : `; ${noCommit.length === 1 ? '1 run records' : `${noCommit.length} runs record`} no commit: ${noCommit.map((r) => r.id).join(', ')}`);
  header.push(`${commitText}.`);
  const missing = runs.filter((r) => r.isProvenanceMissing);
  if (missing.length > 0) {
    const line =
      (missing.length === runs.length
        ? `No provenance.json in any of the ${plural(runs.length, 'run')}`
        : `No provenance.json in ${missing.map((r) => r.id).join(', ')} (${missing.length} of ${runs.length} runs)`) +
      ": the commit, engine and backend they ran on are not recorded (scripts/studyQueue.sh writes it); their engine kernels are config.json's.";
    header.push(line);
    notes.push(line);
  }
  return { header, warnings, notes };
}

/** A run folder's run record and numerics; null (said on io.err) when metrics.jsonl or config.json is missing. */
async function readRunFolderFiles(
  folder: string,
  name: string,
  io: CliIO,
): Promise<{ run: RunResult; numerics: RunNumerics } | null> {
  const metricsFile = path.join(folder, 'metrics.jsonl');
  const [metrics, configText, provenanceText] = await Promise.all([
    readFile(metricsFile, 'utf8').catch(() => null),
    readFile(path.join(folder, 'config.json'), 'utf8').catch(() => null),
    readFile(path.join(folder, 'provenance.json'), 'utf8').catch(() => null),
  ]);
  if (metrics === null || configText === null) {
    io.err(`skipped ${folder}: no metrics.jsonl and config.json`);
    return null;
  }
  const config = JSON.parse(configText) as TrainConfig;
  let provenance: unknown = null;
  if (provenanceText !== null) {
    try {
      provenance = JSON.parse(provenanceText);
    } catch (e) {
      io.err(
        `warning: ${path.join(folder, 'provenance.json')} does not read as JSON (${(e as Error).message}): taken as none`,
      );
    }
  }
  return {
    run: readRunFolder(name, metrics, config, metricsFile),
    numerics: readRunNumerics(name, config, provenance),
  };
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
  const numerics: RunNumerics[] = [];
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
      const read = await readRunFolderFiles(folder, name, io);
      if (read) {
        runs.push(read.run);
        numerics.push(read.numerics);
        seen.set(name, dir);
      }
    }
  }
  if (runs.length === 0)
    throw new Error(`${dirs.join(', ')}: no run folders (DIR/<run id>/metrics.jsonl + config.json)`);
  const table = buildTable(runs);
  const pairedMetrics = [
    ...table.metrics.filter((k) => k !== 'reward'),
    MEAN_TRAIN_REWARD,
    MEAN_TRAIN_ANSWER_F1,
    MEAN_TRAIN_F1,
  ];
  const pairs = buildSeedPairs(runs, pairedMetrics, defaultSeedPairs(table.rows.map((r) => r.method)), {
    rewardName: nameRunReward,
  });
  const config = runs[0].config;
  const heldOut = [...new Set(runs.map((r) => describeHeldOut(r.config)))];
  const notes = [
    formatHeldOutNote(config),
    ...(heldOut.length > 1 ? [`Warning: the runs' held-out sets differ (${heldOut.join('; ')}).`] : []),
    `Runs read from ${dirs.join(', ')} (pact train).`,
  ];
  const title = path.basename(path.dirname(path.resolve(dirs[0])));
  const described = describeNumerics(numerics);
  for (const line of described.warnings) io.err(`warning: ${line.replace(/^Warning: /, '')}`);
  for (const line of described.notes) io.err(`note: ${line}`);
  // The title, then the numerics header, then the table (formatTableMarkdown with no title of its own).
  const md = [
    `# ${title}`,
    '',
    ...described.header.flatMap((l) => [l, '']),
    formatTableMarkdown(table, { notes, pairs, digits }),
  ].join('\n');
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
