import { describe, expect, it } from 'vitest';
import {
  aggregateLoss,
  clipFraction,
  clippedSurrogate,
  clippedSurrogateMatrix,
  componentSftLoss,
  isTokenClipped,
  klK3,
  LOSS_AGGREGATION_NAMES,
  type AggregationMode,
} from './losses';

const LN = Math.log;

describe('clippedSurrogate', () => {
  it('clips a large ratio for a positive advantage', () => {
    // r = 1.5, A = 2: r·A = 3, clip(1.5, 0.8, 1.2)·A = 2.4 → −min(3, 2.4) = −2.4
    expect(clippedSurrogate(LN(1.5), 0, 2)).toBeCloseTo(-2.4, 12);
    expect(isTokenClipped(LN(1.5), 0, 2)).toBe(true);
  });

  it('keeps the unclipped term when it is the pessimistic one', () => {
    // r = 1.5, A = −2: r·A = −3, clipped −2.4 → −min(−3, −2.4) = 3
    expect(clippedSurrogate(LN(1.5), 0, -2)).toBeCloseTo(3, 12);
    expect(isTokenClipped(LN(1.5), 0, -2)).toBe(false);
    // r = 0.5, A = 1: r·A = 0.5, clipped 0.8 → −0.5, not clipped
    expect(clippedSurrogate(LN(0.5), 0, 1)).toBeCloseTo(-0.5, 12);
    expect(isTokenClipped(LN(0.5), 0, 1)).toBe(false);
  });

  it('clips a small ratio for a negative advantage', () => {
    // r = 0.5, A = −1: r·A = −0.5, clip → 0.8·(−1) = −0.8 → −min(−0.5, −0.8) = 0.8
    expect(clippedSurrogate(LN(0.5), 0, -1)).toBeCloseTo(0.8, 12);
    expect(isTokenClipped(LN(0.5), 0, -1)).toBe(true);
  });

  it('is −A at ratio 1, −r·A inside the range, and honours clip-higher', () => {
    expect(clippedSurrogate(-2.3, -2.3, 0.7)).toBe(-0.7);
    // r = 1.1, A = 3 → −3.3
    expect(clippedSurrogate(LN(1.1) - 1, -1, 3)).toBeCloseTo(-3.3, 12);
    // clipHigh 0.28: r = 1.5 → 1.28·2 = 2.56
    expect(clippedSurrogate(LN(1.5), 0, 2, { clipLow: 0.2, clipHigh: 0.28 })).toBeCloseTo(-2.56, 12);
  });

  it('maps over a batch and checks shapes', () => {
    expect(clippedSurrogateMatrix([[0, LN(1.5)]], [[0, 0]], [[1, 2]])[0][1]).toBeCloseTo(-2.4, 12);
    expect(() => clippedSurrogateMatrix([[0, 0]], [[0]], [[1, 1]])).toThrow(
      /logpNew\[0\] has length 2 but logpOld\[0\] has 1/,
    );
  });
});

describe('clipFraction', () => {
  // tokens: (r 1.5, A 2) clipped; (r 1.5, A −2) not; (r 0.5, A −1) clipped
  const logpNew = [[LN(1.5), LN(1.5)], [LN(0.5)]];
  const logpOld = [[0, 0], [0]];
  const adv = [[2, -2], [-1]];
  it('is the mask-weighted share of clipped tokens', () => {
    expect(clipFraction(logpNew, logpOld, adv, [[1, 1], [0]])).toBe(0.5); // 1 of 2
    expect(clipFraction(logpNew, logpOld, adv, [[1, 1], [1]])).toBeCloseTo(2 / 3, 12); // 2 of 3
  });
});

