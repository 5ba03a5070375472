/**
 * Tiny models for the training-machinery tests, built from Variables in the same
 * `Map<name, Variable>` form as the Qwen3 params (linear weights [out, in]), so the tests
 * do not depend on the Qwen3 model. Test support only.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { ParamMap } from './types';

/** y = x Wᵀ + b for W [out, in], b [out]; x [N, in] → [N, out]. */
export function applyDense(x: tf.Tensor2D, params: ParamMap, prefix: string): tf.Tensor2D {
  const w = params.get(`${prefix}.weight`)!;
  const b = params.get(`${prefix}.bias`);
  const y: tf.Tensor2D = tf.matMul(x, w as tf.Tensor2D, false, true); // [N, out]
  return b === undefined ? y : (tf.add(y, b) as tf.Tensor2D);
}

/** Deterministic pseudo-random values in (−1, 1) (a small LCG; no tfjs RNG involved). */
export function makeValues(count: number, seed: number): number[] {
  let state = seed >>> 0;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out.push((state / 2 ** 32) * 2 - 1);
  }
  return out;
}

/** A 2-layer MLP in → hidden → 1 with tanh, params `fc1.weight`, `fc1.bias`, `fc2.weight`, `fc2.bias`. */
export function createMlp(inDim: number, hiddenDim: number, seed: number): ParamMap {
  return new Map<string, tf.Variable>([
    ['fc1.weight', tf.variable(tf.tensor2d(makeValues(hiddenDim * inDim, seed), [hiddenDim, inDim]))],
    ['fc1.bias', tf.variable(tf.zeros([hiddenDim]))],
    ['fc2.weight', tf.variable(tf.tensor2d(makeValues(hiddenDim, seed + 1), [1, hiddenDim]))],
    ['fc2.bias', tf.variable(tf.zeros([1]))],
  ]);
}

/** MLP forward: x [N, in] → [N, 1]. */
export function applyMlp(x: tf.Tensor2D, params: ParamMap): tf.Tensor2D {
  return applyDense(tf.tanh(applyDense(x, params, 'fc1')), params, 'fc2');
}

/** Mean squared error of the MLP on rows [start, end) of (x, y): a scalar. */
export function computeMlpLoss(
  params: ParamMap,
  x: tf.Tensor2D,
  y: tf.Tensor2D,
  start: number,
  end: number,
): tf.Scalar {
  const xs = tf.slice(x, [start, 0], [end - start, -1]);
  const ys = tf.slice(y, [start, 0], [end - start, -1]);
  return tf.mean(tf.square(tf.sub(applyMlp(xs, params), ys)));
}
