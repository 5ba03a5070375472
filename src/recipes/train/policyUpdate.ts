/**
 * Algorithm 1 line 18 of PACT (App. E): the policy update ∇_θ (1/|B|) Σ_i L_i with
 * L_i = w_rl·(L_RL(i) + klCoef·KL(i)) + w_sft·L_SFT(i), as PPO mini-batches of
 * `miniBatchPrompts` prompts, one AdamW step each (learning rate `lr` for the whole
 * training step). Per-prompt RL losses aggregate the prompt's K rollouts with
 * config.lossAgg (token-mean = −E_{k, n∈M_{i,k}}[…] of PACT Eq. prompt-only-rl-loss /
 * trace-rl-loss). A mini-batch's prompts are split into gradient micro-batches
 * (microBatches.ts) whose gradients trainStep sums. The per-prompt stats are kept as
 * tensors and read back once, after the last mini-batch.
 */
import * as tf from '../../model/qwen3/tf';
import type { Qwen3Model } from '../../model/qwen3';
import type { ParamMap } from '../../model/qwen3/linear';
import { trainStep, type AdamW } from '../../model/qwen3/train';
import type { PromptLossOptions } from './tfLosses';
import type { StepProgress } from '../types';
import { buildMicroBatchLoss, splitMicroBatches, type RowChunker } from './microBatches';
import type { PromptPlan } from './promptPlan';

/**
 * Per-prompt numbers a micro-batch reports (summed over a prompt's micro-batches): RL loss,
 * SFT loss, KL·mask, entropy·mask, clip·mask, mask count.
 */
export const N_PROMPT_STATS = 6;

export interface PolicyUpdateInputs {
  model: Qwen3Model;
  trainable: ParamMap;
  optimizer: AdamW;
  lossOptions: Omit<PromptLossOptions, 'rlWeight' | 'sftWeight'>;
  lr: number;
  miniBatchPrompts: number;
  maxGradNorm: number;
  chunkRows: RowChunker;
  onProgress?: (p: StepProgress) => void;
}

export interface PolicyUpdate {
  /** Per prompt: [N_PROMPT_STATS] summed over its micro-batches (NaN for a prompt without any). */
  values: number[][];
  /** Per mini-batch with a loss term: the loss and the gradient norm before clipping. */
  losses: number[];
  gradNorms: number[];
}

/** Runs the step's mini-batches over `plans` and reads back their per-prompt stats. */
export async function updatePolicy(plans: PromptPlan[], inputs: PolicyUpdateInputs): Promise<PolicyUpdate> {
  const { model, miniBatchPrompts, lossOptions } = inputs;
  const stats: { prompt: number; values: tf.Tensor }[] = []; // one kept [N_PROMPT_STATS] per micro-batch
  const losses: number[] = [];
  const gradNorms: number[] = [];
  const nMiniBatches = Math.ceil(plans.length / miniBatchPrompts);
  for (let start = 0; start < plans.length; start += miniBatchPrompts) {
    inputs.onProgress?.({ phase: 'update', done: start / miniBatchPrompts, total: nMiniBatches });
    const size = Math.min(miniBatchPrompts, plans.length - start);
    // Prompts with no loss term (no rollouts, Z = 0) add 0 to (1/|B|) Σ_i L_i: leave them out.
    const live = Array.from({ length: size }, (_, j) => start + j).filter((i) => plans[i].rl || plans[i].sft);
    if (live.length === 0) continue;
    const micro = splitMicroBatches(plans, live, inputs.chunkRows);
    const result = await trainStep({
      params: inputs.trainable,
      lossFn: (j) => {
        const mb = micro[j];
        const t = buildMicroBatchLoss(model, plans[mb.prompt], mb, lossOptions);
        // [N_PROMPT_STATS]
        const values = tf.stack([t.rlLoss, t.sftLoss, t.klSum, t.entropySum, t.clipSum, t.tokenCount]);
        stats.push({ prompt: mb.prompt, values: tf.keep(values) });
        return tf.div(t.total, size) as tf.Scalar;
      },
      nMicro: micro.length,
      microReduction: 'sum',
      optimizer: inputs.optimizer,
      maxGradNorm: inputs.maxGradNorm,
      lr: inputs.lr,
    });
    losses.push(result.loss);
    gradNorms.push(result.gradNorm);
  }
  return { values: await readPromptStats(stats, plans.length), losses, gradNorms };
}

/** Per prompt: the sum of its micro-batches' stats (NaN for a prompt without any); one read-back, then frees them. */
async function readPromptStats(stats: { prompt: number; values: tf.Tensor }[], nPrompts: number): Promise<number[][]> {
  const values: number[][] = Array.from({ length: nPrompts }, () => new Array<number>(N_PROMPT_STATS).fill(Number.NaN));
  if (stats.length > 0) {
    const packed = tf.stack(stats.map((x) => x.values));
    const data = await packed.data(); // [nMicro, N_PROMPT_STATS]
    packed.dispose();
    const isSeen = new Set<number>();
    stats.forEach(({ prompt }, row) => {
      if (!isSeen.has(prompt)) values[prompt].fill(0);
      isSeen.add(prompt);
      for (let j = 0; j < N_PROMPT_STATS; j++) values[prompt][j] += data[row * N_PROMPT_STATS + j];
    });
  }
  for (const x of stats) x.values.dispose();
  return values;
}