describe('aggregateLoss', () => {
  const loss = [
    [1, 2, 3],
    [4, 5],
  ];
  const mask = [
    [1, 1, 0],
    [1, 0],
  ];

  it('token-mean: (1 + 2 + 4)/3 = 7/3', () => {
    expect(aggregateLoss(loss, mask, 'token-mean')).toBeCloseTo(7 / 3, 12);
  });
  it('seq-mean-token-mean: ((1 + 2)/2 + 4/1)/2 = (1.5 + 4)/2 = 2.75', () => {
    expect(aggregateLoss(loss, mask, 'seq-mean-token-mean')).toBe(2.75);
  });
  it('seq-mean-token-sum: (3 + 4)/2 = 3.5', () => {
    expect(aggregateLoss(loss, mask, 'seq-mean-token-sum')).toBe(3.5);
  });
  it('seq-mean-token-sum-norm: 7/(2·3) with the longest row, 7/(2·7) with tokenNormalizer 7', () => {
    expect(aggregateLoss(loss, mask, 'seq-mean-token-sum-norm')).toBeCloseTo(7 / 6, 12);
    expect(aggregateLoss(loss, mask, 'seq-mean-token-sum-norm', { tokenNormalizer: 7 })).toBe(0.5);
  });

  it('leaves fully masked sequences out of the seq means', () => {
    const l = [
      [1, 2],
      [9, 9],
    ];
    const m = [
      [1, 1],
      [0, 0],
    ];
    expect(aggregateLoss(l, m, 'token-mean')).toBe(1.5);
    expect(aggregateLoss(l, m, 'seq-mean-token-mean')).toBe(1.5); // not (1.5 + 0)/2
    expect(aggregateLoss(l, m, 'seq-mean-token-sum')).toBe(3);
    expect(aggregateLoss(l, m, 'seq-mean-token-sum-norm')).toBe(0.75); // 3/(2·2)
  });

  it('returns 0 for an all-zero mask or an empty batch, and ignores masked NaN', () => {
    for (const mode of LOSS_AGGREGATION_NAMES) {
      expect(aggregateLoss([[1, 2]], [[0, 0]], mode)).toBe(0);
      expect(aggregateLoss([], [], mode)).toBe(0);
    }
    expect(aggregateLoss([[1, Number.NaN]], [[1, 0]], 'token-mean')).toBe(1);
  });

  it('weights by fractional masks: (2·1 + 4·0.5)/(1 + 0.5) = 8/3', () => {
    expect(aggregateLoss([[2, 4]], [[1, 0.5]], 'token-mean')).toBeCloseTo(8 / 3, 12);
  });

  it('fails clearly on unknown modes, shape mismatch and negative weights', () => {
    expect(() => aggregateLoss(loss, mask, 'sum' as AggregationMode)).toThrow(
      /unknown loss aggregation mode "sum"; valid: token-mean, seq-mean-token-mean, seq-mean-token-sum, seq-mean-token-sum-norm/,
    );
    expect(() => aggregateLoss(loss, [[1, 1, 0]], 'token-mean')).toThrow(/lossMat has 2 rows but mask has 1/);
    expect(() => aggregateLoss([[1]], [[-1]], 'token-mean')).toThrow(/mask\[0\]\[0\]/);
  });
});

describe('klK3', () => {
  it('is exp(q − p) − (q − p) − 1', () => {
    expect(klK3(-1.3, -1.3)).toBe(0);
    // q − p = ln 2: 2 − ln 2 − 1 = 0.306853
    expect(klK3(0, LN(2))).toBeCloseTo(1 - LN(2), 12);
    // q − p = −ln 2: 0.5 + ln 2 − 1 = 0.193147
    expect(klK3(LN(2), 0)).toBeCloseTo(LN(2) - 0.5, 12);
    // q − p = 2: e² − 2 − 1 = 4.389056 (under the clamp)
    expect(klK3(-3, -1)).toBeCloseTo(Math.exp(2) - 3, 12);
  });
  it("is clamped as verl's low_var_kl: the log ratio to ±20, the estimate to ≤ 10", () => {
    // q − p = 8: e⁸ − 9 ≈ 2971.96 → 10
    expect(klK3(-9, -1)).toBe(10);
    // q − p = −30 → −20: e^−20 + 20 − 1 ≈ 19.000000002 → 10
    expect(klK3(0, -30)).toBe(10);
    // q − p = −5: e^−5 + 5 − 1 = 4.006738 (linear side, under both bounds)
    expect(klK3(0, -5)).toBeCloseTo(Math.exp(-5) + 4, 12);
  });
});

describe('componentSftLoss', () => {
  it('is −Σ m·logp / Σ m', () => {
    // Σ m·logp = −1·1 − 2·0.5 − 3·0 − 4·0.8 = −5.2; Z = 2.3 → 5.2/2.3 ≈ 2.26087
    const r = componentSftLoss([-1, -2, -3, -4], [1, 0.5, 0, 0.8]);
    expect(r?.loss).toBeCloseTo(5.2 / 2.3, 12);
    expect(r?.z).toBeCloseTo(2.3, 12);
  });

  it('is skipped (null) when Z = 0, even with junk under the zero mask', () => {
    expect(componentSftLoss([-1, Number.NaN], [0, 0])).toBeNull();
    expect(componentSftLoss([], [])).toBeNull();
  });

  it('names bad input', () => {
    expect(() => componentSftLoss([-1], [1, 1])).toThrow(/logps has 1 tokens but mask has 2/);
    expect(() => componentSftLoss([Number.NaN], [1])).toThrow(/logps\[0\]/);
    expect(() => componentSftLoss([-1], [-0.5])).toThrow(/mask\[0\]/);
  });
});
