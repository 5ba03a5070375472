/**
 * The Qwen3 decoder-only transformer (Hugging Face `modeling_qwen3.py`,
 * Qwen3ForCausalLM) over a parameter map keyed by Hugging Face tensor names.
 *
 *   h₀ = embed(ids)
 *   for each layer: h += o_proj(attn(input_layernorm(h)));  h += mlp(post_attention_layernorm(h))
 *   logits = norm(h) · lm_headᵀ   (lm_head = embed_tokens when tie_word_embeddings)
 *
 * Positions come from the attention mask (cumsum − 1, as HF `generate` computes
 * them), so a left-padded row is numbered exactly like the same row unpadded.
 * Simplifications: float32 only; no dropout; no MoE/sliding-window variants.
 */
import * as tf from './tf';
import { createRng } from '../../core/rng';
import { listQwen3ParamShapes, type Qwen3Config } from './config';
import {
  computeCausalMaskBias,
  computeGqaAttention,
  computePositionIds,
  projectAttentionOutput,
  projectQkv,
} from './attention';
import { applyMlp, applyRmsNorm, embedVocabTokens } from './layers';
import { getParam, type LoraMap, type ParamMap } from './linear';
import {
  computeShardedLogits,
  computeRowsPerShard,
  formatShardName,
  getLmHeadShards,
  getVocabShards,
  VOCAB_MATRIX_NAMES,
} from './vocabShards';
import { computeRopeTables, type RopeTables } from './rope';

let modelCounter = 0;

/** A unique tfjs variable-name prefix (tfjs refuses two variables with one name). */
export function createModelId(): string {
  modelCounter += 1;
  return `qwen3_${modelCounter}`;
}

/** `qwen3_1/model.norm.weight` → `model.norm.weight`. */
export function getHfNameOfVariable(variableName: string): string {
  const slash = variableName.indexOf('/');
  return slash < 0 ? variableName : variableName.slice(slash + 1);
}

/** A plain float32 tensor, as read from safetensors (src/model/weights) or a fixture. */
export interface HostTensor {
  shape: number[];
  data: Float32Array;
}

/**
 * Builds the parameter map from host tensors, checking every expected name and shape.
 * Errors name the tensor and both shapes; extra tensors (e.g. a redundant
 * `lm_head.weight` of a tied model) are ignored.
 */
export interface LoadParamsOptions {
  /** tfjs variable-name prefix; default a fresh `qwen3_N`. */
  modelId?: string;
  isTrainable?: boolean;
  /**
   * Largest tensor in bytes (a WebGPU adapter's maxStorageBufferBindingSize). The
   * embedding / LM head above it are split into row shards (vocabShards.ts); any other
   * tensor above it is an error naming it.
   */
  maxTensorBytes?: number;
}

export function loadQwen3Params(
  config: Qwen3Config,
  tensors: Map<string, HostTensor>,
  opts: LoadParamsOptions = {},
): ParamMap {
  const modelId = opts.modelId ?? createModelId();
  const expected = listQwen3ParamShapes(config);
  for (const [name, shape] of expected) {
    const t = tensors.get(name);
    if (!t) throw new Error(`missing tensor '${name}' (expected shape [${shape.join(', ')}])`);
    const isSame = t.shape.length === shape.length && t.shape.every((d, i) => d === shape[i]);
    if (!isSame)
      throw new Error(`tensor '${name}': shape [${t.shape.join(', ')}] but config expects [${shape.join(', ')}]`);
    const size = shape.reduce((a, b) => a * b, 1);
    if (t.data.length !== size)
      throw new Error(`tensor '${name}': ${t.data.length} values for shape [${shape.join(', ')}] (${size})`);
  }
  const params: ParamMap = new Map();
  const addVariable = (name: string, data: Float32Array, shape: number[]) => {
    const init = tf.tensor(data, shape, 'float32');
    params.set(name, tf.variable(init, opts.isTrainable ?? true, `${modelId}/${name}`));
    init.dispose();
  };
  for (const [name, shape] of expected) {
    const t = tensors.get(name)!;
    const bytes = 4 * t.data.length;
    if (opts.maxTensorBytes === undefined || bytes <= opts.maxTensorBytes) {
      addVariable(name, t.data, shape);
      continue;
    }
    if (!VOCAB_MATRIX_NAMES.includes(name)) {
      throw new Error(
        `tensor '${name}' is ${bytes} bytes, above the ${opts.maxTensorBytes}-byte buffer limit, and only ${VOCAB_MATRIX_NAMES.join(' / ')} can be sharded`,
      );
    }
    const [rows, cols] = shape;
    const rowsPerShard = computeRowsPerShard(cols, opts.maxTensorBytes);
    for (let k = 0, start = 0; start < rows; k++, start += rowsPerShard) {
      const end = Math.min(rows, start + rowsPerShard);
      addVariable(formatShardName(name, k), t.data.subarray(start * cols, end * cols), [end - start, cols]);
    }
  }
  return params;
}

/**
 * Random init, deterministic by seed and identical on every backend (drawn in JS with
 * the project's sfc32 RNG): linear and embedding weights ~ N(0, initializer_range²),
 * norm weights = 1 (HF `_init_weights`).
 */
export function initQwen3Params(config: Qwen3Config, seed: number | string, opts: LoadParamsOptions = {}): ParamMap {
  const rng = createRng(seed).split('qwen3-init');
  const std = config.initializer_range ?? 0.02;
  const tensors = new Map<string, HostTensor>();
  for (const [name, shape] of listQwen3ParamShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    if (shape.length === 1) data.fill(1);
    else for (let i = 0; i < size; i++) data[i] = rng.normal() * std;
    tensors.set(name, { shape, data });
  }
  return loadQwen3Params(config, tensors, opts);
}

