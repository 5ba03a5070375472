/**
 * Qwen3 on the CPU engine: the same decoder as src/model/qwen3 (Hugging Face
 * `modeling_qwen3.py`: RMSNorm, q/k norm before rotate-half RoPE, GQA causal attention,
 * SwiGLU MLP, tied or untied LM head), written as explicit forward and backward passes
 * over float32 buffers in WebAssembly memory (the llm.c way) instead of a graph of tfjs
 * ops: every product is one SIMD kernel call, attention never holds a T×T matrix
 * (FlashAttention-2's online softmax and recomputation), rows are packed back to back
 * with no padding, and products and attention heads are split over the runtime's worker
 * threads with the same bits on any thread count.
 *   forward(rows)  → log p(ids[t+1] | ids[≤t]) and the entropy per position, optionally
 *                    keeping the activations; backward(ctx, ∂logp, ∂entropy) → gradients.
 *   extend(slots)  → appends tokens to KV-cache slots (prefill and decode are the same
 *                    call) and returns the next-token logits of each slot;
 *   extendSampled  → the same, then each slot's next token drawn in the kernels (sampling.ts).
 * LoRA (Hu et al. 2021, Eq. 3): y = x Wᵀ + s·(x Aᵀ) Bᵀ on the adapted linears.
 * Simplification: float32 only. This class is the façade; each job is a file beside it
 * (docs/engine.md has the map, the buffer layout and a step drawn through them).
 */
import type { Qwen3Config } from '../qwen3/config';
import { runBackward } from './backward';
import { createEngineCore, type EngineCore } from './core';
import { runExtend, runExtendSampled, type ExtendItem } from './decode';
import type { SampleRequest } from './sampling';
import { releaseForward, runForward, type ForwardContext, type ForwardResult } from './forward';
import { copySlot, createSlot, freeSlot, type KvSlot } from './kvCache';
import { engineActivationBytes, engineSlotBytes } from './memoryBytes';
import { getEngineRuntime, type EngineRuntime } from './runtime';
import type { EngineParams, WeightCache } from './weights';

export type { ForwardContext, ForwardResult } from './forward';
export type { KvSlot } from './kvCache';
export { loraGradName } from './names';
export { countEngineParams, engineActivationBytes, engineSlotBytes, engineWeightCacheBytes } from './memoryBytes';

/** Where the engine's time went (wall milliseconds and tokens), for the benchmark. */
export interface EngineStats {
  forwardMs: number;
  forwardTokens: number;
  backwardMs: number;
  backwardTokens: number;
  /** extend() calls that append more than one token to some slot (prompts, observations). */
  prefillMs: number;
  prefillTokens: number;
  /** extend() calls of one token per slot (decoding). */
  decodeMs: number;
  decodeTokens: number;
}

export function createEngineStats(): EngineStats {
  return {
    forwardMs: 0,
    forwardTokens: 0,
    backwardMs: 0,
    backwardTokens: 0,
    prefillMs: 0,
    prefillTokens: 0,
    decodeMs: 0,
    decodeTokens: 0,
  };
}

export class Qwen3Engine {
  readonly rt: EngineRuntime;
  /** Cumulative; reset it by assigning createEngineStats(). */
  stats: EngineStats = createEngineStats();
  readonly weights: WeightCache;
  private readonly core: EngineCore;

  constructor(
    readonly config: Qwen3Config,
    rt: EngineRuntime = getEngineRuntime(),
  ) {
    this.core = createEngineCore(config, rt);
    this.rt = rt;
    this.weights = this.core.weights;
  }

  /**
   * Log-probs (and entropies) of packed rows. With `keep`, the activations stay for
   * backward(ctx, …) — release them with release(ctx) if no backward comes.
   */
  forward(
    P: EngineParams,
    rows: readonly ArrayLike<number>[],
    opts: { withEntropy?: boolean; keep?: boolean } = {},
  ): ForwardResult {
    const started = performance.now();
    const result = runForward(this.core, P, rows, opts);
    this.stats.forwardMs += performance.now() - started;
    this.stats.forwardTokens += result.packedTokens;
    return result;
  }

  /**
   * Gradients of Σ gLogp·logp + Σ gEnt·entropy with respect to the parameters named in
   * `gradNames` (HF names; LoRA matrices as loraGradName(weight, 'A' | 'B')). Releases ctx.
   */
  backward(
    ctx: ForwardContext,
    gLogp: readonly ArrayLike<number>[],
    gEnt: readonly ArrayLike<number>[] | null,
    gradNames: ReadonlySet<string>,
  ): Map<string, Float32Array> {
    const started = performance.now();
    const N = ctx.plan.N;
    try {
      return runBackward(this.core, ctx, gLogp, gEnt, gradNames);
    } finally {
      this.stats.backwardMs += performance.now() - started;
      this.stats.backwardTokens += N;
    }
  }

  /** Frees what a forward kept (idempotent). */
  release(ctx: ForwardContext): void {
    releaseForward(this.core, ctx);
  }

  /** Bytes of activations a forward with `keep` holds for rows of these lengths sharing `prefix` tokens. */
  activationBytes(lengths: readonly number[], prefix: number): number {
    return engineActivationBytes(
      this.config,
      lengths.reduce((s, L) => s + L - prefix, prefix),
    );
  }

  createSlot(capacity: number): KvSlot {
    return createSlot(this.core, capacity);
  }

  freeSlot(slot: KvSlot): void {
    freeSlot(this.core, slot);
  }

  /** Bytes one slot of `capacity` positions holds. */
  slotBytes(capacity: number): number {
    return engineSlotBytes(this.config, capacity);
  }

  /** Copies the first `length` cached positions of `src` into `dst` (dst.cap ≥ length). */
  copySlot(src: KvSlot, dst: KvSlot, length: number): void {
    copySlot(this.core, src, dst, length);
  }

  /**
   * Appends `tokens` to each slot (positions continue from the slot's length), running the
   * decoder over all new tokens together, and returns the next-token logits of each slot
   * after its last new token: [items, V], a copy.
   */
  extend(P: EngineParams, items: readonly ExtendItem[]): Float32Array {
    return this.timeExtend(items, () => runExtend(this.core, P, items));
  }

  /**
   * extend, then each slot's next token drawn where its logits are (decode.ts runExtendSampled):
   * [items, SAMPLE_OUT] float64, read by sampling.ts readDrawn.
   */
  extendSampled(P: EngineParams, items: readonly ExtendItem[], request: SampleRequest): Float64Array {
    return this.timeExtend(items, () => runExtendSampled(this.core, P, items, request));
  }

  /** Runs an extend call, adding its time and tokens to the decode or the prefill stats. */
  private timeExtend<T>(items: readonly ExtendItem[], run: () => T): T {
    const started = performance.now();
    const isDecode = items.every((it) => it.tokens.length === 1);
    const tokens = items.reduce((n, it) => n + it.tokens.length, 0);
    try {
      return run();
    } finally {
      this.stats[isDecode ? 'decodeMs' : 'prefillMs'] += performance.now() - started;
      this.stats[isDecode ? 'decodeTokens' : 'prefillTokens'] += tokens;
    }
  }
}

const engines = new Map<string, Qwen3Engine>();

/** The engine of a config (one per distinct config, on the shared runtime). */
export function getQwen3Engine(config: Qwen3Config): Qwen3Engine {
  const key = JSON.stringify(config);
  let e = engines.get(key);
  if (!e) {
    e = new Qwen3Engine(config);
    engines.set(key, e);
  }
  return e;
}
