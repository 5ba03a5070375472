/**
 * The Hugging Face tensor names and shapes of a Qwen3 checkpoint (transformers'
 * `modeling_qwen3.py`: Qwen3ForCausalLM → model.embed_tokens, model.layers[i].{self_attn, mlp,
 * input_layernorm, post_attention_layernorm}, model.norm, lm_head), and a check that a set of
 * loaded tensors matches a config.
 *
 * Shapes follow PyTorch's nn.Linear convention: weight is [out_features, in_features].
 * Extra tensors (e.g. `rotary_emb.inv_freq` of older exports, or an `lm_head.weight` stored
 * although the embeddings are tied) are ignored, not rejected.
 */

/**
 * The config.json fields that decide tensor names and shapes (HF field names). The model's
 * full `Qwen3Config` (src/model/qwen3/config.ts) extends it with the norm, RoPE, context-length and init fields.
 */
export interface Qwen3ShapeConfig {
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  /** Per-head dimension; in Qwen3 independent of hidden_size / num_attention_heads. */
  head_dim: number;
  tie_word_embeddings: boolean;
  /** Qwen3 has none by default; when true q/k/v/o projections carry biases. */
  attention_bias?: boolean;
}

export interface TensorSpec {
  name: string;
  shape: number[];
}

export class Qwen3WeightsError extends Error {
  /** One line per missing or misshapen tensor. */
  readonly problems: string[];
  constructor(problems: string[]) {
    const shown = problems.slice(0, 8).join('\n  ');
    const more = problems.length > 8 ? `\n  … and ${problems.length - 8} more` : '';
    super(`Qwen3 weights do not match the config:\n  ${shown}${more}`);
    this.name = 'Qwen3WeightsError';
    this.problems = problems;
  }
}

/** Name prefix of decoder layer `layerIndex`. */
export function formatLayerPrefix(layerIndex: number): string {
  return `model.layers.${layerIndex}`;
}

/** Every tensor a Qwen3ForCausalLM checkpoint holds for `config`, in model order. */
export function listQwen3TensorSpecs(config: Qwen3ShapeConfig): TensorSpec[] {
  const { vocab_size: V, hidden_size: H, intermediate_size: I, num_hidden_layers: L, head_dim: D } = config;
  const qDim = config.num_attention_heads * D; // nHeads × headDim
  const kvDim = config.num_key_value_heads * D; // nKvHeads × headDim
  const specs: TensorSpec[] = [{ name: 'model.embed_tokens.weight', shape: [V, H] }];
  for (let i = 0; i < L; i++) {
    const p = formatLayerPrefix(i);
    specs.push(
      { name: `${p}.input_layernorm.weight`, shape: [H] },
      { name: `${p}.self_attn.q_proj.weight`, shape: [qDim, H] },
      { name: `${p}.self_attn.k_proj.weight`, shape: [kvDim, H] },
      { name: `${p}.self_attn.v_proj.weight`, shape: [kvDim, H] },
      { name: `${p}.self_attn.o_proj.weight`, shape: [H, qDim] },
    );
    if (config.attention_bias) {
      specs.push(
        { name: `${p}.self_attn.q_proj.bias`, shape: [qDim] },
        { name: `${p}.self_attn.k_proj.bias`, shape: [kvDim] },
        { name: `${p}.self_attn.v_proj.bias`, shape: [kvDim] },
        { name: `${p}.self_attn.o_proj.bias`, shape: [H] },
      );
    }
    specs.push(
      { name: `${p}.self_attn.q_norm.weight`, shape: [D] },
      { name: `${p}.self_attn.k_norm.weight`, shape: [D] },
      { name: `${p}.post_attention_layernorm.weight`, shape: [H] },
      { name: `${p}.mlp.gate_proj.weight`, shape: [I, H] },
      { name: `${p}.mlp.up_proj.weight`, shape: [I, H] },
      { name: `${p}.mlp.down_proj.weight`, shape: [H, I] },
    );
  }
  specs.push({ name: 'model.norm.weight', shape: [H] });
  if (!config.tie_word_embeddings) specs.push({ name: 'lm_head.weight', shape: [V, H] });
  return specs;
}

/** Total parameter count of the checkpoint for `config`. */
export function countQwen3Parameters(config: Qwen3ShapeConfig): number {
  return listQwen3TensorSpecs(config).reduce((sum, s) => sum + s.shape.reduce((a, b) => a * b, 1), 0);
}

/** Lists missing and misshapen tensors (empty when all match); extra tensors are ignored. */
export function findQwen3TensorProblems(
  config: Qwen3ShapeConfig,
  tensors: ReadonlyMap<string, { shape: readonly number[] }>,
): string[] {
  const problems: string[] = [];
  for (const spec of listQwen3TensorSpecs(config)) {
    const found = tensors.get(spec.name);
    if (found === undefined) {
      problems.push(`missing tensor "${spec.name}" (expected shape [${spec.shape.join(', ')}])`);
    } else if (!isSameShape(found.shape, spec.shape)) {
      problems.push(`tensor "${spec.name}" has shape [${found.shape.join(', ')}], expected [${spec.shape.join(', ')}]`);
    }
  }
  return problems;
}

/** Throws a `Qwen3WeightsError` naming each missing/misshapen tensor with both shapes. */
export function validateQwen3Tensors(
  config: Qwen3ShapeConfig,
  tensors: ReadonlyMap<string, { shape: readonly number[] }>,
): void {
  const problems = findQwen3TensorProblems(config, tensors);
  if (problems.length > 0) throw new Qwen3WeightsError(problems);
}

/** Names present in `tensors` that a Qwen3 checkpoint for `config` does not use. */
export function listIgnoredTensorNames(config: Qwen3ShapeConfig, tensors: ReadonlyMap<string, unknown>): string[] {
  const used = new Set(listQwen3TensorSpecs(config).map((s) => s.name));
  return [...tensors.keys()].filter((n) => !used.has(n));
}

function isSameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}
