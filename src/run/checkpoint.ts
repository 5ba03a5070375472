/**
 * A trainer checkpoint as files (exported and imported as Hugging Face safetensors +
 * config.json + trainer state JSON), browser- and Node-safe (no fs); the files: docs/runs.md.
 *
 * `readCheckpointFolder` turns such a folder back into a TrainerState for Trainer.importState
 * (plus the model config and pruned vocabulary), checking every file and field first and
 * naming the one at fault: `trainer_state.json: step must be a non-negative integer (got -1)`.
 * `pact train` writes these folders (checkpoint-<step>/), the Runs panel exports them as one
 * .tar (src/ui/checkpointFiles.ts), and both read them back through here.
 *
 * `inferQwen3Config` recovers a Qwen3 config from the weights' shapes, for IndexedDB
 * checkpoint records saved before they recorded their model config.
 */
import type { PrunedVocabMapping } from '../model/tokenizer/prunedVocab';
import type { Qwen3Config } from '../model/qwen3/config';
import { LORA_TARGET_SUFFIX, type LoraTarget } from '../model/qwen3/train/loraNames';
import { describeMissingRelaxedSimd, hasRelaxedSimd } from '../model/engine/kernelChoice';
import { computeSha256Hex } from '../core/sha256';
import { excerptValue, findJsonHazard, getOwn, limitText, setOwn } from '../core/untrustedJson';
import { writeSafetensors } from '../model/weights/safetensors';
import {
  formatQwen3ConfigJson,
  loadQwen3Folder,
  readSafetensorsFile,
  saveQwen3Folder,
  type FolderReader,
} from '../model/weights/qwen3Folder';
import type { NamedArray } from '../model/qwen3/train/types';
import { ConfigError, resolveConfig } from '../recipes/config';
import type { TrainerState } from '../recipes/types';

export const TRAINER_STATE_FILE = 'trainer_state.json';
export const OPTIMIZER_FILE = 'optimizer.safetensors';
export const REFERENCE_FILE = 'reference.safetensors';
export const ADAPTER_FILE = 'adapter_model.safetensors';
export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const MANIFEST_FILE = 'checkpoint_manifest.json';
/** PEFT's prefix of adapter tensor names in adapter_model.safetensors. */
const PEFT_PREFIX = 'base_model.model.';
/** PEFT's target_modules name of a config.model.lora target: the adapted weight's module (`q_proj`). */
const peftModuleOf = (target: LoraTarget) => LORA_TARGET_SUFFIX[target].split('.').at(-2)!;

/** The files of one checkpoint folder (name → text or bytes). */
export function buildCheckpointFiles(
  state: TrainerState,
  modelConfig: Qwen3Config,
  mapping?: PrunedVocabMapping,
): Record<string, string | Uint8Array> {
  const files: Record<string, string | Uint8Array> = {
    ...saveQwen3Folder({ config: modelConfig, tensors: state.weights, prunedVocab: mapping }),
    [QWEN3_CONFIG_FILE]: formatCanonicalQwen3ConfigJson(modelConfig),
    [OPTIMIZER_FILE]: writeSafetensors(state.optimizer, { format: 'pact-adamw' }),
  };
  if (state.referenceWeights) files[REFERENCE_FILE] = writeSafetensors(state.referenceWeights, { format: 'pt' });
  const lora = state.config.model.lora;
  if (state.adapterWeights) {
    if (!lora) throw new Error('buildCheckpointFiles: the state has adapterWeights but its config has no model.lora');
    files[ADAPTER_FILE] = writeSafetensors(
      state.adapterWeights.map((t) => ({ ...t, name: PEFT_PREFIX + t.name })),
      { format: 'pt' },
    );
    const adapterConfig = {
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      r: lora.rank,
      lora_alpha: lora.alpha,
      lora_dropout: 0,
      bias: 'none',
      target_modules: lora.targets.map(peftModuleOf),
      base_model_name_or_path: state.config.model.init,
      inference_mode: true,
    };
    files[ADAPTER_CONFIG_FILE] = JSON.stringify(adapterConfig, null, 2) + '\n';
  }
  const { weights: _w, optimizer: _o, referenceWeights: _r, adapterWeights: _a, ...rest } = state;
  files[TRAINER_STATE_FILE] = JSON.stringify(rest, null, 2) + '\n';
  files[MANIFEST_FILE] = buildCheckpointManifest(files);
  return files;
}

