/**
 * The policy's three sets of weights: π_θ (what AdamW updates), π_ref (the KL penalty's
 * reference, k3 with coefficient klCoef) and π_old (the pre-update weights, Algorithm 1
 * line 19: π_old ← π_θ at every step). Full training: π_ref is a frozen copy of the
 * starting weights and π_old a copy taken before each step's first mini-batch.
 * LoRA (config.model.lora; Hu et al. 2021 Eq. 3, model/qwen3/train/lora.ts): adapters go on
 * the target projections, the base is frozen and only A and B are optimised. π_ref is then
 * the frozen base itself (B = 0 at step 0, so base = the starting policy): no π_ref copy is
 * kept, its log-probs are the base read without adapters; π_old is the base with a copy of
 * the adapters. A LoRA state's `weights` are the merged W + (α/r)·B A (the trained policy,
 * loadable as any Qwen3 folder), `referenceWeights` the base and `adapterWeights` A and B,
 * so a resume restores base and adapters exactly.
 */
import type { Qwen3Model } from '../../model/qwen3';
import type { ParamMap } from '../../model/qwen3/linear';
import {
  createLora,
  disposeLora,
  mergeLora,
  setParamsTrainable,
  snapshotLora,
  type LoraMap,
  type NamedArray,
} from '../../model/qwen3/train';
import { assignNamedArrays, disposeSnapshot, exportTensors, snapshotParams } from '../../model/qwen3/train/snapshot';
import type { TrainConfig } from '../config';
import type { TrainerState } from '../types';

export interface PolicyWeights {
  /** The Variables the optimiser updates: every weight, or (LoRA) the adapters' A and B. */
  trainable: ParamMap;
  /** π_ref's weights: a frozen copy of the starting policy, or (LoRA) the frozen base itself. */
  refParams: ParamMap;
  /** The LoRA adapters put on the model (config.model.lora), else undefined. */
  lora?: LoraMap;
}

/** π_old for one step: the weights and adapters its log-probs are read with. */
export interface OldPolicy {
  params: ParamMap;
  lora: LoraMap | undefined;
}

/** Sets up π_θ and π_ref on `model`: a π_ref copy, or (config.model.lora) adapters on a frozen base. */
export function createPolicyWeights(model: Qwen3Model, config: TrainConfig): PolicyWeights {
  const loraConfig = config.model.lora;
  if (!loraConfig) return { trainable: model.params, refParams: snapshotParams(model.params) };
  if (model.lora) {
    throw new Error(
      'config.model.lora: the model already carries LoRA adapters; give the trainer a model without them',
    );
  }
  const { rank, alpha, targets } = loraConfig;
  const created = createLora(model.params, { rank, alpha, targetModules: targets, seed: config.seed });
  model.lora = created.lora;
  setParamsTrainable(model.params, false); // the base is frozen: no weight gradients are built for it
  // π_ref = the frozen base, read without adapters
  return { trainable: created.trainable, refParams: model.params, lora: created.lora };
}

/** π_old = the pre-update weights: a copy of every weight, or (LoRA) of the adapters on the frozen base. */
export function snapshotOldPolicy(model: Qwen3Model, weights: PolicyWeights): OldPolicy {
  if (weights.lora) return { params: model.params, lora: snapshotLora(weights.lora) };
  return { params: snapshotParams(model.params), lora: undefined };
}

export function disposeOldPolicy(old: OldPolicy): void {
  if (old.lora) disposeLora(old.lora);
  else disposeSnapshot(old.params);
}

/** Frees π_ref (full training), or takes the adapters off the model and unfreezes the base (LoRA). */
export function disposePolicyWeights(model: Qwen3Model, weights: PolicyWeights): void {
  if (weights.lora) {
    if (model.lora === weights.lora) model.lora = undefined;
    disposeLora(weights.lora);
    setParamsTrainable(model.params, true);
  } else {
    disposeSnapshot(weights.refParams);
  }
}

/** The trained policy's weights as named arrays: the model's, or (LoRA) merged W + (α/r)·B A. */
export async function exportPolicyWeights(model: Qwen3Model, weights: PolicyWeights): Promise<NamedArray[]> {
  if (!weights.lora) return exportTensors(model.params);
  const merged = mergeLora(model.params, weights.lora);
  try {
    return await exportTensors(merged);
  } finally {
    disposeSnapshot(merged);
  }
}

/** Writes a state's weights back: the weights and π_ref, or (LoRA) the base (= π_ref) and the adapters. */
export function assignPolicyWeights(model: Qwen3Model, weights: PolicyWeights, state: TrainerState): void {
  if (weights.lora) {
    // The base (= π_ref) and the adapters; the merged `weights` are for loading elsewhere.
    assignNamedArrays(model.params, state.referenceWeights!);
    assignNamedArrays(weights.trainable, state.adapterWeights!);
  } else {
    assignNamedArrays(model.params, state.weights);
    if (state.referenceWeights) assignNamedArrays(weights.refParams, state.referenceWeights);
  }
}
