import { describe, expect, it } from 'vitest';
import {
  Qwen3WeightsError,
  countQwen3Parameters,
  listIgnoredTensorNames,
  listQwen3TensorSpecs,
  validateQwen3Tensors,
  type Qwen3ShapeConfig,
} from './hfNames';

const tiny: Qwen3ShapeConfig = {
  vocab_size: 10,
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 4,
  tie_word_embeddings: true,
};

function toShapeMap(config: Qwen3ShapeConfig): Map<string, { shape: number[] }> {
  return new Map(listQwen3TensorSpecs(config).map((s) => [s.name, { shape: s.shape }]));
}

describe('Qwen3 tensor names and shapes', () => {
  it('lists the Hugging Face names with [out, in] shapes for a tiny GQA config', () => {
    const specs = new Map(listQwen3TensorSpecs(tiny).map((s) => [s.name, s.shape]));
    // 1 embedding + 2 layers × 11 tensors + final norm; tied → no lm_head
    expect(specs.size).toBe(24);
    expect(specs.get('model.embed_tokens.weight')).toEqual([10, 8]);
    expect(specs.get('model.layers.1.self_attn.q_proj.weight')).toEqual([8, 8]); // 2 heads × 4
    expect(specs.get('model.layers.1.self_attn.k_proj.weight')).toEqual([4, 8]); // 1 KV head × 4
    expect(specs.get('model.layers.1.self_attn.v_proj.weight')).toEqual([4, 8]);
    expect(specs.get('model.layers.1.self_attn.o_proj.weight')).toEqual([8, 8]);
    expect(specs.get('model.layers.0.self_attn.q_norm.weight')).toEqual([4]);
    expect(specs.get('model.layers.0.self_attn.k_norm.weight')).toEqual([4]);
    expect(specs.get('model.layers.0.input_layernorm.weight')).toEqual([8]);
    expect(specs.get('model.layers.0.post_attention_layernorm.weight')).toEqual([8]);
    expect(specs.get('model.layers.0.mlp.gate_proj.weight')).toEqual([12, 8]);
    expect(specs.get('model.layers.0.mlp.up_proj.weight')).toEqual([12, 8]);
    expect(specs.get('model.layers.0.mlp.down_proj.weight')).toEqual([8, 12]);
    expect(specs.get('model.norm.weight')).toEqual([8]);
    expect(specs.has('lm_head.weight')).toBe(false);
    const untied = new Map(listQwen3TensorSpecs({ ...tiny, tie_word_embeddings: false }).map((s) => [s.name, s.shape]));
    expect(untied.get('lm_head.weight')).toEqual([10, 8]);
  });

  it('counts parameters: tiny by hand, and the official Qwen3-0.6B (596,049,920)', () => {
    // tiny: embed 10·8 = 80; per layer 8 + 64 + 32 + 32 + 64 + 4 + 4 + 8 + 96 + 96 + 96 = 504;
    // 80 + 2·504 + 8 = 1096; untied adds lm_head 80 → 1176
    expect(countQwen3Parameters(tiny)).toBe(1096);
    expect(countQwen3Parameters({ ...tiny, tie_word_embeddings: false })).toBe(1176);
    // 0.6B: embed 151936·1024 = 155,582,464; per layer 2·1024 + 2·128 + 2048·1024·2 + 1024·1024·2
    // + 3·3072·1024 = 15,730,944; × 28 = 440,466,432; + final norm 1024 → 596,049,920
    const official: Qwen3ShapeConfig = {
      vocab_size: 151936,
      hidden_size: 1024,
      intermediate_size: 3072,
      num_hidden_layers: 28,
      num_attention_heads: 16,
      num_key_value_heads: 8,
      head_dim: 128,
      tie_word_embeddings: true,
    };
    expect(countQwen3Parameters(official)).toBe(596_049_920);
  });

  it('adds q/k/v/o biases when attention_bias is set', () => {
    const names = listQwen3TensorSpecs({ ...tiny, attention_bias: true }).map((s) => s.name);
    expect(names).toContain('model.layers.0.self_attn.o_proj.bias');
    expect(names.length).toBe(24 + 2 * 4);
  });
});

describe('validateQwen3Tensors', () => {
  it('accepts a complete set and ignores extras such as rotary inv_freq', () => {
    const tensors = toShapeMap(tiny);
    tensors.set('model.layers.0.self_attn.rotary_emb.inv_freq', { shape: [2] });
    expect(() => validateQwen3Tensors(tiny, tensors)).not.toThrow();
    expect(listIgnoredTensorNames(tiny, tensors)).toEqual(['model.layers.0.self_attn.rotary_emb.inv_freq']);
  });

  it('names a missing tensor with its expected shape', () => {
    const tensors = toShapeMap(tiny);
    tensors.delete('model.norm.weight');
    expect(() => validateQwen3Tensors(tiny, tensors)).toThrow(
      /missing tensor "model.norm.weight" \(expected shape \[8\]\)/,
    );
  });

  it('names a misshapen tensor with both shapes', () => {
    const tensors = toShapeMap(tiny);
    tensors.set('model.layers.1.self_attn.k_proj.weight', { shape: [8, 8] });
    let caught: unknown;
    try {
      validateQwen3Tensors(tiny, tensors);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(Qwen3WeightsError);
    expect((caught as Qwen3WeightsError).problems).toEqual([
      'tensor "model.layers.1.self_attn.k_proj.weight" has shape [8, 8], expected [4, 8]',
    ]);
  });

  it('requires lm_head when untied', () => {
    expect(() => validateQwen3Tensors({ ...tiny, tie_word_embeddings: false }, toShapeMap(tiny))).toThrow(
      /missing tensor "lm_head.weight" \(expected shape \[10, 8\]\)/,
    );
  });
});
