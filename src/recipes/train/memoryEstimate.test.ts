// What a step holds, counted by hand and checked against the engine peaks the bench measured,
// and the refusal of a run that cannot fit wasm before any weight exists.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { QWEN3_PRESETS, type Qwen3Config } from '../../model/qwen3/config';
import { resolveConfig } from '../config';
import {
  WASM_MEMORY_LIMIT_BYTES,
  checkTrainingMemory,
  estimateStepMemory,
  estimateTrainingState,
} from './memoryEstimate';
import '../index';

// vocab 10, hidden 4, one layer (q, k, v, o 4×4 each; q/k norms of head_dim 4; two layer norms;
// gate, up 8×4 and down 4×8), a final norm, tied embedding:
// 40 + (4·16 + 4 + 4 + 4 + 4 + 3·32) + 4 = 40 + 176 + 4 = 220 parameters.
const SMALL: Qwen3Config = {
  vocab_size: 10,
  hidden_size: 4,
  intermediate_size: 8,
  num_hidden_layers: 1,
  num_attention_heads: 1,
  num_key_value_heads: 1,
  head_dim: 4,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 64,
  initializer_range: 0.02,
};

describe('estimateTrainingState', () => {
  it('counts float32 copies: weights, gradients, two moments, π_old and (KL on) π_ref; LoRA only the frozen base', () => {
    const full = estimateTrainingState(SMALL, resolveConfig({ klCoef: 0.001 }));
    expect([full.params, full.trainable, full.bytes]).toEqual([220, 220, 4 * 220 * 6]);
    expect(estimateTrainingState(SMALL, resolveConfig({ klCoef: 0 })).bytes).toBe(4 * 220 * 5);
    const lora = estimateTrainingState(
      SMALL,
      resolveConfig({ model: { lora: { rank: 2, alpha: 4, targets: ['q', 'v'] } } }),
    );
    expect([lora.trainable, lora.bytes]).toEqual([0, 4 * 220]);
  });

  it('Qwen3-0.6B: 596,049,920 parameters (155,582,464 embedding + 28 × 15,730,944 + 1,024), 13.3 GiB of training state', () => {
    const est = estimateTrainingState(QWEN3_PRESETS['Qwen3-0.6B'], resolveConfig({}));
    expect(est.params).toBe(155_582_464 + 28 * 15_730_944 + 1_024);
    expect(est.bytes).toBe(596_049_920 * 4 * 6);
  });
});

describe('checkTrainingMemory', () => {
  const q06 = QWEN3_PRESETS['Qwen3-0.6B'];
  it('refuses Qwen3-0.6B on wasm with the estimate and the fields to change; LoRA, WebGPU and qwen3-nano pass', () => {
    // 13.32 GiB of state, plus 16 heads × 3,072² × 4 B × 28 layers = 15.75 GiB of attention maps for one row.
    expect(() => checkTrainingMemory(q06, resolveConfig({}), 'wasm')).toThrow(
      "config.model: a model of 596,049,920 parameters needs at least 29.07 GiB on wasm (training state (the weights, their gradients, AdamW's two moments, π_old's snapshot, π_ref's copy) 13.32 GiB, attention maps of 1 row(s) of 3072 tokens (at least) 15.75 GiB), over WebAssembly's 4.00 GiB; train it on WebGPU (config.backend \"webgpu\", a hardware GPU), or train LoRA adapters on the frozen weights (config.model.lora)",
    );
    const lora = { rank: 8, alpha: 16, targets: ['q', 'v'] as ('q' | 'v')[] };
    // LoRA: 2.22 GiB of frozen base; at the default rows the attention maps alone exceed the memory …
    expect(() => checkTrainingMemory(q06, resolveConfig({ model: { lora } }), 'wasm')).toThrow(
      /needs at least 17\.97 GiB on wasm .*; shorten the rows \(config\.maxPromptTokens 1024, config\.maxResponseTokens 1024\) or train on WebGPU$/,
    );
    // … and fit with short ones: 16 × 384² × 4 B × 28 = 0.25 GiB.
    const short = resolveConfig({ model: { lora }, maxPromptTokens: 128, maxResponseTokens: 128 });
    expect(() => checkTrainingMemory(q06, short, 'wasm')).not.toThrow();
    expect(() => checkTrainingMemory(q06, resolveConfig({}), 'webgpu')).not.toThrow();
    expect(() => checkTrainingMemory(QWEN3_PRESETS['qwen3-nano'], resolveConfig({}), 'wasm')).not.toThrow();
    expect(WASM_MEMORY_LIMIT_BYTES).toBe(65_536 * 65_536);
  });

  it('refuses a batch whose KV cache cannot fit the engine, naming the batch fields', () => {
    // 256 × 64 rollouts × 2,112 positions × (2 · 96 floats · 4 layers · 4 B) = 106 GB of KV cache.
    const big = resolveConfig({ batchPrompts: 256, rolloutsPerPrompt: 64 });
    expect(() => checkTrainingMemory(QWEN3_PRESETS['qwen3-nano'], big, 'wasm')).toThrow(
      /^config: a step needs about .* GiB in the CPU engine's memory \(.*KV cache \(16384 rollouts × 2112 positions\) 99\.00 GiB.*lower config\.batchPrompts \(256\) or config\.rolloutsPerPrompt \(64\)/,
    );
  });
});

