/**
 * Where the tfjs model hands its work to the CPU engine (src/model/engine): on the wasm
 * and cpu backends, `computeTokenLogprobs` runs the engine's forward as one tfjs custom op
 * whose gradient is the engine's backward (inside runEngineGradients, which declares the pass
 * differentiable and owns what it keeps: engineSession.ts), and `generate` runs the engine's KV cache with
 * prefix reuse (a prompt that extends a row cached by the previous call, or that repeats
 * another prompt of the call, only computes its new tokens). Losses, AdamW and clipping
 * stay in tfjs. WebGPU keeps the tfjs graph (static shapes), as do sharded vocabularies
 * and models too large for the engine's 4 GiB memory.
 */
import * as tf from './tf';
import type { Qwen3Config } from './config';
import type { LoraMap, ParamMap } from './linear';
import { SHARD_MARK } from './vocabShards';
import { countEngineParams, getQwen3Engine, loraGradName, type KvSlot } from '../engine/qwen3Engine';
import type { EngineLoraAdapter, EngineParams, EngineTensor } from '../engine/weights';
import { assertTapeAgrees, type EngineSession } from './engineSession';
import { readDrawn, type DrawnToken } from '../engine/sampling';

/** Largest model (parameters) the engine takes: weights, their transposes and three versions fit 4 GiB. */
export const ENGINE_MAX_PARAMS = 120_000_000;

let isEngineEnabled = typeof process === 'undefined' || process.env?.PACT_ENGINE !== 'tfjs';

let isKernelDrawsEnabled = typeof process === 'undefined' || process.env?.PACT_KERNEL_DRAWS !== '0';

/**
 * Whether generate draws a decode step's tokens in the engine's kernels (on: the default) or
 * reads the logits back and draws them in JavaScript (PACT_KERNEL_DRAWS=0 in Node); the same
 * tokens and log-probs either way (sampler.test.ts, and `DRAWS=js scripts/decodeTimer.ts` times the two).
 */
export function setKernelDrawsEnabled(on: boolean): void {
  isKernelDrawsEnabled = on;
}

export function getKernelDrawsEnabled(): boolean {
  return isKernelDrawsEnabled;
}

/** Turns the engine on or off (off: the tfjs graph everywhere; tests compare the two). */
export function setEngineEnabled(on: boolean): void {
  isEngineEnabled = on;
}

export function getEngineEnabled(): boolean {
  return isEngineEnabled;
}

/** Whether the engine will serve a model of this shape on `backend` (known before any weight exists). */
export function engineServesShape(config: Qwen3Config, backend: string): boolean {
  if (!isEngineEnabled) return false;
  if (backend !== 'wasm' && backend !== 'cpu') return false;
  if (config.head_dim % 8 !== 0 || config.hidden_size % 4 !== 0 || config.intermediate_size % 4 !== 0) return false;
  return countEngineParams(config) <= ENGINE_MAX_PARAMS;
}

/** Whether the engine serves this model on the active backend (its shape, and no vocabulary shards). */
export function isEngineActive(params: ParamMap, config: Qwen3Config): boolean {
  if (!engineServesShape(config, tf.getBackend())) return false;
  for (const name of params.keys()) if (name.includes(SHARD_MARK)) return false;
  return true;
}

function toEngineTensor(t: tf.Tensor): EngineTensor {
  return { key: t.dataId, shape: t.shape, read: () => t.dataSync() as Float32Array };
}

const sameShape = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((d, i) => d === b[i]);

/** The engine's view of a parameter map (+ LoRA). */
export function toEngineParams(params: ParamMap, lora?: LoraMap): EngineParams {
  const adapters =
    lora && lora.size > 0
      ? new Map<string, EngineLoraAdapter>(
          [...lora].map(([name, a]) => [name, { A: toEngineTensor(a.A), B: toEngineTensor(a.B), scale: a.scale }]),
        )
      : undefined;
  // One view per tensor while its data and shape stay (an assign gives a variable a new dataId):
  // a decode step reads every parameter's view several times and should build none.
  const views = new Map<string, EngineTensor>();
  return {
    get(name) {
      const v = params.get(name);
      if (!v) throw new Error(`missing parameter '${name}'`);
      const seen = views.get(name);
      if (seen && seen.key === v.dataId && sameShape(seen.shape, v.shape)) return seen;
      const view = toEngineTensor(v);
      views.set(name, view);
      return view;
    },
    lora: adapters,
  };
}

