/**
 * The small GQA Qwen3 the engine's thread and decode tests share (threads.test.ts,
 * decodeSlices.test.ts, sampler.test.ts): 2 layers, 4 query heads over 2 KV heads of 16, a
 * 301-id vocabulary (not a multiple of 8, so gemm's tail columns run), 1,024 positions.
 */
import type { Qwen3Config } from '../qwen3/config';

export const SMALL_GQA_CONFIG: Qwen3Config = {
  vocab_size: 301,
  hidden_size: 64,
  intermediate_size: 96,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 1024,
  initializer_range: 0.1,
};
