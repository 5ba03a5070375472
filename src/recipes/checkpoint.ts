/**
 * A trainer checkpoint as files (issue 5 "Export and import a checkpoint as Hugging Face
 * safetensors + config.json + trainer state JSON"), browser- and Node-safe (no fs):
 *
 *   config.json, model.safetensors, pruned_vocab.json   — saveQwen3Folder (HF-loadable)
 *   optimizer.safetensors                               — AdamW moments + step counters
 *   reference.safetensors                               — π_ref weights (KL reference)
 *   trainer_state.json                                  — step, data cursor, rng states,
 *                                                         recipe, the resolved TrainConfig
 *
 * `readCheckpointState` turns such a folder back into a TrainerState for Trainer.importState.
 */
import type { PrunedVocabMapping } from '../model/tokenizer/prunedVocab';
import type { Qwen3Config } from '../model/qwen3/config';
import { parseSafetensors, writeSafetensors } from '../model/weights/safetensors';
import { loadQwen3Folder, saveQwen3Folder, type FolderReader } from '../model/weights/qwen3Folder';
import type { NamedArray } from '../model/qwen3/train/types';
import type { TrainerState } from './types';

export const TRAINER_STATE_FILE = 'trainer_state.json';
export const OPTIMIZER_FILE = 'optimizer.safetensors';
export const REFERENCE_FILE = 'reference.safetensors';

/** The files of one checkpoint folder (name → text or bytes). */
export function buildCheckpointFiles(state: TrainerState, modelConfig: Qwen3Config, mapping?: PrunedVocabMapping): Record<string, string | Uint8Array> {
  const files: Record<string, string | Uint8Array> = {
    ...saveQwen3Folder({ config: modelConfig, tensors: state.weights, prunedVocab: mapping }),
    [OPTIMIZER_FILE]: writeSafetensors(state.optimizer, { format: 'pact-adamw' }),
  };
  if (state.referenceWeights) files[REFERENCE_FILE] = writeSafetensors(state.referenceWeights, { format: 'pt' });
  const { weights: _w, optimizer: _o, referenceWeights: _r, ...rest } = state;
  files[TRAINER_STATE_FILE] = JSON.stringify(rest, null, 2) + '\n';
  return files;
}

function readArrays(bytes: Uint8Array): NamedArray[] {
  return [...parseSafetensors(bytes).tensors].map(([name, t]) => ({ name, shape: t.shape, data: t.data }));
}

/** Reads a checkpoint folder written by buildCheckpointFiles back into a TrainerState. */
export async function readCheckpointState(reader: FolderReader): Promise<TrainerState> {
  const folder = await loadQwen3Folder(reader);
  let rest: Omit<TrainerState, 'weights' | 'optimizer' | 'referenceWeights'>;
  try {
    rest = JSON.parse(new TextDecoder().decode(await reader.readFile(TRAINER_STATE_FILE)));
  } catch (e) {
    throw new Error(`checkpoint: ${TRAINER_STATE_FILE} is missing or not valid JSON (${(e as Error).message})`);
  }
  const files = await reader.listFiles();
  return {
    ...rest,
    weights: [...folder.tensors].map(([name, t]) => ({ name, shape: t.shape, data: t.data })),
    optimizer: readArrays(await reader.readFile(OPTIMIZER_FILE)),
    referenceWeights: files.includes(REFERENCE_FILE) ? readArrays(await reader.readFile(REFERENCE_FILE)) : undefined,
  };
}