/** Contiguous [start, start + length) of the mask's ones per row, or null when a row has holes. */
function findRowSpans(mask: ArrayLike<number>, B: number, T: number): { start: number; length: number }[] | null {
  const spans: { start: number; length: number }[] = [];
  for (let b = 0; b < B; b++) {
    let start = -1;
    let end = -1;
    for (let t = 0; t < T; t++) {
      if (mask[b * T + t] === 0) continue;
      if (start < 0) start = t;
      else if (end !== t) return null;
      end = t + 1;
    }
    spans.push(start < 0 ? { start: 0, length: 0 } : { start, length: end - start });
  }
  return spans;
}

export interface EngineLogprobs {
  logprobs: tf.Tensor2D;
  targetMask: tf.Tensor2D;
  entropy?: tf.Tensor2D;
}

/**
 * computeTokenLogprobs on the engine: [B, T−1] log-probs (and entropies), differentiable in
 * every trainable Variable of `params` and of `lora` when `session` is given (the engine
 * session of runEngineGradients, which owns the activations kept for the backward; null: a
 * plain read). Null when the batch does not suit the engine (a row whose mask has holes);
 * the caller then uses the tfjs graph.
 */
export function computeEngineTokenLogprobs(
  params: ParamMap,
  config: Qwen3Config,
  inputIds: tf.Tensor2D,
  attentionMask: tf.Tensor2D,
  opts: { lora?: LoraMap; withEntropy?: boolean; session: EngineSession | null },
): EngineLogprobs | null {
  const [B, T] = inputIds.shape;
  const mask = attentionMask.dataSync();
  const spans = findRowSpans(mask, B, T);
  if (!spans || spans.some((s) => s.length === 0)) return null;
  const idData = inputIds.dataSync();
  const rows = spans.map((s, b) => idData.subarray(b * T + s.start, b * T + s.start + s.length));
  const engine = getQwen3Engine(config);
  const P = toEngineParams(params, opts.lora);
  const withEntropy = opts.withEntropy ?? false;
  const K = withEntropy ? 2 : 1;
  const W = T - 1;
  const pack = (perRow: Float32Array[][]): Float32Array => {
    const out = new Float32Array(K * B * W);
    perRow.forEach((values, k) => values.forEach((row, b) => out.set(row, k * B * W + b * W + spans[b].start)));
    return out;
  };
  // Differentiable inputs: trainable weights and adapters, in a fixed order.
  const inputs: { name: string; v: tf.Variable }[] = [];
  for (const [name, v] of params) if (v.trainable) inputs.push({ name, v });
  for (const [name, a] of opts.lora ?? []) {
    if (a.A.trainable) inputs.push({ name: loraGradName(name, 'A'), v: a.A });
    if (a.B.trainable) inputs.push({ name: loraGradName(name, 'B'), v: a.B });
  }
  const session = opts.session;
  if (inputs.length > 0) assertTapeAgrees(session !== null);
  const targetMask = tf.tidy(() => {
    const m = attentionMask.toFloat();
    return m.slice([0, 0], [B, W]).mul(m.slice([0, 1], [B, W])) as tf.Tensor2D;
  });
  let combined: tf.Tensor3D;
  if (session === null || inputs.length === 0) {
    const r = engine.forward(P, rows, { withEntropy, keep: false });
    combined = tf.tensor3d(pack(withEntropy ? [r.logprobs, r.entropy!] : [r.logprobs]), [K, B, W]);
  } else {
    const gradNames = new Set(inputs.map((i) => i.name));
    const op = tf.customGrad((..._args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      const r = engine.forward(P, rows, { withEntropy, keep: true });
      const entry = session.hold(engine, r.ctx!);
      return {
        value: tf.tensor3d(pack(withEntropy ? [r.logprobs, r.entropy!] : [r.logprobs]), [K, B, W]),
        gradFunc: (dy: tf.Tensor) => {
          const g = dy.dataSync();
          const slice = (k: number) =>
            spans.map((s, b) => g.subarray(k * B * W + b * W + s.start, k * B * W + b * W + s.start + s.length - 1));
          session.settle(entry);
          const grads = engine.backward(entry.ctx, slice(0), withEntropy ? slice(1) : null, gradNames);
          return inputs.map(({ name, v }) => {
            const values = grads.get(name);
            return values ? tf.tensor(values, v.shape) : tf.zerosLike(v);
          });
        },
      };
    });
    combined = op(...inputs.map((i) => i.v)) as tf.Tensor3D;
  }
  const out = tf.tidy(() => ({
    logprobs: combined.slice([0, 0, 0], [1, B, W]).reshape([B, W]) as tf.Tensor2D,
    entropy: withEntropy ? (combined.slice([1, 0, 0], [1, B, W]).reshape([B, W]) as tf.Tensor2D) : undefined,
  }));
  combined.dispose();
  return { logprobs: out.logprobs, targetMask, entropy: out.entropy };
}

