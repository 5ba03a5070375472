/**
 * What every part of the engine reads: the runtime (memory, kernels, threads), the model's
 * dimensions, the weight cache and the RoPE tables. One per Qwen3Engine; the parts are
 * functions of it (plan, layer, attention, LM head, decode), in the manner of llm.c's
 * `GPT2` struct passed to each `_forward`/`_backward`.
 */
import type { Qwen3Config } from '../qwen3/config';
import { engineWeightCacheBytes } from './memoryBytes';
import { RopeTables } from './rope';
import type { EngineRuntime } from './runtime';
import { WeightCache } from './weights';

/** Bytes per float: pointers are byte offsets, sizes are in floats. */
export const F = 4;

export interface EngineCore {
  readonly rt: EngineRuntime;
  readonly config: Qwen3Config;
  readonly weights: WeightCache;
  readonly rope: RopeTables;
  /** hidden_size */
  readonly H: number;
  /** head_dim */
  readonly D: number;
  /** Query heads and key-value heads. */
  readonly nH: number;
  readonly nKv: number;
  /** Query heads per key-value head (GQA). */
  readonly group: number;
  /** intermediate_size */
  readonly I: number;
  /** vocab_size */
  readonly V: number;
  /** Row widths of q [N, nH·D] and of k, v [N, nKv·D]. */
  readonly QD: number;
  readonly KD: number;
  /** 1/√D */
  readonly scale: number;
  /** LM-head items per z = h Wᵀ block (about 4 MiB of logits). */
  readonly headChunk: number;
}

export function createEngineCore(config: Qwen3Config, rt: EngineRuntime): EngineCore {
  const c = config;
  if (c.head_dim % 8 !== 0) throw new Error(`engine: head_dim ${c.head_dim} must be a multiple of 8`);
  if (c.hidden_size % 4 !== 0 || c.intermediate_size % 4 !== 0) {
    throw new Error('engine: hidden_size and intermediate_size must be multiples of 4');
  }
  const D = c.head_dim;
  const nH = c.num_attention_heads;
  const nKv = c.num_key_value_heads;
  const V = c.vocab_size;
  const weights = new WeightCache(rt, engineWeightCacheBytes(c));
  const rope = new RopeTables(rt, D, c.rope_theta, c.max_position_embeddings);
  return {
    rt,
    config,
    weights,
    rope,
    H: c.hidden_size,
    D,
    nH,
    nKv,
    group: nH / nKv,
    I: c.intermediate_size,
    V,
    QD: nH * D,
    KD: nKv * D,
    scale: 1 / Math.sqrt(D),
    headChunk: Math.max(4, Math.floor((1 << 20) / V / 4) * 4),
  };
}
