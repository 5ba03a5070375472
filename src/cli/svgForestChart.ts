/**
 * A forest plot (horizontal interval chart) as an SVG string, for the paired-by-seed figure of
 * `pact table --plot`: one line per row, each seed's difference d_s as a small open circle,
 * the mean over seeds as a filled diamond with a bar of ± 1 standard error (sample sd / √n)
 * and, optionally, a thin ± 2 SE whisker, a dashed line at 0 (no difference), and the mean ±
 * SE and n written at the right. Seeds and means differ by shape (open circle, filled
 * diamond) as well as colour. A row of one seed shows its seed alone (no spread to draw); a
 * row without paired seeds shows "–". Ticks, colours and escaping are svgChart.ts's.
 */
import { computeMeanStd } from '../experiments/aggregate';
import { standardError } from '../experiments/paired';
import { escapeXml, estimateTextWidth, formatTick, niceTicks, SERIES_COLOURS } from './svgChart';

export interface ForestRow {
  label: string;
  /** Each paired seed's difference d_s (empty: the row has none for this metric). */
  values: readonly number[];
}

export interface ForestChartSpec {
  title: string;
  /** Paragraphs under the title (what the bar is, n, which control), wrapped to the width. */
  subtitle?: readonly string[];
  xLabel: string;
  rows: readonly ForestRow[];
  /** Also draw a thin ± 2 standard error whisker (default true). */
  hasTwoSeWhisker?: boolean;
  /** Paragraphs under the legend (why a row is empty, …), wrapped to the width. */
  notes?: readonly string[];
  width?: number;
}

const PAD = 16;
const ROW_HEIGHT = 28;
const INSET = 10;
const SEED_COLOUR = SERIES_COLOURS[1];
const MEAN_COLOUR = SERIES_COLOURS[0];
/** The right-hand column's header. */
const VALUE_HEADER = 'mean ± SE, n';
/** The note added when some row has no paired seed. */
export const EMPTY_ROW_NOTE = '–: no seed of this row was paired for this metric.';

