/**
 * The warm start's supervised fine-tuning: full-trace imitation of the assistant turns of
 * expert episodes (the `sft` recipe's L_SFT with every policy-written token kept, PACT Eq.
 * sft-mask with m(s) = 1 on reasoning, tool calls, answers and control tokens):
 *
 *   L = − Σ_{b,t} m[b,t] · log π_θ(x[b,t+1] | x[b,≤t]) / Σ_{b,t} m[b,t]
 *
 * a token mean over the whole batch (tfLosses computeMaskedSftLoss 'batch-token-mean'; the
 * trainer's L_SFT is the same loss per row). One AdamW step per batch (src/model/qwen3/train
 * trainStep), warm-up + cosine learning rate; batches drawn with a seeded RNG.
 *
 * Model shape: the qwen3-nano preset with vocab_size = the pruned vocabulary's size
 * (`createWarmStartConfig`), so every id the policy can emit decodes. No validation-loss
 * early stop.
 */
import * as tf from '../../model/qwen3/tf';
import { createRng } from '../../core/rng';
import { packTokenRows } from '../../model/qwen3/batch';
import type { Qwen3Model } from '../../model/qwen3/index';
import type { Qwen3Config } from '../../model/qwen3/config';
import { AdamW, computeLearningRate, isNormOrBias, trainStep, type LrSchedule } from '../../model/qwen3/train/index';
import { computeMaskedSftLoss } from '../train/tfLosses';
import type { SftTargetRow } from './sftRows';

export interface WarmStartOptions {
  seed: number;
  /** Training stage (1 = from random init; k > 1 continues stage k−1's weights with its own batch stream). */
  stage: number;
  /** Optimiser steps (one batch each). */
  steps: number;
  batchSize: number;
  /** Episodes are cut to this many tokens. */
  maxSeqLen: number;
  lrPeak: number;
  warmupSteps: number;
  /** Cosine floor as a fraction of lrPeak. */
  minLrRatio: number;
  maxGradNorm: number;
  weightDecay: number;
}

export const DEFAULT_WARM_START_OPTIONS: Readonly<WarmStartOptions> = {
  seed: 1,
  stage: 1,
  steps: 300,
  batchSize: 1,
  maxSeqLen: 640,
  lrPeak: 4e-3,
  warmupSteps: 10,
  minLrRatio: 0.2,
  maxGradNorm: 1,
  weightDecay: 0.01,
};

/** The qwen3-nano shape with vocab_size = keptCount (one embedding row per kept token). */
export function createWarmStartConfig(keptCount: number, preset: Qwen3Config): Qwen3Config {
  if (!Number.isInteger(keptCount) || keptCount < 1) {
    throw new Error(`createWarmStartConfig: keptCount must be a positive integer, got ${keptCount}`);
  }
  if (keptCount > preset.vocab_size) {
    const kept = `the pruned vocabulary keeps ${keptCount} tokens`;
    throw new Error(`createWarmStartConfig: ${kept}, over the preset's vocab_size ${preset.vocab_size}`);
  }
  return { ...preset, vocab_size: keptCount };
}

/**
 * The SFT loss of a batch of rows (right-padded): −Σ m·logp / Σ m over the policy-written
 * targets of all rows together. Returns a scalar built from the model's variables (differentiable).
 */
export function computeSftLoss(model: Qwen3Model, rows: readonly SftTargetRow[]): tf.Scalar {
  const B = rows.length;
  const T = Math.max(...rows.map((r) => r.ids.length));
  const m = new Float32Array(B * (T - 1));
  rows.forEach((row, b) => row.targetMask.forEach((v, t) => (m[b * (T - 1) + t] = v)));
  return tf.tidy(() => {
    const { inputIds, attentionMask } = packTokenRows(
      rows.map((r) => r.ids),
      { length: T },
    ); // [B, T]
    const lossMask = tf.tensor2d(m, [B, T - 1]); // [B, T−1], aligned with the targets ids[:, 1:]
    const { logprobs } = model.computeTokenLogprobs(inputIds, attentionMask); // [B, T−1]
    return computeMaskedSftLoss(logprobs, lossMask, 'batch-token-mean').loss;
  });
}

export interface SftProgress {
  step: number;
  loss: number;
  gradNorm: number;
  lr: number;
  seconds: number;
}

/**
 * Runs `options.steps` AdamW steps of SFT on `rows`, drawing batchSize rows per step
 * with a seeded RNG (`${seed}/warm-start-batches`). Returns the per-step losses.
 */
export async function runWarmStartSft(
  model: Qwen3Model,
  rows: readonly SftTargetRow[],
  options: WarmStartOptions,
  onStep?: (p: SftProgress) => void,
): Promise<number[]> {
  if (rows.length === 0) throw new Error('runWarmStartSft: no training rows');
  if (!Number.isInteger(options.steps) || options.steps < 1) {
    throw new Error(`runWarmStartSft: steps must be a positive integer, got ${options.steps}`);
  }
  if (!Number.isInteger(options.batchSize) || options.batchSize < 1) {
    throw new Error(`runWarmStartSft: batchSize must be a positive integer, got ${options.batchSize}`);
  }
  const stream = createRng(options.seed).split('warm-start-batches');
  const rng = options.stage > 1 ? stream.split(`stage${options.stage}`) : stream;
  const optimizer = new AdamW(model.params, {
    beta1: 0.9,
    beta2: 0.95,
    weightDecay: options.weightDecay,
    isNoDecay: isNormOrBias,
  });
  const schedule: LrSchedule = {
    kind: 'cosine',
    lrPeak: options.lrPeak,
    warmupSteps: Math.min(options.warmupSteps, options.steps),
    totalSteps: options.steps,
    minLrRatio: options.minLrRatio,
  };
  const losses: number[] = [];
  const t0 = Date.now();
  try {
    for (let step = 0; step < options.steps; step++) {
      const batch = Array.from({ length: options.batchSize }, () => rows[rng.int(rows.length)]);
      const lr = computeLearningRate(step, schedule);
      const { loss, gradNorm } = await trainStep({
        params: model.params,
        lossFn: () => computeSftLoss(model, batch),
        nMicro: 1,
        optimizer,
        maxGradNorm: options.maxGradNorm,
        lr,
      });
      if (!Number.isFinite(loss)) throw new Error(`runWarmStartSft: loss is ${loss} at step ${step}`);
      losses.push(loss);
      onStep?.({ step, loss, gradNorm, lr, seconds: (Date.now() - t0) / 1000 });
    }
  } finally {
    optimizer.dispose();
  }
  return losses;
}
