import { describe, expect, it } from 'vitest';
import { countQwen3Params, getQwen3Preset, listQwen3ParamShapes, parseQwen3Config, QWEN3_PRESETS } from './config';

describe('Qwen3 config', () => {
  it('counts Qwen3-0.6B parameters as Hugging Face does (596 049 920)', () => {
    // embed 151936·1024 = 155 582 464 (tied: counted once)
    // per layer: q 2048·1024 + k 1024·1024 + v 1024·1024 + o 1024·2048 = 6 291 456
    //            mlp 3·3072·1024 = 9 437 184; norms 2·1024 + 2·128 = 2 304 → 15 730 944
    // 28 layers = 440 466 432 (HF's "0.44B non-embedding") + final norm 1024
    expect(countQwen3Params(QWEN3_PRESETS['Qwen3-0.6B'])).toBe(155_582_464 + 28 * 15_730_944 + 1024);
  });

  it('counts an untied head separately', () => {
    const tied = getQwen3Preset('qwen3-nano');
    const untied = { ...tied, tie_word_embeddings: false };
    expect(countQwen3Params(untied) - countQwen3Params(tied)).toBe(4096 * 192);
    expect(listQwen3ParamShapes(untied).get('lm_head.weight')).toEqual([4096, 192]);
    expect(listQwen3ParamShapes(tied).has('lm_head.weight')).toBe(false);
  });

  it('keeps nano within 1–5 M and micro within 10–30 M parameters, both GQA', () => {
    // nano: 4096·192 + 4·(110 592 + 294 912 + 480) + 192 = 2 410 560
    expect(countQwen3Params(QWEN3_PRESETS['qwen3-nano'])).toBe(2_410_560);
    // micro: 8192·384 + 8·(393 216 + 1 179 648 + 896) + 384 = 15 736 192
    expect(countQwen3Params(QWEN3_PRESETS['qwen3-micro'])).toBe(15_736_192);
    for (const name of ['qwen3-nano', 'qwen3-micro'] as const) {
      const c = QWEN3_PRESETS[name];
      expect(c.num_key_value_heads).toBeLessThan(c.num_attention_heads);
    }
  });

  it('has the official Qwen3-0.6B shape', () => {
    const c = getQwen3Preset('Qwen3-0.6B');
    expect([c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.head_dim]).toEqual([
      28, 1024, 16, 8, 128,
    ]);
    expect([c.intermediate_size, c.vocab_size, c.rope_theta, c.rms_norm_eps, c.max_position_embeddings]).toEqual([
      3072, 151936, 1e6, 1e-6, 40960,
    ]);
    expect(c.tie_word_embeddings).toBe(true);
    expect(listQwen3ParamShapes(c).get('model.layers.27.self_attn.o_proj.weight')).toEqual([1024, 2048]);
  });

  it('parses a config.json and names the bad field', () => {
    const ok = parseQwen3Config({ ...QWEN3_PRESETS['Qwen3-0.6B'], architectures: ['Qwen3ForCausalLM'] });
    expect(ok.head_dim).toBe(128);
    const noHeadDim: Record<string, unknown> = { ...QWEN3_PRESETS['qwen3-nano'] };
    delete noHeadDim.head_dim;
    expect(parseQwen3Config(noHeadDim).head_dim).toBe(192 / 4);
    expect(() => parseQwen3Config({ ...QWEN3_PRESETS['qwen3-nano'], hidden_size: 0 })).toThrow(/config\.hidden_size/);
    expect(() => parseQwen3Config({ ...QWEN3_PRESETS['qwen3-nano'], num_key_value_heads: 3 })).toThrow(
      /config\.num_key_value_heads/,
    );
    expect(() => parseQwen3Config({ ...QWEN3_PRESETS['qwen3-nano'], rope_theta: 'x' })).toThrow(/config\.rope_theta/);
    expect(() => parseQwen3Config({ ...QWEN3_PRESETS['qwen3-nano'], tie_word_embeddings: 1 })).toThrow(
      /config\.tie_word_embeddings/,
    );
    expect(() => parseQwen3Config([])).toThrow(/JSON object/);
    expect(() => getQwen3Preset('qwen3-huge')).toThrow(/qwen3-nano, qwen3-micro, Qwen3-0.6B/);
  });
});
