// pact compare over metrics.jsonl files written as pact train writes them.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../main';
import { buildRunningDifferenceChart } from './compare';

let dir: string;
const file = (name: string) => path.join(dir, name);

function jsonl(run: string, rewards: (number | null)[]): string {
  const lines = rewards.map((reward, i) => JSON.stringify({ type: 'step', run, step: i + 1, reward }));
  lines.splice(1, 0, JSON.stringify({ type: 'eval', run, step: 1, 'eval/solve_f1': 0.5 }));
  return lines.join('\n') + '\n';
}

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pact-compare-'));
  await writeFile(file('pact-s1.jsonl'), jsonl('pact-s1', [1.0, 1.5, 1.2, 0.9]));
  await writeFile(file('frozen-s1.jsonl'), jsonl('frozen-s1', [0.8, 1.5, 1.0, 1.1]));
  // A null (NaN) reward at step 3 leaves that step unpaired.
  await writeFile(file('pact-s2.jsonl'), jsonl('pact-s2', [2, 1, null, 1]));
  await writeFile(file('frozen-s2.jsonl'), jsonl('frozen-s2', [1, 1, 0.5, 0]));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('pact compare', () => {
  it('prints the paired table of two seeds, named by run, with the pooled rows (hand-computed in paired.test)', async () => {
    const c = capture();
    const code = await main(
      [
        'compare',
        '--run',
        `${file('pact-s1.jsonl')},${file('pact-s2.jsonl')}`,
        '--control',
        `${file('frozen-s1.jsonl')},${file('frozen-s2.jsonl')}`,
        '--blocks',
        '1-2,3-4',
      ],
      c.io,
    );
    expect(c.err).toEqual([]);
    expect(code).toBe(0);
    const lines = c.out.join('\n').split('\n');
    expect(lines[0]).toBe('| steps | pair | n | pact reward | frozen | pact − frozen | steps pact > frozen |');
    expect(lines[2]).toBe('| 1–2 | pact-s1 − frozen-s1 | 2 | 1.250 ± 0.250 | 1.150 ± 0.350 | +0.100 ± 0.100 | 1/2 |');
    expect(lines[4]).toBe('| 1–2 | all 2 pairs | 4 | 1.375 ± 0.239 | 1.075 ± 0.149 | +0.300 ± 0.238 | 2/4 |');
    expect(lines[7]).toBe('| 3–4 | all 2 pairs | 3 | 1.033 ± 0.088 | 0.700 ± 0.351 | +0.333 ± 0.353 | 2/3 |');
  });

  it('defaults to the reward over all paired steps, and reads eval metrics', async () => {
    const c = capture();
    expect(
      await main(
        ['compare', '--run', file('pact-s1.jsonl'), '--control', file('frozen-s1.jsonl'), '--digits', '2'],
        c.io,
      ),
    ).toBe(0);
    expect(c.out[0].split('\n')[2]).toBe(
      '| 1–4 | pact-s1 − frozen-s1 | 4 | 1.15 ± 0.13 | 1.10 ± 0.15 | +0.05 ± 0.10 | 2/4 |',
    );
    const e = capture();
    expect(
      await main(
        ['compare', '--run', file('pact-s1.jsonl'), '--control', file('frozen-s1.jsonl'), '--metric', 'eval/solve_f1'],
        e.io,
      ),
    ).toBe(0);
    expect(e.out[0].split('\n')[2]).toBe('| 1 | pact-s1 − frozen-s1 | 1 | 0.500 | 0.500 | 0.000 | 0/1 |');
  });

  it('names what is wrong: unequal file counts, a missing metric, a missing file', async () => {
    const c = capture();
    expect(
      await main(
        ['compare', '--run', `${file('pact-s1.jsonl')},${file('pact-s2.jsonl')}`, '--control', file('frozen-s1.jsonl')],
        c.io,
      ),
    ).toBe(2);
    expect(c.err.join('\n')).toContain('--run has 2 file(s) but --control has 1');
    const m = capture();
    expect(
      await main(
        ['compare', '--run', file('pact-s1.jsonl'), '--control', file('frozen-s1.jsonl'), '--metric', 'kl'],
        m.io,
      ),
    ).toBe(2);
    expect(m.err.join('\n')).toContain('pact-s1.jsonl: no values of metric "kl"');
    // Both files lack it: both are named, the run first, whatever read finished first.
    expect(m.err.join('\n')).toMatch(
      /pact-s1\.jsonl: no values of metric "kl"; .*frozen-s1\.jsonl: no values of metric "kl"/,
    );
    const f = capture();
    expect(await main(['compare', '--run', file('nope.jsonl'), '--control', file('frozen-s1.jsonl')], f.io)).toBe(2);
    expect(f.err.join('\n')).toContain('nope.jsonl: ENOENT');
  });

  it('--plot must name a .png', async () => {
    const c = capture();
    expect(
      await main(
        ['compare', '--run', file('pact-s1.jsonl'), '--control', file('frozen-s1.jsonl'), '--plot', file('fig.svg')],
        c.io,
      ),
    ).toBe(2);
    expect(c.err.join('\n')).toContain('--plot must end in .png, got');
  });
});

describe('the --plot chart', () => {
  const pairs = [
    {
      label: 'pact-s1 − frozen-s1',
      run: [
        [1, 1.0],
        [2, 1.5],
        [3, 1.2],
        [4, 0.9],
      ] as const,
      control: [
        [1, 0.8],
        [2, 1.5],
        [3, 1.0],
        [4, 1.1],
      ] as const,
    },
    {
      label: 'pact-s2 − frozen-s2',
      run: [
        [1, 2],
        [2, 1],
        [4, 1],
      ] as const,
      control: [
        [1, 1],
        [2, 1],
        [3, 0.5],
        [4, 0],
      ] as const,
    },
  ];
  const spec = buildRunningDifferenceChart(pairs, { metric: 'reward', run: 'pact', control: 'frozen' });

  it('draws each pair, the pooled running mean with its band, and the zero line', () => {
    expect(spec.series.map((s) => s.name)).toEqual([
      'pact-s1 − frozen-s1',
      'pact-s2 − frozen-s2',
      'all 2 pairs (band: ± standard error)',
      'no difference',
    ]);
    // Pair 2 alone: d = 1, 0, 1 at steps 1, 2, 4 → running means 1, 0.5, 2/3.
    expect(spec.series[1].points.map(([x, y]) => [x, Number(y.toFixed(6))])).toEqual([
      [1, 1],
      [2, 0.5],
      [4, 0.666667],
    ]);
    // Pooled at step 1: {0.2, 1} → 0.6 ± 0.4.
    expect(spec.series[2].points[0][1]).toBeCloseTo(0.6, 12);
    const [x, lo, hi] = spec.series[2].band![0];
    expect([x, lo, hi].map((v) => Number(v.toFixed(9)))).toEqual([1, 0.2, 1]);
    expect(spec.series[3].points).toEqual([
      [1, 0],
      [4, 0],
    ]);
    expect(spec.subtitle).toContain('last point: 0.314 ± ');
  });

  it('one pair: no per-pair lines, the pair is the band series, and its first step has no band', () => {
    const one = buildRunningDifferenceChart([pairs[0]], { metric: 'reward', run: 'pact', control: 'frozen' });
    expect(one.series.map((s) => s.name)).toEqual(['pact-s1 − frozen-s1 (band: ± standard error)', 'no difference']);
    expect(one.series[0].band!.map(([s]) => s)).toEqual([2, 3, 4]);
  });
});