const QWEN3_CONFIG_FILE = 'config.json';

/**
 * config.json with its keys sorted (as transformers writes it, `sort_keys=True`): the same
 * bytes whatever the key order of `modelConfig`, so a run resumed from a checkpoint (whose model
 * config was read back from this file) writes the same files as the run that was not stopped.
 */
export function formatCanonicalQwen3ConfigJson(modelConfig: Qwen3Config): string {
  const json = JSON.parse(formatQwen3ConfigJson(modelConfig)) as Record<string, unknown>;
  const sorted = Object.fromEntries(
    Object.keys(json)
      .sort()
      .map((k) => [k, json[k]]),
  );
  return JSON.stringify(sorted, null, 2) + '\n';
}

/** One file of the manifest: its size and SHA-256 (hex). */
export interface ManifestEntry {
  bytes: number;
  sha256: string;
}

const asBytes = (f: string | Uint8Array) => (typeof f === 'string' ? new TextEncoder().encode(f) : f);

/** checkpoint_manifest.json's text for `files` (every file but a manifest already among them). */
export function buildCheckpointManifest(files: Readonly<Record<string, string | Uint8Array>>): string {
  const entries: Record<string, ManifestEntry> = {};
  for (const name of Object.keys(files).sort()) {
    if (name === MANIFEST_FILE) continue;
    const bytes = asBytes(files[name]);
    entries[name] = { bytes: bytes.length, sha256: computeSha256Hex(bytes) };
  }
  return JSON.stringify({ version: 1, algorithm: 'sha256', files: entries }, null, 2) + '\n';
}

/** A checkpoint folder's file or field is missing or wrong; the message names it. */
export class CheckpointFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointFileError';
  }
}

/** A safetensors file of the folder as NamedArrays (its header checked before its data is read). */
async function readArrays(reader: FolderReader, file: string): Promise<NamedArray[]> {
  try {
    return [...(await readSafetensorsFile(reader, file)).tensors].map(([name, t]) => ({
      name,
      shape: t.shape,
      data: t.data,
    }));
  } catch (e) {
    if (e instanceof CheckpointFileError) throw e;
    throw new CheckpointFileError(`${file}: ${(e as Error).message}`);
  }
}

/** The manifest's entries, checked: version 1, sha256, file name → {bytes, sha256}. */
function parseManifest(bytes: Uint8Array): Map<string, ManifestEntry> {
  const F = MANIFEST_FILE;
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new CheckpointFileError(`${F} is not valid JSON (${(e as Error).message.slice(0, 120)})`);
  }
  const hazard = findJsonHazard(json, 4);
  if (hazard) throw new CheckpointFileError(`${F}: ${hazard.path.map(String).join('.')}: ${hazard.message}`);
  if (!isObject(json) || json.version !== 1 || json.algorithm !== 'sha256' || !isObject(json.files)) {
    throw new CheckpointFileError(
      `${F} must hold {"version": 1, "algorithm": "sha256", "files": {name: {bytes, sha256}}}`,
    );
  }
  const entries = new Map<string, ManifestEntry>();
  for (const [name, entry] of Object.entries(json.files)) {
    const e = isObject(entry) ? entry : {};
    if (!isNonNegativeInt(e.bytes) || typeof e.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(e.sha256)) {
      throw new CheckpointFileError(
        `${F}: files.${excerptValue(name)} must be {bytes: integer ≥ 0, sha256: 64 hex digits}`,
      );
    }
    entries.set(name, { bytes: e.bytes, sha256: e.sha256 });
  }
  return entries;
}

/**
 * `reader` with every read checked against the manifest: a file it does not list is refused,
 * a size that differs is refused before the file is read, and the SHA-256 of what was read
 * must match. Throws naming the first listed file that is missing.
 */
