import { describe, expect, it } from 'vitest';
import {
  ADVANTAGE_ESTIMATORS,
  computeGroupStats,
  discountedReturns,
  groupAdvantages,
  turnAdvantages,
} from './advantages';

const EPS = 1e-6;
const R2 = Math.SQRT1_2; // 1/√2 ≈ 0.70711

describe('groupAdvantages', () => {
  it('z-scores with the unbiased std', () => {
    // [1,2,3]: mean 2, var = (1 + 0 + 1)/(3 − 1) = 1, std 1
    const a = groupAdvantages([1, 2, 3]);
    expect(a[0]).toBeCloseTo(-1 / (1 + EPS), 12);
    expect(a[1]).toBe(0);
    expect(a[2]).toBeCloseTo(1 / (1 + EPS), 12);
    // [1,0,0,0]: mean 0.25, Σ(x−m)² = 0.5625 + 3·0.0625 = 0.75, var = 0.75/3 = 0.25, std 0.5
    const b = groupAdvantages([1, 0, 0, 0]);
    expect(b[0]).toBeCloseTo(0.75 / (0.5 + EPS), 12);
    expect(b[1]).toBeCloseTo(-0.25 / (0.5 + EPS), 12);
  });

  it('gives a group of one mean 0 and std 1', () => {
    expect(groupAdvantages([5])[0]).toBeCloseTo(5 / (1 + EPS), 12);
    expect(groupAdvantages([5], { scaleByStd: false })).toEqual([5]);
  });

  it('gives all-equal rewards zero advantage (0 / (0 + ε))', () => {
    expect(groupAdvantages([2, 2, 2])).toEqual([0, 0, 0]);
  });

  it('skips the std for Dr.GRPO and returns [] for an empty group', () => {
    expect(groupAdvantages([1, 2, 3], { scaleByStd: false })).toEqual([-1, 0, 1]);
    const a = groupAdvantages([1, 3], { eps: 0 }); // mean 2, std √((1 + 1)/1) = √2 → ±1/√2
    expect(a[0]).toBeCloseTo(-R2, 12);
    expect(a[1]).toBeCloseTo(R2, 12);
    expect(groupAdvantages([])).toEqual([]);
  });

  it('names a bad reward', () => {
    expect(() => groupAdvantages([1, Number.NaN])).toThrow(/rewards\[1\]/);
    expect(() => computeGroupStats([])).toThrow(/empty group/);
  });
});

describe('discountedReturns', () => {
  it('is R_t = r_t + γ R_{t+1}', () => {
    // t2: 2; t1: 0 + 0.9·2 = 1.8; t0: 1 + 0.9·1.8 = 2.62
    const r = discountedReturns([1, 0, 2], 0.9);
    expect(r[2]).toBe(2);
    expect(r[1]).toBeCloseTo(1.8, 12);
    expect(r[0]).toBeCloseTo(2.62, 12);
    expect(discountedReturns([], 0.9)).toEqual([]);
  });
});

