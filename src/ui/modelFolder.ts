/**
 * A user's Qwen3 folder as the run's model (Run setup offers nano, micro, or the user's
 * Qwen3 folder), checked on the page before it goes to the worker: config.json (a Qwen3
 * config, every field validated by parseQwen3Config), the weights (model.safetensors, or
 * model.safetensors.index.json + its shards) read header only, so a multi-GB folder costs a
 * few kB here, every tensor a Qwen3 of that config needs present with its shape, and the
 * optional tokenizer.json + tokenizer_config.json pair and pruned_vocab.json. Errors name the
 * file and the field. The File objects then travel to the worker with the start request
 * (structured clone keeps them as references), where runAssets loads them in full
 * (src/model/weights/qwen3Folder.ts, which re-validates every byte).
 */
import { findQwen3TensorProblems } from '../model/weights/hfNames';
import {
  CONFIG_FILE,
  PRUNED_VOCAB_FILE,
  TOKENIZER_CONFIG_FILE,
  TOKENIZER_FILE,
  WEIGHTS_FILE,
  WEIGHTS_INDEX_FILE,
} from '../model/weights/qwen3Folder';
import { parseSafetensorsIndex } from '../model/weights/safetensors';
import { countQwen3Params, parseQwen3Config, type Qwen3Config } from '../model/qwen3/config';
import { parsePrunedVocabMapping, type PrunedVocabMapping } from '../model/tokenizer/prunedVocab';

/** `model.init` of a run whose policy is a picked folder (runAssets treats it as a folder name). */
export const FOLDER_INIT_PREFIX = 'folder:';

export function toFolderInit(folderName: string): string {
  return `${FOLDER_INIT_PREFIX}${folderName}`;
}

export interface PickedModelFolder {
  /** The picked folder's name (the common top folder of the files), or "picked files". */
  name: string;
  /** Every picked file, as picked (the worker's reader strips the top folder again). */
  files: File[];
  config: Qwen3Config;
  /** Parameters of a Qwen3 of this config (a tied LM head counts once). */
  nParams: number;
  /** The safetensors file(s) holding the weights. */
  weightFiles: string[];
  /** Bytes of those files. */
  weightBytes: number;
  /** Stored dtypes of the weights (F32, BF16, …). */
  dtypes: string[];
  hasTokenizerFiles: boolean;
  /** Tokens kept by pruned_vocab.json; absent: the full Qwen3 vocabulary. */
  prunedVocabSize?: number;
  /** pruned_vocab.json itself (Run setup counts FTRL prompts in the folder's own vocabulary). */
  prunedVocab?: PrunedVocabMapping;
}

export class ModelFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelFolderError';
  }
}

const LOADABLE_DTYPES = new Set(['F32', 'F16', 'BF16']);

/**
 * The picked files by their name inside the folder: the common top folder stripped, as the
 * worker's reader (src/model/weights/browserFiles.ts createFileListReader) names them.
 */
function nameFiles(picked: readonly File[]): { folderName: string; byName: Map<string, File> } {
  const parts = picked.map((f) => (f.webkitRelativePath || f.name).split('/'));
  const top = parts[0]?.[0];
  const shareTop = picked.length > 0 && parts.every((p) => p.length > 1 && p[0] === top);
  const byName = new Map<string, File>();
  picked.forEach((f, i) => byName.set((shareTop ? parts[i].slice(1) : parts[i]).join('/'), f));
  return { folderName: shareTop && top ? top : 'picked files', byName };
}

function listNames(names: Iterable<string>): string {
  const sorted = [...names].sort();
  if (sorted.length === 0) return 'nothing';
  return sorted.length > 8 ? `${sorted.slice(0, 8).join(', ')}, … (${sorted.length} files)` : sorted.join(', ');
}

