/**
 * A line chart as an SVG string, for figures written outside the page (`pact plot`, docs/):
 * axes with "nice" ticks (1, 2, 5 × 10^k), one polyline per series with markers, a legend.
 * Series differ by dash pattern and marker shape as well as colour (Okabe–Ito palette), so
 * no meaning rests on colour alone. Pure (no DOM): the PNG is rasterised elsewhere.
 */

export interface ChartSeries {
  name: string;
  /** [x, y] points; non-finite y values break the line. */
  points: readonly (readonly [number, number])[];
  /** Optional shaded band [x, low, high] (e.g. mean ± sample std over seeds). */
  band?: readonly (readonly [number, number, number])[];
}

export interface LineChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly ChartSeries[];
  width?: number;
  height?: number;
  /** Fixed y range (e.g. [0, 1] for rates); default: the data's, padded to nice ticks. */
  yRange?: readonly [number, number];
  /** A note under the title (what the run was, where it came from). */
  subtitle?: string;
}

/** Okabe–Ito colours (readable under the common colour-vision deficiencies). */
export const SERIES_COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '1 2', '10 4'];
const MARKERS = ['circle', 'square', 'triangle', 'diamond'] as const;

/**
 * Tick values covering [lo, hi] with a step of 1, 2 or 5 × 10^k, about `target` ticks.
 * E.g. [0, 0.37] → step 0.1 (0.37/4 = 0.0925 → 0.1): 0, 0.1, 0.2, 0.3, 0.4.
 */
export function niceTicks(lo: number, hi: number, target = 5): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi))
    throw new Error(`niceTicks: bounds must be finite, got [${lo}, ${hi}]`);
  if (hi < lo) [lo, hi] = [hi, lo];
  if (hi === lo) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const raw = (hi - lo) / Math.max(1, target - 1);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  const from = Math.floor(lo / step + 1e-9);
  const to = Math.max(from + 1, Math.ceil(hi / step - 1e-9));
  const ticks: number[] = [];
  for (let k = from; k <= to; k++) ticks.push(Number((k * step).toPrecision(12)));
  return ticks;
}

/** A tick's text: 4 significant digits, exponent form outside [1e-3, 1e4). */
export function formatTick(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(1);
  return String(Number(v.toPrecision(4)));
}

/** Text made safe inside SVG elements and attributes. */
export const escapeXml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function marker(kind: (typeof MARKERS)[number], x: number, y: number, colour: string): string {
  const r = 3.5;
  switch (kind) {
    case 'circle':
      return `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${r}" fill="${colour}"/>`;
    case 'square':
      return `<rect x="${(x - r).toFixed(1)}" y="${(y - r).toFixed(1)}" width="${2 * r}" height="${2 * r}" fill="${colour}"/>`;
    case 'triangle':
      return `<path d="M${x.toFixed(1)} ${(y - r - 1).toFixed(1)}L${(x + r + 0.5).toFixed(1)} ${(y + r).toFixed(1)}L${(x - r - 0.5).toFixed(1)} ${(y + r).toFixed(1)}Z" fill="${colour}"/>`;
    case 'diamond':
      return `<path d="M${x.toFixed(1)} ${(y - r - 1).toFixed(1)}L${(x + r + 1).toFixed(1)} ${y.toFixed(1)}L${x.toFixed(1)} ${(y + r + 1).toFixed(1)}L${(x - r - 1).toFixed(1)} ${y.toFixed(1)}Z" fill="${colour}" fill-opacity="0"  stroke="${colour}" stroke-width="1.5"/>`;
  }
}

/** Estimated width of 12 px DejaVu Sans text: ~6.6 px a character (no font metrics here). */
export const estimateTextWidth = (text: string) => 6.6 * text.length;

/** Width of a legend entry: line and marker (34 px), its name, a gap. */
const legendEntryWidth = (name: string) => 34 + estimateTextWidth(name) + 14;

/** Legend columns: up to 3, fewer when the longest name would run into the next column. */
export function legendColumns(spec: Pick<LineChartSpec, 'series' | 'width'>): number {
  const plotWidth = (spec.width ?? 720) - 16 - 64;
  const widest = Math.max(0, ...spec.series.map((s) => legendEntryWidth(s.name)));
  return Math.max(1, Math.min(3, Math.floor(plotWidth / Math.max(1, widest))));
}

