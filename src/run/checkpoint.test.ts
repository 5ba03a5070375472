/**
 * Checkpoint folders: files → TrainerState round trip, the model config recovered from
 * weight shapes, and each validation error naming its file and field. The state is built
 * by hand (a 2-layer Qwen3 with vocab 10, hidden 4), so no tfjs runs here; trainer.test.ts
 * resumes a real Trainer from these files bit for bit.
 */
import { describe, expect, it } from 'vitest';
import { getQwen3Preset, listQwen3ParamShapes, type Qwen3Config } from '../model/qwen3/config';
import type { NamedArray } from '../model/qwen3/train/types';
import { writeSafetensors } from '../model/weights/safetensors';
import {
  CheckpointFileError,
  MANIFEST_FILE,
  OPTIMIZER_FILE,
  TRAINER_STATE_FILE,
  buildCheckpointFiles,
  buildCheckpointManifest,
  inferQwen3Config,
  readCheckpointFolder,
} from './checkpoint';
import { resolveConfig } from '../recipes/config';
import type { TrainerState } from '../recipes/types';
import { readerOfFiles } from '../recipes/testing/testKit';

const nano = getQwen3Preset('qwen3-nano');
/** nano's eps / rope / context, a tiny shape: 10 tokens, hidden 4, 2 heads of 2, 1 kv head. */
const MODEL: Qwen3Config = {
  ...nano,
  vocab_size: 10,
  hidden_size: 4,
  intermediate_size: 8,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 2,
};

function buildState(): TrainerState {
  let k = 0;
  const weights: NamedArray[] = [...listQwen3ParamShapes(MODEL)].map(([name, shape]) => ({
    name,
    shape,
    data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => (k++ % 17) / 16 - 0.5),
  }));
  const optimizer = weights.flatMap((w) => [
    { name: `${w.name}.exp_avg`, shape: w.shape, data: w.data.map((x) => x / 10) },
    { name: `${w.name}.exp_avg_sq`, shape: w.shape, data: w.data.map((x) => x * x) },
    { name: `${w.name}.step`, shape: [], data: Float32Array.of(3) },
  ]);
  return {
    version: 1,
    step: 3,
    dataCursor: 6,
    rngStates: { root: { key: '3', words: [1, 2, 3, 4294967295] } },
    weights,
    optimizer,
    referenceWeights: weights.map((w) => ({ ...w, data: w.data.map((x) => -x) })),
    config: resolveConfig({ recipe: 'grpo', steps: 8, seed: 3 }),
    recipe: 'grpo',
  };
}

const MAPPING = { keptIds: [0, 1, 2, 5, 8, 13, 21, 34, 55, 89] };

const readerOf = readerOfFiles;

/** `files` with its manifest rewritten for their current content (an edit the manifest cannot catch). */
function resealed(files: Record<string, string | Uint8Array>): Record<string, string | Uint8Array> {
  return { ...files, [MANIFEST_FILE]: buildCheckpointManifest(files) };
}

/** The checkpoint's files with trainer_state.json edited (and the manifest rewritten to match). */
function withTrainerState(edit: (json: Record<string, unknown>) => void): Record<string, string | Uint8Array> {
  const files = buildCheckpointFiles(buildState(), MODEL, MAPPING);
  const json = JSON.parse(files[TRAINER_STATE_FILE] as string);
  edit(json);
  return resealed({ ...files, [TRAINER_STATE_FILE]: JSON.stringify(json) });
}

