/**
 * The warm-start checkpoint folder, public/warm-start/ (served at `/warm-start/`):
 * config.json + model.safetensors (F32) + pruned_vocab.json (saveQwen3Folder) +
 * warm_start.json (seed, steps, final loss, evaluation, date, git commit).
 * `loadWarmStart(readFile)` reads it in Node (fs) and in the browser
 * (`createFetchReader('/warm-start/')`); `exportWarmStartFiles` writes it;
 * `extendWarmStartVocab` grows a checkpoint's pruned vocabulary for continued training.
 */
import type { Qwen3Model } from '../../model/qwen3/index';
import type { Qwen3Config } from '../../model/qwen3/config';
import type { HostTensor } from '../../model/qwen3/model';
import {
  PrunedTokenizer,
  parsePrunedVocabMapping,
  type ByteLevelBpeSource,
  type PrunedVocabMapping,
} from '../../model/tokenizer/prunedVocab';
import { loadQwen3Folder, saveQwen3Folder, type FolderReader } from '../../model/weights/qwen3Folder';
import type { EvaluateOptions, WarmStartEval } from './evaluate';
import type { SearchWarmStartEval } from './search';
import type { RolloutEnvKind } from '../types';
import type { WarmStartOptions } from './sft';

/** Folder of the shipped checkpoint under public/ (served at `/warm-start/`). */
export const WARM_START_DIR = 'warm-start';
/**
 * The second shipped checkpoint, for the search recipes (served at `/warm-start-search/`): the same
 * qwen3-nano trained on the tool-use rows plus search-teacher episodes (scripts/searchWarmStart.sh,
 * docs/results.md "The search warm start"). `model.init: "warm-start"` loads it by itself for a
 * recipe whose environment is the tool search (warmStartFolderFor); the tool-use recipes, the PACT
 * study included, keep WARM_START_DIR.
 */
export const WARM_START_SEARCH_DIR = 'warm-start-search';

/** Which shipped warm start `model.init: "warm-start"` means for a recipe of this environment. */
export function warmStartFolderFor(env: RolloutEnvKind): string {
  return env === 'tool-search' ? WARM_START_SEARCH_DIR : WARM_START_DIR;
}
export const WARM_START_INFO_FILE = 'warm_start.json';
export const WARM_START_FILES = [
  'config.json',
  'model.safetensors',
  'pruned_vocab.json',
  WARM_START_INFO_FILE,
] as const;

/** warm_start.json. */
export interface WarmStartInfo {
  preset: string;
  options: WarmStartOptions;
  trainTasks: number;
  /** Generated worlds the train tasks came from (seeds seed·1000 + w; absent = one world, the seed's). */
  trainWorlds?: number;
  vocabTasks: number;
  keptTokens: number;
  finalLoss: number;
  /** Mean loss of the first and last 10 steps. */
  lossStart: number;
  lossEnd: number;
  eval: WarmStartEval;
  /** The warm_start.json of the stage these weights continued (stage > 1). */
  previousStage?: WarmStartInfo;
  /** Search-teacher rows trained (absent: none). */
  searchTasks?: number;
  /** Search-teacher episodes in the vocabulary corpus (absent: 0; the vocabulary depends on it). */
  vocabSearchTasks?: number;
  /** Held-out search evaluation (when search episodes were trained, here or in a previous stage). */
  searchEval?: SearchWarmStartEval;
  evalSettings: { split: 'test'; seed: number } & EvaluateOptions;
  trainSeconds: number;
  backend: string;
  date: string;
  gitCommit: string;
}

export interface WarmStart {
  config: Qwen3Config;
  /** Tensors by Hugging Face name, for Qwen3Model.fromTensors. */
  tensors: Map<string, HostTensor>;
  mapping: PrunedVocabMapping;
  info?: WarmStartInfo;
}

/** Reads one file of the warm-start folder by name. */
export type ReadWarmStartFile = (name: string) => Promise<Uint8Array>;

/**
 * Loads the warm start (config, tensors, tokenizer mapping, info). In Node:
 * `loadWarmStart((n) => fs.readFile(path.join('public/warm-start', n)))`; in the browser:
 * `loadWarmStart(createFetchReader('/warm-start/'))`.
 */
