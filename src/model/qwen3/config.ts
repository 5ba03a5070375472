/**
 * Qwen3 configuration, with the field names of Hugging Face's `config.json`
 * (transformers `Qwen3Config`), validation that names the bad field, the project's
 * presets, and the parameter count.
 *
 * Simplifications: only the dense Qwen3 decoder is supported (no MoE, no sliding
 * window, no attention bias, activation SiLU); unknown extra `config.json` fields are
 * ignored.
 */
import { listQwen3TensorSpecs, type Qwen3ShapeConfig } from '../weights/hfNames';

/**
 * The shape fields (src/model/weights/hfNames.ts) plus norm epsilon, RoPE base, context length
 * and init. `attention_bias` is left out: the model has no projection biases (parseQwen3Config
 * rejects `true`).
 */
export interface Qwen3Config extends Omit<Qwen3ShapeConfig, 'attention_bias'> {
  rms_norm_eps: number;
  rope_theta: number;
  max_position_embeddings: number;
  /** Std of the normal init of linear and embedding weights (HF default 0.02). */
  initializer_range?: number;
}

export type Qwen3PresetName = 'qwen3-nano' | 'qwen3-micro' | 'Qwen3-0.6B';

/** The project's presets. nano/micro use a pruned vocabulary (see src/model/tokenizer). */
export const QWEN3_PRESETS: Readonly<Record<Qwen3PresetName, Readonly<Qwen3Config>>> = {
  // 2 410 560 parameters: embed 4096·192 = 786 432, + 4 layers · 405 984, + final norm 192.
  'qwen3-nano': {
    vocab_size: 4096,
    hidden_size: 192,
    intermediate_size: 512,
    num_hidden_layers: 4,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 48,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: true,
    max_position_embeddings: 2048,
    initializer_range: 0.02,
  },
  // 15 736 192 parameters: embed 8192·384 = 3 145 728, + 8 layers · 1 573 760, + 384.
  'qwen3-micro': {
    vocab_size: 8192,
    hidden_size: 384,
    intermediate_size: 1024,
    num_hidden_layers: 8,
    num_attention_heads: 6,
    num_key_value_heads: 2,
    head_dim: 64,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: true,
    max_position_embeddings: 4096,
    initializer_range: 0.02,
  },
  // The official Qwen/Qwen3-0.6B config.json.
  'Qwen3-0.6B': {
    vocab_size: 151936,
    hidden_size: 1024,
    intermediate_size: 3072,
    num_hidden_layers: 28,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000,
    tie_word_embeddings: true,
    max_position_embeddings: 40960,
    initializer_range: 0.02,
  },
};

/** A preset by name; an unknown name fails with the list of valid names. */
export function getQwen3Preset(name: string): Qwen3Config {
  const preset = (QWEN3_PRESETS as Record<string, Qwen3Config>)[name];
  if (!preset) {
    throw new Error(`unknown Qwen3 preset '${name}'; valid: ${Object.keys(QWEN3_PRESETS).join(', ')}`);
  }
  return { ...preset };
}

const INT_FIELDS = [
  'vocab_size',
  'hidden_size',
  'intermediate_size',
  'num_hidden_layers',
  'num_attention_heads',
  'num_key_value_heads',
  'head_dim',
  'max_position_embeddings',
] as const;

/**
 * Validates a parsed `config.json` (or a partial override of it) and returns a clean
 * Qwen3Config. Errors name the field: `config.num_key_value_heads: 3 must divide
 * num_attention_heads (16)`. `head_dim` defaults to hidden_size / num_attention_heads
 * as in transformers when absent.
 */
export function parseQwen3Config(raw: unknown): Qwen3Config {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new Error('config: expected a JSON object');
  }
  const r = raw as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of INT_FIELDS) {
    let v = r[field];
    if (field === 'head_dim' && v === undefined) {
      const h = r.hidden_size;
      const n = r.num_attention_heads;
      if (typeof h === 'number' && typeof n === 'number' && n > 0) v = h / n;
    }
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
      throw new Error(`config.${field}: expected a positive integer, got ${JSON.stringify(v)}`);
    }
    out[field] = v;
  }
  for (const field of ['rms_norm_eps', 'rope_theta'] as const) {
    const v = r[field];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
      throw new Error(`config.${field}: expected a positive number, got ${JSON.stringify(v)}`);
    }
    out[field] = v;
  }
  const tie = r.tie_word_embeddings;
  if (tie !== undefined && typeof tie !== 'boolean') {
    throw new Error(`config.tie_word_embeddings: expected a boolean, got ${JSON.stringify(tie)}`);
  }
  out.tie_word_embeddings = tie ?? false; // transformers' Qwen3Config default
  const init = r.initializer_range;
  if (init !== undefined && (typeof init !== 'number' || !(init > 0))) {
    throw new Error(`config.initializer_range: expected a positive number, got ${JSON.stringify(init)}`);
  }
  out.initializer_range = init ?? 0.02;
  if (r.attention_bias === true) throw new Error('config.attention_bias: true is not supported (Qwen3 uses false)');
  if (r.hidden_act !== undefined && r.hidden_act !== 'silu') {
    throw new Error(`config.hidden_act: only 'silu' is supported, got ${JSON.stringify(r.hidden_act)}`);
  }
  const c = out as unknown as Qwen3Config;
  if (c.num_attention_heads % c.num_key_value_heads !== 0) {
    throw new Error(
      `config.num_key_value_heads: ${c.num_key_value_heads} must divide num_attention_heads (${c.num_attention_heads})`,
    );
  }
  if (c.head_dim % 2 !== 0) throw new Error(`config.head_dim: ${c.head_dim} must be even for rotary embeddings`);
  return c;
}

/**
 * Hugging Face tensor names and PyTorch shapes of every parameter, in a stable order: the
 * checkpoint layout of src/model/weights/hfNames.ts (one list of names for loading and for
 * the model's own parameters).
 */
export function listQwen3ParamShapes(config: Qwen3Config): Map<string, number[]> {
  return new Map(listQwen3TensorSpecs(config).map((s) => [s.name, s.shape]));
}

/** Number of parameters (a tied LM head counts once, as in `model.num_parameters()`). */
export function countQwen3Params(config: Qwen3Config): number {
  let n = 0;
  for (const shape of listQwen3ParamShapes(config).values()) n += shape.reduce((a, b) => a * b, 1);
  return n;
}