describe('turnAdvantages', () => {
  // K = 2, γ = 0.5: r_A = [1, 0], r_B = [0, 1, 1]
  //   returns A = [1 + 0.5·0, 0] = [1, 0]; B = [0 + 0.5·1.5, 1 + 0.5·1, 1] = [0.75, 1.5, 1]
  //   turn 0: [1, 0.75], mean 0.875, std = 0.125·√2 → A^ℓ = ±1/√2 (A +, B −)
  //   turn 1: [0, 1.5], mean 0.75, std = 0.75·√2 → A^ℓ = ∓1/√2 (A −, B +)
  //   turn 2: only B → mean 0, std 1 → A^ℓ = 1/(1 + ε)
  //   global: R = [1, 2], mean 1.5, std √0.5 → A^g = [−1/√2, +1/√2]
  const group = [
    [1, 0],
    [0, 1, 1],
  ];

  it("combines (A^g + A^ℓ)/2 with 'mean' (MatchTIR code)", () => {
    const a = turnAdvantages(group, { gamma: 0.5, combine: 'mean' });
    expect(a[0][0]).toBeCloseTo(0, 5); // (−1/√2 + 1/√2)/2
    expect(a[0][1]).toBeCloseTo(-R2, 5); // (−1/√2 − 1/√2)/2
    expect(a[1][0]).toBeCloseTo(0, 5);
    expect(a[1][1]).toBeCloseTo(R2, 5);
    expect(a[1][2]).toBeCloseTo((R2 + 1) / 2, 5); // ≈ 0.853553
  });

  it("combines A^g + A^ℓ with 'sum' (PACT App. B), the default", () => {
    const a = turnAdvantages(group, { gamma: 0.5, combine: 'sum' });
    expect(turnAdvantages(group, { gamma: 0.5 })).toEqual(a);
    expect(a[0][1]).toBeCloseTo(-Math.SQRT2, 5);
    expect(a[1][1]).toBeCloseTo(Math.SQRT2, 5);
    expect(a[1][2]).toBeCloseTo(R2 + 1, 5);
    expect(a.map((row) => row.length)).toEqual([2, 3]);
  });

  it('gives all-equal rewards zero advantage', () => {
    expect(
      turnAdvantages([
        [1, 1],
        [1, 1],
      ]),
    ).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });

  it('handles a group of one: every z-score uses mean 0, std 1', () => {
    // γ = 0.9: returns [1 + 0.9·0, 0] = [1, 0]; A^ℓ = [1, 0]/(1+ε); A^g = 1/(1+ε)
    // mean: [(1 + 1)/2, (1 + 0)/2] = [1, 0.5]
    const a = turnAdvantages([[1, 0]], { combine: 'mean' });
    expect(a[0][0]).toBeCloseTo(1, 5);
    expect(a[0][1]).toBeCloseTo(0.5, 5);
  });

  it('handles a rollout with no turns (it still counts in the global group)', () => {
    // R = [0, 1] → A^g = [−1/√2, 1/√2]; turn 0 only in rollout 1 → A^ℓ = 1/(1+ε)
    const a = turnAdvantages([[], [1]], { combine: 'mean' });
    expect(a[0]).toEqual([]);
    expect(a[1][0]).toBeCloseTo((R2 + 1) / 2, 5);
    expect(turnAdvantages([])).toEqual([]);
  });

  it('rejects bad input with a clear message', () => {
    expect(() => turnAdvantages([[1], [Number.POSITIVE_INFINITY]])).toThrow(/turnRewardsPerRollout\[1\]\[0\]/);
    expect(() => turnAdvantages([[1]], { combine: 'max' as 'mean' })).toThrow(/valid: mean, sum/);
  });
});

describe('ADVANTAGE_ESTIMATORS', () => {
  const group = [
    [1, 0],
    [0, 1, 1],
  ]; // trajectory rewards R = [1, 2]

  it('grpo broadcasts the z-scored trajectory reward to every turn', () => {
    // mean 1.5, std √0.5 → ∓1/√2
    const a = ADVANTAGE_ESTIMATORS.get('grpo')(group);
    expect(a[0]).toHaveLength(2);
    a[0].forEach((x) => expect(x).toBeCloseTo(-R2, 5));
    a[1].forEach((x) => expect(x).toBeCloseTo(R2, 5));
  });

  it('drgrpo subtracts the mean only: R − 1.5 = ∓0.5', () => {
    expect(ADVANTAGE_ESTIMATORS.get('drgrpo')(group)).toEqual([
      [-0.5, -0.5],
      [0.5, 0.5, 0.5],
    ]);
  });

  it('turn-grpo z-scores each turn index across the rollouts that reached it, no trajectory term', () => {
    // turn 0: [1, 0] → ±1/√2; turn 1: [0, 1] → ∓1/√2; turn 2: [1] alone → 1/(1 + ε)
    const a = ADVANTAGE_ESTIMATORS.get('turn-grpo')(group);
    expect(a.map((row) => row.map((x) => +x.toFixed(5)))).toEqual([
      [+R2.toFixed(5), -R2.toFixed(5)],
      [-R2.toFixed(5), +R2.toFixed(5), 1],
    ]);
  });

  it('matchtir-mean / matchtir-sum agree with turnAdvantages', () => {
    expect(ADVANTAGE_ESTIMATORS.get('matchtir-mean')(group, { gamma: 0.5 })).toEqual(
      turnAdvantages(group, { gamma: 0.5, combine: 'mean' }),
    );
    expect(ADVANTAGE_ESTIMATORS.get('matchtir-sum')(group)).toEqual(turnAdvantages(group, { combine: 'sum' }));
  });

  it('fails on an unknown name, listing the valid ones', () => {
    expect(ADVANTAGE_ESTIMATORS.names()).toEqual(['grpo', 'drgrpo', 'turn-grpo', 'matchtir-mean', 'matchtir-sum']);
    expect(() => ADVANTAGE_ESTIMATORS.get('ppo')).toThrow(
      /unknown advantage estimator "ppo"; valid: grpo, drgrpo, turn-grpo, matchtir-mean, matchtir-sum/,
    );
  });
});
