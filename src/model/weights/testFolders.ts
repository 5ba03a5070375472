/**
 * Test helper (tests only, Node): tiny random Qwen3 models and the Hugging Face folders
 * written from them — config.json + model.safetensors (+ pruned_vocab.json) — the setup of
 * the tests of `pact generate`, `pact eval-ftrl --model`, `pact train`, `pact score`, the
 * vocabulary shards, the training integration, the warm start and the benchmark.
 *
 * One shape serves them all (hidden 16, 2 query heads of 8 over 1 KV head, MLP 32, one
 * layer, tied head, 64 positions); a test passes only what it changes: the vocabulary, the
 * depth, the init scale. `initializer_range` is left out unless given (the model then uses
 * HF's 0.02).
 */
import { Qwen3Model, readParamsToHost, type Qwen3Config } from '../qwen3/index';
import { writeFolderFiles } from './nodeFiles';
import { saveQwen3Folder, type SaveQwen3Input } from './qwen3Folder';
import type { WritableTensor } from './safetensors';

/** The tiny test Qwen3 without its vocabulary: 1 layer, H 16, I 32, 2 heads of D 8, 1 KV head, tied. */
export const TINY_QWEN3_SHAPE: Readonly<Omit<Qwen3Config, 'vocab_size'>> = {
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 64,
};

/** TINY_QWEN3_SHAPE with the given vocabulary and overrides. */
export function createTinyQwen3Config(overrides: Pick<Qwen3Config, 'vocab_size'> & Partial<Qwen3Config>): Qwen3Config {
  return { ...TINY_QWEN3_SHAPE, ...overrides };
}

/**
 * The trainer tests' tiny Qwen3 without its vocabulary: 2 layers, H 32, I 64, 2 heads of D 16
 * over 1 KV head, tied, 4,096 positions, HF's 0.02 init (testKit, searchTestKit, ftrlTestLines).
 */
export const TRAINER_TEST_QWEN3_SHAPE: Readonly<Omit<Qwen3Config, 'vocab_size'>> = {
  hidden_size: 32,
  intermediate_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 16,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 4096,
  initializer_range: 0.02,
};

/** TRAINER_TEST_QWEN3_SHAPE with the given vocabulary and overrides. */
export function createTrainerTestQwen3Config(
  overrides: Pick<Qwen3Config, 'vocab_size'> & Partial<Qwen3Config>,
): Qwen3Config {
  return { ...TRAINER_TEST_QWEN3_SHAPE, ...overrides };
}

/** The float32 weights of `Qwen3Model.fromConfig(config, seed)` read to the host under HF names (the model is disposed). */
export async function createRandomQwen3Tensors(config: Qwen3Config, seed: number | string): Promise<WritableTensor[]> {
  const model = Qwen3Model.fromConfig(config, seed);
  try {
    const host = await readParamsToHost(model.params);
    return [...host].map(([name, t]) => ({ name, shape: t.shape, data: t.data }));
  } finally {
    model.dispose();
  }
}

/** Writes the files of `saveQwen3Folder(input)` into `dir` (created when needed). */
export async function writeQwen3Folder(dir: string, input: SaveQwen3Input): Promise<void> {
  await writeFolderFiles(dir, { ...saveQwen3Folder(input) });
}