async function readJson(file: File, name: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(await file.text());
  } catch (e) {
    throw new ModelFolderError(`${name} is not valid JSON (${(e as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ModelFolderError(`${name} must hold a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** Reads config.json; errors name the field (`config.json field "hidden_size": …`). */
export function checkQwen3ConfigJson(raw: Record<string, unknown>): Qwen3Config {
  if (raw.model_type !== 'qwen3') {
    throw new ModelFolderError(
      `${CONFIG_FILE}: model_type must be "qwen3" (found ${raw.model_type === undefined ? 'no model_type' : JSON.stringify(raw.model_type)})`,
    );
  }
  try {
    return parseQwen3Config(raw);
  } catch (e) {
    const message = (e as Error).message.replace(/^config\.(\w+): /, 'field "$1": ');
    throw new ModelFolderError(`${CONFIG_FILE} ${message}`);
  }
}

interface HeaderEntry {
  dtype: string;
  shape: number[];
}

/**
 * The tensor names, dtypes and shapes of a safetensors file from its header alone (8-byte
 * little-endian length, then JSON). Checks that the offsets cover the file exactly, so a
 * truncated download is caught here; the data bytes are checked when the worker loads them.
 */
export async function readSafetensorsShapes(file: File, name: string): Promise<Map<string, HeaderEntry>> {
  if (file.size < 8) throw new ModelFolderError(`${name}: ${file.size} bytes is too short for a safetensors file`);
  const lengthBytes = new DataView(await file.slice(0, 8).arrayBuffer());
  const headerBytes = lengthBytes.getUint32(0, true) + lengthBytes.getUint32(4, true) * 2 ** 32;
  if (headerBytes > 100_000_000 || 8 + headerBytes > file.size) {
    throw new ModelFolderError(
      `${name}: not a safetensors file (its header length ${headerBytes} runs past the file's ${file.size} bytes)`,
    );
  }
  let header: unknown;
  try {
    header = JSON.parse(await file.slice(8, 8 + headerBytes).text());
  } catch {
    throw new ModelFolderError(`${name}: not a safetensors file (its header is not JSON)`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new ModelFolderError(`${name}: not a safetensors file (its header is not a JSON object)`);
  }
  const entries = new Map<string, HeaderEntry>();
  let dataEnd = 0;
  for (const [tensor, raw] of Object.entries(header as Record<string, unknown>)) {
    if (tensor === '__metadata__') continue;
    const info = (raw ?? {}) as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const offsets = info.data_offsets;
    if (
      typeof info.dtype !== 'string' ||
      !Array.isArray(info.shape) ||
      !info.shape.every((d) => Number.isSafeInteger(d) && d >= 0) ||
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)
    ) {
      throw new ModelFolderError(`${name}: tensor "${tensor}" has a malformed header entry`);
    }
    entries.set(tensor, { dtype: info.dtype, shape: info.shape as number[] });
    dataEnd = Math.max(dataEnd, offsets[1] as number);
  }
  const expected = 8 + headerBytes + dataEnd;
  if (expected !== file.size) {
    throw new ModelFolderError(
      `${name}: the header indexes ${expected} bytes but the file holds ${file.size}` +
        (file.size < expected ? ' (truncated?)' : ''),
    );
  }
  return entries;
}

/**
 * Checks a folder pick and describes it; throws a ModelFolderError naming the missing file
 * or the bad field. `picked` is the input's FileList (webkitRelativePath "<folder>/<name>").
 */
export async function inspectModelFolder(picked: Iterable<File>): Promise<PickedModelFolder> {
  const files = [...picked];
  const { folderName, byName } = nameFiles(files);
  const configFile = byName.get(CONFIG_FILE);
  if (!configFile) {
    throw new ModelFolderError(
      `not a Qwen3 folder: it has no ${CONFIG_FILE} at its top (found: ${listNames(byName.keys())})`,
    );
  }
  const config = checkQwen3ConfigJson(await readJson(configFile, CONFIG_FILE));

  // Weights: one file, or an index naming its shards.
  const shapes = new Map<string, HeaderEntry>();
  let weightFiles: string[];
  const single = byName.get(WEIGHTS_FILE);
  const indexFile = byName.get(WEIGHTS_INDEX_FILE);
  if (single) {
    weightFiles = [WEIGHTS_FILE];
  } else if (indexFile) {
    let index;
    try {
      index = parseSafetensorsIndex(await readJson(indexFile, WEIGHTS_INDEX_FILE));
    } catch (e) {
      throw e instanceof ModelFolderError ? e : new ModelFolderError(`${WEIGHTS_INDEX_FILE}: ${(e as Error).message}`);
    }
    weightFiles = [...new Set(index.weightMap.values())].sort();
    const missing = weightFiles.filter((f) => !byName.has(f));
    if (missing.length > 0)
      throw new ModelFolderError(`${WEIGHTS_INDEX_FILE} names ${listNames(missing)}, which the folder lacks`);
  } else {
    throw new ModelFolderError(
      `not a Qwen3 folder: it has neither ${WEIGHTS_FILE} nor ${WEIGHTS_INDEX_FILE} (found: ${listNames(byName.keys())})`,
    );
  }
  let weightBytes = 0;
  for (const name of weightFiles) {
    const file = byName.get(name)!;
    weightBytes += file.size;
    for (const [tensor, entry] of await readSafetensorsShapes(file, name)) shapes.set(tensor, entry);
  }
  const problems = findQwen3TensorProblems(config, shapes);
  if (problems.length > 0) {
    const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : '';
    throw new ModelFolderError(
      `${weightFiles.join(', ')} do not match ${CONFIG_FILE}: ${problems.slice(0, 3).join('; ')}${more}`,
    );
  }
  const dtypes = [...new Set([...shapes.values()].map((e) => e.dtype))].sort();
  const bad = [...shapes].find(([, e]) => !LOADABLE_DTYPES.has(e.dtype));
  if (bad)
    throw new ModelFolderError(
      `${weightFiles.join(', ')}: tensor "${bad[0]}" is ${bad[1].dtype}; only F32, F16 and BF16 weights load`,
    );

  const hasTokenizer = byName.has(TOKENIZER_FILE);
  const hasTokenizerConfig = byName.has(TOKENIZER_CONFIG_FILE);
  if (hasTokenizer !== hasTokenizerConfig) {
    throw new ModelFolderError(
      `the folder has ${hasTokenizer ? TOKENIZER_FILE : TOKENIZER_CONFIG_FILE} but no ${hasTokenizer ? TOKENIZER_CONFIG_FILE : TOKENIZER_FILE}: add it, or remove both`,
    );
  }
  const folder: PickedModelFolder = {
    name: folderName,
    files,
    config,
    nParams: countQwen3Params(config),
    weightFiles,
    weightBytes,
    dtypes,
    hasTokenizerFiles: hasTokenizer,
  };
  const prunedFile = byName.get(PRUNED_VOCAB_FILE);
  if (prunedFile) {
    let mapping: PrunedVocabMapping;
    try {
      mapping = parsePrunedVocabMapping(await readJson(prunedFile, PRUNED_VOCAB_FILE));
    } catch (e) {
      throw e instanceof ModelFolderError ? e : new ModelFolderError(`${PRUNED_VOCAB_FILE}: ${(e as Error).message}`);
    }
    const kept = mapping.keptIds.length;
    if (kept > config.vocab_size) {
      throw new ModelFolderError(
        `${PRUNED_VOCAB_FILE} keeps ${kept} tokens but ${CONFIG_FILE} field "vocab_size" is ${config.vocab_size}`,
      );
    }
    folder.prunedVocabSize = kept;
    folder.prunedVocab = mapping;
  }
  return folder;
}

/** "4 layers · hidden 192 · vocab 1,022 · 1.95 M parameters" */
export function describeModelShape(f: Pick<PickedModelFolder, 'config' | 'nParams'>): string {
  const c = f.config;
  const n = f.nParams;
  const params =
    n >= 1e9 ? `${(n / 1e9).toFixed(2)} B` : n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : n.toLocaleString('en-US');
  return `${c.num_hidden_layers} layers · hidden ${c.hidden_size} · vocab ${c.vocab_size.toLocaleString('en-US')} · ${params} parameters`;
}