function createVerifiedReader(
  reader: FolderReader,
  manifest: Map<string, ManifestEntry>,
  present: ReadonlySet<string>,
): FolderReader {
  for (const name of manifest.keys()) {
    if (!present.has(name))
      throw new CheckpointFileError(
        `${name} is missing: ${MANIFEST_FILE} lists it (the folder or archive is incomplete)`,
      );
  }
  const entryOf = (name: string): ManifestEntry => {
    const entry = manifest.get(name);
    if (!entry)
      throw new CheckpointFileError(
        `${excerptValue(name)} is not listed in ${MANIFEST_FILE}; a file added after the checkpoint was written is refused`,
      );
    return entry;
  };
  const checkSize = (name: string, bytes: number) => {
    const want = entryOf(name).bytes;
    if (bytes !== want)
      throw new CheckpointFileError(
        `${name} is ${bytes} bytes but ${MANIFEST_FILE} says ${want} (a truncated or altered file)`,
      );
  };
  const verified: FolderReader = {
    listFiles: () => reader.listFiles(),
    async readFile(name) {
      entryOf(name);
      const bytes = await reader.readFile(name);
      checkSize(name, bytes.length);
      if (computeSha256Hex(bytes) !== entryOf(name).sha256) {
        throw new CheckpointFileError(
          `${name}: its SHA-256 differs from ${MANIFEST_FILE}'s (the file was altered or damaged)`,
        );
      }
      return bytes;
    },
  };
  if (reader.fileSize && reader.readFileRange) {
    const { fileSize, readFileRange } = reader;
    verified.fileSize = async (name) => {
      const size = await fileSize.call(reader, name);
      checkSize(name, size);
      return size;
    };
    verified.readFileRange = (name, offset, length) => {
      entryOf(name);
      return readFileRange.call(reader, name, offset, length);
    };
  }
  return verified;
}

/** Whether a run of this config reads π_ref, so a checkpoint of it must carry reference.safetensors. */
export function usesReferencePolicy(config: TrainerState['config']): boolean {
  return config.klCoef > 0 || config.model.lora !== undefined;
}

/**
 * Refuses to resume a state whose run reads π_ref but that carries none (a checkpoint imported
 * without reference.safetensors): the trainer would otherwise restart π_ref from the weights.
 * Refuses a run that trained on the fma engine kernels where relaxed SIMD is missing: finishing
 * it on the plain ones would mix two sets of numerics (a new run falls back instead: runAssets.ts).
 */
export function checkResumableState(state: Pick<TrainerState, 'config' | 'referenceWeights'>): void {
  if (usesReferencePolicy(state.config) && !state.referenceWeights) {
    throw new CheckpointFileError(
      `the checkpoint has no π_ref weights (${REFERENCE_FILE}) but its run reads π_ref (config.klCoef ${state.config.klCoef}${state.config.model.lora ? ', LoRA' : ''}); it cannot be resumed as the same run`,
    );
  }
  if (state.config.engineKernels === 'fma' && !hasRelaxedSimd()) {
    throw new CheckpointFileError(
      `config.engineKernels: this run trained on the fma kernels and ${describeMissingRelaxedSimd()}; resuming on the plain ones would mix two sets of numerics`,
    );
  }
}

type TrainerStateFields = Omit<TrainerState, 'weights' | 'optimizer' | 'referenceWeights' | 'adapterWeights'>;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNonNegativeInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * Checks trainer_state.json (what `buildCheckpointFiles` writes: version, step, dataCursor,
 * rngStates, config, recipe) and returns it with the config resolved. Every error names the
 * field. `knownRecipes`, when given, is the list the recipe must be in.
 */
