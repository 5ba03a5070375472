/**
 * A Qwen3 model folder as Hugging Face lays it out: `config.json`, `model.safetensors` (or
 * `model.safetensors.index.json` + shards), and optionally `tokenizer.json` +
 * `tokenizer_config.json`; this project adds `pruned_vocab.json` ({keptIds}) for checkpoints of
 * the small presets trained on a pruned vocabulary (src/model/tokenizer/prunedVocab.ts).
 *
 * Files are read through a `FolderReader`, so the same code serves a browser folder pick
 * (browserFiles.ts) and a Node directory (nodeFiles.ts). No tfjs here: tensors come back as
 * Float32Arrays with their HF names; the model code turns them into tfjs variables.
 */
import { parseQwen3Config, type Qwen3Config } from '../qwen3/config';
import { parsePrunedVocabMapping, type PrunedVocabMapping } from '../tokenizer/prunedVocab';
import { listIgnoredTensorNames, validateQwen3Tensors } from './hfNames';
import {
  loadShardedSafetensors,
  parseSafetensors,
  readSafetensorsHeaderOf,
  writeSafetensors,
  type ParsedSafetensors,
  type ParseOptions,
  type SafetensorsTensor,
  type WritableTensor,
} from './safetensors';

/** Read access to the files of one folder; names are relative, '/'-separated. */
export interface FolderReader {
  listFiles(): Promise<string[]>;
  readFile(name: string): Promise<Uint8Array>;
  /** A file's size in bytes (optional, with readFileRange: lets a header be checked before the data is read). */
  fileSize?(name: string): Promise<number>;
  /** `length` bytes of a file from byte `offset` (optional, see fileSize). */
  readFileRange?(name: string, offset: number, length: number): Promise<Uint8Array>;
}

/**
 * Reads and parses one safetensors file of a folder. When the reader has ranged reads, the
 * header is read and checked first (8 + N bytes), so a bad file is refused without reading
 * its data into memory.
 */
export async function readSafetensorsFile(
  reader: FolderReader,
  name: string,
  options: ParseOptions = {},
): Promise<ParsedSafetensors> {
  await checkSafetensorsHeader(reader, name, options);
  return parseSafetensors(await reader.readFile(name), options);
}

/** Checks a safetensors file's header through ranged reads, when the reader has them (else nothing). */
async function checkSafetensorsHeader(reader: FolderReader, name: string, options: ParseOptions): Promise<void> {
  if (!reader.fileSize || !reader.readFileRange) return;
  const size = await reader.fileSize(name);
  await readSafetensorsHeaderOf((offset, length) => reader.readFileRange!(name, offset, length), size, options);
}

export const CONFIG_FILE = 'config.json';
export const WEIGHTS_FILE = 'model.safetensors';
export const WEIGHTS_INDEX_FILE = 'model.safetensors.index.json';
export const TOKENIZER_FILE = 'tokenizer.json';
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json';
export const PRUNED_VOCAB_FILE = 'pruned_vocab.json';

export interface TokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
}

export interface Qwen3Folder {
  config: Qwen3Config;
  /** config.json as read, with every field (the model code may want more than Qwen3Config). */
  rawConfig: Record<string, unknown>;
  tensors: Map<string, SafetensorsTensor>;
  /** `__metadata__` of the safetensors file(s). */
  metadata: Record<string, string>;
  /** Tensors in the file that a Qwen3 of this config does not use (e.g. rotary inv_freq). */
  ignoredTensorNames: string[];
  tokenizerFiles?: TokenizerFiles;
  prunedVocab?: PrunedVocabMapping;
}

export interface Qwen3FolderFiles {
  'config.json': string;
  'model.safetensors': Uint8Array;
  'pruned_vocab.json'?: string;
}

export class Qwen3FolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Qwen3FolderError';
  }
}

