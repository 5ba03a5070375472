/**
 * Reference losses over plain arrays (the tfjs versions in
 * src/model / src/recipes are tested against these).
 *
 * - `clippedSurrogate`: PPO/GRPO clipped surrogate per token, PACT Eq. (prompt-only-rl-loss)
 *   and Eq. (trace-rl-loss): −min(r·A, clip(r, 1−ε_low, 1+ε_high)·A), r = exp(logpNew − logpOld).
 * - `aggregateLoss(lossMat, mask, mode)`: verl's `agg_loss`, modes registered in
 *   LOSS_AGGREGATIONS. Masks may be fractional weights (λa).
 * - `klK3`: Schulman's k3 estimator of KL(π‖π_ref): exp(q − p) − (q − p) − 1 with
 *   p = logp, q = logpRef, clamped as verl's 'low_var_kl' (core_algos.kl_penalty).
 * - `componentSftLoss`: PACT Eq. (sft-loss), −(1/Z) Σ_n m_n log π(h*_n), Z = Σ_n m_n;
 *   returns null when Z = 0 so the caller skips the term.
 *
 * Zero masks, the KL clamp and why it is there: docs/core.md.
 */
import { createRegistry } from './registry';

export interface ClipOptions {
  /** ε_low: ratios below 1 − clipLow are clipped. */
  clipLow?: number;
  /** ε_high (DAPO's clip-higher); defaults to clipLow. */
  clipHigh?: number;
}

function resolveClip({ clipLow = 0.2, clipHigh }: ClipOptions): [number, number] {
  const high = clipHigh ?? clipLow;
  if (!(clipLow >= 0) || !(high >= 0))
    throw new Error(`clip ranges must be ≥ 0, got clipLow=${clipLow}, clipHigh=${high}`);
  return [1 - clipLow, 1 + high];
}

/** The clipped surrogate loss of one token. */
export function clippedSurrogate(
  logpNew: number,
  logpOld: number,
  advantage: number,
  options: ClipOptions = {},
): number {
  const [lo, hi] = resolveClip(options);
  const ratio = Math.exp(logpNew - logpOld);
  const clipped = Math.min(Math.max(ratio, lo), hi);
  return -Math.min(ratio * advantage, clipped * advantage);
}

/** True when the clipped term is the one the min picked (clipping changed the loss). */
export function isTokenClipped(
  logpNew: number,
  logpOld: number,
  advantage: number,
  options: ClipOptions = {},
): boolean {
  const [lo, hi] = resolveClip(options);
  const ratio = Math.exp(logpNew - logpOld);
  const clipped = Math.min(Math.max(ratio, lo), hi);
  return -clipped * advantage > -ratio * advantage;
}

function checkSameShape(
  a: readonly (readonly number[])[],
  b: readonly (readonly number[])[],
  nameA: string,
  nameB: string,
): void {
  if (!Array.isArray(a) || !Array.isArray(b)) throw new Error(`${nameA} and ${nameB} must be arrays of rows`);
  if (a.length !== b.length) throw new Error(`${nameA} has ${a.length} rows but ${nameB} has ${b.length}`);
  a.forEach((row, i) => {
    if (!Array.isArray(row) || !Array.isArray(b[i]) || row.length !== b[i].length) {
      throw new Error(`${nameA}[${i}] has length ${row?.length} but ${nameB}[${i}] has ${b[i]?.length}`);
    }
  });
}

/** Clipped surrogate per token of a batch: [B][T] each → [B][T]. */
export function clippedSurrogateMatrix(
  logpNew: readonly (readonly number[])[],
  logpOld: readonly (readonly number[])[],
  advantages: readonly (readonly number[])[],
  options: ClipOptions = {},
): number[][] {
  checkSameShape(logpNew, logpOld, 'logpNew', 'logpOld');
  checkSameShape(logpNew, advantages, 'logpNew', 'advantages');
  return logpNew.map((row, i) => row.map((lp, t) => clippedSurrogate(lp, logpOld[i][t], advantages[i][t], options)));
}

/** Fraction of mask weight on tokens whose loss was clipped (verl's pg_clipfrac): [B][T] each → scalar. */
export function clipFraction(
  logpNew: readonly (readonly number[])[],
  logpOld: readonly (readonly number[])[],
  advantages: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  options: ClipOptions = {},
): number {
  checkSameShape(logpNew, logpOld, 'logpNew', 'logpOld');
  checkSameShape(logpNew, advantages, 'logpNew', 'advantages');
  checkSameShape(logpNew, mask, 'logpNew', 'mask');
  const isClippedMat = logpNew.map((row, i) =>
    row.map((lp, t) => (isTokenClipped(lp, logpOld[i][t], advantages[i][t], options) ? 1 : 0)),
  );
  return aggregateLoss(isClippedMat, mask, 'token-mean');
}

/** verl low_var_kl's bounds: the log ratio q − p is clamped to ±KL_LOG_RATIO_BOUND, the estimate to ≤ KL_K3_MAX. */
export const KL_LOG_RATIO_BOUND = 20;
export const KL_K3_MAX = 10;

/** k3 estimate of KL(π‖π_ref) at one token, clamped as verl's low_var_kl; ≥ 0, and 0 when logp = logpRef. */
export function klK3(logp: number, logpRef: number): number {
  const logRatio = Math.min(Math.max(logpRef - logp, -KL_LOG_RATIO_BOUND), KL_LOG_RATIO_BOUND);
  return Math.min(Math.exp(logRatio) - logRatio - 1, KL_K3_MAX);
}

export interface AggregateOptions {
  /** For 'seq-mean-token-sum-norm': the constant divisor (default: the longest row). */
  tokenNormalizer?: number;
}