export function parseTrainerStateJson(json: unknown, knownRecipes?: readonly string[]): TrainerStateFields {
  const F = TRAINER_STATE_FILE;
  if (!isObject(json)) throw new CheckpointFileError(`${F} must hold a JSON object`);
  if (json.version !== 1)
    throw new CheckpointFileError(`${F}: version must be 1 (got ${JSON.stringify(json.version)})`);
  for (const field of ['step', 'dataCursor'] as const) {
    if (!isNonNegativeInt(json[field]))
      throw new CheckpointFileError(
        `${F}: ${field} must be a non-negative integer (got ${JSON.stringify(json[field])})`,
      );
  }
  const hazard = findJsonHazard(json);
  if (hazard) throw new CheckpointFileError(`${F}: ${hazard.path.map(String).join('.')}: ${hazard.message}`);
  if (!isObject(json.rngStates))
    throw new CheckpointFileError(`${F}: rngStates must be an object of named random streams`);
  if (!getOwn(json.rngStates, 'root')) throw new CheckpointFileError(`${F}: rngStates.root is missing`);
  const rngStates: Record<string, unknown> = {};
  for (const [name, st] of Object.entries(json.rngStates)) {
    const words = isObject(st) ? st.words : undefined;
    if (!isObject(st) || typeof st.key !== 'string')
      throw new CheckpointFileError(`${F}: rngStates.${limitText(name, 60)}.key must be a string`);
    if (!Array.isArray(words) || words.length !== 4 || !words.every((w) => isNonNegativeInt(w) && w <= 0xffffffff)) {
      throw new CheckpointFileError(`${F}: rngStates.${limitText(name, 60)}.words must be four uint32 integers`);
    }
    setOwn(rngStates, name, st);
  }
  if (typeof json.recipe !== 'string' || json.recipe === '')
    throw new CheckpointFileError(`${F}: recipe must be a recipe name`);
  if (knownRecipes && !knownRecipes.includes(json.recipe)) {
    throw new CheckpointFileError(
      `${F}: recipe ${excerptValue(json.recipe)} is not one of this app's recipes (${knownRecipes.join(', ')})`,
    );
  }
  if (!isObject(json.config)) throw new CheckpointFileError(`${F}: config must be the training config object`);
  let config;
  try {
    config = resolveConfig(json.config);
  } catch (e) {
    if (e instanceof ConfigError) throw new CheckpointFileError(`${F}: ${e.issues.join('; ')}`);
    throw e;
  }
  if (config.recipe !== json.recipe) {
    throw new CheckpointFileError(`${F}: config.recipe "${config.recipe}" differs from recipe "${json.recipe}"`);
  }
  return {
    version: 1,
    step: json.step as number,
    dataCursor: json.dataCursor as number,
    rngStates: rngStates as TrainerState['rngStates'],
    config,
    recipe: json.recipe,
  };
}

const sameShape = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((d, i) => d === b[i]);
const formatShape = (s: readonly number[]) => `[${s.join(', ')}]`;

/**
 * AdamW.exportState's layout: `<param>.exp_avg`, `<param>.exp_avg_sq` (param's shape), `<param>.step` ([]).
 * `weights` are what AdamW trained (the model's, or a LoRA run's adapters), named in `weightsFile`.
 */
function checkOptimizer(
  optimizer: readonly NamedArray[],
  weights: readonly NamedArray[],
  weightsFile = 'model.safetensors',
): void {
  const F = OPTIMIZER_FILE;
  const shapes = new Map(weights.map((w) => [w.name, w.shape]));
  const seen = new Map<string, Set<string>>();
  for (const t of optimizer) {
    const m = /^(.*)\.(exp_avg|exp_avg_sq|step)$/.exec(t.name);
    if (!m) throw new CheckpointFileError(`${F}: tensor "${t.name}" is not <param>.exp_avg, .exp_avg_sq or .step`);
    const [, param, part] = m;
    const shape = shapes.get(param);
    if (!shape)
      throw new CheckpointFileError(`${F}: tensor "${t.name}" is for "${param}", which ${weightsFile} does not hold`);
    const want = part === 'step' ? [] : shape;
    if (!sameShape(t.shape, want))
      throw new CheckpointFileError(
        `${F}: tensor "${t.name}" has shape ${formatShape(t.shape)}, expected ${formatShape(want)}`,
      );
    if (part === 'step' && !isNonNegativeInt(t.data[0]))
      throw new CheckpointFileError(`${F}: "${t.name}" must be a non-negative integer (got ${t.data[0]})`);
    seen.set(param, (seen.get(param) ?? new Set()).add(part));
  }
  for (const [param, parts] of seen) {
    for (const part of ['exp_avg', 'exp_avg_sq', 'step']) {
      if (!parts.has(part)) throw new CheckpointFileError(`${F}: "${param}.${part}" is missing`);
    }
  }
  if (seen.size === 0) throw new CheckpointFileError(`${F} holds no optimiser state`);
}

/** π_ref holds exactly the weights' tensors, each of the weight's shape. */
function checkReference(reference: readonly NamedArray[], weights: readonly NamedArray[]): void {
  const shapes = new Map(weights.map((w) => [w.name, w.shape]));
  for (const t of reference) {
    const shape = shapes.get(t.name);
    if (!shape)
      throw new CheckpointFileError(`${REFERENCE_FILE}: tensor ${excerptValue(t.name)} is not in model.safetensors`);
    if (!sameShape(t.shape, shape))
      throw new CheckpointFileError(
        `${REFERENCE_FILE}: tensor "${t.name}" has shape ${formatShape(t.shape)}, model.safetensors has ${formatShape(shape)}`,
      );
  }
  const held = new Set(reference.map((t) => t.name));
  const missing = weights.find((w) => !held.has(w.name));
  if (missing)
    throw new CheckpointFileError(`${REFERENCE_FILE}: tensor "${missing.name}" of model.safetensors is missing`);
}

