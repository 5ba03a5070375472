// The forest plot of `pact table --plot`: where the seeds, means, bars and whiskers land, with
// the expected pixels worked out by hand in the comments.
import { describe, expect, it } from 'vitest';
import {
  EMPTY_ROW_NOTE,
  forestGeometry,
  formatForestValue,
  renderForestChartSvg,
  wrapText,
  type ForestChartSpec,
} from './svgForestChart';

// Two rows: seeds d = +0.1, −0.1 (mean 0, sd √0.02, SE √0.02/√2 = 0.1) and +0.3, +0.1 (mean 0.2, SE 0.1).
const spec: ForestChartSpec = {
  title: 'Solve-F1 <paired>',
  xLabel: 'Solve-F1 difference',
  rows: [
    { label: 'a − c', values: [0.1, -0.1] },
    { label: 'b − c', values: [0.3, 0.1] },
  ],
  width: 414,
};

describe('forestGeometry', () => {
  it('places the means, ± 1 SE bars and ± 2 SE whiskers on the axis', () => {
    const g = forestGeometry(spec);
    // Labels 'a − c': 5 chars · 6.6 = 33 px → left = 16 + 33 + 12 = 61.
    // Widest value text '+0.200 ± 0.100, n=2': 19 · 6.6 = 125.4 → right = round(414 − 16 − 125.4 − 12) = 261.
    // No subtitle: top = 40 + 18 = 58; two rows of 28 px: bottom 114, rows at 72 and 100.
    expect(g.box).toEqual({ left: 61, right: 261, top: 58, bottom: 114 });
    expect(g.rows.map((r) => r.y)).toEqual([72, 100]);
    // The axis holds 0, the seeds and the whiskers: [0 − 0.2, 0.2 + 0.2] = [−0.2, 0.4] → step 0.2.
    expect(g.xTicks).toEqual([-0.2, 0, 0.2, 0.4]);
    // Inset 10 px inside the box: −0.2 → 71, 0.4 → 251, so 300 px per unit: px(x) = 71 + 300·(x + 0.2).
    expect(g.px(-0.2)).toBe(71);
    expect(g.px(0.4)).toBe(251);
    const [a, b] = g.rows;
    expect(a.meanX).toBeCloseTo(131, 9); // mean 0
    expect(b.meanX).toBeCloseTo(191, 9); // mean 0.2
    expect(a.bar![0]).toBeCloseTo(101, 9); // 0 − 0.1
    expect(a.bar![1]).toBeCloseTo(161, 9); // 0 + 0.1
    expect(b.bar![0]).toBeCloseTo(161, 9); // 0.2 − 0.1
    expect(b.bar![1]).toBeCloseTo(221, 9); // 0.2 + 0.1
    expect(a.whisker![0]).toBeCloseTo(71, 9); // 0 − 0.2
    expect(b.whisker![1]).toBeCloseTo(251, 9); // 0.2 + 0.2
    expect(b.seeds.map((x) => Number(x.toFixed(9)))).toEqual([221, 161]); // +0.3, +0.1
    expect([a.valueText, b.valueText]).toEqual(['0.000 ± 0.100, n=2', '+0.200 ± 0.100, n=2']);
  });

  it('without the ± 2 SE whisker the axis only needs the bars', () => {
    const g = forestGeometry({ ...spec, hasTwoSeWhisker: false });
    // Marks span [−0.1, 0.3]: (0.4)/5 = 0.08 → step 0.1.
    expect(g.xTicks).toEqual([-0.1, 0, 0.1, 0.2, 0.3]);
    expect(g.rows[0].whisker).toBeNull();
  });

  it('draws a row of one seed as its dot alone and says n=1', () => {
    const g = forestGeometry({ ...spec, rows: [...spec.rows, { label: 'd − c', values: [0.05] }] });
    const one = g.rows[2];
    expect(one).toMatchObject({ n: 1, meanX: null, bar: null, whisker: null, valueText: '+0.050, n=1' });
    expect(one.seeds[0]).toBeCloseTo(146, 9); // 71 + 300·0.25
    const svg = renderForestChartSvg({ ...spec, rows: [{ label: 'd − c', values: [0.05] }] });
    expect(svg).toContain('>+0.050, n=1</text>');
    // No mean diamond and no bar, nor their legend entries: the seed and the legend's seed only.
    expect(svg).not.toContain('<path ');
    expect(svg).not.toContain('mean ± 1 SE');
    expect(svg.match(/<circle /g)).toHaveLength(2);
  });

  it('keeps a row without paired seeds in its place, marked – and explained under the chart', () => {
    const g = forestGeometry({ ...spec, rows: [spec.rows[0], { label: 'e − c', values: [] }, spec.rows[1]] });
    expect(g.rows.map((r) => r.label)).toEqual(['a − c', 'e − c', 'b − c']);
    expect(g.rows[1]).toMatchObject({ n: 0, seeds: [], bar: null, valueText: '–' });
    expect(g.notes).toEqual([EMPTY_ROW_NOTE]);
    const svg = renderForestChartSvg({ ...spec, rows: [{ label: 'e − c', values: [] }, spec.rows[0]] });
    expect(svg).toContain('– not paired</text>');
    expect(svg).toContain(EMPTY_ROW_NOTE);
    expect(() => renderForestChartSvg({ ...spec, rows: [{ label: 'e − c', values: [] }] })).toThrow(
      'chart "Solve-F1 <paired>": no row has a paired seed',
    );
  });

  it('renders escaped text, the zero line, and a legend naming every mark by shape', () => {
    const svg = renderForestChartSvg({ ...spec, subtitle: ['bar: mean ± 1 SE'], notes: ['a & b'] });
    expect(svg).toContain('Solve-F1 &lt;paired&gt;');
    expect(svg).toContain('a &amp; b');
    // The subtitle's line moves the box down 16 px: top 74; the zero line at px(0) = 131.
    expect(svg).toContain('<line x1="131.0" x2="131.0" y1="74" y2="130" stroke="#555"');
    for (const name of ["one seed's d_s", 'mean ± 1 SE', '± 2 SE', '0: no difference'])
      expect(svg).toContain(`>${name}</text>`);
  });
});

describe('forest chart text', () => {
  it('formats a row as mean ± SE, n', () => {
    expect(formatForestValue(0.031, 0.012, 4)).toBe('+0.031 ± 0.012, n=4');
    expect(formatForestValue(-0.2, Number.NaN, 1)).toBe('-0.200, n=1');
    expect(formatForestValue(Number.NaN, Number.NaN, 0)).toBe('–');
  });
  it('wraps words to an estimated width (6.6 px a character)', () => {
    // 'aaa bbb' is 7 chars = 46.2 px > 40: two lines; a word longer than the width keeps its own line.
    expect(wrapText('aaa bbb', 40)).toEqual(['aaa', 'bbb']);
    expect(wrapText('aaa bbb', 50)).toEqual(['aaa bbb']);
    expect(wrapText('aaaaaaaaaa b', 20)).toEqual(['aaaaaaaaaa', 'b']);
  });
});
