/**
 * Global-norm gradient clipping, as `torch.nn.utils.clip_grad_norm_` (norm_type 2):
 *
 *   ‖g‖ = √(Σ_params Σ_i g_i²)
 *   coef = min(1, maxNorm / (‖g‖ + 1e-6))
 *   g ← coef · g                     (for every gradient, together)
 *
 * The pre-clip norm ‖g‖ is returned as a scalar tensor: it is the `grad_norm` metric, and
 * stays on the device so the training step can read it back together with the loss.
 *
 * Simplifications: L2 norm only; like PyTorch's default (`error_if_nonfinite=False`), a
 * non-finite norm is not an error here: the clipped gradients become NaN and the caller
 * sees a non-finite `grad_norm`.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { TensorMap } from './types';

/** PyTorch's 1e-6 guard in maxNorm / (norm + 1e-6). */
const NORM_GUARD = 1e-6;

/**
 * The global L2 norm of all gradients, √(Σ g²), as a scalar tensor.
 * An empty map has norm 0.
 */
export function computeGlobalNorm(grads: TensorMap): tf.Scalar {
  return tf.tidy(() => {
    let sumSquares: tf.Scalar = tf.scalar(0);
    for (const grad of grads.values()) sumSquares = tf.add(sumSquares, tf.sum(tf.square(grad)));
    return tf.sqrt(sumSquares);
  });
}

/**
 * Scales all gradients so that their global norm is at most `maxNorm`, as
 * clip_grad_norm_ does. `maxNorm` = Infinity skips the scaling (the norm is still computed).
 * Returns new tensors (the caller disposes them and the inputs) and the pre-clip norm.
 */
export function clipByGlobalNorm(grads: TensorMap, maxNorm: number): { grads: TensorMap; norm: tf.Scalar } {
  if (typeof maxNorm !== 'number' || Number.isNaN(maxNorm) || maxNorm <= 0) {
    throw new Error(`clipByGlobalNorm: maxNorm must be a positive number (Infinity to disable), got ${maxNorm}`);
  }
  const norm = computeGlobalNorm(grads);
  if (maxNorm === Infinity) {
    const copies: TensorMap = new Map();
    for (const [name, grad] of grads) copies.set(name, tf.clone(grad));
    return { grads: copies, norm };
  }
  const names = [...grads.keys()];
  // tf.tidy keeps tensors returned in arrays, not in Maps: return an array, then rebuild the Map.
  const scaled = tf.tidy(() => {
    // coef = min(1, maxNorm / (norm + 1e-6)), a scalar on the device (no read-back).
    const coef = tf.minimum(tf.div(maxNorm, tf.add(norm, NORM_GUARD)), 1);
    return names.map((name) => tf.mul(grads.get(name)!, coef));
  });
  return { grads: new Map(names.map((name, i) => [name, scaled[i]])), norm };
}