/**
 * adapter_model.safetensors (PEFT names, `base_model.model.<weight>.lora_A.weight` [r, in] and
 * `.lora_B.weight` [out, r]) as NamedArrays under the trainer's names (no PEFT prefix); every
 * adapted weight must be in model.safetensors and have both matrices.
 */
async function readAdapters(reader: FolderReader, weights: readonly NamedArray[], rank: number): Promise<NamedArray[]> {
  const F = ADAPTER_FILE;
  const shapes = new Map(weights.map((w) => [w.name, w.shape]));
  const adapters = (await readArrays(reader, F)).map((t) => ({
    ...t,
    name: t.name.startsWith(PEFT_PREFIX) ? t.name.slice(PEFT_PREFIX.length) : t.name,
  }));
  const parts = new Map<string, Set<string>>();
  for (const t of adapters) {
    const m = /^(.*)\.lora_(A|B)\.weight$/.exec(t.name);
    if (!m) throw new CheckpointFileError(`${F}: tensor "${t.name}" is not <module>.lora_A.weight or .lora_B.weight`);
    const [, module, part] = m;
    const shape = shapes.get(`${module}.weight`);
    if (!shape || shape.length !== 2)
      throw new CheckpointFileError(
        `${F}: tensor "${t.name}" adapts "${module}.weight", which model.safetensors does not hold as a matrix`,
      );
    const want = part === 'A' ? [rank, shape[1]] : [shape[0], rank];
    if (!sameShape(t.shape, want))
      throw new CheckpointFileError(
        `${F}: tensor "${t.name}" has shape ${formatShape(t.shape)}, expected ${formatShape(want)} (rank ${rank})`,
      );
    parts.set(module, (parts.get(module) ?? new Set()).add(part));
  }
  for (const [module, seen] of parts) {
    for (const part of ['A', 'B'])
      if (!seen.has(part)) throw new CheckpointFileError(`${F}: "${module}.lora_${part}.weight" is missing`);
  }
  if (parts.size === 0) throw new CheckpointFileError(`${F} holds no adapters`);
  return adapters;
}

export interface CheckpointFolder {
  state: TrainerState;
  /** config.json as a Qwen3Config (the shape the weights were trained with). */
  modelConfig: Qwen3Config;
  /** pruned_vocab.json, when the policy used a pruned vocabulary. */
  mapping?: PrunedVocabMapping;
  /** What the reader should know (a folder without a manifest); empty when nothing. */
  warnings: string[];
}

/**
 * Reads a checkpoint folder written by buildCheckpointFiles (or `pact train`), validating it
 * all before returning: config.json + model.safetensors (loadQwen3Folder: the weights match
 * the config), pruned_vocab.json, trainer_state.json (parseTrainerStateJson),
 * optimizer.safetensors (one moment pair and step per parameter, shapes of the weights) and
 * reference.safetensors (the weights' names and shapes; without it where the config reads π_ref,
 * a warning, and checkResumableState refuses the state).
 * When checkpoint_manifest.json is there, every file is first checked against it.
 */
