/**
 * The losses of PACT and its baselines in tfjs. The plain-array references are in
 * src/core/losses.ts; tfLosses.test.ts checks these against them on the same numbers. All
 * inputs are per-token matrices [B, T] aligned position by position; masks are float
 * weights derived from token tags (0 = not in the loss; masked NaN/inf never leak).
 * - Clipped surrogate −min(r·A, clip(r, 1−ε_low, 1+ε_high)·A), r = exp(logpNew − logpOld):
 *   PACT Eq. prompt-only-rl-loss / trace-rl-loss; GSPO passes its sequence log ratio
 *   (Zheng et al. 2025, Eq. 7). `computeClipIndicator` marks where the clip won (pg_clipfrac).
 * - `aggregateLossTf`: verl's agg_loss, one tfjs reduction per mode of core's
 *   LOSS_AGGREGATIONS (TF_LOSS_AGGREGATIONS); chunks of a prompt: docs/trainer.md.
 * - `computeKlK3`: exp(q − p) − (q − p) − 1, p = logp, q = logpRef, clamped as verl's low_var_kl.
 * - `computeMaskedSftLoss`: −Σ m·logp / Σ m (PACT Eq. sft-loss), per row ('row-mean', the
 *   trainer's L_SFT) or over the whole batch ('batch-token-mean', the warm start's SFT).
 * - `computePromptLossTerms` / `computeKlPenaltyTerms`: one prompt's loss as the trainer builds it.
 */
import * as tf from '../../model/qwen3/tf';
import { KL_K3_MAX, KL_LOG_RATIO_BOUND, type AggregationMode } from '../../core/losses';

/** Zero wherever mask is 0 (even when x is NaN/inf there), x·mask elsewhere. [B, T] */
function applyMask(x: tf.Tensor2D, mask: tf.Tensor2D): tf.Tensor2D {
  return tf.where(tf.greater(mask, 0), tf.mul(x, mask), tf.zerosLike(x)) as tf.Tensor2D;
}

/** r = exp(logRatio) and clip(r, 1 − ε_low, 1 + ε_high). [B, T] each */
function computeClippedRatio(
  logRatio: tf.Tensor2D,
  clipEps: number,
  clipEpsHigh: number,
): { ratio: tf.Tensor2D; clipped: tf.Tensor2D } {
  const ratio = tf.exp(logRatio) as tf.Tensor2D;
  return { ratio, clipped: tf.clipByValue(ratio, 1 - clipEps, 1 + clipEpsHigh) as tf.Tensor2D };
}

/** Clipped surrogate [B, T] from a log ratio [B, T] (GSPO passes the sequence log ratio) and advantages [B, T]. */
export function computeClippedSurrogateFromLogRatio(
  logRatio: tf.Tensor2D,
  advantages: tf.Tensor2D,
  clipEps: number,
  clipEpsHigh = clipEps,
): tf.Tensor2D {
  return tf.tidy(() => {
    const { ratio, clipped } = computeClippedRatio(logRatio, clipEps, clipEpsHigh);
    return tf.neg(tf.minimum(tf.mul(ratio, advantages), tf.mul(clipped, advantages))) as tf.Tensor2D;
  });
}

/** Per-token clipped surrogate loss [B, T] from log-probs [B, T] and advantages [B, T]. */
export function computeClippedSurrogate(
  logpNew: tf.Tensor2D,
  logpOld: tf.Tensor2D,
  advantages: tf.Tensor2D,
  clipEps: number,
  clipEpsHigh = clipEps,
): tf.Tensor2D {
  return tf.tidy(() => {
    const logRatio = tf.sub(logpNew, logpOld) as tf.Tensor2D; // [B, T]
    return computeClippedSurrogateFromLogRatio(logRatio, advantages, clipEps, clipEpsHigh);
  });
}

/** 1 where the clipped term was the one the min picked, else 0. [B, T] */
export function computeClipIndicator(
  logRatio: tf.Tensor2D,
  advantages: tf.Tensor2D,
  clipEps: number,
  clipEpsHigh = clipEps,
): tf.Tensor2D {
  return tf.tidy(() => {
    const { ratio, clipped } = computeClippedRatio(logRatio, clipEps, clipEpsHigh);
    const isClipped = tf.greater(tf.neg(tf.mul(clipped, advantages)), tf.neg(tf.mul(ratio, advantages)));
    return tf.cast(isClipped, 'float32') as tf.Tensor2D;
  });
}

/** GSPO: per row, mean over masked tokens of (logpNew − logpOld), broadcast to [B, T]. */
export function computeSequenceLogRatio(logpNew: tf.Tensor2D, logpOld: tf.Tensor2D, mask: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const diff = applyMask(tf.sub(logpNew, logpOld) as tf.Tensor2D, mask); // [B, T]
    const count = tf.maximum(tf.sum(mask, 1, true), 1e-8); // [B, 1]
    const rowMean = tf.div(tf.sum(diff, 1, true), count); // [B, 1]
    return tf.mul(rowMean, tf.onesLike(logpNew)) as tf.Tensor2D; // [B, T]
  });
}

