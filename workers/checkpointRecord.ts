/**
 * Trainer state ⇄ IndexedDB checkpoint record. The record holds everything a resumed
 * run needs to continue bit for bit (src/recipes/types.ts TrainerState), with tensors as
 * plain ArrayBuffers so the structured clone into IndexedDB copies no views, plus the
 * model's Qwen3 config (`trainerState.modelConfig`: the shape the weights were trained
 * with, e.g. vocab_size = the pruned vocabulary's size) for the checkpoint's config.json.
 * Records written before that field existed still read; `modelConfig` is then absent and
 * the exporter infers it from the weights (src/run/checkpoint.ts inferQwen3Config).
 */
import type { Qwen3Config } from '../src/model/qwen3/config';
import type { NamedArray } from '../src/model/qwen3/train/types';
import type { PrunedVocabMapping } from '../src/model/tokenizer/prunedVocab';
import type { TrainerState } from '../src/recipes/types';
import type { CheckpointRecord, StoredTensor } from '../src/storage/schema';

/**
 * The tensors' own buffers when a view spans all of its buffer (as the trainer's exported state does:
 * its arrays are fresh copies, so the record shares them and the store cuts its chunks straight out
 * of them, with no second copy of the state); a copy of the view otherwise (a SharedArrayBuffer too).
 */
function toStored(list: readonly NamedArray[]): StoredTensor[] {
  return list.map((t) => ({
    name: t.name,
    shape: [...t.shape],
    data:
      t.data.buffer instanceof ArrayBuffer && t.data.byteOffset === 0 && t.data.byteLength === t.data.buffer.byteLength
        ? t.data.buffer
        : t.data.slice().buffer,
  }));
}

function fromStored(list: readonly StoredTensor[]): NamedArray[] {
  return list.map((t) => ({ name: t.name, shape: [...t.shape], data: new Float32Array(t.data) }));
}

const bytesOf = (list: readonly NamedArray[] | undefined) => (list ?? []).reduce((s, t) => s + t.data.byteLength, 0);

export function buildCheckpointRecord(
  runId: string,
  state: TrainerState,
  mapping: PrunedVocabMapping | undefined,
  modelConfig?: Qwen3Config,
): CheckpointRecord {
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
      ...(state.adapterWeights ? { adapterWeights: toStored(state.adapterWeights) } : {}),
      mapping,
      ...(modelConfig ? { modelConfig: { ...modelConfig } } : {}),
    },
    bytes:
      bytesOf(state.weights) +
      bytesOf(state.optimizer) +
      bytesOf(state.referenceWeights) +
      bytesOf(state.adapterWeights),
  };
}

export function readCheckpointRecord(rec: CheckpointRecord): {
  state: TrainerState;
  mapping?: PrunedVocabMapping;
  modelConfig?: Qwen3Config;
} {
  const ts = rec.trainerState as {
    version: 1;
    dataCursor: number;
    recipe: string;
    referenceWeights?: StoredTensor[];
    adapterWeights?: StoredTensor[];
    mapping?: PrunedVocabMapping;
    modelConfig?: Qwen3Config;
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
      ...(ts.adapterWeights ? { adapterWeights: fromStored(ts.adapterWeights) } : {}),
      config: rec.config as unknown as TrainerState['config'],
      recipe: ts.recipe,
    },
    mapping: ts.mapping,
    modelConfig: ts.modelConfig,
  };
}