export async function readCheckpointFolder(
  source: FolderReader,
  options: { knownRecipes?: readonly string[] } = {},
): Promise<CheckpointFolder> {
  const files = new Set(await source.listFiles());
  const missing = ['config.json', 'model.safetensors', OPTIMIZER_FILE, TRAINER_STATE_FILE].filter((f) => !files.has(f));
  if (missing.length > 0) {
    const found = [...files].sort().map((f) => limitText(f, 60));
    throw new CheckpointFileError(
      `not a checkpoint folder: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing (found: ${found.length === 0 ? 'nothing' : found.slice(0, 12).join(', ')})`,
    );
  }
  const warnings: string[] = [];
  let reader = source;
  if (files.has(MANIFEST_FILE)) {
    reader = createVerifiedReader(source, parseManifest(await source.readFile(MANIFEST_FILE)), files);
  } else {
    warnings.push(
      `no ${MANIFEST_FILE} (a checkpoint written before they carried one): file sizes and checksums were not checked`,
    );
  }
  const stateBytes = await reader.readFile(TRAINER_STATE_FILE);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(stateBytes));
  } catch (e) {
    throw new CheckpointFileError(`${TRAINER_STATE_FILE} is not valid JSON (${(e as Error).message})`);
  }
  const rest = parseTrainerStateJson(json, options.knownRecipes);
  let folder;
  try {
    folder = await loadQwen3Folder(reader);
  } catch (e) {
    throw new CheckpointFileError((e as Error).message);
  }
  const weights = [...folder.tensors].map(([name, t]) => ({ name, shape: t.shape, data: t.data }));
  const lora = rest.config.model.lora;
  if (lora && !files.has(ADAPTER_FILE)) {
    throw new CheckpointFileError(
      `${ADAPTER_FILE} is missing: trainer_state.json's config.model.lora says this run trained LoRA adapters`,
    );
  }
  if (!lora && files.has(ADAPTER_FILE)) {
    throw new CheckpointFileError(`${ADAPTER_FILE} is present but trainer_state.json's config has no model.lora`);
  }
  if (lora && !files.has(REFERENCE_FILE))
    throw new CheckpointFileError(`${REFERENCE_FILE} is missing: a LoRA checkpoint keeps its frozen base there`);
  if (usesReferencePolicy(rest.config) && !files.has(REFERENCE_FILE)) {
    warnings.push(
      `${REFERENCE_FILE} is missing while its run reads π_ref (config.klCoef ${rest.config.klCoef} > 0): its policy can be evaluated, but it cannot be resumed`,
    );
  }
  const adapterWeights = lora ? await readAdapters(reader, weights, lora.rank) : undefined;
  const optimizer = await readArrays(reader, OPTIMIZER_FILE);
  checkOptimizer(optimizer, adapterWeights ?? weights, adapterWeights ? ADAPTER_FILE : 'model.safetensors');
  const referenceWeights = files.has(REFERENCE_FILE) ? await readArrays(reader, REFERENCE_FILE) : undefined;
  if (referenceWeights) checkReference(referenceWeights, weights);
  return {
    state: { ...rest, weights, optimizer, referenceWeights, ...(adapterWeights ? { adapterWeights } : {}) },
    modelConfig: folder.config,
    mapping: folder.prunedVocab,
    warnings,
  };
}

/** Reads a checkpoint folder back into a TrainerState (readCheckpointFolder without the extras). */
export async function readCheckpointState(reader: FolderReader): Promise<TrainerState> {
  return (await readCheckpointFolder(reader)).state;
}

/**
 * A Qwen3 config from the weights' shapes (embed_tokens [V, H], q_norm [D], q_proj [nH·D, H],
 * k_proj [nKv·D, H], gate_proj [I, H], the number of layers, lm_head present = untied);
 * the fields no shape shows (rms_norm_eps, rope_theta, max_position_embeddings,
 * initializer_range) come from `base` (the run's preset).
 */
export function inferQwen3Config(weights: readonly NamedArray[], base: Qwen3Config): Qwen3Config {
  const byName = new Map(weights.map((w) => [w.name, w.shape]));
  const need = (name: string, rank: number): number[] => {
    const shape = byName.get(name);
    if (!shape || shape.length !== rank)
      throw new CheckpointFileError(`cannot infer the model config: weights have no ${rank}-d "${name}"`);
    return shape;
  };
  const [V, H] = need('model.embed_tokens.weight', 2);
  const [D] = need('model.layers.0.self_attn.q_norm.weight', 1);
  const [qOut] = need('model.layers.0.self_attn.q_proj.weight', 2);
  const [kvOut] = need('model.layers.0.self_attn.k_proj.weight', 2);
  const [I] = need('model.layers.0.mlp.gate_proj.weight', 2);
  let L = 0;
  while (byName.has(`model.layers.${L}.input_layernorm.weight`)) L++;
  return {
    ...base,
    vocab_size: V,
    hidden_size: H,
    intermediate_size: I,
    num_hidden_layers: L,
    num_attention_heads: qOut / D,
    num_key_value_heads: kvOut / D,
    head_dim: D,
    tie_word_embeddings: !byName.has('lm_head.weight'),
  };
}
