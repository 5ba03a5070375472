import { describe, expect, it } from 'vitest';
import { computeLearningRate, type LrSchedule } from './lrSchedule';

describe('computeLearningRate', () => {
  it('warm-up then constant', () => {
    const s: LrSchedule = { kind: 'constant', lrPeak: 1e-3, warmupSteps: 4 };
    // warm-up lr = 1e-3 · (step + 1) / 4: 2.5e-4, 5e-4, 7.5e-4, 1e-3; then 1e-3 for ever.
    expect([0, 1, 2, 3, 4, 1000].map((k) => computeLearningRate(k, s))).toEqual([
      expect.closeTo(2.5e-4, 12),
      expect.closeTo(5e-4, 12),
      expect.closeTo(7.5e-4, 12),
      expect.closeTo(1e-3, 12),
      expect.closeTo(1e-3, 12),
      expect.closeTo(1e-3, 12),
    ]);
  });

  it('warm-up then cosine to a floor', () => {
    const s: LrSchedule = { kind: 'cosine', lrPeak: 1, warmupSteps: 2, totalSteps: 12, minLrRatio: 0.1 };
    // step 0, 1: warm-up 1·1/2 = 0.5, 1·2/2 = 1.
    // step 2: progress 0 → 0.1 + 0.9·½(1 + cos 0) = 1.
    // step 4: progress 2/10 = 0.2 → 0.1 + 0.9·½(1 + cos 0.2π) = 0.1 + 0.45·1.809017 = 0.914058.
    // step 7: progress 5/10 = 0.5 → 0.1 + 0.45·(1 + 0) = 0.55.
    // step 12 (= totalSteps) and beyond: progress 1 → 0.1 + 0.45·(1 − 1) = 0.1.
    const got = [0, 1, 2, 4, 7, 12, 50].map((k) => computeLearningRate(k, s));
    const want = [0.5, 1, 1, 0.914058, 0.55, 0.1, 0.1];
    got.forEach((lr, i) => expect(lr).toBeCloseTo(want[i], 6));
  });

  it('cosine without warm-up decays to 0 by default', () => {
    const s: LrSchedule = { kind: 'cosine', lrPeak: 2, warmupSteps: 0, totalSteps: 4 };
    // progress = step / 4: 2·½(1 + cos 0) = 2; step 2: 2·½(1 + cos ½π) = 1; step 4: 2·½(1 − 1) = 0.
    expect(computeLearningRate(0, s)).toBeCloseTo(2, 12);
    expect(computeLearningRate(2, s)).toBeCloseTo(1, 12);
    expect(computeLearningRate(4, s)).toBeCloseTo(0, 12);
  });

  it('names the bad field', () => {
    expect(() => computeLearningRate(0, { kind: 'cosine', lrPeak: 1, warmupSteps: 5, totalSteps: 3 })).toThrow(
      /totalSteps/,
    );
    expect(() => computeLearningRate(0, { kind: 'linear' as 'constant', lrPeak: 1, warmupSteps: 0 })).toThrow(/kind/);
    expect(() => computeLearningRate(0, { kind: 'constant', lrPeak: -1, warmupSteps: 0 })).toThrow(/lrPeak/);
    expect(() => computeLearningRate(0, { kind: 'constant', lrPeak: 1, warmupSteps: 1.5 })).toThrow(/warmupSteps/);
    expect(() =>
      computeLearningRate(0, { kind: 'cosine', lrPeak: 1, warmupSteps: 0, totalSteps: 9, minLrRatio: 2 }),
    ).toThrow(/minLrRatio/);
    expect(() => computeLearningRate(-1, { kind: 'constant', lrPeak: 1, warmupSteps: 0 })).toThrow(/step/);
  });
});
