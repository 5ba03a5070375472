/**
 * The Hugging Face names of a Qwen3's tensors as the engine reads them, the gradient names
 * of LoRA matrices, and the tensors one pass reads (pinned in the weight cache while a
 * backward may still come).
 */
import type { Qwen3Config } from '../qwen3/config';
import type { EngineParams, EngineTensor } from './weights';

export const EMBED = 'model.embed_tokens.weight';
export const FINAL_NORM = 'model.norm.weight';
export const LM_HEAD = 'lm_head.weight';

/** Names of one layer's tensors. */
export function layerNames(i: number) {
  return (LAYER_NAMES[i] ??= Object.freeze(buildLayerNames(i)));
}

/** Built once per layer index: every layer of every decode step asks for them. */
const LAYER_NAMES: Readonly<ReturnType<typeof buildLayerNames>>[] = [];

function buildLayerNames(i: number) {
  const p = `model.layers.${i}`;
  return {
    inNorm: `${p}.input_layernorm.weight`,
    postNorm: `${p}.post_attention_layernorm.weight`,
    qNorm: `${p}.self_attn.q_norm.weight`,
    kNorm: `${p}.self_attn.k_norm.weight`,
    q: `${p}.self_attn.q_proj.weight`,
    k: `${p}.self_attn.k_proj.weight`,
    v: `${p}.self_attn.v_proj.weight`,
    o: `${p}.self_attn.o_proj.weight`,
    gate: `${p}.mlp.gate_proj.weight`,
    up: `${p}.mlp.up_proj.weight`,
    down: `${p}.mlp.down_proj.weight`,
  };
}

export type LayerNames = ReturnType<typeof layerNames>;

/** Gradient names of a LoRA adapter's matrices. */
export function loraGradName(weight: string, part: 'A' | 'B'): string {
  return `${weight}|${part}`;
}

/** The LM head's weight name: the embedding when tied. */
export function headName(config: Qwen3Config): string {
  return config.tie_word_embeddings ? EMBED : LM_HEAD;
}

/** Every tensor of a parameter set that a pass reads (pinned for a pending backward). */
export function listPassTensors(config: Qwen3Config, P: EngineParams): EngineTensor[] {
  const out: EngineTensor[] = [P.get(EMBED), P.get(FINAL_NORM)];
  if (!config.tie_word_embeddings) out.push(P.get(LM_HEAD));
  for (let i = 0; i < config.num_hidden_layers; i++)
    for (const name of Object.values(layerNames(i))) out.push(P.get(name));
  for (const ad of P.lora?.values() ?? []) out.push(ad.A, ad.B);
  return out;
}
