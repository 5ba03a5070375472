/**
 * Batched autoregressive generation for Qwen3 with a KV cache PREALLOCATED to a fixed length,
 * temperature + top-p (nucleus; Holtzman et al. 2020, §3.1) sampling from an injected uniform
 * source, stop token sequences and stop strings.
 *
 * Every decode step has the same shapes (tfjs-webgpu pools buffers by exact size): prompts are
 * left-padded to a multiple of `promptBucket`, each layer's cache is [B, nKv, cacheLength, D]
 * from the start, and a step writes slot s by a one-hot blend  cache ← cache·(1 − e_s) + kv·e_s.
 * `logprobs` are log π(token | prefix) of the unmodified model at temperature 1 (the π_old of
 * the PPO ratio); `samplingLogprobs` are under the distribution actually sampled. More: docs/model.md.
 *
 * Sampling runs in JS on the logits read back once per step, except on the CPU engine at
 * temperature 1 (or greedy) and top-p 1, where each decode step's tokens are drawn in the kernels
 * beside their logits (engine/sampling.ts) with the same uniforms in the same order and the same
 * float64 arithmetic: the same tokens and log-probs bit for bit (engine/sampler.test.ts compares both).
 * Simplifications: finished rows are fed a pad token until the batch finishes; no top-k, no
 * repetition penalty.
 */
import * as tf from './tf';
import type { Qwen3Config } from './config';
import { computeGqaAttention, MASK_NEG } from './attention';
import type { LoraMap, ParamMap } from './linear';
import { getLmHeadShards } from './vocabShards';
import { matMulTransposeB } from './matmul';
import { runDecoderStack, runQwen3Decoder, type AttendFn, type LayerKv } from './model';
import { computeRopeTablesForHostPositions } from './rope';
import { createEngineLogitSource, getKernelDrawsEnabled, isEngineActive } from './engineBridge';
import { defaultPrefillBytes, prefillRowsPerChunk } from './graphBuffers';

/** The project's stop strings: end of a tool call, of an assistant turn, of an answer. */
export const DEFAULT_STOP_STRINGS: readonly string[] = ['</tool_call>', '<|im_end|>', '</answer>'];

export interface GenerateOptions {
  maxNewTokens: number;
  /** 0 = greedy (argmax). Default 1. */
  temperature?: number;
  /** Nucleus mass in (0, 1]. Default 1 (no truncation). */
  topP?: number;
  /** Uniform source in [0, 1), e.g. `() => rng.next()` of src/core/rng. Required unless greedy. */
  random?: () => number;
  /** Stop when the generated ids end with one of these sequences (e.g. [[imEndId]]). */
  stopTokenIds?: number[][];
  /** Stop when the decoded text of the generated ids contains one of these (needs `decode`). */
  stopStrings?: string[];
  decode?: (ids: number[]) => string;
  /** Id used for left padding and for finished rows. Default 0 (masked out anyway). */
  padTokenId?: number;
  /** Prompt slots are rounded up to a multiple of this (fewer distinct shapes). Default 16. */
  promptBucket?: number;
  /** Fixed KV-cache length; default roundUp(promptSlots + maxNewTokens, promptBucket). */
  cacheLength?: number;
  lora?: LoraMap;
  /**
   * Only ids below this are sampled (default: every id). A Qwen3 folder's embedding may have rows
   * past its tokenizer's vocabulary (Qwen3-0.6B: 151,936 rows for 151,669 tokens): those ids have
   * no token behind them, so the policy must never emit one. log-probs stay the model's own.
   */
  vocabLimit?: number;
  /**
   * On the tfjs graph: the most bytes one tensor of the prompt's forward may take; the rows are
   * run in chunks that keep to it. Default: WebGPU's buffer limit, else GRAPH_PREFILL_BYTES.
   */
  prefillBytes?: number;
  /** Called after each sampled token of the batch: the tokens generated so far over all rows, and the rows still running. */
  onToken?: (generated: number, activeRows: number) => void;
}

export type FinishReason = 'stop' | 'length';