/** k3 estimate of KL(π‖π_ref) per token [B, T]. */
export function computeKlK3(logp: tf.Tensor2D, logpRef: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const logRatio = tf.clipByValue(tf.sub(logpRef, logp), -KL_LOG_RATIO_BOUND, KL_LOG_RATIO_BOUND);
    return tf.minimum(tf.sub(tf.sub(tf.exp(logRatio), logRatio), 1), KL_K3_MAX) as tf.Tensor2D;
  });
}

/** The normalisers of a whole prompt's [K, T] loss, for aggregating a chunk of its rows. */
export interface AggregationTotals {
  /** Σ mask over all K rows ('token-mean'). */
  maskSum: number;
  /** Rows with Σ mask > 0 ('seq-mean-token-mean', 'seq-mean-token-sum'). */
  liveRows: number;
  /** K, all rows ('seq-mean-token-sum-norm'). */
  rows: number;
  /** Columns T of the prompt's padded matrix (the default token normaliser of 'seq-mean-token-sum-norm'). */
  columns: number;
}

/** The totals of a [K][T_k] mask given as plain rows (columns = the longest row). */
export function computeAggregationTotals(mask: readonly (readonly number[])[]): AggregationTotals {
  const rowSums = mask.map((row) => row.reduce((s, m) => s + m, 0));
  return {
    maskSum: rowSums.reduce((s, x) => s + x, 0),
    liveRows: rowSums.filter((x) => x > 0).length,
    rows: mask.length,
    columns: Math.max(0, ...mask.map((row) => row.length)),
  };
}

/** What a reduction reads besides the masked loss: the options of aggregateLossTf. */
interface TfAggregationInputs {
  /** [B, T] of the loss matrix. */
  shape: [number, number];
  tokenNormalizer?: number;
  totals?: AggregationTotals;
}

/** Reduces a masked loss matrix [B, T] (zero where mask is 0) with its mask [B, T] to a scalar. */
type TfLossAggregation = (weighted: tf.Tensor2D, mask: tf.Tensor2D, o: TfAggregationInputs) => tf.Scalar;

/** Per row: Σ_t m·ℓ and Σ_t m. [B] each */
function sumRowsWeighted(weighted: tf.Tensor2D, mask: tf.Tensor2D): { rowLoss: tf.Tensor1D; rowMask: tf.Tensor1D } {
  return { rowLoss: tf.sum(weighted, 1) as tf.Tensor1D, rowMask: tf.sum(mask, 1) as tf.Tensor1D };
}

/** Mean of rowValues [B] over the rows whose mask sums to > 0 (under `totals`: the prompt's live rows). */
function meanOverLiveRows(rowValues: tf.Tensor1D, rowMask: tf.Tensor1D, totals?: AggregationTotals): tf.Scalar {
  const isLive = tf.cast(tf.greater(rowMask, 0), 'float32'); // [B]
  const liveCount = totals ? Math.max(totals.liveRows, 1) : tf.maximum(tf.sum(isLive), 1);
  return tf.div(tf.sum(tf.mul(rowValues, isLive)), liveCount) as tf.Scalar;
}

/** The tfjs form of every mode of LOSS_AGGREGATIONS (src/core/losses.ts), same names. */
export const TF_LOSS_AGGREGATIONS: Readonly<Record<AggregationMode, TfLossAggregation>> = {
  /** Σ m·ℓ / Σ m over the whole batch (DAPO; verl's default). */
  'token-mean': (weighted, mask, { totals }) => {
    const maskSum = totals ? Math.max(totals.maskSum, 1e-12) : tf.maximum(tf.sum(mask), 1e-12);
    return tf.div(tf.sum(weighted), maskSum) as tf.Scalar;
  },
  /** Mean over sequences of each sequence's token mean (original GRPO). */
  'seq-mean-token-mean': (weighted, mask, { totals }) => {
    const { rowLoss, rowMask } = sumRowsWeighted(weighted, mask);
    const rowMean = tf.div(rowLoss, tf.maximum(rowMask, 1e-12)) as tf.Tensor1D; // [B]
    return meanOverLiveRows(rowMean, rowMask, totals);
  },
  /** Mean over sequences of each sequence's token sum. */
  'seq-mean-token-sum': (weighted, mask, { totals }) => {
    const { rowLoss, rowMask } = sumRowsWeighted(weighted, mask);
    return meanOverLiveRows(rowLoss, rowMask, totals);
  },
  /** Dr.GRPO: Σ over the batch of token sums / (B · a constant length, default T). */
  'seq-mean-token-sum-norm': (weighted, mask, { shape, tokenNormalizer, totals }) => {
    const { rowLoss } = sumRowsWeighted(weighted, mask);
    const [B, T] = totals ? [totals.rows, totals.columns] : shape;
    const norm = tokenNormalizer ?? T;
    if (!(norm > 0)) throw new Error(`aggregateLossTf: tokenNormalizer must be > 0, got ${norm}`);
    return tf.div(tf.sum(rowLoss), B * norm) as tf.Scalar;
  },
};