/** Disposes every variable of a parameter map. */
export function disposeParams(params: ParamMap): void {
  for (const v of params.values()) v.dispose();
  params.clear();
}

export interface ForwardOptions {
  lora?: LoraMap;
}

/** Keys/values of one layer after k_norm and RoPE: [B, nKv, T, D] each. */
export interface LayerKv {
  k: tf.Tensor4D;
  v: tf.Tensor4D;
}

/**
 * The attention of decoder layer `layer` on its fresh q [B, nH, T, D] and k/v [B, nKv, T, D]
 * (after k_norm and RoPE) → [B, nH, T, D]. Full-sequence and KV-cache decoding differ only here.
 */
export type AttendFn = (layer: number, q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D) => tf.Tensor4D;

/**
 * The Qwen3 decoder on token ids [B, T] int32 → the final-normed hidden states [B, T, H]:
 * embedding, every decoder layer (pre-norm attention and SwiGLU MLP, each added to the
 * residual stream), final RMSNorm. `rope` holds the tables of the tokens' positions; `attend`
 * is each layer's attention (causal over the sequence, or over a KV cache).
 */
export function runDecoderStack(
  params: ParamMap,
  config: Qwen3Config,
  inputIds: tf.Tensor2D,
  rope: RopeTables,
  attend: AttendFn,
  lora?: LoraMap,
): tf.Tensor3D {
  const eps = config.rms_norm_eps;
  let h = embedVocabTokens(inputIds, getVocabShards(params, 'model.embed_tokens.weight')) as tf.Tensor3D; // [B, T, H]
  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    const x = h;
    h = tf.tidy(() => {
      const p = `model.layers.${layer}`;
      const normed = applyRmsNorm(x, getParam(params, `${p}.input_layernorm.weight`), eps) as tf.Tensor3D;
      const { q, k, v } = projectQkv(normed, layer, config, params, rope, lora);
      const afterAttn = x.add(projectAttentionOutput(attend(layer, q, k, v), layer, params, lora));
      const normed2 = applyRmsNorm(afterAttn, getParam(params, `${p}.post_attention_layernorm.weight`), eps);
      return afterAttn.add(applyMlp(normed2, `${p}.mlp`, params, lora)) as tf.Tensor3D;
    });
  }
  return applyRmsNorm(h, getParam(params, 'model.norm.weight'), eps) as tf.Tensor3D;
}

/** Validates ids/mask tensors: both [B, T] with the same shape. */
function checkBatch(inputIds: tf.Tensor, attentionMask: tf.Tensor): void {
  if (inputIds.rank !== 2) throw new Error(`inputIds: expected [B, T], got [${inputIds.shape.join(', ')}]`);
  if (
    attentionMask.rank !== 2 ||
    attentionMask.shape[0] !== inputIds.shape[0] ||
    attentionMask.shape[1] !== inputIds.shape[1]
  ) {
    throw new Error(
      `attentionMask: shape [${attentionMask.shape.join(', ')}] must equal inputIds [${inputIds.shape.join(', ')}]`,
    );
  }
}

/**
 * Runs the whole decoder on a batch: inputIds [B, T] int32, attentionMask [B, T]
 * (1 token, 0 padding) → the final-normed hidden states [B, T, H]. With `collectKv`,
 * also returns each layer's keys/values [B, nKv, T, D] (for the KV-cache prefill).
 */
export function runQwen3Decoder(
  params: ParamMap,
  config: Qwen3Config,
  inputIds: tf.Tensor2D,
  attentionMask: tf.Tensor2D,
  opts: ForwardOptions & { collectKv?: boolean } = {},
): { hidden: tf.Tensor3D; kv: LayerKv[] } {
  checkBatch(inputIds, attentionMask);
  const kv: LayerKv[] = [];
  const hidden = tf.tidy(() => {
    const positions = computePositionIds(attentionMask); // [B, T], values in [0, T)
    const rope = computeRopeTables(positions, config.head_dim, config.rope_theta, inputIds.shape[1]);
    const maskBias = computeCausalMaskBias(attentionMask); // [B, 1, T, T]
    const attend: AttendFn = (_layer, q, k, v) => {
      if (opts.collectKv) kv.push({ k: tf.keep(k), v: tf.keep(v) });
      return computeGqaAttention(q, k, v, maskBias);
    };
    return runDecoderStack(params, config, inputIds, rope, attend, opts.lora);
  });
  return { hidden, kv };
}

/** Logits [B, T, V] for every position (for small vocabularies, tests and scoring). */
export function computeQwen3Logits(
  params: ParamMap,
  config: Qwen3Config,
  inputIds: tf.Tensor2D,
  attentionMask: tf.Tensor2D,
  opts: ForwardOptions = {},
): tf.Tensor3D {
  const { hidden } = runQwen3Decoder(params, config, inputIds, attentionMask, opts);
  const logits = tf.tidy(() => {
    const [B, T, H] = hidden.shape;
    const head = getLmHeadShards(params, config.tie_word_embeddings); // [V, H] in row shards
    return computeShardedLogits(hidden.reshape([B * T, H]) as tf.Tensor2D, head).reshape([
      B,
      T,
      config.vocab_size,
    ]) as tf.Tensor3D;
  });
  hidden.dispose();
  return logits;
}