export interface GeneratedRow {
  /** New tokens, the stop sequence included when one matched. */
  tokens: number[];
  /** log π(token) under the unmodified model at temperature 1 (see header). */
  logprobs: number[];
  /** log-prob under the sampling distribution actually used (0 for greedy). */
  samplingLogprobs: number[];
  finishReason: FinishReason;
  /** The stop string, or the stop id sequence joined by ',', that ended the row. */
  stop?: string;
}

export interface SampledToken {
  token: number;
  /** log softmax(z)[token] at temperature 1. */
  logprob: number;
  samplingLogprob: number;
}

/**
 * Picks the next token from one row of logits z [V]: greedy when temperature ≤ 0, else
 * softmax(z / temperature) restricted to the smallest top-probability set with mass ≥
 * topP, sampled by inverse CDF with one uniform draw. Only ids below `limit` (default V) can
 * be picked; `logprob` is still log softmax(z) over all V (the model's own, as training reads it).
 */
let probsBuffer = new Float64Array(0);

export function sampleFromLogits(
  logits: ArrayLike<number>,
  temperature: number,
  topP: number,
  random?: () => number,
  limit: number = logits.length,
): SampledToken {
  const V = logits.length;
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= V))
    throw new Error(`generate: vocabLimit must be an integer in [1, ${V}], got ${limit}`);
  if (limit < V) return sampleBelowLimit(logits, temperature, topP, random, limit);
  let maxZ = -Infinity;
  let argmax = 0;
  for (let i = 0; i < V; i++) {
    if (logits[i] > maxZ) {
      maxZ = logits[i];
      argmax = i;
    }
  }
  const isSampling = temperature > 0;
  if (isSampling && !random) throw new Error('generate: opts.random is required when temperature > 0');
  if (isSampling && !(topP > 0 && topP <= 1)) throw new Error(`generate: topP must be in (0, 1], got ${topP}`);
  if (probsBuffer.length < V) probsBuffer = new Float64Array(V);
  const probs = probsBuffer;
  // At temperature 1 the sampling weights are the softmax terms themselves: one exp per entry.
  const isShared = isSampling && temperature === 1;
  let sumExp = 0;
  for (let i = 0; i < V; i++) {
    const e = Math.exp(logits[i] - maxZ);
    if (isShared) probs[i] = e;
    sumExp += e;
  }
  const lse = maxZ + Math.log(sumExp);
  if (!isSampling) return { token: argmax, logprob: logits[argmax] - lse, samplingLogprob: 0 };
  let total = sumExp;
  if (!isShared) {
    total = 0;
    for (let i = 0; i < V; i++) {
      probs[i] = Math.exp((logits[i] - maxZ) / temperature);
      total += probs[i];
    }
  }
  let order: number[] | null = null;
  let kept = total;
  let keptCount = V;
  if (topP < 1) {
    order = Array.from({ length: V }, (_, i) => i).sort((a, b) => probs[b] - probs[a] || a - b);
    kept = 0;
    keptCount = 0;
    while (keptCount < V && kept < topP * total) kept += probs[order[keptCount++]];
  }
  const target = random!() * kept;
  let cum = 0;
  let token = order ? order[keptCount - 1] : argmax;
  for (let j = 0; j < keptCount; j++) {
    const i = order ? order[j] : j;
    cum += probs[i];
    if (target < cum) {
      token = i;
      break;
    }
  }
  return { token, logprob: logits[token] - lse, samplingLogprob: Math.log(probs[token] / kept) };
}

/** sampleFromLogits with a limit below V: the choice among the first `limit` ids, the log-prob over all V. */
function sampleBelowLimit(
  logits: ArrayLike<number>,
  temperature: number,
  topP: number,
  random: (() => number) | undefined,
  limit: number,
): SampledToken {
  let maxAll = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > maxAll) maxAll = logits[i];
  let sumAll = 0;
  for (let i = 0; i < logits.length; i++) sumAll += Math.exp(logits[i] - maxAll);
  const lse = maxAll + Math.log(sumAll);
  const head = Array.prototype.slice.call(logits, 0, limit) as number[];
  const s = sampleFromLogits(head, temperature, topP, random);
  return { ...s, logprob: logits[s.token] - lse };
}