/**
 * verl's agg_loss: reduces lossMat [B, T] with mask [B, T] to a scalar.
 * @param mode a name in TF_LOSS_AGGREGATIONS (= LOSS_AGGREGATIONS' names)
 * @param tokenNormalizer for 'seq-mean-token-sum-norm' (default T)
 * @param totals when the B rows are a chunk of a larger batch: that batch's normalisers
 *   (default: these rows'); the result is then the chunk's share of the batch's loss
 */
export function aggregateLossTf(
  lossMat: tf.Tensor2D,
  mask: tf.Tensor2D,
  mode: AggregationMode,
  tokenNormalizer?: number,
  totals?: AggregationTotals,
): tf.Scalar {
  if (!Object.hasOwn(TF_LOSS_AGGREGATIONS, mode)) {
    throw new Error(`aggregateLossTf: unknown mode "${mode}"; valid: ${Object.keys(TF_LOSS_AGGREGATIONS).join(', ')}`);
  }
  const aggregate = TF_LOSS_AGGREGATIONS[mode];
  return tf.tidy(() => aggregate(applyMask(lossMat, mask), mask, { shape: lossMat.shape, tokenNormalizer, totals }));
}

/**
 * How an SFT loss averages its tokens: 'row-mean' per row (the trainer's L_SFT(i; s), one
 * term per prompt), 'batch-token-mean' over every token of the batch (the warm start).
 */
export type SftAggregation = 'row-mean' | 'batch-token-mean';

/**
 * PACT Eq. (sft-loss): −Σ m·logp / Z with Z = Σ m, taken per row or over the batch.
 * @param logps [B, T] log-probs of the targets; mask [B, T] their weights m
 * @returns 'row-mean': loss [B], Z [B] (loss 0 where Z = 0: skip those rows);
 *   'batch-token-mean': loss [], Z [] (all rows' tokens summed before the one division)
 */
export function computeMaskedSftLoss(
  logps: tf.Tensor2D,
  mask: tf.Tensor2D,
  agg: 'row-mean',
): { loss: tf.Tensor1D; z: tf.Tensor1D };
export function computeMaskedSftLoss(
  logps: tf.Tensor2D,
  mask: tf.Tensor2D,
  agg: 'batch-token-mean',
): { loss: tf.Scalar; z: tf.Scalar };
export function computeMaskedSftLoss(
  logps: tf.Tensor2D,
  mask: tf.Tensor2D,
  agg: SftAggregation,
): { loss: tf.Tensor; z: tf.Tensor } {
  const axis = agg === 'row-mean' ? 1 : undefined; // sum over T per row, or over [B, T]
  return tf.tidy(() => {
    const z = tf.sum(mask, axis);
    const weighted = tf.sum(applyMask(logps, mask), axis);
    const loss = tf.neg(tf.div(weighted, tf.maximum(z, 1e-12)));
    return { loss, z };
  });
}

/** PACT Eq. (sft-loss) per row: computeMaskedSftLoss(logps, mask, 'row-mean'). loss, Z [B] */
export function computeComponentSftLoss(logps: tf.Tensor2D, mask: tf.Tensor2D): { loss: tf.Tensor1D; z: tf.Tensor1D } {
  return computeMaskedSftLoss(logps, mask, 'row-mean');
}

/** One prompt's RL inputs, all [K, T] (column n−1 = token n), log-probs from the model. */
export interface PromptRlInputs {
  logp: tf.Tensor2D;
  oldLogp: tf.Tensor2D;
  /** π_ref log-probs, when klCoef > 0. */
  refLogp?: tf.Tensor2D;
  advantages: tf.Tensor2D;
  mask: tf.Tensor2D;
  /** Entropy per position, for the metric. */
  entropy?: tf.Tensor2D;
  level: 'token' | 'sequence';
  /**
   * When these rows are a chunk of the prompt's K rows (a gradient micro-batch): the
   * prompt's normalisers, so the chunk's terms are its share and the shares add up.
   */
  totals?: AggregationTotals;
}

export interface PromptLossOptions {
  /** ε_low: ratios below 1 − clipEps are clipped. */
  clipEps: number;
  /** ε_high: ratios above 1 + clipEpsHigh are clipped; default clipEps (GSPO: 4e-4 against ε_low 3e-4). */
  clipEpsHigh?: number;
  lossAgg: AggregationMode;
  klCoef: number;
  rlWeight: number;
  sftWeight: number;
}

