/**
 * `pact plot --metrics FILE.jsonl[,FILE2.jsonl] --metric reward[,eval/solve_f1] --out FIG.png [--labels A,B]`
 *
 * Draws metric curves from the metrics.jsonl files `pact train` writes (one JSON object a
 * line, `{type: 'step' | 'eval', run, step, …}`; null = no value) as a line chart: one series
 * per (file, metric), named by the file's run (its `run` field, or `--labels`: one per file),
 * with `--smooth N` adding the trailing mean of the last N steps. Files given the same label
 * are seeds of one row: their series is the mean over them at each step they all have. Writes
 * the SVG beside the PNG; the PNG is rasterised by Chromium (src/cli/rasterize.ts).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseFlags, registerCommand, type CliIO } from '../registry';
import { renderLineChartSvg, type ChartSeries, type LineChartSpec } from '../svgChart';

const USAGE = `usage: pact plot --metrics FILE.jsonl[,FILE.jsonl] --metric NAME[,NAME] --out FIG.png
                 [--labels LABEL[,LABEL]] [--smooth N] [--title TEXT] [--subtitle TEXT]
                 [--y-label TEXT] [--y-range LO,HI]

Line chart of metrics from pact train's metrics.jsonl files. A metric is a step metric
(reward, kl, loss/Lh, reward/search_rounds, …) or an eval metric (eval/solve_f1, …). With
several files each series is named by its file's run (the "run" of its first line, else its
folder's name), or by --labels, one label per --metrics file in the same order.
Files given the same label (the seeds of one row) make one series, the mean over
them at each step all of them have, named "LABEL (mean of N runs)".
--smooth N adds the trailing mean of the last N points of each series. Writes FIG.svg and
FIG.png (via Chromium).`;

export interface MetricsRow {
  type?: string;
  run?: string;
  step: number;
  [key: string]: unknown;
}

/** Parses metrics.jsonl text; a bad line is an error naming the file and line. */
export function parseMetricsJsonl(text: string, fileName: string): MetricsRow[] {
  const rows: MetricsRow[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      throw new Error(`${fileName} line ${i + 1}: not valid JSON (${(e as Error).message})`);
    }
    if (typeof obj !== 'object' || obj === null || typeof (obj as MetricsRow).step !== 'number') {
      throw new Error(`${fileName} line ${i + 1}: expected an object with a numeric "step"`);
    }
    rows.push(obj as MetricsRow);
  });
  return rows;
}

/** [step, value] of one metric, in step order; null/absent values are left out. */
export function metricPoints(rows: readonly MetricsRow[], metric: string): [number, number][] {
  return rows
    .filter((r) => typeof r[metric] === 'number' && Number.isFinite(r[metric] as number))
    .map((r) => [r.step, r[metric] as number] as [number, number])
    .sort((a, b) => a[0] - b[0]);
}

/** Trailing mean over the last `n` points (fewer at the start): the k-th value is mean(y[max(0,k−n+1)..k]). */
export function trailingMean(points: readonly (readonly [number, number])[], n: number): [number, number][] {
  return points.map(([x], k) => {
    const from = Math.max(0, k - n + 1);
    const window = points.slice(from, k + 1);
    return [x, window.reduce((s, p) => s + p[1], 0) / window.length];
  });
}

/**
 * The mean of several runs' series of one metric at each step every run has (the seeds of one
 * row); steps some run lacks are left out, not averaged over fewer runs.
 */
export function meanOverRuns(runs: readonly (readonly (readonly [number, number])[])[]): [number, number][] {
  const maps = runs.map((points) => new Map(points.map(([x, y]) => [x, y])));
  return [...maps[0].keys()]
    .filter((x) => maps.every((m) => m.has(x)))
    .sort((a, b) => a - b)
    .map((x) => [x, maps.reduce((sum, m) => sum + (m.get(x) as number), 0) / maps.length]);
}

/** Writes an SVG as FIG.svg beside FIG.png (rasterised by Chromium at `size`); returns the SVG's path. */
export async function writeSvgFiles(
  svg: string,
  size: { width: number; height: number },
  pngPath: string,
): Promise<string> {
  const svgPath = pngPath.replace(/\.png$/, '.svg');
  await writeFile(svgPath, svg);
  const { rasterizeSvg } = await import('../rasterize');
  await rasterizeSvg(svg, pngPath, size);
  return svgPath;
}