/** The stop that `tokens` now ends with / contains, or undefined. */
function findStop(tokens: number[], opts: GenerateOptions): string | undefined {
  for (const seq of opts.stopTokenIds ?? []) {
    if (
      seq.length > 0 &&
      seq.length <= tokens.length &&
      seq.every((id, i) => tokens[tokens.length - seq.length + i] === id)
    ) {
      return seq.join(',');
    }
  }
  if (opts.stopStrings && opts.stopStrings.length > 0) {
    // The tail is enough: a stop completed earlier already ended the row.
    const text = opts.decode!(tokens.slice(-64));
    for (const s of opts.stopStrings) if (text.includes(s)) return s;
  }
  return undefined;
}

function checkOptions(prompts: number[][], config: Qwen3Config, opts: GenerateOptions): void {
  if (prompts.length === 0) throw new Error('generate: prompts is empty');
  prompts.forEach((p, b) => {
    if (p.length === 0) throw new Error(`generate: prompts[${b}] is empty`);
    p.forEach((id, t) => {
      if (!Number.isInteger(id) || id < 0 || id >= config.vocab_size) {
        throw new Error(`generate: prompts[${b}][${t}] = ${id} is not a token id in [0, ${config.vocab_size})`);
      }
    });
  });
  if (!Number.isInteger(opts.maxNewTokens) || opts.maxNewTokens < 1) {
    throw new Error(`generate: maxNewTokens must be a positive integer, got ${opts.maxNewTokens}`);
  }
  if (opts.stopStrings?.length && !opts.decode) throw new Error('generate: stopStrings need opts.decode');
}

/** Left-padded prompt batch: ids and mask [B, slots] as flat arrays, plus row lengths. */
function padPromptsLeft(prompts: number[][], slots: number, padId: number) {
  const B = prompts.length;
  const ids = new Int32Array(B * slots).fill(padId);
  const mask = new Float32Array(B * slots);
  prompts.forEach((p, b) => {
    const offset = slots - p.length;
    for (let t = 0; t < p.length; t++) {
      ids[b * slots + offset + t] = p[t];
      mask[b * slots + offset + t] = 1;
    }
  });
  return { ids, mask, lengths: prompts.map((p) => p.length) };
}

const roundUp = (n: number, m: number) => Math.ceil(n / m) * m;

/**
 * Source of next-token logits [B·V] on the host: `first()` after the prompt, then
 * `next(tokens, step, isActive)` after feeding one token per row (rows that are no longer
 * active get a pad token and their logits are not read).
 */
interface LogitSource {
  first(): Promise<ArrayLike<number> & { subarray(start: number, end: number): ArrayLike<number> }>;
  next(
    tokens: Int32Array,
    step: number,
    isActive: readonly boolean[],
  ): Promise<ArrayLike<number> & { subarray(start: number, end: number): ArrayLike<number> }>;
  /**
   * `next`, with each active row's next token drawn by the source as sampleFromLogits draws it at
   * temperature 1 (draws[b]: row b's uniform) or greedily (−1), among ids below `limit`.
   */
  nextDrawn?(
    tokens: Int32Array,
    isActive: readonly boolean[],
    draws: Float64Array,
    limit: number,
  ): Promise<(SampledToken | null)[]>;
  dispose(): void;
}

/** Reads a [B, V] logits tensor back to the host (one read-back per step) and frees it. */
async function readLogits(t: tf.Tensor2D): Promise<Float32Array> {
  const values = (await t.data()) as Float32Array;
  t.dispose();
  return values;
}