export interface PromptLossTerms {
  /** L_i = w_rl·(L_RL + klCoef·KL) + w_sft·L_SFT. */
  total: tf.Scalar;
  rlLoss: tf.Scalar;
  sftLoss: tf.Scalar;
  /** Σ k3·mask, Σ entropy·mask, Σ clipped·mask, Σ mask (for token-mean metrics). */
  klSum: tf.Scalar;
  entropySum: tf.Scalar;
  clipSum: tf.Scalar;
  tokenCount: tf.Scalar;
}

/**
 * The k3 KL penalty on its own rows (PACT's L^h prompts with pact.klContext 'prompt': the
 * rollouts as sampled, (x; τ), while the ratio is read under c^h): total =
 * rlWeight·klCoef·token-mean(k3) (the chunk's share under `totals`), klSum = Σ k3·mask;
 * every other term 0 (the RL rows count the tokens).
 * @param logp [B, T] the model's log-probs of the rows; refLogp, mask [B, T]
 */
export function computeKlPenaltyTerms(
  logp: tf.Tensor2D,
  refLogp: tf.Tensor2D,
  mask: tf.Tensor2D,
  o: Pick<PromptLossOptions, 'klCoef' | 'rlWeight'>,
  totals?: AggregationTotals,
): PromptLossTerms {
  const zero = tf.scalar(0);
  const kl = computeKlK3(logp, refLogp); // [B, T]
  const total = tf.mul(aggregateLossTf(kl, mask, 'token-mean', undefined, totals), o.klCoef * o.rlWeight) as tf.Scalar;
  return {
    total,
    rlLoss: zero,
    sftLoss: zero,
    klSum: tf.sum(applyMask(kl, mask)),
    entropySum: zero,
    clipSum: zero,
    tokenCount: zero,
  };
}

/**
 * The per-prompt loss of PACT Eq. (overall-objective) as the trainer builds it:
 * L_i = w_rl·(agg(clipped surrogate) + klCoef·token-mean(k3)) + w_sft·L_SFT(i; s), where
 * the RL inputs come from the prompt-only context (L^x) or from c^h (L^h) and the SFT
 * inputs from (x; h*) with m(s). Absent parts contribute 0. With `rl.totals` the RL rows
 * are a chunk of the prompt and every returned term is that chunk's additive share
 * (GSPO's sequence ratio is per row, so it needs no total).
 */
export function computePromptLossTerms(
  rl: PromptRlInputs | null,
  sft: { logp: tf.Tensor2D; mask: tf.Tensor2D } | null,
  o: PromptLossOptions,
): PromptLossTerms {
  const zero = tf.scalar(0);
  let total: tf.Scalar = zero;
  const terms: PromptLossTerms = {
    total,
    rlLoss: zero,
    sftLoss: zero,
    klSum: zero,
    entropySum: zero,
    clipSum: zero,
    tokenCount: zero,
  };
  if (rl) {
    const logRatio =
      rl.level === 'sequence'
        ? computeSequenceLogRatio(rl.logp, rl.oldLogp, rl.mask)
        : (tf.sub(rl.logp, rl.oldLogp) as tf.Tensor2D); // [K, T]
    const clipHigh = o.clipEpsHigh ?? o.clipEps;
    terms.rlLoss = aggregateLossTf(
      computeClippedSurrogateFromLogRatio(logRatio, rl.advantages, o.clipEps, clipHigh),
      rl.mask,
      o.lossAgg,
      undefined,
      rl.totals,
    );
    let term: tf.Scalar = terms.rlLoss;
    if (rl.refLogp && o.klCoef > 0) {
      const kl = computeKlK3(rl.logp, rl.refLogp); // [K, T]
      terms.klSum = tf.sum(applyMask(kl, rl.mask));
      term = tf.add(term, tf.mul(aggregateLossTf(kl, rl.mask, 'token-mean', undefined, rl.totals), o.klCoef));
    }
    total = tf.add(total, tf.mul(term, o.rlWeight));
    if (rl.entropy) terms.entropySum = tf.sum(applyMask(rl.entropy, rl.mask));
    terms.clipSum = tf.sum(applyMask(computeClipIndicator(logRatio, rl.advantages, o.clipEps, clipHigh), rl.mask));
    terms.tokenCount = tf.sum(rl.mask);
  }
  if (sft) {
    terms.sftLoss = computeMaskedSftLoss(sft.logp, sft.mask, 'row-mean').loss.reshape([]) as tf.Scalar;
    total = tf.add(total, tf.mul(terms.sftLoss, o.sftWeight));
  }
  terms.total = total;
  return terms;
}
