import { describe, expect, it } from 'vitest';
import { createRng } from './rng';
import { computeMean, computeSampleStd } from './stats';

describe('computeMean / computeSampleStd', () => {
  it('hand-computed: [1, 2, 3, 6] has mean 3 and sample std √(14/3)', () => {
    expect(computeMean([1, 2, 3, 6])).toBe(3);
    // (−2)² + (−1)² + 0² + 3² = 14 over n − 1 = 3
    expect(computeSampleStd([1, 2, 3, 6])).toBe(Math.sqrt(14 / 3));
    expect(computeSampleStd([1, 2, 3, 6], 3)).toBe(Math.sqrt(14 / 3));
  });

  it('NaN for no values (mean) and below two values (std)', () => {
    expect(computeMean([])).toBeNaN();
    expect(computeSampleStd([])).toBeNaN();
    expect(computeSampleStd([5])).toBeNaN();
  });

  it('sums left to right from 0, as the call sites it replaced did (bit for bit)', () => {
    const rng = createRng(7);
    for (let trial = 0; trial < 200; trial++) {
      const xs = Array.from({ length: 1 + rng.int(12) }, () => (rng.next() - 0.5) * 10 ** rng.int(8));
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      expect(Object.is(computeMean(xs), mean)).toBe(true);
      if (xs.length < 2) continue;
      const std = Math.sqrt(xs.reduce((a, b) => a + (b - mean) * (b - mean), 0) / (xs.length - 1));
      expect(Object.is(computeSampleStd(xs, mean), std)).toBe(true);
    }
  });
});
