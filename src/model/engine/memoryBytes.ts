/**
 * What the engine holds, in bytes, known from a config alone (the trainer's memory estimate
 * and the bridge's micro-batch planning read these before any weight exists).
 */
import type { Qwen3Config } from '../qwen3/config';

const F = 4;

/** Bytes of kept activations of a forward over `tokens` packed positions (per layer: 4·H + 3·QD + 4·KD + 3·I + nH + nKv + 2 floats). */
export function engineActivationBytes(c: Qwen3Config, tokens: number): number {
  const H = c.hidden_size;
  const QD = c.num_attention_heads * c.head_dim;
  const KD = c.num_key_value_heads * c.head_dim;
  const perLayer =
    4 * H + 3 * QD + 4 * KD + 3 * c.intermediate_size + c.num_attention_heads + c.num_key_value_heads + 2;
  return F * tokens * (perLayer * c.num_hidden_layers + 2 * H + 4);
}

/** Bytes of one KV-cache slot of `capacity` positions: keys and values, [nKv·D] per position and layer. */
export function engineSlotBytes(c: Qwen3Config, capacity: number): number {
  return 2 * c.num_key_value_heads * c.head_dim * capacity * c.num_hidden_layers * F;
}

/** Bytes of weights the engine keeps resident (a few versions, each with its transposes) before it evicts. */
export function engineWeightCacheBytes(c: Qwen3Config): number {
  return 6 * 4 * countEngineParams(c) + (64 << 20);
}

/** Parameters of a Qwen3 of this config (the engine's size limit reads it). */
export function countEngineParams(c: Qwen3Config): number {
  const H = c.hidden_size;
  const layer =
    2 * H +
    2 * c.head_dim +
    H * c.num_attention_heads * c.head_dim * 2 +
    H * c.num_key_value_heads * c.head_dim * 2 +
    3 * H * c.intermediate_size;
  return c.vocab_size * H * (c.tie_word_embeddings ? 1 : 2) + c.num_hidden_layers * layer + H;
}