/** The shared sampling loop over a LogitSource. */
async function runGenerationLoop(
  source: LogitSource,
  B: number,
  V: number,
  maxSteps: number,
  opts: GenerateOptions,
): Promise<GeneratedRow[]> {
  const rows: GeneratedRow[] = Array.from({ length: B }, () => ({
    tokens: [],
    logprobs: [],
    samplingLogprobs: [],
    finishReason: 'length' as FinishReason,
  }));
  const isDone = new Array<boolean>(B).fill(false);
  const temperature = opts.temperature ?? 1;
  const topP = opts.topP ?? 1;
  const vocabLimit = Math.min(V, opts.vocabLimit ?? V);
  const padId = opts.padTokenId ?? 0;
  const isGreedy = !(temperature > 0);
  // After the first step, the source draws the tokens where it can take sampleFromLogits' plain path.
  const canSourceDraw =
    source.nextDrawn !== undefined && (isGreedy || temperature === 1) && topP === 1 && (isGreedy || !!opts.random);
  try {
    let values = await source.first();
    let drawn: (SampledToken | null)[] | null = null;
    for (let step = 0; step < maxSteps; step++) {
      const fed = new Int32Array(B).fill(padId);
      for (let b = 0; b < B; b++) {
        if (isDone[b]) continue;
        const s = drawn
          ? drawn[b]!
          : sampleFromLogits(values.subarray(b * V, (b + 1) * V), temperature, topP, opts.random, vocabLimit);
        const row = rows[b];
        row.tokens.push(s.token);
        row.logprobs.push(s.logprob);
        row.samplingLogprobs.push(s.samplingLogprob);
        fed[b] = s.token;
        const stop = findStop(row.tokens, opts);
        if (stop !== undefined) {
          row.finishReason = 'stop';
          row.stop = stop;
          isDone[b] = true;
        }
      }
      if (opts.onToken) {
        const active = isDone.filter((d) => !d).length;
        opts.onToken(
          rows.reduce((sum, r) => sum + r.tokens.length, 0),
          active,
        );
      }
      if (step === maxSteps - 1 || isDone.every(Boolean)) break;
      if (canSourceDraw) {
        // The uniforms sampleFromLogits would take next step: one per running row, in row order.
        const draws = new Float64Array(B).fill(-1);
        if (!isGreedy) for (let b = 0; b < B; b++) if (!isDone[b]) draws[b] = opts.random!();
        drawn = await source.nextDrawn!(
          fed,
          isDone.map((d) => !d),
          draws,
          vocabLimit,
        );
        continue;
      }
      values = await source.next(
        fed,
        step,
        isDone.map((d) => !d),
      );
    }
  } finally {
    source.dispose();
  }
  return rows;
}

/** Logits [B, V] of the last position from final-normed hidden [B, T, H]. */
function computeLastLogits(params: ParamMap, config: Qwen3Config, hidden: tf.Tensor3D): tf.Tensor2D {
  return tf.tidy(() => {
    const [B, T, H] = hidden.shape;
    const last = hidden.slice([0, T - 1, 0], [B, 1, H]).reshape([B, H]);
    const head = getLmHeadShards(params, config.tie_word_embeddings); // [V, H] in row shards
    const parts = head.weights.map((w) => matMulTransposeB(last as tf.Tensor2D, w)); // [B, V_k] each
    return (parts.length === 1 ? parts[0] : tf.concat(parts, 1)) as tf.Tensor2D; // [B, V]
  });
}

/**
 * One decode step against the preallocated cache: tokens [B, 1] at positions [B, 1]
 * written into slot `slot`; keyMask [B, S] (1 = attendable). Returns logits [B, V] and
 * the new caches (the old ones are disposed).
 */
