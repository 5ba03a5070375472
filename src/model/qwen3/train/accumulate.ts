/**
 * Gradient accumulation over micro-batches: one backward pass per micro-batch, gradients
 * summed into one buffer per parameter, so peak memory is one micro-batch's activations
 * plus one gradient copy, whatever the batch size.
 *
 *   reduction 'mean':  L = (1/n) Σ_i L_i,  ∇L = (1/n) Σ_i ∇L_i
 *   reduction 'sum':   L = Σ_i L_i,        ∇L = Σ_i ∇L_i
 *
 *
 * Simplification: a parameter with no path to the loss in a micro-batch contributes zero
 * there; one with no path in any micro-batch is left out of the result (the optimiser then
 * skips it, as PyTorch skips `p.grad is None`).
 *
 * Unequal micro-batches and global normalisers: docs/model.md.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { ParamMap, TensorMap } from './types';
import { runEngineGradients } from '../engineSession';

export type MicroReduction = 'mean' | 'sum';

export interface AccumulatedGradients {
  /** Gradient per parameter name (caller disposes). */
  grads: TensorMap;
  /** The reduced loss as a scalar tensor (caller disposes). */
  loss: tf.Scalar;
}

/**
 * Runs `lossFn(i)` for i = 0 … nMicro − 1 under the gradient tape and accumulates the
 * gradients of `params`. `lossFn` must return a scalar built from the params; every
 * intermediate tensor it makes is freed after its backward pass.
 */
export function accumulateGradients(
  params: ParamMap,
  lossFn: (microBatchIndex: number) => tf.Scalar,
  nMicro: number,
  reduction: MicroReduction = 'mean',
): AccumulatedGradients {
  if (!Number.isInteger(nMicro) || nMicro < 1) {
    throw new Error(`accumulateGradients: nMicro must be an integer ≥ 1, got ${nMicro}`);
  }
  if (reduction !== 'mean' && reduction !== 'sum') {
    throw new Error(`accumulateGradients: reduction must be 'mean' or 'sum', got ${JSON.stringify(reduction)}`);
  }
  if (params.size === 0) throw new Error('accumulateGradients: the params map is empty: nothing to differentiate');
  const names = [...params.keys()];
  const vars = names.map((name) => {
    const v = params.get(name)!;
    if (!(v instanceof tf.Variable)) throw new Error(`accumulateGradients: param "${name}" is not a tf.Variable`);
    if (!v.trainable) {
      throw new Error(`accumulateGradients: param "${name}" is a non-trainable tf.Variable; pass only trainable ones`);
    }
    return v;
  });
  const weight = reduction === 'mean' ? 1 / nMicro : 1;

  // acc[k] is the running weighted sum of gradients for names[k] (null until one arrives).
  let acc: (tf.Tensor | null)[] = names.map(() => null);
  let lossSum: tf.Scalar = tf.scalar(0);
  try {
    for (let i = 0; i < nMicro; i++) {
      const previous = acc;
      const previousLoss = lossSum;
      const [nextLoss, ...next] = tf.tidy(() => {
        // One engine session per micro-batch: engine forwards in lossFn are differentiable, and
        // those whose output did not reach the loss are freed when it ends.
        const { value, grads } = runEngineGradients(() => computeMicroGradients(() => lossFn(i), vars, i));
        const summed = vars.map((v, k) => {
          const g = grads[v.name];
          if (g == null) return previous[k];
          const scaled = weight === 1 ? g : tf.mul(g, weight);
          return previous[k] === null ? scaled : tf.add(previous[k]!, scaled);
        });
        // tf.tidy keeps the returned tensors; a null (no gradient yet) passes through.
        return [tf.add(previousLoss, weight === 1 ? value : tf.mul(value, weight)), ...summed] as tf.TensorContainer;
      }) as [tf.Scalar, ...(tf.Tensor | null)[]];
      for (let k = 0; k < previous.length; k++) {
        if (previous[k] !== null && previous[k] !== next[k]) previous[k]!.dispose();
      }
      previousLoss.dispose();
      acc = next;
      lossSum = nextLoss;
    }
  } catch (error) {
    // Free what was accumulated so far; the error (e.g. a bad lossFn) propagates.
    for (const t of acc) t?.dispose();
    lossSum.dispose();
    throw error;
  }
  const grads: TensorMap = new Map();
  names.forEach((name, k) => {
    if (acc[k] !== null) grads.set(name, acc[k]!);
  });
  if (grads.size === 0) {
    lossSum.dispose();
    throw new Error('accumulateGradients: the loss does not depend on any of the params (no gradient reached them)');
  }
  return { grads, loss: lossSum };
}

/**
 * tf.variableGrads of one micro-batch loss, with a clear error for a loss that is not a
 * scalar tensor. The check happens after the backward pass on purpose: throwing inside the
 * taped function would leave the tape's saved activations allocated (tfjs frees them only
 * when backprop runs), so a bad loss is first reduced to a scalar and reported afterwards.
 * (A lossFn that itself throws mid-forward can still strand those tensors: a tfjs limit.)
 */
function computeMicroGradients(
  computeLoss: () => tf.Scalar,
  vars: tf.Variable[],
  microBatchIndex: number,
): { value: tf.Scalar; grads: tf.NamedTensorMap } {
  let problem: string | null = null;
  let result: { value: tf.Scalar; grads: tf.NamedTensorMap } | null = null;
  try {
    result = tf.variableGrads(() => {
      const loss: unknown = computeLoss();
      if (!(loss instanceof tf.Tensor)) {
        problem = loss === null ? 'null' : typeof loss;
        return tf.scalar(0);
      }
      if (loss.rank !== 0) {
        problem = `a tensor of shape [${loss.shape}]`;
        return tf.sum(loss) as tf.Scalar;
      }
      return loss as tf.Scalar;
    }, vars);
  } catch (error) {
    if (problem === null) throw error;
  }
  if (problem !== null) {
    throw new Error(`accumulateGradients: lossFn(${microBatchIndex}) must return a scalar tensor, got ${problem}`);
  }
  return result!;
}