/** The plot area's geometry: data → pixel maps. Exported for tests. */
export function chartGeometry(spec: LineChartSpec) {
  const width = spec.width ?? 720;
  const height = spec.height ?? 420;
  const left = 64;
  const right = width - 16;
  const top = spec.subtitle ? 62 : 44;
  const columns = legendColumns(spec);
  const bottom = height - 48 - 20 * Math.ceil(spec.series.length / columns);
  const xs = spec.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = spec.series
    .flatMap((s) => [...s.points.map((p) => p[1]), ...(s.band ?? []).flatMap((b) => [b[1], b[2]])])
    .filter(Number.isFinite);
  if (xs.length === 0 || ys.length === 0) throw new Error(`chart "${spec.title}": no finite points to draw`);
  let xTicks = niceTicks(Math.min(...xs), Math.max(...xs), 6);
  // Steps are whole numbers: no ticks between them.
  if (xs.every(Number.isInteger) && xTicks[1] - xTicks[0] < 1) {
    const [lo, hi] = [Math.min(...xs), Math.max(...xs)];
    xTicks = Array.from({ length: Math.max(2, hi - lo + 1) }, (_, k) => lo + k);
  }
  const yTicks = spec.yRange
    ? niceTicks(spec.yRange[0], spec.yRange[1], 6)
    : niceTicks(Math.min(...ys), Math.max(...ys), 6);
  const [x0, x1] = [xTicks[0], xTicks[xTicks.length - 1]];
  const [y0, y1] = [yTicks[0], yTicks[yTicks.length - 1]];
  return {
    width,
    height,
    /** Legend columns (legendColumns), which set how many rows the legend takes below the box. */
    legendColumns: columns,
    box: { left, right, top, bottom },
    xTicks,
    yTicks,
    px: (x: number) => left + ((x - x0) / (x1 - x0)) * (right - left),
    py: (y: number) => bottom - ((y - y0) / (y1 - y0)) * (bottom - top),
  };
}

export function renderLineChartSvg(spec: LineChartSpec): string {
  const g = chartGeometry(spec);
  const { left, right, top, bottom } = g.box;
  const columns = g.legendColumns;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${g.width}" height="${g.height}" viewBox="0 0 ${g.width} ${g.height}" font-family="DejaVu Sans, Arial, sans-serif">`,
  );
  parts.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  parts.push(`<text x="${left}" y="24" font-size="16" font-weight="bold" fill="#111">${escapeXml(spec.title)}</text>`);
  if (spec.subtitle)
    parts.push(`<text x="${left}" y="44" font-size="12" fill="#444">${escapeXml(spec.subtitle)}</text>`);
  for (const t of g.yTicks) {
    const y = g.py(t).toFixed(1);
    parts.push(`<line x1="${left}" x2="${right}" y1="${y}" y2="${y}" stroke="#e3e3e3"/>`);
    parts.push(
      `<text x="${left - 6}" y="${y}" font-size="11" text-anchor="end" dominant-baseline="middle" fill="#333">${formatTick(t)}</text>`,
    );
  }
  for (const t of g.xTicks) {
    const x = g.px(t).toFixed(1);
    parts.push(`<line x1="${x}" x2="${x}" y1="${bottom}" y2="${bottom + 4}" stroke="#333"/>`);
    parts.push(
      `<text x="${x}" y="${bottom + 16}" font-size="11" text-anchor="middle" fill="#333">${formatTick(t)}</text>`,
    );
  }
  parts.push(
    `<rect x="${left}" y="${top}" width="${right - left}" height="${bottom - top}" fill="none" stroke="#333"/>`,
  );
  parts.push(
    `<text x="${(left + right) / 2}" y="${bottom + 34}" font-size="12" text-anchor="middle" fill="#111">${escapeXml(spec.xLabel)}</text>`,
  );
  parts.push(
    `<text transform="translate(16 ${(top + bottom) / 2}) rotate(-90)" font-size="12" text-anchor="middle" fill="#111">${escapeXml(spec.yLabel)}</text>`,
  );
  spec.series.forEach((s, i) => {
    const colour = SERIES_COLOURS[i % SERIES_COLOURS.length];
    const dash = DASHES[i % DASHES.length];
    const kind = MARKERS[i % MARKERS.length];
    const band = (s.band ?? []).filter((b) => Number.isFinite(b[1]) && Number.isFinite(b[2]));
    if (band.length > 1) {
      const upper = band.map((b) => `${g.px(b[0]).toFixed(1)},${g.py(b[2]).toFixed(1)}`);
      const lower = [...band].reverse().map((b) => `${g.px(b[0]).toFixed(1)},${g.py(b[1]).toFixed(1)}`);
      parts.push(
        `<polygon points="${[...upper, ...lower].join(' ')}" fill="${colour}" fill-opacity="0.15" stroke="none"/>`,
      );
    }
    // Split at non-finite values so a gap stays a gap.
    let run: string[] = [];
    const flush = () => {
      if (run.length > 1)
        parts.push(
          `<polyline points="${run.join(' ')}" fill="none" stroke="${colour}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`,
        );
      run = [];
    };
    for (const [x, y] of s.points) {
      if (!Number.isFinite(y)) flush();
      else run.push(`${g.px(x).toFixed(1)},${g.py(y).toFixed(1)}`);
    }
    flush();
    for (const [x, y] of s.points) if (Number.isFinite(y)) parts.push(marker(kind, g.px(x), g.py(y), colour));
    const lx = left + (i % columns) * ((right - left) / columns);
    const ly = bottom + 52 + Math.floor(i / columns) * 20;
    parts.push(
      `<line x1="${lx}" x2="${lx + 28}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`,
    );
    parts.push(marker(kind, lx + 14, ly, colour));
    parts.push(
      `<text x="${lx + 34}" y="${ly}" font-size="12" dominant-baseline="middle" fill="#111">${escapeXml(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}
