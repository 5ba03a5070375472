/**
 * The trainer's state I/O: everything needed to continue a run bit for bit (weights, π_ref,
 * AdamW moments, step, data cursor, root rng). Every random draw comes from streams split
 * off the run seed by step index (`step<s>/sample`, `step<s>/recipe`) and the data order
 * from the epoch index, so restoring this state resumes a run to the same numbers bit for
 * bit on the same backend. LoRA states: see policyWeights.ts.
 */
import { rngFromState, type Rng } from '../../core/rng';
import type { Qwen3Model } from '../../model/qwen3';
import type { AdamW } from '../../model/qwen3/train';
import { exportTensors } from '../../model/qwen3/train/snapshot';
import type { TrainConfig } from '../config';
import type { TrainerState } from '../types';
import { assignPolicyWeights, exportPolicyWeights, type PolicyWeights } from './policyWeights';

/** The parts of a trainer its state is read from and written to. */
export interface TrainerParts {
  config: TrainConfig;
  recipeName: string;
  model: Qwen3Model;
  weights: PolicyWeights;
  optimizer: AdamW;
}

/** Where a run stands: the completed steps, the data cursor and the root stream. */
export interface TrainerPosition {
  step: number;
  dataCursor: number;
  root: Rng;
}

const floatBytes = (params: ReadonlyMap<string, { size: number }>) => {
  let n = 0;
  for (const t of params.values()) n += 4 * t.size;
  return n;
};

/**
 * Bytes of the arrays `exportTrainerState` would write (what a checkpoint stores), read from the
 * shapes without exporting: the policy's weights (merged, under LoRA: the model's shapes), π_ref's,
 * AdamW's state and (LoRA) the adapters.
 */
export function trainerStateBytes(parts: Pick<TrainerParts, 'model' | 'weights' | 'optimizer'>): number {
  const { model, weights, optimizer } = parts;
  return (
    floatBytes(model.params) +
    floatBytes(weights.refParams) +
    optimizer.stateBytes +
    (weights.lora ? floatBytes(weights.trainable) : 0)
  );
}

/**
 * The state of a run. LoRA: `weights` are the merged policy, `referenceWeights` the frozen
 * base (= π_ref) and `adapterWeights` the adapters (what AdamW's state is keyed by).
 */
export async function exportTrainerState(parts: TrainerParts, position: TrainerPosition): Promise<TrainerState> {
  const { weights: policy, model, optimizer } = parts;
  const weights = await exportPolicyWeights(model, policy);
  return {
    version: 1,
    step: position.step,
    dataCursor: position.dataCursor,
    rngStates: { root: position.root.state() },
    weights,
    optimizer: await optimizer.exportState(),
    referenceWeights: await exportTensors(policy.refParams),
    ...(policy.lora ? { adapterWeights: await exportTensors(policy.trainable) } : {}),
    config: parts.config,
    recipe: parts.recipeName,
  };
}

/**
 * Restores a state from exportTrainerState (same config, same model shape) into the
 * weights and optimiser, and returns the position to continue from. Validates before writing.
 */
export function importTrainerState(parts: TrainerParts, state: TrainerState): TrainerPosition {
  checkTrainerState(state, parts.recipeName, parts.weights.lora !== undefined);
  const root = rngFromState(state.rngStates.root);
  assignPolicyWeights(parts.model, parts.weights, state);
  parts.optimizer.importState(state.optimizer);
  return { step: state.step, dataCursor: state.dataCursor, root };
}

function checkTrainerState(state: TrainerState, recipeName: string, isLora: boolean): void {
  const fail = (message: string) => new Error(`Trainer.importState: ${message}`);
  if (!state || state.version !== 1) throw fail(`unsupported state version ${String(state?.version)}`);
  if (state.recipe !== recipeName) {
    throw fail(`the state is of recipe "${state.recipe}", this trainer runs "${recipeName}"`);
  }
  for (const field of ['step', 'dataCursor'] as const) {
    const value = state[field];
    if (!Number.isInteger(value) || value < 0) throw fail(`${field} must be an integer ≥ 0, got ${value}`);
  }
  if (!state.rngStates?.root) throw fail('rngStates.root is missing');
  if (isLora && (!state.adapterWeights || !state.referenceWeights)) {
    throw fail(
      'this run trains LoRA adapters (config.model.lora) but the state has no adapterWeights ' +
        'and referenceWeights (base); it is not a LoRA checkpoint',
    );
  }
  if (!isLora && state.adapterWeights) {
    throw fail('the state holds LoRA adapterWeights but this run has no config.model.lora');
  }
}
