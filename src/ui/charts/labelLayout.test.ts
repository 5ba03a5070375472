import { describe, expect, it } from 'vitest';
import { measureLabel, overlapArea, placeLabels, sampleCurveBoxes, type LabelRequest } from './labelLayout';

describe('placeLabels', () => {
  // The reasoning-prefix chart at s = S = 10 on a phone: the marker, its L0 dot label and the
  // horizon's label all want the same corner (they were drawn on top of each other).
  const plot = { left: 58, right: 330, top: 10, bottom: 128 };
  const mx = 172;
  const dotY = 122;
  const requests: LabelRequest[] = [
    {
      id: 'dot',
      text: 'L0',
      fontPx: 12,
      candidates: [
        { x: mx + 9, y: dotY - 8, anchor: 'start' },
        { x: mx - 9, y: dotY - 8, anchor: 'end' },
        { x: mx + 9, y: dotY + 18, anchor: 'start' },
      ],
    },
    {
      id: 'marker',
      text: 's = 10 (S = 10)',
      fontPx: 11.5,
      candidates: [
        { x: mx + 5, y: plot.bottom - 6, anchor: 'start' },
        { x: mx - 5, y: plot.bottom - 6, anchor: 'end' },
        { x: mx + 5, y: plot.top + 11, anchor: 'start' },
      ],
    },
  ];

  it('gives each label a spot that overlaps no other label and stays in the plot', () => {
    const placed = placeLabels(requests, plot);
    expect(placed.map((p) => p.id)).toEqual(['dot', 'marker']);
    expect(overlapArea(placed[0].box, placed[1].box)).toBe(0);
    for (const p of placed) {
      expect(p.box.left).toBeGreaterThanOrEqual(plot.left);
      expect(p.box.right).toBeLessThanOrEqual(plot.right);
      expect(p.box.top).toBeGreaterThanOrEqual(plot.top);
      expect(p.box.bottom).toBeLessThanOrEqual(plot.bottom);
    }
    // The dot keeps its favourite spot; the marker label leaves its own (which the dot's label covers).
    expect(placed[0]).toMatchObject({ x: mx + 9, y: dotY - 8 });
    expect(placed[1]).toMatchObject({ x: mx - 5, y: plot.bottom - 6, anchor: 'end' });
    const firstChoice = measureLabel(requests[1].text, 11.5, requests[1].candidates[0]);
    expect(overlapArea(placed[0].box, firstChoice)).toBeGreaterThan(0);
  });

  it('keeps labels off a curve when a free spot exists', () => {
    // A flat line at y = 116 under the marker's first spot (bottom − 6 = 122, text from 112.8 to 124.9).
    const line = sampleCurveBoxes(
      [
        { x: 60, y: 116 },
        { x: 320, y: 116 },
      ],
      'linear',
    );
    const [marker] = placeLabels([requests[1]], plot, line);
    expect(line.every((b) => overlapArea(marker.box, b) === 0)).toBe(true);
  });

  it('measures a label from its anchor', () => {
    expect(measureLabel('ab', 10, { x: 100, y: 50, anchor: 'end' })).toEqual({
      left: 87.6,
      right: 100,
      top: 42,
      bottom: 52.5,
    });
  });
});