/** Writes the line chart as FIG.svg beside FIG.png; returns the SVG's path. */
export async function writeChartFiles(spec: LineChartSpec, pngPath: string): Promise<string> {
  return writeSvgFiles(renderLineChartSvg(spec), { width: spec.width ?? 760, height: spec.height ?? 440 }, pngPath);
}

async function runPlot(args: string[], io: CliIO): Promise<number> {
  const { flags, positional } = parseFlags(args, {
    values: ['metrics', 'metric', 'out', 'labels', 'smooth', 'title', 'subtitle', 'y-label', 'y-range'],
  });
  if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"; see pact plot --help`);
  if (typeof flags.metrics !== 'string' || typeof flags.metric !== 'string' || typeof flags.out !== 'string') {
    throw new Error('needs --metrics FILE.jsonl, --metric NAME and --out FIG.png; see pact plot --help');
  }
  if (!flags.out.endsWith('.png')) throw new Error(`--out must end in .png, got "${flags.out}"`);
  const smooth = flags.smooth === undefined ? 0 : Number(flags.smooth);
  if (!Number.isInteger(smooth) || smooth < 0)
    throw new Error(`--smooth must be a non-negative integer, got "${String(flags.smooth)}"`);
  let yRange: [number, number] | undefined;
  if (typeof flags['y-range'] === 'string') {
    const parts = flags['y-range'].split(',').map(Number);
    if (parts.length !== 2 || !parts.every(Number.isFinite) || parts[0] >= parts[1])
      throw new Error(`--y-range must be LO,HI with LO < HI, got "${flags['y-range']}"`);
    yRange = [parts[0], parts[1]];
  }
  const files = flags.metrics.split(',');
  const metrics = flags.metric.split(',');
  const labels = typeof flags.labels === 'string' ? flags.labels.split(',').map((l) => l.trim()) : null;
  if (labels && (labels.length !== files.length || labels.some((l) => l === ''))) {
    throw new Error(
      `--labels needs one non-empty label per --metrics file (${files.length}), got ${JSON.stringify(flags.labels)}`,
    );
  }
  // Series by name, in first-seen order; files with one label add runs to one name.
  const byName = new Map<string, [number, number][][]>();
  for (const [i, file] of files.entries()) {
    const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
      throw new Error(`cannot read --metrics ${file}: ${e.code ?? e.message}`);
    });
    const rows = parseMetricsJsonl(text, file);
    const run = labels?.[i] ?? rows[0]?.run ?? path.basename(path.dirname(file));
    for (const metric of metrics) {
      const points = metricPoints(rows, metric);
      if (points.length === 0) throw new Error(`${file}: no values of metric "${metric}"`);
      // Several runs (or a labelled one) of one metric: the run names the series (the metric is the chart's).
      const name = files.length === 1 && !labels ? metric : metrics.length === 1 ? run : `${run}: ${metric}`;
      byName.set(name, [...(byName.get(name) ?? []), points]);
    }
  }
  const series: ChartSeries[] = [];
  for (const [runName, runs] of byName) {
    const name = runs.length > 1 ? `${runName} (mean of ${runs.length} runs)` : runName;
    const points = runs.length > 1 ? meanOverRuns(runs) : runs[0];
    if (points.length === 0) throw new Error(`"${runName}": its ${runs.length} runs share no step`);
    series.push({ name, points });
    if (smooth > 1) series.push({ name: `${name} (mean of last ${smooth})`, points: trailingMean(points, smooth) });
  }
  const spec = {
    title: typeof flags.title === 'string' ? flags.title : metrics.join(', '),
    subtitle: typeof flags.subtitle === 'string' ? flags.subtitle : undefined,
    xLabel: 'training step',
    yLabel: typeof flags['y-label'] === 'string' ? flags['y-label'] : metrics.join(', '),
    series,
    yRange,
    width: 760,
    height: 440,
  };
  const svgPath = await writeChartFiles(spec, flags.out);
  io.out(`wrote ${svgPath} and ${flags.out} (${series.length} series)`);
  return 0;
}

registerCommand({
  name: 'plot',
  summary: 'draw metric curves from metrics.jsonl files as SVG + PNG',
  usage: USAGE,
  run: runPlot,
});
