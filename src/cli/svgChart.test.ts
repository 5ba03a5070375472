// The figure code behind `pact plot`: tick choice, data → pixel mapping and the SVG's parts,
// with the expected numbers worked out by hand in the comments.
import { describe, expect, it } from 'vitest';
import { chartGeometry, legendColumns, niceTicks, renderLineChartSvg, SERIES_COLOURS } from './svgChart';
import { metricPoints, parseMetricsJsonl, trailingMean } from './commands/plot';

describe('niceTicks', () => {
  it('steps by 1, 2 or 5 × 10^k and covers the range', () => {
    // (0.37 − 0)/4 = 0.0925 → magnitude 0.01, 9.25 → 10 → step 0.1.
    expect(niceTicks(0, 0.37, 5)).toEqual([0, 0.1, 0.2, 0.3, 0.4]);
    // (12 − 1)/5 = 2.2 → 2.2 > 2 → 5 → step 5 from floor(1/5)·5 = 0.
    expect(niceTicks(1, 12, 6)).toEqual([0, 5, 10, 15]);
    // (−0.3 − −1.1)/3 = 0.2667 → 2.667 → 5 → step 0.5 from floor(−1.1/0.5)·0.5 = −1.5.
    expect(niceTicks(-1.1, -0.3, 4)).toEqual([-1.5, -1, -0.5, 0]);
    // A flat series is padded by 10 %: [0.45, 0.55]; 0.1/4 = 0.025 → magnitude 0.01, 2.5 → 5 → step 0.05.
    expect(niceTicks(0.5, 0.5, 5)).toEqual([0.45, 0.5, 0.55]);
  });
  it('refuses non-finite bounds', () => {
    expect(() => niceTicks(0, Number.NaN)).toThrow('niceTicks: bounds must be finite');
  });
});

describe('renderLineChartSvg', () => {
  const spec = {
    title: 'reward <PACT>',
    xLabel: 'training step',
    yLabel: 'reward',
    series: [
      {
        name: 'reward',
        points: [
          [0, 0],
          [10, 1],
        ] as [number, number][],
      },
      {
        name: 'gap',
        points: [
          [0, 0.5],
          [5, Number.NaN],
          [10, 0.5],
        ] as [number, number][],
      },
    ],
    width: 400,
    height: 300,
    yRange: [0, 1] as const,
  };
  it('maps the data corners onto the plot box', () => {
    const g = chartGeometry(spec);
    // box: left 64, right 400 − 16 = 384, top 44, bottom 300 − 48 − 20·ceil(2/3) = 232.
    expect(g.box).toEqual({ left: 64, right: 384, top: 44, bottom: 232 });
    expect(g.px(0)).toBe(64);
    expect(g.px(10)).toBe(384);
    expect(g.py(0)).toBe(232);
    expect(g.py(1)).toBe(44);
    expect(g.py(0.5)).toBe(138); // halfway: 232 − 0.5·188
  });
  it('draws one polyline per unbroken run, escapes text, and names every series in the legend', () => {
    const svg = renderLineChartSvg(spec);
    expect(svg).toContain('reward &lt;PACT&gt;');
    // series 0: one line from (64,232) to (384,44); series 1 is cut by its NaN into two single points: no line.
    expect(svg.match(/<polyline /g)).toHaveLength(1);
    expect(svg).toContain('points="64.0,232.0 384.0,44.0"');
    expect(svg).toContain(`stroke="${SERIES_COLOURS[1]}"`);
    expect(svg).toContain('>gap</text>');
  });
  it('lays the legend out in fewer columns when names are long, and makes room for its rows', () => {
    // Plot width 720 − 80 = 640; an entry is 34 + 6.6·chars + 14 px.
    const named = (names: string[]) => ({
      ...spec,
      width: 720,
      height: 440,
      series: names.map((name) => ({
        name,
        points: [
          [0, 0.5],
          [10, 0.5],
        ] as [number, number][],
      })),
    });
    expect(legendColumns(named(['sft', 'grpo', 'pact']))).toBe(3); // 71.8 px each
    const long = named(Array.from({ length: 8 }, (_, i) => `sft_then_matchtir (${i + 1} seeds)`)); // 26 chars: 219.6 px → 2 columns
    expect(legendColumns(long)).toBe(2);
    // 8 entries in 2 columns: 4 rows, bottom = 440 − 48 − 20·4 = 312.
    expect(chartGeometry(long).box.bottom).toBe(312);
    const svg = renderLineChartSvg(long);
    // Entry 2 starts the second row at the left edge: y = 312 + 52 + 20 = 384.
    expect(svg).toContain('<line x1="64" x2="92" y1="384" y2="384"');
    expect(legendColumns(named(['x'.repeat(120)]))).toBe(1);
  });
  it('shades a band between its low and high edges and widens the y range to hold it', () => {
    const svg = renderLineChartSvg({
      ...spec,
      yRange: undefined,
      series: [
        {
          name: 'mean',
          points: [
            [0, 0.5],
            [10, 0.5],
          ],
          band: [
            [0, 0.25, 0.75],
            [10, 0, 1],
          ],
        },
      ],
    });
    // y ticks cover [0, 1] (band edges included): py(1) = 44, py(0) = 232, py(0.75) = 232 − 0.75·188 = 91, py(0.25) = 185.
    expect(svg).toContain('<polygon points="64.0,91.0 384.0,44.0 384.0,232.0 64.0,185.0"');
  });
  it('puts whole-number x values (steps) on whole-number ticks', () => {
    // niceTicks(1, 2, 6) would step by 0.2; integer steps 1 and 2 get ticks 1, 2 only.
    expect(
      chartGeometry({
        ...spec,
        series: [
          {
            name: 's',
            points: [
              [1, 0],
              [2, 1],
            ],
          },
        ],
      }).xTicks,
    ).toEqual([1, 2]);
  });
  it('names a chart without data', () => {
    expect(() => renderLineChartSvg({ ...spec, series: [{ name: 'x', points: [] }] })).toThrow(
      'chart "reward <PACT>": no finite points',
    );
  });
});

describe('pact plot helpers', () => {
  it('reads metrics.jsonl rows and names a bad line', () => {
    const rows = parseMetricsJsonl(
      '{"step":2,"reward":0.5}\n\n{"step":1,"reward":null}\n{"step":3,"eval/solve_f1":0.25}\n',
      'm.jsonl',
    );
    expect(metricPoints(rows, 'reward')).toEqual([[2, 0.5]]);
    expect(metricPoints(rows, 'eval/solve_f1')).toEqual([[3, 0.25]]);
    expect(() => parseMetricsJsonl('{"step":1}\n{oops', 'm.jsonl')).toThrow('m.jsonl line 2: not valid JSON');
    expect(() => parseMetricsJsonl('{"reward":1}', 'm.jsonl')).toThrow(
      'm.jsonl line 1: expected an object with a numeric "step"',
    );
  });
  it('trailing mean over the last n points', () => {
    // n = 2: 1 → 1; (1+3)/2 = 2; (3+8)/2 = 5.5
    expect(
      trailingMean(
        [
          [1, 1],
          [2, 3],
          [4, 8],
        ],
        2,
      ),
    ).toEqual([
      [1, 1],
      [2, 2],
      [4, 5.5],
    ]);
  });
});
