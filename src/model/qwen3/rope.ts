/**
 * Rotary position embeddings as in Hugging Face `modeling_qwen3.py`
 * (Qwen3RotaryEmbedding, rotate_half, apply_rotary_pos_emb; Su et al. 2021, RoFormer
 * Eq. 34 in the "rotate-half" layout): the head dimension is split in two halves
 * x = [x₁, x₂] and
 *
 *   x' = x · cos(θ) + rotate_half(x) · sin(θ),  rotate_half(x) = [−x₂, x₁],
 *   θ_{p,j} = p · rope_theta^(−2j/D) for j < D/2, repeated for the second half.
 *
 * Positions are given per row (a [B, T] tensor), so left-padded rows can start at 0.
 * Precision: the angles' cos/sin are computed on the host in float64 for positions
 * 0..P−1 and gathered by position on the device — WGSL's sin/cos (SwiftShader) are
 * only accurate to ~1e-4 absolute, which showed up as 3e-4 relative logit error on
 * WebGPU. Simplification: no rope scaling (Qwen3 uses none).
 */
import * as tf from './tf';

/** inv_freq_j = 1 / theta^(2j / D), j = 0..D/2-1 (float32, as HF computes it). */
export function computeRopeInvFreq(headDim: number, ropeTheta: number): Float32Array {
  const half = headDim / 2;
  const inv = new Float32Array(half);
  for (let j = 0; j < half; j++) inv[j] = 1 / Math.pow(ropeTheta, (2 * j) / headDim);
  return inv;
}

export interface RopeTables {
  /** [B, T, 1, D] */
  cos: tf.Tensor4D;
  /** [B, T, 1, D] */
  sin: tf.Tensor4D;
}

/**
 * Host tables cos/sin(p · inv_freq) for p = 0..positionCount−1 in the rotate-half layout
 * (each half repeated): two Float32Array of positionCount · D, computed in float64.
 */
export function computeHostRopeTables(
  positionCount: number,
  headDim: number,
  ropeTheta: number,
): { cos: Float32Array; sin: Float32Array } {
  const inv = computeRopeInvFreq(headDim, ropeTheta);
  const half = headDim / 2;
  const cos = new Float32Array(positionCount * headDim);
  const sin = new Float32Array(positionCount * headDim);
  for (let p = 0; p < positionCount; p++) {
    for (let j = 0; j < half; j++) {
      const angle = p * inv[j];
      const c = Math.cos(angle);
      const s = Math.sin(angle);
      cos[p * headDim + j] = c;
      cos[p * headDim + half + j] = c;
      sin[p * headDim + j] = s;
      sin[p * headDim + half + j] = s;
    }
  }
  return { cos, sin };
}

/**
 * cos/sin tables for integer positions [B, T] (float32 or int32 values) that all lie in
 * [0, positionCount) → [B, T, 1, D] each, by gathering rows of the host tables.
 */
export function computeRopeTables(
  positions: tf.Tensor2D,
  headDim: number,
  ropeTheta: number,
  positionCount: number,
): RopeTables {
  return tf.tidy(() => {
    const [B, T] = positions.shape;
    const host = computeHostRopeTables(positionCount, headDim, ropeTheta);
    const ids = positions.toInt().reshape([-1]); // [B·T]
    const cos = tf.gather(tf.tensor2d(host.cos, [positionCount, headDim]), ids).reshape([B, T, 1, headDim]); // [B, T, 1, D]
    const sin = tf.gather(tf.tensor2d(host.sin, [positionCount, headDim]), ids).reshape([B, T, 1, headDim]);
    return { cos: cos as tf.Tensor4D, sin: sin as tf.Tensor4D };
  });
}

/** cos/sin tables for positions known on the host (one per row: decoding) → [B, 1, 1, D] each. */
export function computeRopeTablesForHostPositions(
  positions: ArrayLike<number>,
  headDim: number,
  ropeTheta: number,
): RopeTables {
  const B = positions.length;
  const inv = computeRopeInvFreq(headDim, ropeTheta);
  const half = headDim / 2;
  const cos = new Float32Array(B * headDim);
  const sin = new Float32Array(B * headDim);
  for (let b = 0; b < B; b++) {
    for (let j = 0; j < half; j++) {
      const angle = positions[b] * inv[j];
      cos[b * headDim + j] = cos[b * headDim + half + j] = Math.cos(angle);
      sin[b * headDim + j] = sin[b * headDim + half + j] = Math.sin(angle);
    }
  }
  return { cos: tf.tensor4d(cos, [B, 1, 1, headDim]), sin: tf.tensor4d(sin, [B, 1, 1, headDim]) };
}

/** rotate_half(x) = [−x₂, x₁] over the last dimension. x [..., D]. */
export function rotateHalf(x: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    const d = x.shape[x.shape.length - 1];
    const [x1, x2] = tf.split(x, [d / 2, d / 2], -1);
    return tf.concat([x2.neg(), x1], -1);
  });
}

/** Applies RoPE to x [B, T, nHeads, D] with tables [B, T, 1, D]. */
export function applyRope(x: tf.Tensor4D, rope: RopeTables): tf.Tensor4D {
  return tf.tidy(() => x.mul(rope.cos).add(rotateHalf(x).mul(rope.sin)) as tf.Tensor4D);
}
