import { describe, expect, it } from 'vitest';
import {
  GSPO_CLIP,
  gspoClipFraction,
  gspoLossMatrix,
  gspoSequenceLogRatio,
  gspoSequenceLoss,
  isSequenceClipped,
} from './gspo';
import { aggregateLoss } from './losses';

describe('gspoSequenceLogRatio', () => {
  it('averages the log-ratio over masked tokens only', () => {
    // Δ = [−1 − (−1.2), −2 − (−1.9), ignored] = [0.2, −0.1]; mean over 2 tokens = 0.05
    expect(gspoSequenceLogRatio([-1, -2, -0.5], [-1.2, -1.9, -9], [1, 1, 0])).toBeCloseTo(0.05, 12);
  });
  it('weights tokens by fractional masks', () => {
    // (0.5·0.2 + 1·(−0.1)) / 1.5 = 0
    expect(gspoSequenceLogRatio([-1, -2], [-1.2, -1.9], [0.5, 1])).toBeCloseTo(0, 12);
  });
  it('is 0 for an empty mask, and names bad input', () => {
    expect(gspoSequenceLogRatio([1], [2], [0])).toBe(0);
    expect(() => gspoSequenceLogRatio([1, 2], [1], [1, 1])).toThrow(/logpOld has 1 entries, expected 2/);
    expect(() => gspoSequenceLogRatio([1], [1], [-1])).toThrow(/mask\[0\]/);
    expect(() => gspoSequenceLogRatio([NaN], [1], [1])).toThrow(/token 0/);
  });
});

describe('gspoSequenceLoss', () => {
  const logpNew = [-1, -2, -0.5];
  const logpOld = [-1.2, -1.9, -9];
  const mask = [1, 1, 0];
  const s = Math.exp(0.05); // 1.0512710964

  it('is −s·A inside a wide clip range', () => {
    expect(gspoSequenceLoss(logpNew, logpOld, mask, 1, { clipLow: 0.2 })).toBeCloseTo(-s, 10);
    expect(isSequenceClipped(logpNew, logpOld, mask, 1, { clipLow: 0.2 })).toBe(false);
  });
  it('clips at 1 + ε_high = 1.0004 with the paper range for a positive advantage', () => {
    // min(1.05127·1, 1.0004·1) = 1.0004
    expect(gspoSequenceLoss(logpNew, logpOld, mask, 1)).toBeCloseTo(-(1 + GSPO_CLIP.clipHigh), 12);
    expect(isSequenceClipped(logpNew, logpOld, mask, 1)).toBe(true);
  });
  it('does not clip an increased ratio for a negative advantage (pessimistic min)', () => {
    // min(−1.05127, −1.0004) = −1.05127 → loss 1.05127
    expect(gspoSequenceLoss(logpNew, logpOld, mask, -1)).toBeCloseTo(s, 10);
    expect(isSequenceClipped(logpNew, logpOld, mask, -1)).toBe(false);
  });
});

describe('gspoLossMatrix + aggregateLoss(seq-mean-token-mean)', () => {
  it('gives the mean of per-sequence losses', () => {
    const logpNew = [
      [-1, -2, -0.5],
      [-1, -1, -1],
    ];
    const logpOld = [
      [-1.2, -1.9, -9],
      [-1, -1, -1],
    ];
    const mask = [
      [1, 1, 0],
      [1, 1, 1],
    ];
    const adv = [1, 2];
    const mat = gspoLossMatrix(logpNew, logpOld, mask, adv);
    // row 0: −1.0004 on its 2 masked tokens; row 1: s = 1 → −2 on 3 tokens
    expect(mat[0][0]).toBeCloseTo(-1.0004, 12);
    expect(mat[0][2]).toBe(0);
    expect(mat[1]).toEqual([-2, -2, -2]);
    // seq-mean: (−1.0004 − 2)/2 = −1.5002 (token-mean would be (2·−1.0004 + 3·−2)/5 = −1.60016)
    expect(aggregateLoss(mat, mask, 'seq-mean-token-mean')).toBeCloseTo(-1.5002, 12);
    expect(aggregateLoss(mat, mask, 'token-mean')).toBeCloseTo(-1.60016, 12);
    // one of the two sequences clipped
    expect(gspoClipFraction(logpNew, logpOld, mask, adv)).toBe(0.5);
  });
  it('names a row-count mismatch', () => {
    expect(() => gspoLossMatrix([[1]], [[1]], [[1]], [1, 2])).toThrow(/advantages has 2 rows but mask has 1/);
  });
});
