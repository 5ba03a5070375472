/**
 * The log-probs a step reads once, with the pre-update weights, before its first
 * mini-batch: π_old under c^h for L^h rows (PACT Eq. trace-conditioned-ratio; under x the
 * behaviour log-probs of generation are π_old already) and π_ref where the k3 KL penalty
 * reads it. pact.klContext says where that is on L^h prompts: 'trace' in the ratio's
 * context c^h, 'prompt' on the rollouts as sampled (x; τ), which become extra KL rows.
 * π_ref under x is also read for `kl_prompt_only`. Reads go chunk by chunk (microBatches.ts),
 * with no gradient and one read-back per chunk.
 */
import * as tf from '../../model/qwen3/tf';
import type { Qwen3Model } from '../../model/qwen3';
import { packTokenRows } from '../../model/qwen3/batch';
import type { ParamMap } from '../../model/qwen3/linear';
import { computeTokenLogprobs } from '../../model/qwen3/logprobs';
import type { LoraMap } from '../../model/qwen3/train';
import type { StepProgress } from '../types';
import type { RowChunker } from './microBatches';
import { disposeOldPolicy, snapshotOldPolicy, type PolicyWeights } from './policyWeights';
import type { PromptPlan } from './promptPlan';

/** Log-probs [K][N_k − 1] of rows under `params` (+ `lora`), no gradient; one read-back per chunk. */
export async function readLogprobs(
  model: Qwen3Model,
  params: ParamMap,
  rows: number[][],
  lora: LoraMap | undefined,
  chunkRows: RowChunker,
): Promise<number[][]> {
  const result: number[][] = [];
  for (const [start, end] of chunkRows(rows)) {
    const chunk = rows.slice(start, end);
    const T = Math.max(...chunk.map((r) => r.length));
    const out = tf.tidy(() => {
      const { inputIds, attentionMask } = packTokenRows(chunk, { length: T }); // [B, T]
      return computeTokenLogprobs(params, model.config, inputIds, attentionMask, { lora }).logprobs; // [B, T−1]
    });
    const data = await out.data();
    out.dispose();
    chunk.forEach((r, k) => result.push(Array.from(data.subarray(k * (T - 1), k * (T - 1) + r.length - 1))));
  }
  return result;
}

export interface PlanReadInputs {
  model: Qwen3Model;
  weights: PolicyWeights;
  klCoef: number;
  chunkRows: RowChunker;
  onProgress?: (p: StepProgress) => void;
}

/**
 * Fills each plan's π_old(c^h) (L^h rows) and π_ref log-probs, reading π_old from a
 * snapshot of the current (pre-update) weights that is freed afterwards.
 */
export async function readOldAndRefLogprobs(plans: PromptPlan[], inputs: PlanReadInputs): Promise<void> {
  const { model, weights, klCoef, chunkRows } = inputs;
  const read = (params: ParamMap, rows: number[][], lora: LoraMap | undefined) =>
    readLogprobs(model, params, rows, lora, chunkRows);
  const old = snapshotOldPolicy(model, weights);
  try {
    const nReads = plans.filter((p) => p.rl).length;
    let nRead = 0;
    for (const plan of plans) {
      if (!plan.rl) continue;
      inputs.onProgress?.({ phase: 'logprobs', done: nRead++, total: nReads });
      if (plan.route.rl === 'h') plan.rl.oldLogprobs = await read(old.params, plan.rl.ids, old.lora);
      // π_ref where the KL penalty reads it: the RL rows, or (L^h, klContext 'prompt') the rollouts under x.
      if (klCoef > 0 && !plan.kl) plan.rl.refLogprobs = await read(weights.refParams, plan.rl.ids, undefined);
      const promptOnlyRows = plan.rl.promptOnlyRows;
      if (klCoef > 0 && promptOnlyRows) {
        // kl_prompt_only: π_ref under x as well, read on the rollouts as they were sampled.
        const refX = await read(
          weights.refParams,
          promptOnlyRows.map((r) => r.ids),
          undefined,
        );
        plan.rl.promptOnlyRefLogprobs = plan.rl.mask.map((row, k) =>
          row.map((_, j) => refX[k][j + promptOnlyRows[k].offset] ?? 0),
        );
        if (plan.kl) plan.kl.refLogprobs = refX;
      }
    }
  } finally {
    disposeOldPolicy(old);
  }
}