describe('checkpoint folder', () => {
  it('writes the Hugging Face files + optimizer + reference + trainer state, and reads every value back', async () => {
    const state = buildState();
    const files = buildCheckpointFiles(state, MODEL, MAPPING);
    expect(Object.keys(files).sort()).toEqual([
      'checkpoint_manifest.json',
      'config.json',
      'model.safetensors',
      'optimizer.safetensors',
      'pruned_vocab.json',
      'reference.safetensors',
      'trainer_state.json',
    ]);
    const config = JSON.parse(files['config.json'] as string);
    expect([
      config.model_type,
      config.vocab_size,
      config.hidden_size,
      config.head_dim,
      config.tie_word_embeddings,
    ]).toEqual(['qwen3', 10, 4, 2, true]);
    expect(JSON.parse(files[TRAINER_STATE_FILE] as string)).toEqual({
      version: 1,
      step: 3,
      dataCursor: 6,
      rngStates: { root: { key: '3', words: [1, 2, 3, 4294967295] } },
      config: state.config,
      recipe: 'grpo',
    });

    const back = await readCheckpointFolder(readerOf(files), { knownRecipes: ['grpo', 'pact'] });
    expect(back.modelConfig).toEqual(MODEL);
    expect(back.mapping).toEqual(MAPPING);
    const { weights, optimizer, referenceWeights, ...rest } = back.state;
    const { weights: w0, optimizer: o0, referenceWeights: r0, ...rest0 } = state;
    expect(rest).toEqual(rest0);
    // safetensors sorts tensors by name; compare by name, bit for bit.
    const byName = (list: NamedArray[]) =>
      Object.fromEntries(list.map((t) => [t.name, { shape: t.shape, data: Array.from(t.data) }]));
    expect(byName(weights)).toEqual(byName(w0));
    expect(byName(optimizer)).toEqual(byName(o0));
    expect(byName(referenceWeights!)).toEqual(byName(r0!));
    expect(back.warnings).toEqual([]);
  });

  it('infers the model config from weight shapes (records saved before they kept it)', () => {
    const state = buildState();
    expect(inferQwen3Config(state.weights, nano)).toEqual(MODEL);
    // An untied head shows up as lm_head.weight.
    const untied = [...state.weights, { name: 'lm_head.weight', shape: [10, 4], data: new Float32Array(40) }];
    expect(inferQwen3Config(untied, nano).tie_word_embeddings).toBe(false);
    expect(() => inferQwen3Config(state.weights.slice(1), nano)).toThrow(
      'weights have no 2-d "model.embed_tokens.weight"',
    );
  });

  it('names the missing file', async () => {
    const files = buildCheckpointFiles(buildState(), MODEL, MAPPING);
    delete files[TRAINER_STATE_FILE];
    await expect(readCheckpointFolder(readerOf(files))).rejects.toThrow(
      'not a checkpoint folder: trainer_state.json is missing (found: checkpoint_manifest.json, config.json, model.safetensors, optimizer.safetensors, pruned_vocab.json, reference.safetensors)',
    );
    await expect(readCheckpointFolder(readerOf({ 'random.bin': new Uint8Array(8) }))).rejects.toThrow(
      'not a checkpoint folder: config.json, model.safetensors, optimizer.safetensors, trainer_state.json are missing (found: random.bin)',
    );
  });

  it.each([
    [
      'step -1',
      (j: Record<string, unknown>) => (j.step = -1),
      'trainer_state.json: step must be a non-negative integer (got -1)',
    ],
    [
      'step 1.5',
      (j: Record<string, unknown>) => (j.step = 1.5),
      'trainer_state.json: step must be a non-negative integer (got 1.5)',
    ],
    [
      'dataCursor "6"',
      (j: Record<string, unknown>) => (j.dataCursor = '6'),
      'trainer_state.json: dataCursor must be a non-negative integer (got "6")',
    ],
    ['version 2', (j: Record<string, unknown>) => (j.version = 2), 'trainer_state.json: version must be 1 (got 2)'],
    [
      'no rng root',
      (j: Record<string, unknown>) => (j.rngStates = {}),
      'trainer_state.json: rngStates.root is missing',
    ],
    [
      'bad rng words',
      (j: Record<string, unknown>) => (j.rngStates = { root: { key: '3', words: [1, 2, 3] } }),
      'trainer_state.json: rngStates.root.words must be four uint32 integers',
    ],
    [
      'bad config',
      (j: Record<string, unknown>) => ((j.config as Record<string, unknown>).lr = -1),
      'trainer_state.json: config.lr:',
    ],
    [
      'recipe mismatch',
      (j: Record<string, unknown>) => (j.recipe = 'pact'),
      'trainer_state.json: config.recipe "grpo" differs from recipe "pact"',
    ],
    [
      'unknown recipe',
      (j: Record<string, unknown>) => ((j.recipe = 'nope'), ((j.config as Record<string, unknown>).recipe = 'nope')),
      'trainer_state.json: recipe "nope" is not one of this app\'s recipes (grpo, pact)',
    ],
  ])('trainer_state.json with %s is refused, naming the field', async (_label, edit, message) => {
    await expect(
      readCheckpointFolder(readerOf(withTrainerState(edit)), { knownRecipes: ['grpo', 'pact'] }),
    ).rejects.toThrow(message);
  });

  it('refuses bad JSON, weights that do not match config.json, and a misshapen or incomplete optimiser state', async () => {
    const good = buildCheckpointFiles(buildState(), MODEL, MAPPING);
    const edited = (over: Record<string, string | Uint8Array>) => readerOf(resealed({ ...good, ...over }));
    await expect(readCheckpointFolder(edited({ [TRAINER_STATE_FILE]: '{"step": 3,' }))).rejects.toThrow(
      'trainer_state.json is not valid JSON',
    );

    const wider = JSON.stringify({ ...JSON.parse(good['config.json'] as string), vocab_size: 12 });
    await expect(readCheckpointFolder(edited({ 'config.json': wider }))).rejects.toThrow('model.embed_tokens.weight');

    const state = buildState();
    const misshapen = state.optimizer.map((t) =>
      t.name === 'model.norm.weight.exp_avg' ? { ...t, shape: [2, 2] } : t,
    );
    await expect(readCheckpointFolder(edited({ [OPTIMIZER_FILE]: writeSafetensors(misshapen) }))).rejects.toThrow(
      'optimizer.safetensors: tensor "model.norm.weight.exp_avg" has shape [2, 2], expected [4]',
    );
    const noStep = state.optimizer.filter((t) => t.name !== 'model.norm.weight.step');
    await expect(readCheckpointFolder(edited({ [OPTIMIZER_FILE]: writeSafetensors(noStep) }))).rejects.toThrow(
      'optimizer.safetensors: "model.norm.weight.step" is missing',
    );
    await expect(readCheckpointFolder(edited({ [OPTIMIZER_FILE]: new Uint8Array(16) }))).rejects.toThrow(
      CheckpointFileError,
    );
    await expect(readCheckpointFolder(edited({ [OPTIMIZER_FILE]: new Uint8Array(16) }))).rejects.toThrow(
      /^optimizer\.safetensors: /,
    );
  });
});