export async function loadWarmStart(readFile: ReadWarmStartFile): Promise<WarmStart> {
  const files = new Map<string, Uint8Array>();
  for (const name of WARM_START_FILES) {
    try {
      files.set(name, await readFile(name));
    } catch (e) {
      if (name === WARM_START_INFO_FILE) continue; // optional
      throw new Error(`warm start: cannot read ${name} (${(e as Error).message})`);
    }
  }
  const reader: FolderReader = {
    listFiles: async () => [...files.keys()],
    readFile: async (name) => {
      const bytes = files.get(name);
      if (!bytes) throw new Error(`warm start: no file ${name}`);
      return bytes;
    },
  };
  const folder = await loadQwen3Folder(reader);
  if (!folder.prunedVocab) throw new Error('warm start: pruned_vocab.json is missing');
  const tensors = new Map<string, HostTensor>();
  for (const [name, t] of folder.tensors) tensors.set(name, { shape: t.shape, data: t.data });
  let info: WarmStartInfo | undefined;
  const infoBytes = files.get(WARM_START_INFO_FILE);
  if (infoBytes) {
    try {
      info = JSON.parse(new TextDecoder().decode(infoBytes)) as WarmStartInfo;
    } catch (e) {
      throw new Error(`warm start: ${WARM_START_INFO_FILE} is not valid JSON (${(e as Error).message})`);
    }
  }
  return { config: folder.config, tensors, mapping: parsePrunedVocabMapping(folder.prunedVocab), info };
}

/** A ReadWarmStartFile over HTTP (the app serves public/warm-start/ at `/warm-start/`). */
export function createFetchReader(
  baseUrl = `/${WARM_START_DIR}/`,
  fetchFn: (url: string) => Promise<{ ok: boolean; status: number; arrayBuffer(): Promise<ArrayBuffer> }> = fetch,
): ReadWarmStartFile {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  return async (name) => {
    const response = await fetchFn(base + name);
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${base + name}`);
    return new Uint8Array(await response.arrayBuffer());
  };
}

/** The files of the checkpoint folder (saveQwen3Folder + warm_start.json). */
export async function exportWarmStartFiles(
  model: Qwen3Model,
  mapping: PrunedVocabMapping,
  info: WarmStartInfo,
): Promise<Record<string, string | Uint8Array>> {
  const names = [...model.params.keys()];
  const datas = await Promise.all(names.map((n) => model.params.get(n)!.data()));
  const tensors = names.map((name, i) => ({
    name,
    shape: [...model.params.get(name)!.shape],
    data: Float32Array.from(datas[i] as Float32Array),
  }));
  const files = saveQwen3Folder({ config: model.config, tensors, prunedVocab: mapping });
  return { ...files, [WARM_START_INFO_FILE]: JSON.stringify(info, null, 2) + '\n' };
}

/** An SFT row: ids and, per target position t (predicting ids[t+1]), whether it is trained. */

/**
 * Grows a warm start's pruned vocabulary to `mapping`, a superset of its own (continued
 * training on text its corpus lacked, e.g. search episodes over the shipped tool-use
 * vocabulary): the row of a token the old vocabulary kept is copied (matched by full id);
 * a new token's row is the mean of the old rows that spelled it (its byte-level fallback
 * split under the old vocabulary), so the input side starts where the old encoding pointed.
 * Tied embeddings only (lm_head = embed_tokens, as qwen3-nano/micro). The optimiser state
 * is not carried (runWarmStartSft starts a fresh AdamW per stage anyway).
 */
export function extendWarmStartVocab(
  warm: WarmStart,
  mapping: PrunedVocabMapping,
  source: ByteLevelBpeSource,
): WarmStart {
  if (!warm.config.tie_word_embeddings) {
    throw new Error('extendWarmStartVocab: only tied embeddings (lm_head = embed_tokens) are supported');
  }
  const newIds = parsePrunedVocabMapping(mapping).keptIds;
  const kept = new Set(newIds);
  const lost = warm.mapping.keptIds.filter((id) => !kept.has(id));
  if (lost.length > 0) {
    throw new Error(
      `extendWarmStartVocab: the new vocabulary lacks ${lost.length} of the warm start's ` +
        `${warm.mapping.keptIds.length} tokens (e.g. full id ${lost[0]}); it must be a superset (is it capped?)`,
    );
  }
  const name = 'model.embed_tokens.weight';
  const embed = warm.tensors.get(name);
  if (!embed) throw new Error(`extendWarmStartVocab: the warm start has no ${name}`);
  const [oldV, H] = embed.shape; // [V_old, H]
  if (oldV !== warm.mapping.keptIds.length) {
    const kept = warm.mapping.keptIds.length;
    throw new Error(`extendWarmStartVocab: ${name} has ${oldV} rows but pruned_vocab.json keeps ${kept} tokens`);
  }
  const oldTokenizer = new PrunedTokenizer(source, warm.mapping);
  const data = new Float32Array(newIds.length * H); // [V_new, H]
  newIds.forEach((fullId, row) => {
    const pieces = oldTokenizer.expressFullId(fullId); // compact ids of the old vocabulary
    for (const piece of pieces) {
      for (let h = 0; h < H; h++) data[row * H + h] += embed.data[piece * H + h] / pieces.length;
    }
  });
  const tensors = new Map(warm.tensors);
  tensors.set(name, { shape: [newIds.length, H], data });
  tensors.delete('lm_head.weight'); // tied: a stale copy would have the old row count
  return { ...warm, config: { ...warm.config, vocab_size: newIds.length }, tensors, mapping: { keptIds: [...newIds] } };
}