describe('estimateStepMemory', () => {
  it('counts the engine parts by hand for qwen3-nano at the defaults (8 prompts × K 8, 1,024 + 1,024 tokens)', () => {
    const nano = QWEN3_PRESETS['qwen3-nano'];
    const est = estimateStepMemory(nano, resolveConfig({}), 'wasm');
    expect(est.engine).toBe(true);
    expect(est.longestRowTokens).toBe(1024 + 1024 + 1024);
    const parts = Object.fromEntries(est.engineParts.map((p) => [p.what.split(' (')[0], p.bytes]));
    // 2,410,560 parameters; policy, π_old and π_ref, each with its transposes: 6 float32 copies.
    expect(parts['weights']).toBe(6 * 4 * 2_410_560);
    expect(parts['gradients']).toBe(4 * 2_410_560);
    // 64 slots of 2,048 rounded to 64, plus 64 positions of reserve; keys and values: 2 × 2 kv heads × 48 × 4 layers floats.
    expect(parts['KV cache']).toBe(64 * 2112 * 2 * 2 * 48 * 4 * 4);
    expect(parts['kept activations of one chunk']).toBe(768 * 2 ** 20);
    expect(estimateStepMemory(nano, resolveConfig({}), 'webgpu').engineParts).toEqual([]);
  });

  // Peaks of the engine's allocator measured by `pact bench` (bench/2026-12-02-*.json) on the experiment files.
  const measured = [
    { bench: 'bench/2026-12-02-wasm-1thread-graph.json', step: 0, experiment: 'experiments/pact-nano-short.json' },
    { bench: 'bench/2026-12-02-wasm-1thread-graph.json', step: 1, experiment: 'experiments/table1.json' },
    { bench: 'bench/2026-12-02-paper-size-2threads.json', step: 0, experiment: 'experiments/paper-size-step.json' },
  ];
  for (const m of measured) {
    it(`bounds the engine peak the bench measured on ${m.experiment}`, () => {
      const bench = JSON.parse(readFileSync(m.bench, 'utf8'));
      const peak: number = bench.steps[m.step].memory.engine_peak_bytes;
      const experiment = JSON.parse(readFileSync(m.experiment, 'utf8'));
      const model = {
        ...QWEN3_PRESETS['qwen3-nano'],
        ...JSON.parse(readFileSync('public/warm-start/config.json', 'utf8')),
      };
      const est = estimateStepMemory(model, resolveConfig(experiment.base), 'wasm');
      const bytes = est.engineParts.reduce((s, p) => s + p.bytes, 0);
      expect(peak).toBeGreaterThan(100 * 2 ** 20);
      expect(bytes).toBeGreaterThanOrEqual(peak);
    });
  }
});