function runDecodeStep(
  params: ParamMap,
  config: Qwen3Config,
  tokens: Int32Array,
  positions: Float32Array,
  slot: number,
  keyMask: Float32Array,
  caches: LayerKv[],
  lora?: LoraMap,
): { logits: tf.Tensor2D; caches: LayerKv[] } {
  const B = tokens.length;
  const S = caches[0].k.shape[2];
  const newCaches: LayerKv[] = [];
  const logits = tf.tidy(() => {
    const slotOneHot = tf
      .oneHot(tf.tensor1d([slot], 'int32'), S)
      .toFloat()
      .reshape([1, 1, S, 1]); // [1, 1, S, 1]
    const notSlot = tf.sub(1, slotOneHot);
    const maskBias = tf
      .sub(1, tf.tensor2d(keyMask, [B, S]))
      .mul(MASK_NEG)
      .reshape([B, 1, 1, S]); // [B, 1, 1, S]
    const rope = computeRopeTablesForHostPositions(positions, config.head_dim, config.rope_theta); // [B, 1, 1, D]
    const ids = tf.tensor2d(tokens, [B, 1], 'int32');
    const attend: AttendFn = (layer, q, k, v) => {
      // k, v [B, nKv, 1, D] broadcast over the S slots, kept only at `slot`.
      const kAll = caches[layer].k.mul(notSlot).add(k.mul(slotOneHot)) as tf.Tensor4D; // [B, nKv, S, D]
      const vAll = caches[layer].v.mul(notSlot).add(v.mul(slotOneHot)) as tf.Tensor4D;
      newCaches.push({ k: tf.keep(kAll), v: tf.keep(vAll) });
      return computeGqaAttention(q, kAll, vAll, maskBias);
    };
    const hidden = runDecoderStack(params, config, ids, rope, attend, lora); // [B, 1, H]
    return computeLastLogits(params, config, hidden);
  });
  for (const c of caches) {
    c.k.dispose();
    c.v.dispose();
  }
  return { logits, caches: newCaches };
}

/**
 * Generates up to maxNewTokens per prompt with the preallocated KV cache.
 * prompts: token ids per row (lengths may differ). Returns one GeneratedRow per prompt.
 */
export async function generateQwen3(
  params: ParamMap,
  config: Qwen3Config,
  prompts: number[][],
  opts: GenerateOptions,
): Promise<GeneratedRow[]> {
  checkOptions(prompts, config, opts);
  const B = prompts.length;
  const bucket = opts.promptBucket ?? 16;
  const slots = roundUp(Math.max(...prompts.map((p) => p.length)), bucket);
  const S = opts.cacheLength ?? roundUp(slots + opts.maxNewTokens, bucket);
  if (S < slots + 1) throw new Error(`generate: cacheLength ${S} leaves no room after ${slots} prompt slots`);
  // The last sampled token is never fed back, so steps tokens need steps − 1 cache slots.
  const maxSteps = Math.min(opts.maxNewTokens, S - slots + 1);
  const { ids, mask, lengths } = padPromptsLeft(prompts, slots, opts.padTokenId ?? 0);
  const keyMask = new Float32Array(B * S);
  for (let b = 0; b < B; b++) keyMask.set(mask.subarray(b * slots, (b + 1) * slots), b * S);
  if (isEngineActive(params, config)) {
    // The CPU engine: a growing cache per row, prefix reuse across calls (engineBridge.ts).
    const longest = Math.max(...prompts.map((p) => p.length));
    let steps = Math.min(opts.maxNewTokens, config.max_position_embeddings - longest + 1);
    if (opts.cacheLength !== undefined) steps = Math.min(steps, opts.cacheLength - slots + 1);
    const engine = createEngineLogitSource(params, config, prompts, opts.lora, Math.min(opts.maxNewTokens, 256));
    const source: LogitSource = {
      first: async () => engine.first(),
      next: async (tokens, _step, isActive) => engine.next(tokens, isActive),
      nextDrawn: getKernelDrawsEnabled()
        ? async (tokens, isActive, draws, limit) => engine.nextDrawn(tokens, isActive, draws, limit)
        : undefined,
      dispose() {},
    };
    return runGenerationLoop(source, B, config.vocab_size, Math.max(1, steps), opts);
  }
  let caches: LayerKv[] = [];

  const source: LogitSource = {
    async first() {
      // The prompt rows in chunks whose largest tensor (the attention scores [rows, heads, slots,
      // slots]) fits the backend's buffers (graphBuffers.ts): rows are independent, so the chunks
      // give the rows' own numbers.
      const chunkRows = prefillRowsPerChunk(config, slots, opts.prefillBytes ?? defaultPrefillBytes());
      const parts: { kv: LayerKv[]; logits: tf.Tensor2D }[] = [];
      for (let r0 = 0; r0 < B; r0 += chunkRows) {
        const rows = Math.min(chunkRows, B - r0);
        const idsT = tf.tensor2d(ids.subarray(r0 * slots, (r0 + rows) * slots), [rows, slots], 'int32');
        const maskT = tf.tensor2d(mask.subarray(r0 * slots, (r0 + rows) * slots), [rows, slots]);
        const { hidden, kv } = runQwen3Decoder(params, config, idsT, maskT, { lora: opts.lora, collectKv: true });
        // Pad each layer's keys/values [rows, nKv, slots, D] to the fixed [rows, nKv, S, D].
        const padded = kv.map(({ k, v }) => {
          const pad: Array<[number, number]> = [
            [0, 0],
            [0, 0],
            [0, S - slots],
            [0, 0],
          ];
          const out = { k: tf.pad(k, pad) as tf.Tensor4D, v: tf.pad(v, pad) as tf.Tensor4D };
          k.dispose();
          v.dispose();
          return out;
        });
        parts.push({ kv: padded, logits: computeLastLogits(params, config, hidden) });
        tf.dispose([idsT, maskT, hidden]);
      }
      if (parts.length === 1) {
        caches = parts[0].kv;
        return readLogits(parts[0].logits);
      }
      caches = parts[0].kv.map((_, layer) => ({
        k: tf.concat(
          parts.map((p) => p.kv[layer].k),
          0,
        ) as tf.Tensor4D,
        v: tf.concat(
          parts.map((p) => p.kv[layer].v),
          0,
        ) as tf.Tensor4D,
      }));
      const logits = tf.concat(
        parts.map((p) => p.logits),
        0,
      ) as tf.Tensor2D;
      for (const p of parts) tf.dispose([...p.kv.flatMap((c) => [c.k, c.v]), p.logits]);
      return readLogits(logits);
    },
    async next(tokens, step) {
      const slot = slots + step;
      const positions = new Float32Array(B);
      for (let b = 0; b < B; b++) {
        keyMask[b * S + slot] = 1;
        positions[b] = lengths[b] + step;
      }
      const out = runDecodeStep(params, config, tokens, positions, slot, keyMask, caches, opts.lora);
      caches = out.caches;
      return readLogits(out.logits);
    },
    dispose() {
      for (const c of caches) tf.dispose([c.k, c.v]);
      caches = [];
    },
  };
  return runGenerationLoop(source, B, config.vocab_size, maxSteps, opts);
}