/** Words of `text` in lines no wider than `maxWidth` px (estimated); a longer word keeps its own line. */
export function wrapText(text: string, maxWidth: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line === '' ? word : `${line} ${word}`;
    if (line !== '' && estimateTextWidth(next) > maxWidth) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** The right-hand text of a row: `+0.200 ± 0.100, n=2`, `+0.031, n=1`, `–`. */
export function formatForestValue(mean: number, se: number, n: number, digits = 3): string {
  if (n === 0) return '–';
  const m = `${mean > 0 ? '+' : ''}${mean.toFixed(digits)}`;
  return Number.isFinite(se) ? `${m} ± ${se.toFixed(digits)}, n=${n}` : `${m}, n=${n}`;
}

/** Rows, axis and boxes in pixels. Exported for tests. */
export function forestGeometry(spec: ForestChartSpec) {
  const width = spec.width ?? 860;
  const hasWhisker = spec.hasTwoSeWhisker ?? true;
  const stats = spec.rows.map((r) => {
    const m = computeMeanStd(r.values);
    return { n: m.n, mean: m.mean, se: standardError(m) };
  });
  if (stats.every((s) => s.n === 0)) throw new Error(`chart "${spec.title}": no row has a paired seed`);
  const valueTexts = stats.map((s) => formatForestValue(s.mean, s.se, s.n));
  const labelWidth = Math.max(...spec.rows.map((r) => estimateTextWidth(r.label)));
  const valueWidth = Math.max(...[VALUE_HEADER, ...valueTexts].map(estimateTextWidth));
  const left = Math.round(PAD + labelWidth + 12);
  const right = Math.round(width - PAD - valueWidth - 12);
  const subtitle = (spec.subtitle ?? []).flatMap((line) => wrapText(line, width - 2 * PAD));
  const top = 40 + 16 * subtitle.length + 18;
  const bottom = top + ROW_HEIGHT * spec.rows.length;
  const notes = [...(stats.some((s) => s.n === 0) ? [EMPTY_ROW_NOTE] : []), ...(spec.notes ?? [])].flatMap((line) =>
    wrapText(line, width - 2 * PAD),
  );
  const height = bottom + 76 + 16 * notes.length;
  // The axis holds 0, every seed, and each mean's bar (or whisker).
  const reach = hasWhisker ? 2 : 1;
  const xs = [
    0,
    ...spec.rows.flatMap((r) => r.values),
    ...stats.flatMap((s) => (Number.isFinite(s.se) ? [s.mean - reach * s.se, s.mean + reach * s.se] : [])),
  ].filter(Number.isFinite);
  const xTicks = niceTicks(Math.min(...xs), Math.max(...xs), 6);
  const [x0, x1] = [xTicks[0], xTicks[xTicks.length - 1]];
  // The axis runs INSET px inside the box, so a mark on the first or last tick (often 0) clears the frame.
  const px = (x: number) => left + INSET + ((x - x0) / (x1 - x0)) * (right - left - 2 * INSET);
  const rows = spec.rows.map((r, i) => {
    const s = stats[i];
    const hasBar = Number.isFinite(s.se);
    return {
      label: r.label,
      y: top + ROW_HEIGHT * (i + 0.5),
      n: s.n,
      mean: s.mean,
      se: s.se,
      valueText: valueTexts[i],
      /** Pixel x of each seed's d_s. */
      seeds: r.values.filter(Number.isFinite).map(px),
      /** Pixel x of the mean marker; null for fewer than two seeds (the seed alone is drawn). */
      meanX: hasBar ? px(s.mean) : null,
      /** Pixel ends of the ± 1 SE bar and the ± 2 SE whisker; null without a standard error. */
      bar: hasBar ? ([px(s.mean - s.se), px(s.mean + s.se)] as const) : null,
      whisker: hasBar && hasWhisker ? ([px(s.mean - 2 * s.se), px(s.mean + 2 * s.se)] as const) : null,
    };
  });
  return { width, height, box: { left, right, top, bottom }, subtitle, xTicks, px, rows, notes, hasWhisker };
}

const f1 = (v: number) => v.toFixed(1);

function openCircle(x: number, y: number): string {
  return `<circle cx="${f1(x)}" cy="${f1(y)}" r="4" fill="#ffffff" stroke="${SEED_COLOUR}" stroke-width="1.6"/>`;
}

function filledDiamond(x: number, y: number): string {
  const r = 6;
  return `<path d="M${f1(x)} ${f1(y - r)}L${f1(x + r)} ${f1(y)}L${f1(x)} ${f1(y + r)}L${f1(x - r)} ${f1(y)}Z" fill="${MEAN_COLOUR}" stroke="#ffffff" stroke-width="1"/>`;
}

function hLine(x0: number, x1: number, y: number, colour: string, strokeWidth: number): string {
  return `<line x1="${f1(x0)}" x2="${f1(x1)}" y1="${f1(y)}" y2="${f1(y)}" stroke="${colour}" stroke-width="${strokeWidth}"/>`;
}

export function renderForestChartSvg(spec: ForestChartSpec): string {
  const g = forestGeometry(spec);
  const { left, right, top, bottom } = g.box;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${g.width}" height="${g.height}" viewBox="0 0 ${g.width} ${g.height}" font-family="DejaVu Sans, Arial, sans-serif">`,
  );
  parts.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  parts.push(`<text x="${PAD}" y="24" font-size="16" font-weight="bold" fill="#111">${escapeXml(spec.title)}</text>`);
  g.subtitle.forEach((line, i) =>
    parts.push(`<text x="${PAD}" y="${44 + 16 * i}" font-size="12" fill="#444">${escapeXml(line)}</text>`),
  );
  parts.push(`<text x="${right + 12}" y="${top - 6}" font-size="11" fill="#444">${escapeXml(VALUE_HEADER)}</text>`);
  for (const t of g.xTicks) {
    const x = f1(g.px(t));
    parts.push(`<line x1="${x}" x2="${x}" y1="${top}" y2="${bottom}" stroke="#e8e8e8"/>`);
    parts.push(`<line x1="${x}" x2="${x}" y1="${bottom}" y2="${bottom + 4}" stroke="#333"/>`);
    parts.push(
      `<text x="${x}" y="${bottom + 16}" font-size="11" text-anchor="middle" fill="#333">${formatTick(t)}</text>`,
    );
  }
  const zero = f1(g.px(0));
  parts.push(
    `<line x1="${zero}" x2="${zero}" y1="${top}" y2="${bottom}" stroke="#555" stroke-width="1.2" stroke-dasharray="5 3"/>`,
  );
  parts.push(
    `<rect x="${left}" y="${top}" width="${right - left}" height="${bottom - top}" fill="none" stroke="#333"/>`,
  );
  parts.push(
    `<text x="${(left + right) / 2}" y="${bottom + 36}" font-size="12" text-anchor="middle" fill="#111">${escapeXml(spec.xLabel)}</text>`,
  );
  for (const r of g.rows) {
    parts.push(
      `<text x="${left - 10}" y="${f1(r.y)}" font-size="12" text-anchor="end" dominant-baseline="middle" fill="#111">${escapeXml(r.label)}</text>`,
    );
    parts.push(
      `<text x="${right + 12}" y="${f1(r.y)}" font-size="12" dominant-baseline="middle" fill="#111">${escapeXml(r.valueText)}</text>`,
    );
    parts.push(hLine(left, right, r.y, '#f2f2f2', 1));
    if (r.n === 0) {
      parts.push(
        `<text x="${f1(g.px(0) + 8)}" y="${f1(r.y)}" font-size="12" dominant-baseline="middle" fill="#777">– not paired</text>`,
      );
      continue;
    }
    if (r.whisker) {
      const [a, b] = r.whisker;
      parts.push(hLine(a, b, r.y, MEAN_COLOUR, 1.2));
      for (const x of [a, b])
        parts.push(
          `<line x1="${f1(x)}" x2="${f1(x)}" y1="${f1(r.y - 4)}" y2="${f1(r.y + 4)}" stroke="${MEAN_COLOUR}" stroke-width="1.2"/>`,
        );
    }
    if (r.bar) parts.push(hLine(r.bar[0], r.bar[1], r.y, MEAN_COLOUR, 4));
    for (const x of r.seeds) parts.push(openCircle(x, r.y));
    if (r.meanX !== null) parts.push(filledDiamond(r.meanX, r.y));
  }
  // The legend: what each mark is, by shape; under the box, or further left when it would not fit.
  const ly = bottom + 58;
  const capped = (a: number, b: number) =>
    hLine(a, b, ly, MEAN_COLOUR, 1.2) +
    [a, b]
      .map(
        (x) =>
          `<line x1="${f1(x)}" x2="${f1(x)}" y1="${ly - 4}" y2="${ly + 4}" stroke="${MEAN_COLOUR}" stroke-width="1.2"/>`,
      )
      .join('');
  // Marks no row has (bars, when every row has one seed) are left out.
  const hasBars = g.rows.some((r) => r.bar !== null);
  type LegendEntry = [(x: number) => string, string];
  const entries: LegendEntry[] = [
    [(x) => openCircle(x + 14, ly), "one seed's d_s"],
    ...(hasBars
      ? [
          [
            (x: number) => hLine(x + 2, x + 26, ly, MEAN_COLOUR, 4) + filledDiamond(x + 14, ly),
            'mean ± 1 SE',
          ] as LegendEntry,
        ]
      : []),
    ...(hasBars && g.hasWhisker ? [[(x: number) => capped(x + 2, x + 26), '± 2 SE'] as LegendEntry] : []),
    [
      (x) =>
        `<line x1="${f1(x + 14)}" x2="${f1(x + 14)}" y1="${ly - 8}" y2="${ly + 8}" stroke="#555" stroke-width="1.2" stroke-dasharray="5 3"/>`,
      '0: no difference',
    ],
  ];
  const entryWidth = (text: string) => 34 + estimateTextWidth(text) + 18;
  const legendWidth = entries.reduce((w, [, text]) => w + entryWidth(text), 0) - 18;
  let lx = Math.max(PAD, Math.min(left, g.width - PAD - legendWidth));
  for (const [draw, text] of entries) {
    parts.push(draw(lx));
    parts.push(
      `<text x="${f1(lx + 34)}" y="${ly}" font-size="12" dominant-baseline="middle" fill="#111">${escapeXml(text)}</text>`,
    );
    lx += entryWidth(text);
  }
  g.notes.forEach((note, i) =>
    parts.push(`<text x="${PAD}" y="${bottom + 84 + 16 * i}" font-size="11" fill="#444">${escapeXml(note)}</text>`),
  );
  parts.push('</svg>');
  return parts.join('\n');
}
