/**
 * Trainer state ⇄ IndexedDB checkpoint record. The record holds everything a resumed
 * run needs to continue bit for bit (src/recipes/types.ts TrainerState), with tensors as
 * plain ArrayBuffers so the structured clone into IndexedDB copies no views.
 */
import type { NamedArray } from '../src/model/qwen3/train/types';
import type { PrunedVocabMapping } from '../src/model/tokenizer/prunedVocab';
import type { TrainerState } from '../src/recipes/types';
import type { CheckpointRecord, StoredTensor } from '../src/storage/schema';

function toStored(list: readonly NamedArray[]): StoredTensor[] {
  return list.map((t) => ({ name: t.name, shape: [...t.shape], data: t.data.slice().buffer }));
}

function fromStored(list: readonly StoredTensor[]): NamedArray[] {
  return list.map((t) => ({ name: t.name, shape: [...t.shape], data: new Float32Array(t.data) }));
}

const bytesOf = (list: readonly NamedArray[] | undefined) => (list ?? []).reduce((s, t) => s + t.data.byteLength, 0);

export function buildCheckpointRecord(runId: string, state: TrainerState, mapping: PrunedVocabMapping | undefined): CheckpointRecord {
  return {
    id: `${runId}@${state.step}`,
    runId,
    step: state.step,
    createdAt: Date.now(),
    config: state.config as unknown as Record<string, unknown>,
    weights: toStored(state.weights),
    optimizer: { step: state.step, tensors: toStored(state.optimizer) },
    rngState: state.rngStates,
    trainerState: {
      version: state.version,
      dataCursor: state.dataCursor,
      recipe: state.recipe,
      referenceWeights: state.referenceWeights ? toStored(state.referenceWeights) : undefined,
      mapping,
    },
    bytes: bytesOf(state.weights) + bytesOf(state.optimizer) + bytesOf(state.referenceWeights),
  };
}

export function readCheckpointRecord(rec: CheckpointRecord): { state: TrainerState; mapping?: PrunedVocabMapping } {
  const ts = rec.trainerState as {
    version: 1;
    dataCursor: number;
    recipe: string;
    referenceWeights?: StoredTensor[];
    mapping?: PrunedVocabMapping;
  };
  return {
    state: {
      version: ts.version,
      step: rec.step,
      dataCursor: ts.dataCursor,
      rngStates: rec.rngState as TrainerState['rngStates'],
      weights: fromStored(rec.weights),
      optimizer: fromStored(rec.optimizer.tensors),
      referenceWeights: ts.referenceWeights ? fromStored(ts.referenceWeights) : undefined,
      config: rec.config as unknown as TrainerState['config'],
      recipe: ts.recipe,
    },
    mapping: ts.mapping,
  };
}
