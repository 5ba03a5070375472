/**
 * Mean and standard deviation over plain arrays, written once.
 *
 * - `computeMean`: Σx / n, summed left to right from 0 (NaN for no values).
 * - `computeSampleStd`: the sample (unbiased, n − 1) standard deviation
 *   √(Σ (x − m)·(x − m) / (n − 1)), summed left to right from 0 (NaN below 2 values).
 *   It is the std of GRPO's group normalisation (verl) and of the tables' ± over seeds.
 * The order of the floating-point operations is part of the contract: callers that were
 * written with these exact reductions get bit-identical results. What to do with small or
 * empty inputs (a group of one, no finite values) is the caller's business.
 */

/** Σx / n, summed left to right from 0; NaN for an empty array. */
export function computeMean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((s, x) => s + x, 0) / values.length;
}

/** The sample (n − 1) standard deviation about `mean`; NaN below 2 values. */
export function computeSampleStd(values: readonly number[], mean: number = computeMean(values)): number {
  const n = values.length;
  if (n < 2) return Number.NaN;
  const sumSq = values.reduce((s, x) => s + (x - mean) * (x - mean), 0);
  return Math.sqrt(sumSq / (n - 1));
}
