/**
 * Qwen3 self-attention as in Hugging Face `modeling_qwen3.py` (Qwen3Attention with
 * eager_attention_forward): q/k/v projections, per-head RMSNorm on queries and keys
 * (`q_norm`, `k_norm`, over head_dim) BEFORE RoPE, rotate-half RoPE, grouped-query
 * attention (Ainslie et al. 2023: query head h reads KV head ⌊h / (nH/nKv)⌋, as
 * `repeat_kv`), softmax(q kᵀ · head_dim^-½ + mask) v, then o_proj.
 *
 * GQA is computed without repeating K/V: queries are regrouped to
 * [B, nKv, group·T, D] so one batched matmul serves the whole group.
 * Masks are additive: 0 where allowed, MASK_NEG where not (a finite value, so a fully
 * masked row — a padding query — gives a uniform softmax instead of NaN).
 * Simplifications: no dropout, no sliding window, no attention bias.
 */
import * as tf from './tf';
import type { Qwen3Config } from './config';
import { applyLinear, getParam, type LoraMap, type ParamMap } from './linear';
import { applyBatchMatMul } from './matmul';
import { applyRmsNorm } from './layers';
import { applyRope, type RopeTables } from './rope';

export const MASK_NEG = -1e9;

/**
 * Additive causal + key-padding mask for a full sequence: attentionMask [B, T]
 * (1 = token, 0 = padding) → [B, 1, T, T], 0 where key j ≤ query i and key j is a token.
 */
export function computeCausalMaskBias(attentionMask: tf.Tensor2D): tf.Tensor4D {
  return tf.tidy(() => {
    const [B, T] = attentionMask.shape;
    const causal = tf.linalg.bandPart(tf.ones([T, T]), -1, 0).reshape([1, 1, T, T]); // 1 where j ≤ i
    const keyValid = attentionMask.toFloat().reshape([B, 1, 1, T]);
    const allowed = causal.mul(keyValid); // [B, 1, T, T]
    return tf.sub(1, allowed).mul(MASK_NEG) as tf.Tensor4D;
  });
}

/** Position ids from the mask as HF generate does: cumsum(mask) − 1, and 1 at padding. [B, T] */
export function computePositionIds(attentionMask: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const m = attentionMask.toInt();
    const pos = tf.cumsum(m, 1).sub(1);
    return tf.where(m.equal(0), tf.onesLike(pos), pos).toFloat() as tf.Tensor2D;
  });
}

/**
 * softmax(q kᵀ · scale + maskBias) v with GQA.
 * q [B, nH, T, D], k/v [B, nKv, S, D], maskBias broadcastable to [B, 1, T, S] → [B, nH, T, D].
 */
export function computeGqaAttention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, maskBias: tf.Tensor): tf.Tensor4D {
  return tf.tidy(() => {
    const [B, nH, T, D] = q.shape;
    const nKv = k.shape[1];
    const S = k.shape[2];
    const group = nH / nKv;
    const qg = q.reshape([B, nKv, group * T, D]); // heads h = kv·group + g, so rows are (g, t)
    const scores = applyBatchMatMul(qg as tf.Tensor4D, k, true).mul(1 / Math.sqrt(D)); // [B, nKv, group·T, S]
    const masked = scores.reshape([B, nKv, group, T, S]).add(maskBias.reshape([B, 1, 1, T, S]) as tf.Tensor);
    const probs = tf.softmax(masked.reshape([B, nKv, group * T, S])); // [B, nKv, group·T, S]
    return applyBatchMatMul(probs as tf.Tensor4D, v, false).reshape([B, nH, T, D]) as tf.Tensor4D; // [B, nH, T, D]
  });
}

/** Projects x [B, T, H] to q [B, nH, T, D] and k, v [B, nKv, T, D], with q/k norm and RoPE applied. */
export function projectQkv(
  x: tf.Tensor3D,
  layer: number,
  config: Qwen3Config,
  params: ParamMap,
  rope: RopeTables,
  lora?: LoraMap,
): { q: tf.Tensor4D; k: tf.Tensor4D; v: tf.Tensor4D } {
  return tf.tidy(() => {
    const [B, T] = x.shape;
    const D = config.head_dim;
    const nH = config.num_attention_heads;
    const nKv = config.num_key_value_heads;
    const p = `model.layers.${layer}.self_attn`;
    const eps = config.rms_norm_eps;
    const q = applyLinear(x, `${p}.q_proj.weight`, params, lora).reshape([B, T, nH, D]);
    const k = applyLinear(x, `${p}.k_proj.weight`, params, lora).reshape([B, T, nKv, D]);
    const v = applyLinear(x, `${p}.v_proj.weight`, params, lora).reshape([B, T, nKv, D]);
    const qn = applyRope(applyRmsNorm(q, getParam(params, `${p}.q_norm.weight`), eps) as tf.Tensor4D, rope);
    const kn = applyRope(applyRmsNorm(k, getParam(params, `${p}.k_norm.weight`), eps) as tf.Tensor4D, rope);
    return {
      q: qn.transpose([0, 2, 1, 3]) as tf.Tensor4D, // [B, nH, T, D]
      k: kn.transpose([0, 2, 1, 3]) as tf.Tensor4D, // [B, nKv, T, D]
      v: v.transpose([0, 2, 1, 3]) as tf.Tensor4D, // [B, nKv, T, D]
    };
  });
}

/** o_proj of attention output [B, nH, T, D] → [B, T, H]. */
export function projectAttentionOutput(
  attn: tf.Tensor4D,
  layer: number,
  params: ParamMap,
  lora?: LoraMap,
): tf.Tensor3D {
  return tf.tidy(() => {
    const [B, nH, T, D] = attn.shape;
    const merged = attn.transpose([0, 2, 1, 3]).reshape([B, T, nH * D]); // [B, T, nH·D]
    return applyLinear(merged, `model.layers.${layer}.self_attn.o_proj.weight`, params, lora) as tf.Tensor3D;
  });
}
