/**
 * Text labels of a small SVG chart placed so that none overlaps another: each label has a
 * few candidate positions in order of preference (above its point, below it, at the top or
 * the bottom of the plot, left or right of a line), and a greedy pass gives each label,
 * in priority order, its first candidate that overlaps no label placed before it and stays
 * inside the plot, else the candidate that overlaps least. Text widths are estimated from
 * the character count (no DOM), wide enough for the chart's digits and symbols.
 */

export interface LabelCandidate {
  /** Text anchor point (SVG x, y of a `text` with dominant-baseline alphabetic). */
  x: number;
  y: number;
  anchor: 'start' | 'end' | 'middle';
}

export interface LabelRequest {
  id: string;
  text: string;
  fontPx: number;
  /** Where it may go, most wanted first. */
  candidates: LabelCandidate[];
}

export interface PlacedLabel extends LabelCandidate {
  id: string;
  text: string;
  box: Box;
}

export interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** An upper estimate of a label's width: 0.62 em a character (digits, '=' and Greek fit). */
export function estimateTextWidth(text: string, fontPx: number): number {
  return text.length * fontPx * 0.62;
}

/** The box a text occupies at a candidate position (baseline at y, ascent ≈ 0.8 em, descent ≈ 0.25 em). */
export function measureLabel(text: string, fontPx: number, at: LabelCandidate): Box {
  const w = estimateTextWidth(text, fontPx);
  const left = at.anchor === 'start' ? at.x : at.anchor === 'end' ? at.x - w : at.x - w / 2;
  return { left, right: left + w, top: at.y - 0.8 * fontPx, bottom: at.y + 0.25 * fontPx };
}

export function overlapArea(a: Box, b: Box): number {
  const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
  const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
  return w > 0 && h > 0 ? w * h : 0;
}

/**
 * Places the labels in the order given (the first keeps its favourite spot). `bounds` is
 * the area labels must stay in; `obstacles` are boxes no label should cover (points, handles).
 */
export function placeLabels(
  requests: readonly LabelRequest[],
  bounds: Box,
  obstacles: readonly Box[] = [],
): PlacedLabel[] {
  const placed: PlacedLabel[] = [];
  for (const r of requests) {
    let best: PlacedLabel | null = null;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const c of r.candidates) {
      const box = measureLabel(r.text, r.fontPx, c);
      const outside =
        Math.max(0, bounds.left - box.left) +
        Math.max(0, box.right - bounds.right) +
        Math.max(0, bounds.top - box.top) +
        Math.max(0, box.bottom - bounds.bottom);
      const cost =
        placed.reduce((sum, p) => sum + overlapArea(box, p.box), 0) +
        obstacles.reduce((sum, o) => sum + overlapArea(box, o), 0) +
        outside * r.fontPx;
      if (cost < bestCost) {
        best = { id: r.id, text: r.text, ...c, box };
        bestCost = cost;
        if (cost === 0) break;
      }
    }
    if (best) placed.push(best);
  }
  return placed;
}

/**
 * Small boxes along a drawn curve (pixel points, in x order), every `stepPx`: obstacles that
 * keep labels off the line. 'step' curves hold each y until the next point, then jump.
 */
export function sampleCurveBoxes(
  points: readonly { x: number; y: number }[],
  curve: 'linear' | 'step',
  stepPx = 4,
  halfPx = 2,
): Box[] {
  const out: Box[] = [];
  for (let k = 1; k < points.length; k++) {
    const a = points[k - 1];
    const b = points[k];
    const n = Math.max(1, Math.ceil(Math.abs(b.x - a.x) / stepPx));
    for (let i = 0; i <= n; i++) {
      const x = a.x + ((b.x - a.x) * i) / n;
      const y = curve === 'step' ? a.y : a.y + ((b.y - a.y) * i) / n;
      out.push({ left: x - halfPx, right: x + halfPx, top: y - halfPx, bottom: y + halfPx });
    }
    if (curve === 'step') {
      const m = Math.max(1, Math.ceil(Math.abs(b.y - a.y) / stepPx));
      for (let i = 0; i <= m; i++) {
        const y = a.y + ((b.y - a.y) * i) / m;
        out.push({ left: b.x - halfPx, right: b.x + halfPx, top: y - halfPx, bottom: y + halfPx });
      }
    }
  }
  return out;
}