/** Reduces a per-token loss matrix [B][T] with its mask [B][T] to one number. */
export type LossAggregation = (
  lossMat: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  options: AggregateOptions,
) => number;

function sumRowWeighted(loss: readonly number[], mask: readonly number[]): { lossSum: number; maskSum: number } {
  let lossSum = 0;
  let maskSum = 0;
  for (let t = 0; t < loss.length; t++) {
    if (mask[t] !== 0) lossSum += loss[t] * mask[t]; // a masked NaN/inf never leaks in
    maskSum += mask[t];
  }
  return { lossSum, maskSum };
}

function meanOverLiveRows(rowValues: number[], maskSums: number[]): number {
  let total = 0;
  let count = 0;
  rowValues.forEach((v, i) => {
    if (maskSums[i] > 0) {
      total += v;
      count++;
    }
  });
  return count === 0 ? 0 : total / count;
}

/** The aggregation modes (verl's loss_agg_mode names), in the order the UI and config list them. */
export const LOSS_AGGREGATION_NAMES = [
  'token-mean',
  'seq-mean-token-mean',
  'seq-mean-token-sum',
  'seq-mean-token-sum-norm',
] as const;
export type AggregationMode = (typeof LOSS_AGGREGATION_NAMES)[number];

/** The reference form of every mode (the tfjs forms: recipes/tfLosses TF_LOSS_AGGREGATIONS, same keys). */
const REFERENCE_AGGREGATIONS: Readonly<Record<AggregationMode, LossAggregation>> = {
  /** Σ m·ℓ / Σ m over the whole batch (DAPO; verl's default). */
  'token-mean': (lossMat, mask) => {
    let lossSum = 0;
    let maskSum = 0;
    lossMat.forEach((row, i) => {
      const s = sumRowWeighted(row, mask[i]);
      lossSum += s.lossSum;
      maskSum += s.maskSum;
    });
    return maskSum === 0 ? 0 : lossSum / maskSum;
  },
  /** Mean over sequences of each sequence's token mean (original GRPO). */
  'seq-mean-token-mean': (lossMat, mask) => {
    const sums = lossMat.map((row, i) => sumRowWeighted(row, mask[i]));
    return meanOverLiveRows(
      sums.map((s) => (s.maskSum > 0 ? s.lossSum / s.maskSum : 0)),
      sums.map((s) => s.maskSum),
    );
  },
  /** Mean over sequences of each sequence's token sum. */
  'seq-mean-token-sum': (lossMat, mask) => {
    const sums = lossMat.map((row, i) => sumRowWeighted(row, mask[i]));
    return meanOverLiveRows(
      sums.map((s) => s.lossSum),
      sums.map((s) => s.maskSum),
    );
  },
  /** Dr.GRPO: Σ over the batch of token sums / (B · a constant length). */
  'seq-mean-token-sum-norm': (lossMat, mask, { tokenNormalizer }) => {
    if (lossMat.length === 0) return 0;
    const norm = tokenNormalizer ?? Math.max(...lossMat.map((r) => r.length));
    if (!(norm > 0)) throw new Error(`aggregateLoss: tokenNormalizer must be > 0, got ${norm}`);
    const total = lossMat.reduce((s, row, i) => s + sumRowWeighted(row, mask[i]).lossSum, 0);
    return total / (lossMat.length * norm);
  },
};

/** The registry by name, filled from the table above (so names, types and functions are one list). */
export const LOSS_AGGREGATIONS = createRegistry<LossAggregation>('loss aggregation mode');
for (const name of LOSS_AGGREGATION_NAMES) LOSS_AGGREGATIONS.register(name, REFERENCE_AGGREGATIONS[name]);

/**
 * verl's agg_loss over plain arrays.
 * @param lossMat [B][T] per-token losses (rows may differ in length)
 * @param mask [B][T] non-negative weights, same shape
 * @param mode a name in LOSS_AGGREGATIONS
 */
export function aggregateLoss(
  lossMat: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  mode: AggregationMode,
  options: AggregateOptions = {},
): number {
  const aggregate = LOSS_AGGREGATIONS.get(mode);
  checkSameShape(lossMat, mask, 'lossMat', 'mask');
  mask.forEach((row, i) =>
    row.forEach((m, t) => {
      if (!(m >= 0) || !Number.isFinite(m))
        throw new Error(`aggregateLoss: mask[${i}][${t}] = ${m} must be a finite number ≥ 0`);
    }),
  );
  return aggregate(lossMat, mask, options);
}

/**
 * Component-aware SFT loss of one expert trace, PACT Eq. (sft-loss).
 * @param logps [N] log π_θ(h*_n | x, h*_<n)
 * @param mask [N] m_n(s) from Eq. (sft-mask)
 * @returns {loss, z}, or null when Z = Σ m = 0 (skip the term for this prompt)
 */
export function componentSftLoss(
  logps: readonly number[],
  mask: readonly number[],
): { loss: number; z: number } | null {
  if (!Array.isArray(logps) || !Array.isArray(mask)) throw new Error('componentSftLoss: logps and mask must be arrays');
  if (logps.length !== mask.length)
    throw new Error(`componentSftLoss: logps has ${logps.length} tokens but mask has ${mask.length}`);
  let z = 0;
  let weighted = 0;
  for (let n = 0; n < mask.length; n++) {
    const m = mask[n];
    if (!(m >= 0) || !Number.isFinite(m))
      throw new Error(`componentSftLoss: mask[${n}] = ${m} must be a finite number ≥ 0`);
    if (m === 0) continue;
    if (!Number.isFinite(logps[n]))
      throw new Error(`componentSftLoss: logps[${n}] = ${logps[n]} is not finite on a supervised token`);
    z += m;
    weighted += m * logps[n];
  }
  if (z === 0) return null;
  return { loss: -weighted / z, z };
}