/**
 * The same generation by full recomputation of the growing sequence at every step
 * (no cache; shapes grow). For tests (KV cache ≡ recomputation) and the benchmark.
 */
export async function generateQwen3WithoutCache(
  params: ParamMap,
  config: Qwen3Config,
  prompts: number[][],
  opts: GenerateOptions,
): Promise<GeneratedRow[]> {
  checkOptions(prompts, config, opts);
  const B = prompts.length;
  const slots = roundUp(Math.max(...prompts.map((p) => p.length)), opts.promptBucket ?? 16);
  const { ids, mask } = padPromptsLeft(prompts, slots, opts.padTokenId ?? 0);
  const seqIds: number[][] = [];
  const seqMask: number[][] = [];
  for (let b = 0; b < B; b++) {
    seqIds.push(Array.from(ids.subarray(b * slots, (b + 1) * slots)));
    seqMask.push(Array.from(mask.subarray(b * slots, (b + 1) * slots)));
  }
  const forward = (): tf.Tensor2D => {
    const T = seqIds[0].length;
    const idsT = tf.tensor2d(seqIds.flat(), [B, T], 'int32');
    const maskT = tf.tensor2d(seqMask.flat(), [B, T]);
    const { hidden } = runQwen3Decoder(params, config, idsT, maskT, { lora: opts.lora });
    const logits = computeLastLogits(params, config, hidden);
    tf.dispose([idsT, maskT, hidden]);
    return logits;
  };
  const source: LogitSource = {
    first: () => readLogits(forward()),
    next(tokens) {
      for (let b = 0; b < B; b++) {
        seqIds[b].push(tokens[b]);
        seqMask[b].push(1);
      }
      return readLogits(forward());
    },
    dispose() {},
  };
  return runGenerationLoop(source, B, config.vocab_size, opts.maxNewTokens, opts);
}
