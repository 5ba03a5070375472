// Paired run − control comparison (pact compare): every number below worked out by hand.
import { describe, expect, it } from 'vitest';
import {
  comparePaired,
  formatPairedTable,
  pairedDifferences,
  parseStepBlocks,
  runningDifference,
  standardError,
  type PairedSeries,
} from './paired';

// Pair 1: steps 1–4, differences 0.2, 0, 0.2, −0.2.
const PAIR1: PairedSeries = {
  label: 'a-s1 − b-s1',
  run: [
    [1, 1.0],
    [2, 1.5],
    [3, 1.2],
    [4, 0.9],
  ],
  control: [
    [1, 0.8],
    [2, 1.5],
    [3, 1.0],
    [4, 1.1],
  ],
};
// Pair 2: the run lacks step 3, so only steps 1, 2, 4 pair: differences 1, 0, 1.
const PAIR2: PairedSeries = {
  label: 'a-s2 − b-s2',
  run: [
    [1, 2],
    [2, 1],
    [4, 1],
  ],
  control: [
    [1, 1],
    [2, 1],
    [3, 0.5],
    [4, 0],
  ],
};

describe('comparePaired', () => {
  const rows = comparePaired([PAIR1, PAIR2], parseStepBlocks('1-2,3-4'));

  it('gives one row per pair and block, then the pooled row', () => {
    expect(rows.map((r) => `${r.block.from}-${r.block.to} ${r.label} n${r.n} +${r.positive}`)).toEqual([
      '1-2 a-s1 − b-s1 n2 +1',
      '1-2 a-s2 − b-s2 n2 +1',
      '1-2 all 2 pairs n4 +2',
      '3-4 a-s1 − b-s1 n2 +1',
      '3-4 a-s2 − b-s2 n1 +1',
      '3-4 all 2 pairs n3 +2',
    ]);
  });

  it('pair 1, steps 1–2: differences 0.2 and 0 → mean 0.1, sd √0.02, standard error 0.1', () => {
    const d = rows[0].diff;
    expect(d.mean).toBeCloseTo(0.1, 12);
    expect(d.std).toBeCloseTo(Math.sqrt(0.02), 12);
    expect(standardError(d)).toBeCloseTo(0.1, 12);
  });

  it('pooled, steps 1–2: differences 0.2, 0, 1, 0 → mean 0.3, sd √(0.68/3); run mean 1.375, control 1.075', () => {
    const r = rows[2];
    expect(r.diff.mean).toBeCloseTo(0.3, 12);
    expect(r.diff.std).toBeCloseTo(Math.sqrt(0.68 / 3), 12);
    expect(r.run.mean).toBeCloseTo(1.375, 12);
    expect(r.control.mean).toBeCloseTo(1.075, 12);
  });

  it('pooled, steps 3–4: differences 0.2, −0.2, 1 → mean 1/3, sd √(0.746667/2); one value has no standard error', () => {
    expect(rows[5].diff.mean).toBeCloseTo(1 / 3, 12);
    expect(rows[5].diff.std).toBeCloseTo(Math.sqrt(0.74666666666666667 / 2), 12);
    expect(rows[4].diff.mean).toBe(1);
    expect(standardError(rows[4].diff)).toBeNaN();
  });

  it('formats a Markdown table with ± standard errors and a signed difference', () => {
    const table = formatPairedTable(rows, { metric: 'reward', run: 'a', control: 'b' }).split('\n');
    expect(table[0]).toBe('| steps | pair | n | a reward | b | a − b | steps a > b |');
    expect(table[4]).toBe('| 1–2 | all 2 pairs | 4 | 1.375 ± 0.239 | 1.075 ± 0.149 | +0.300 ± 0.238 | 2/4 |');
    expect(table[6]).toBe('| 3–4 | a-s2 − b-s2 | 1 | 1.000 | 0.000 | +1.000 | 1/1 |');
  });

  it('a single pair has no pooled row; no pair is an error', () => {
    expect(comparePaired([PAIR1], [{ from: 1, to: 4 }]).map((r) => r.label)).toEqual(['a-s1 − b-s1']);
    expect(() => comparePaired([], [{ from: 1, to: 4 }])).toThrow('no (run, control) pairs');
  });
});

describe('runningDifference', () => {
  it('pairs steps that both series have', () => {
    expect(pairedDifferences(PAIR2)).toEqual([
      [1, 1],
      [2, 0],
      [4, 1],
    ]);
    expect(pairedDifferences(PAIR1).map(([s, d]) => [s, Number(d.toFixed(12))])).toEqual([
      [1, 0.2],
      [2, 0],
      [3, 0.2],
      [4, -0.2],
    ]);
  });

  it('one pair: the mean of d_1..d_t at each step (0.2; 0.1 ± 0.1; 0.4/3; 0.05)', () => {
    const r = runningDifference([PAIR1]);
    expect(r.map((p) => [p.step, p.n])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    expect(r[0].mean).toBeCloseTo(0.2, 12);
    expect(r[0].se).toBeNaN();
    expect(r[1].mean).toBeCloseTo(0.1, 12);
    expect(r[1].se).toBeCloseTo(0.1, 12);
    expect(r[2].mean).toBeCloseTo(0.4 / 3, 12);
    expect(r[3].mean).toBeCloseTo(0.05, 12);
  });

  it('two pairs pooled: step 1 {0.2, 1} → 0.6 ± 0.4; step 3 adds only pair 1 → 1.4/5 ± √(0.172/5); the last point is the pooled all-steps row', () => {
    const r = runningDifference([PAIR1, PAIR2]);
    expect(r.map((p) => [p.step, p.n])).toEqual([
      [1, 2],
      [2, 4],
      [3, 5],
      [4, 7],
    ]);
    expect(r[0].mean).toBeCloseTo(0.6, 12);
    expect(r[0].se).toBeCloseTo(0.4, 12);
    expect(r[1].mean).toBeCloseTo(0.3, 12);
    expect(r[1].se).toBeCloseTo(Math.sqrt(0.68 / 3) / 2, 12);
    expect(r[2].mean).toBeCloseTo(0.28, 12);
    expect(r[2].se).toBeCloseTo(Math.sqrt(0.172 / 5), 12);
    const pooled = comparePaired([PAIR1, PAIR2], [{ from: 1, to: 4 }])[2];
    expect(r[3].mean).toBeCloseTo(2.2 / 7, 12);
    expect(r[3].mean).toBeCloseTo(pooled.diff.mean, 12);
    expect(r[3].se).toBeCloseTo(standardError(pooled.diff), 12);
  });
});

describe('parseStepBlocks', () => {
  it('reads inclusive ranges and single steps, and names a bad part', () => {
    expect(parseStepBlocks('1-16, 17-32,5')).toEqual([
      { from: 1, to: 16 },
      { from: 17, to: 32 },
      { from: 5, to: 5 },
    ]);
    expect(() => parseStepBlocks('1-16,x')).toThrow('--blocks: "x" is not a step range like 1-16');
    expect(() => parseStepBlocks('9-3')).toThrow('--blocks: "9-3" ends before it starts');
  });
});