describe('WebGPU buffer limits (one tensor, one GPU buffer)', () => {
  const GiB = 2 ** 30;
  const swiftShader = { maxBufferSize: GiB, maxStorageBufferBindingSize: GiB }; // Chromium 156's software adapter
  const nano = QWEN3_PRESETS['qwen3-nano'];

  it("passes the paper size on qwen3-nano under SwiftShader's 1 GiB: one row of 3,072 tokens is 144 MiB of scores", () => {
    // [x; h*; τ] at the defaults: 1,024 + 2 × 1,024 = 3,072 tokens; 4 heads: 4 · 4 · 3,072² = 150,994,944 bytes.
    const config = resolveConfig({ backend: 'webgpu' });
    expect(config.microBatchRows).toBe(1);
    expect(() => checkTrainingMemory(nano, config, 'webgpu', swiftShader)).not.toThrow();
    // 7 rows = 1,056,964,608 bytes fit 1 GiB (1,073,741,824); 8 rows do not, and the message says 7.
    expect(() => checkTrainingMemory(nano, resolveConfig({ microBatchRows: 7 }), 'webgpu', swiftShader)).not.toThrow();
    expect(() => checkTrainingMemory(nano, resolveConfig({ microBatchRows: 8 }), 'webgpu', swiftShader)).toThrow(
      /^config\.microBatchRows: 8 row\(s\) of up to 3,072 tokens make tensors of 1\.13 GiB \(attention scores \[8, 4, 3072, 3072\] float32\) in one buffer, over this GPU's buffer limit \(maxBufferSize 1\.00 GiB, maxStorageBufferBindingSize 1\.00 GiB\); set config\.microBatchRows to at most 7/,
    );
  });

  it('the smaller of the two limits decides; a row alone over it names the lengths; wasm and the engine are not judged by them', () => {
    const binding128 = { maxBufferSize: 4 * GiB, maxStorageBufferBindingSize: 128 * 2 ** 20 };
    // 144 MiB of scores for one row is over a 128 MiB binding.
    expect(() => checkTrainingMemory(nano, resolveConfig({}), 'webgpu', binding128)).toThrow(
      /^config\.maxResponseTokens: 1 row\(s\) of up to 3,072 tokens .* even at one row; shorten the rows \(config\.maxPromptTokens 1024, config\.maxResponseTokens 1024/,
    );
    // 512 + 2 × 512 = 1,536 tokens: 4 · 4 · 1,536² = 37,748,736 bytes a row, 3 rows fit 128 MiB.
    const short = resolveConfig({ maxPromptTokens: 512, maxResponseTokens: 512, microBatchRows: 3 });
    expect(() => checkTrainingMemory(nano, short, 'webgpu', binding128)).not.toThrow();
    // The KV cache at the default lengths: a rollout holds 2 kv heads × 2,064 positions (2,048 rounded to
    // 16, + 16) × 48 floats = 792,576 bytes a layer's keys; 64 rollouts (50.7 MB) fit 128 MiB, 169 would,
    // 8 × K 32 = 256 (203 MB) do not, and the cache is checked before the attention rows.
    const kv = resolveConfig({ batchPrompts: 8, rolloutsPerPrompt: 32 });
    expect(() => checkTrainingMemory(nano, kv, 'webgpu', binding128)).toThrow(
      /^config\.rolloutsPerPrompt: the rollouts' KV cache holds 256 rollouts .* of up to 2,064 positions .*0\.19 GiB\), over this GPU's buffer limit .*; at most 169 rollouts a step fit/,
    );
    // On wasm the CPU engine serves qwen3-nano: no T×T tensor, no buffer limit.
    expect(() => checkTrainingMemory(nano, resolveConfig({ microBatchRows: 64 }), 'wasm', swiftShader)).not.toThrow();
  });
});