/** Activation memory one gradient micro-batch may hold on the engine. */
export const ENGINE_ACTIVATION_BUDGET_BYTES = 768 << 20;

/**
 * Consecutive chunks [start, end) of `rows` for the engine, each as many rows as fit
 * `budgetBytes` of kept activations (rows sharing a prefix count it once), so that a
 * prompt's K rows run together and share their prompt's computation.
 */
export function planEngineChunks(
  config: Qwen3Config,
  rows: readonly (readonly number[])[],
  budgetBytes = ENGINE_ACTIVATION_BUDGET_BYTES,
): [number, number][] {
  const engine = getQwen3Engine(config);
  const out: [number, number][] = [];
  let start = 0;
  while (start < rows.length) {
    let end = start + 1;
    while (end < rows.length) {
      const chunk = rows.slice(start, end + 1);
      let prefix = Math.min(...chunk.map((r) => r.length)) - 1;
      for (const r of chunk) {
        let i = 0;
        while (i < prefix && r[i] === chunk[0][i]) i++;
        prefix = i;
      }
      if (
        engine.activationBytes(
          chunk.map((r) => r.length),
          prefix,
        ) > budgetBytes
      )
        break;
      end++;
    }
    out.push([start, end]);
    start = end;
  }
  return out;
}

// ------------------------------------------------------------------ generation

interface SlotPool {
  /** The parameter versions the cached keys/values were computed with. */
  signature: object[];
  slots: KvSlot[];
}

const pools = new WeakMap<ParamMap, SlotPool>();

