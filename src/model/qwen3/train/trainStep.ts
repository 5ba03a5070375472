/**
 * One optimiser step: accumulate gradients over micro-batches, clip them to a global norm,
 * apply AdamW, and read back the loss and the pre-clip gradient norm once.
 *
 *   g = Σ_i w_i ∇L_i               (accumulate.ts; w_i = 1/n for 'mean', 1 for 'sum')
 *   g ← min(1, c / (‖g‖ + 1e-6)) g  (clip.ts, torch.nn.utils.clip_grad_norm_)
 *   θ ← AdamW(θ, g, lr)            (adamw.ts, torch.optim.AdamW)
 * Memory discipline: every intermediate lives in a tf.tidy or is disposed
 * here; the only read-back is one `await data()` of a 2-element tensor [loss, gradNorm]. The
 * tensor count is the same before and after a step (leak test in trainStep.test.ts).
 *
 * Simplification: the update is applied even when the gradient norm is not finite (as
 * PyTorch does without a GradScaler); the caller sees `gradNorm` NaN/Infinity and may stop
 * or restore a snapshot.
 */
import * as tf from '@tensorflow/tfjs-core';
import { accumulateGradients, type MicroReduction } from './accumulate';
import type { AdamW } from './adamw';
import { clipByGlobalNorm } from './clip';
import type { ParamMap } from './types';

export interface TrainStepArgs {
  /** The trainable Variables, by name (for LoRA: only the A and B matrices). */
  params: ParamMap;
  /** Loss of micro-batch i, a scalar built from `params` (i = 0 … nMicro − 1). */
  lossFn: (microBatchIndex: number) => tf.Scalar;
  /** Number of micro-batches accumulated into this step (≥ 1). */
  nMicro: number;
  /** The optimiser over (at least) these params. */
  optimizer: AdamW;
  /** Global-norm clip threshold c; Infinity disables clipping. */
  maxGradNorm: number;
  /** Learning rate of this step (from lrSchedule.computeLearningRate). */
  lr: number;
  /** How micro-batch losses combine; default 'mean' (see accumulate.ts). */
  microReduction?: MicroReduction;
}

export interface TrainStepResult {
  /** The reduced loss before the update. */
  loss: number;
  /** The global gradient norm before clipping (the `grad_norm` metric). */
  gradNorm: number;
}

/** Runs one optimiser step over `nMicro` micro-batches and returns the loss and gradient norm. */
export async function trainStep(args: TrainStepArgs): Promise<TrainStepResult> {
  const { params, lossFn, nMicro, optimizer, maxGradNorm, lr } = args;
  // Validate the numbers before the (costly) forward and backward passes.
  if (typeof lr !== 'number' || !Number.isFinite(lr) || lr < 0) {
    throw new Error(`trainStep: lr must be a finite number ≥ 0, got ${lr}`);
  }
  if (typeof maxGradNorm !== 'number' || Number.isNaN(maxGradNorm) || maxGradNorm <= 0) {
    throw new Error(
      `trainStep: maxGradNorm must be a positive number (Infinity to disable clipping), got ${maxGradNorm}`,
    );
  }
  const managed = new Set(optimizer.paramNames);
  for (const name of params.keys()) {
    if (!managed.has(name)) {
      throw new Error(
        `trainStep: param "${name}" is not managed by the optimizer; build the AdamW over the same params`,
      );
    }
  }
  const { grads, loss } = accumulateGradients(params, lossFn, nMicro, args.microReduction ?? 'mean');
  let packed: tf.Tensor1D;
  try {
    const clipped = clipByGlobalNorm(grads, maxGradNorm);
    try {
      optimizer.applyGradients(clipped.grads, lr);
      packed = tf.tidy(() => tf.stack([loss, clipped.norm]) as tf.Tensor1D); // [2]: loss, gradNorm
    } finally {
      for (const g of clipped.grads.values()) g.dispose();
      clipped.norm.dispose();
    }
  } finally {
    for (const g of grads.values()) g.dispose();
    loss.dispose();
  }
  const values = await packed.data();
  packed.dispose();
  return { loss: values[0], gradNorm: values[1] };
}