/** Loads config, weights (single or sharded) and optional tokenizer files; validates all of it. */
export async function loadQwen3Folder(reader: FolderReader, options: ParseOptions = {}): Promise<Qwen3Folder> {
  const files = new Set(await reader.listFiles());
  if (!files.has(CONFIG_FILE)) {
    throw new Qwen3FolderError(`folder has no ${CONFIG_FILE} (found: ${formatFileList(files)})`);
  }
  const rawConfig = await readJsonObject(reader, CONFIG_FILE);
  const modelType = rawConfig.model_type;
  if (modelType !== undefined && modelType !== 'qwen3') {
    throw new Qwen3FolderError(`${CONFIG_FILE}: field "model_type" is ${JSON.stringify(modelType)}, expected "qwen3"`);
  }
  let config: Qwen3Config;
  try {
    config = parseQwen3Config(rawConfig);
  } catch (e) {
    throw new Qwen3FolderError(`${CONFIG_FILE}: ${(e as Error).message}`);
  }

  let parsed;
  if (files.has(WEIGHTS_FILE)) {
    parsed = await readSafetensorsFile(reader, WEIGHTS_FILE, options);
  } else if (files.has(WEIGHTS_INDEX_FILE)) {
    const index = await readJsonObject(reader, WEIGHTS_INDEX_FILE);
    parsed = await loadShardedSafetensors(
      index,
      async (name) => {
        await checkSafetensorsHeader(reader, name, options); // a bad shard is refused before it is read whole
        return reader.readFile(name);
      },
      options,
    );
  } else {
    throw new Qwen3FolderError(
      `folder has neither ${WEIGHTS_FILE} nor ${WEIGHTS_INDEX_FILE} (found: ${formatFileList(files)})`,
    );
  }
  validateQwen3Tensors(config, parsed.tensors);

  const folder: Qwen3Folder = {
    config,
    rawConfig,
    tensors: parsed.tensors,
    metadata: parsed.metadata,
    ignoredTensorNames: listIgnoredTensorNames(config, parsed.tensors),
  };
  const hasTokenizer = files.has(TOKENIZER_FILE);
  const hasTokenizerConfig = files.has(TOKENIZER_CONFIG_FILE);
  if (hasTokenizer !== hasTokenizerConfig) {
    const missing = hasTokenizer ? TOKENIZER_CONFIG_FILE : TOKENIZER_FILE;
    throw new Qwen3FolderError(`folder has ${hasTokenizer ? TOKENIZER_FILE : TOKENIZER_CONFIG_FILE} but no ${missing}`);
  }
  if (hasTokenizer) {
    folder.tokenizerFiles = {
      tokenizerJson: await readJsonObject(reader, TOKENIZER_FILE),
      tokenizerConfig: await readJsonObject(reader, TOKENIZER_CONFIG_FILE),
    };
  }
  if (files.has(PRUNED_VOCAB_FILE)) {
    try {
      folder.prunedVocab = parsePrunedVocabMapping(await readJsonObject(reader, PRUNED_VOCAB_FILE));
    } catch (e) {
      throw new Qwen3FolderError(`${PRUNED_VOCAB_FILE}: ${(e as Error).message}`);
    }
    const kept = folder.prunedVocab.keptIds.length;
    if (kept > config.vocab_size) {
      throw new Qwen3FolderError(
        `${PRUNED_VOCAB_FILE} keeps ${kept} tokens but config.json field "vocab_size" is ${config.vocab_size}`,
      );
    }
  }
  return folder;
}

export interface SaveQwen3Input {
  config: Qwen3Config;
  tensors: Iterable<WritableTensor>;
  prunedVocab?: PrunedVocabMapping;
}

/**
 * The files of a folder Hugging Face transformers can load (`Qwen3ForCausalLM.from_pretrained`),
 * float32 weights. The tensors are checked against the config first.
 */
export function saveQwen3Folder(input: SaveQwen3Input): Qwen3FolderFiles {
  const tensors = [...input.tensors];
  validateQwen3Tensors(input.config, new Map(tensors.map((t) => [t.name, t])));
  const files: Qwen3FolderFiles = {
    'config.json': formatQwen3ConfigJson(input.config),
    'model.safetensors': writeSafetensors(tensors, { format: 'pt' }),
  };
  if (input.prunedVocab !== undefined)
    files['pruned_vocab.json'] = formatPrunedVocabJson(input.config, input.prunedVocab);
  return files;
}

/** The folder's config.json text (HF fields first, then the config). */
export function formatQwen3ConfigJson(config: Qwen3Config): string {
  const configJson = {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    hidden_act: 'silu',
    attention_bias: false,
    torch_dtype: 'float32',
    ...config,
  };
  return JSON.stringify(configJson, null, 2) + '\n';
}

/** The folder's pruned_vocab.json text; the mapping must fit the config's vocab_size. */
export function formatPrunedVocabJson(config: Qwen3Config, prunedVocab: PrunedVocabMapping): string {
  const mapping = parsePrunedVocabMapping(prunedVocab);
  if (mapping.keptIds.length > config.vocab_size) {
    throw new Qwen3FolderError(
      `pruned vocabulary keeps ${mapping.keptIds.length} tokens but config vocab_size is ${config.vocab_size}`,
    );
  }
  return JSON.stringify({ keptIds: mapping.keptIds }) + '\n';
}

async function readJsonObject(reader: FolderReader, name: string): Promise<Record<string, unknown>> {
  const bytes = await reader.readFile(name);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new Qwen3FolderError(`${name} is not valid JSON (${(e as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Qwen3FolderError(`${name} must hold a JSON object`);
  }
  return value as Record<string, unknown>;
}

function formatFileList(files: Set<string>): string {
  const names = [...files].sort();
  if (names.length === 0) return 'nothing';
  return names.length > 12 ? `${names.slice(0, 12).join(', ')}, …` : names.join(', ');
}