function signatureOf(params: ParamMap, lora?: LoraMap): object[] {
  const keys: object[] = [...params.values()].map((v) => v.dataId);
  for (const a of lora?.values() ?? []) keys.push(a.A.dataId, a.B.dataId);
  return keys;
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Frees the KV cache kept for a parameter map (call when the model is disposed). */
export function releaseEngineCache(params: ParamMap, config: Qwen3Config): void {
  const pool = pools.get(params);
  if (!pool) return;
  const engine = getQwen3Engine(config);
  for (const s of pool.slots) engine.freeSlot(s);
  pools.delete(params);
}

/** Next-token logits by row: after the prompt (`first`), then after feeding one token per active row. */
export interface EngineLogitSource {
  first(): Float32Array;
  next(tokens: Int32Array, isActive: readonly boolean[]): Float32Array;
  /**
   * `next`, with each active row's next token drawn in the engine's kernels (draws[b]: row b's
   * uniform, or −1 for greedy; sampling.ts): the rows' DrawnTokens (null for inactive rows).
   */
  nextDrawn(
    tokens: Int32Array,
    isActive: readonly boolean[],
    draws: Float64Array,
    limit: number,
  ): (DrawnToken | null)[];
}

/**
 * A logit source over the engine's KV cache for `prompts`, reusing the slots of the
 * previous call on the same weights: each distinct prompt takes the cached row sharing its
 * longest prefix and computes only the rest; repeated prompts copy the first one's keys
 * and values. Slots not reused are freed; the call's slots stay cached for the next.
 */
export function createEngineLogitSource(
  params: ParamMap,
  config: Qwen3Config,
  prompts: number[][],
  lora: LoraMap | undefined,
  reserve: number,
): EngineLogitSource {
  const engine = getQwen3Engine(config);
  const P = toEngineParams(params, lora);
  const V = config.vocab_size;
  const signature = signatureOf(params, lora);
  let pool = pools.get(params);
  if (!pool || pool.signature.length !== signature.length || pool.signature.some((k, i) => k !== signature[i])) {
    if (pool) for (const s of pool.slots) engine.freeSlot(s);
    pool = { signature, slots: [] };
    pools.set(params, pool);
  }
  const free = [...pool.slots];
  const firstOf = new Map<string, number>();
  const uniques: { row: number; slot: KvSlot; from: number }[] = [];
  const copies: { row: number; of: number }[] = [];
  prompts.forEach((prompt, row) => {
    const key = prompt.join(',');
    const seen = firstOf.get(key);
    if (seen !== undefined) {
      copies.push({ row, of: seen });
      return;
    }
    firstOf.set(key, row);
    let best = -1;
    let bestLength = 0;
    free.forEach((s, i) => {
      const n = Math.min(commonPrefix(s.tokens, prompt), prompt.length - 1);
      if (n > bestLength) {
        best = i;
        bestLength = n;
      }
    });
    let slot: KvSlot;
    if (best >= 0) {
      slot = free.splice(best, 1)[0];
      slot.tokens.length = bestLength;
    } else {
      slot = engine.createSlot(prompt.length + reserve);
      bestLength = 0;
    }
    uniques.push({ row, slot, from: bestLength });
  });
  for (const s of free) engine.freeSlot(s);
  const slotOf: KvSlot[] = new Array(prompts.length);
  for (const u of uniques) slotOf[u.row] = u.slot;
  pool.slots = [];
  return {
    first() {
      const logits = engine.extend(
        P,
        uniques.map((u) => ({ slot: u.slot, tokens: prompts[u.row].slice(u.from) })),
      );
      const out = new Float32Array(prompts.length * V);
      uniques.forEach((u, j) => out.set(logits.subarray(j * V, (j + 1) * V), u.row * V));
      for (const c of copies) {
        const src = slotOf[c.of];
        const dst = engine.createSlot(src.tokens.length + reserve);
        engine.copySlot(src, dst, src.tokens.length);
        slotOf[c.row] = dst;
        out.copyWithin(c.row * V, c.of * V, (c.of + 1) * V);
      }
      pool!.slots = slotOf.slice();
      return out;
    },
    next(tokens, isActive) {
      const rows = [...tokens.keys()].filter((b) => isActive[b]);
      const out = new Float32Array(prompts.length * V);
      if (rows.length === 0) return out;
      const logits = engine.extend(
        P,
        rows.map((b) => ({ slot: slotOf[b], tokens: [tokens[b]] })),
      );
      rows.forEach((b, j) => out.set(logits.subarray(j * V, (j + 1) * V), b * V));
      return out;
    },
    nextDrawn(tokens, isActive, draws, limit) {
      const rows = [...tokens.keys()].filter((b) => isActive[b]);
      const out: (DrawnToken | null)[] = new Array(prompts.length).fill(null);
      if (rows.length === 0) return out;
      const drawn = engine.extendSampled(
        P,
        rows.map((b) => ({ slot: slotOf[b], tokens: [tokens[b]] })),
        { draws: rows.map((b) => draws[b]), limit },
      );
      rows.forEach((b, j) => (out[b] = readDrawn(drawn, j, draws[b] < 0)));
      return out;
    },
  };
}
