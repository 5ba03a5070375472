/**
 * Gradient micro-batches: memory, not math. A prompt's K RL rows (and its KL-penalty rows)
 * are split into chunks of at most `microBatchRows` rows, its SFT row is one more, and
 * `trainStep` sums their gradients ('sum'). Each chunk's loss is its share under the
 * prompt's normalisers (AggregationTotals: Σ mask over all K rows, the live-row count, K,
 * T), so the gradient and the metrics equal the unsplit per-prompt ones up to float
 * rounding. Attention keeps [rows, heads, T, T] per layer, GBs for K c^h rows of ~2k
 * tokens; the log-prob reads of π_old(c^h) and π_ref use the same chunks. On the CPU
 * engine a chunk is as many rows as fit its activation budget instead.
 */
import * as tf from '../../model/qwen3/tf';
import type { Qwen3Model } from '../../model/qwen3';
import { packTokenRows } from '../../model/qwen3/batch';
import { isEngineActive, planEngineChunks } from '../../model/qwen3/engineBridge';
import {
  computeAggregationTotals,
  computeKlPenaltyTerms,
  computePromptLossTerms,
  type PromptLossOptions,
  type PromptLossTerms,
  type PromptRlInputs,
} from './tfLosses';
import type { PromptPlan } from './promptPlan';

/** One gradient micro-batch: RL (or KL-penalty) rows [start, end) of prompt `prompt`, or its SFT row. */
export type MicroBatch =
  { prompt: number; part: 'rl' | 'kl'; start: number; end: number } | { prompt: number; part: 'sft' };

/** Splits a prompt's rows into consecutive chunks [start, end). */
export type RowChunker = (rows: readonly (readonly number[])[]) => [number, number][];

/** Chunks of at most `rowsPerChunk` rows (config.microBatchRows). */
export function chunkRowsBy(rowsPerChunk: number): RowChunker {
  if (!Number.isInteger(rowsPerChunk) || rowsPerChunk < 1) {
    throw new Error(`microBatchRows must be an integer ≥ 1, got ${rowsPerChunk}`);
  }
  return (rows) => {
    const out: [number, number][] = [];
    for (let start = 0; start < rows.length; start += rowsPerChunk) {
      out.push([start, Math.min(rows.length, start + rowsPerChunk)]);
    }
    return out;
  };
}

/**
 * How a prompt's rows are chunked for the model: on the CPU engine as many rows as fit its
 * activation budget (rows sharing the prompt compute it once), else microBatchRows rows.
 * The gradient and the metrics are sums over chunks either way (up to float rounding).
 */
export function chunkRowsForModel(model: Qwen3Model, microBatchRows: number): RowChunker {
  return (rows) => {
    if (isEngineActive(model.params, model.config)) return planEngineChunks(model.config, rows);
    return chunkRowsBy(microBatchRows)(rows);
  };
}

/**
 * The micro-batches of some prompts: each prompt's RL rows, then its KL-penalty rows, in
 * chunks (≤ rowsPerMicro rows, or as `chunker` splits them), then its SFT row.
 */
export function splitMicroBatches(
  plans: readonly PromptPlan[],
  promptIndices: readonly number[],
  rowsPerMicro: number | RowChunker,
): MicroBatch[] {
  const chunk = typeof rowsPerMicro === 'number' ? chunkRowsBy(rowsPerMicro) : rowsPerMicro;
  const out: MicroBatch[] = [];
  for (const prompt of promptIndices) {
    for (const [start, end] of chunk(plans[prompt].rl?.ids ?? [])) out.push({ prompt, part: 'rl', start, end });
    for (const [start, end] of chunk(plans[prompt].kl?.ids ?? [])) out.push({ prompt, part: 'kl', start, end });
    if (plans[prompt].sft) out.push({ prompt, part: 'sft' });
  }
  return out;
}

/**
 * The loss terms of one micro-batch of a prompt (differentiable in the model's params):
 * RL rows [start, end) under the prompt's normalisers, or the SFT row. Summed over
 * splitMicroBatches(…) of the prompt, the terms equal the prompt's L_i and stats.
 */
export function buildMicroBatchLoss(
  model: Qwen3Model,
  plan: PromptPlan,
  mb: MicroBatch,
  o: Omit<PromptLossOptions, 'rlWeight' | 'sftWeight'>,
): PromptLossTerms {
  const options = { ...o, rlWeight: plan.route.rlWeight, sftWeight: plan.route.sftWeight };
  if (mb.part === 'sft') {
    if (!plan.sft) throw new Error(`buildMicroBatchLoss: prompt ${mb.prompt} has no SFT row`);
    const { inputIds, attentionMask } = packTokenRows([plan.sft.ids]); // [1, N]
    const out = model.computeTokenLogprobs(inputIds, attentionMask); // [1, N−1]
    const mask = tf.tensor2d([plan.sft.mask], [1, plan.sft.mask.length]); // [1, N−1]
    return computePromptLossTerms(null, { logp: out.logprobs, mask }, options);
  }
  if (mb.part === 'kl') {
    const kl = plan.kl;
    if (!kl?.refLogprobs) {
      throw new Error(`buildMicroBatchLoss: prompt ${mb.prompt} has no KL rows with π_ref log-probs`);
    }
    const rows = kl.ids.slice(mb.start, mb.end);
    const T = Math.max(...rows.map((r) => r.length));
    const { inputIds, attentionMask } = packTokenRows(rows, { length: T }); // [B, T]
    const logp = model.computeTokenLogprobs(inputIds, attentionMask).logprobs; // [B, T−1]
    const mat = (values: number[][]) =>
      tf.tensor2d(padRows(values.slice(mb.start, mb.end), T - 1), [rows.length, T - 1]); // [B, T−1]
    return computeKlPenaltyTerms(logp, mat(kl.refLogprobs), mat(kl.mask), options, computeAggregationTotals(kl.mask));
  }
  const rl = plan.rl;
  if (!rl) throw new Error(`buildMicroBatchLoss: prompt ${mb.prompt} has no RL rows`);
  const ids = rl.ids.slice(mb.start, mb.end);
  const B = ids.length;
  const T = Math.max(...ids.map((r) => r.length));
  const { inputIds, attentionMask } = packTokenRows(ids, { length: T }); // [B, T]
  const out = model.computeTokenLogprobs(inputIds, attentionMask, { withEntropy: true }); // [B, T−1]
  const mat = (rows: number[][]) => tf.tensor2d(padRows(rows.slice(mb.start, mb.end), T - 1), [B, T - 1]);
  const rlInputs: PromptRlInputs = {
    logp: out.logprobs,
    oldLogp: mat(rl.oldLogprobs),
    refLogp: rl.refLogprobs ? mat(rl.refLogprobs) : undefined,
    advantages: mat(rl.advantages),
    mask: mat(rl.mask),
    entropy: out.entropy,
    level: rl.level,
    totals: computeAggregationTotals(rl.mask),
  };
  return computePromptLossTerms(rlInputs, null, options);
}

function padRows(rows: readonly (readonly number[])[], length: number): number[][] {
  return rows.map((r) => [...r, ...new Array<number>(Math.max(0, length - r.length)).fill(0)]);
}
