// The training state a run holds, counted by hand, and the refusal of a run that cannot fit
// wasm before any weight exists.
import { describe, expect, it } from 'vitest';
import { selectBackend } from '../model/backend';
import { getNodeWasmPaths } from '../model/qwen3/node';
import { QWEN3_PRESETS, type Qwen3Config } from '../model/qwen3/config';
import type { Qwen3Tokenizer } from '../model/tokenizer/qwen3Tokenizer';
import type { ToolExecutor } from '../envs/sandbox/types';
import { resolveConfig } from './config';
import { WASM_MEMORY_LIMIT_BYTES, checkTrainingMemory, estimateTrainingState } from './memoryEstimate';
import { prepareRunAssetsWith, type RunPlatform } from './runAssets';
import './index';

// vocab 10, hidden 4, one layer (q, k, v, o 4×4 each; q/k norms of head_dim 4; two layer norms;
// gate, up 8×4 and down 4×8), a final norm, tied embedding:
// 40 + (4·16 + 4 + 4 + 4 + 4 + 3·32) + 4 = 40 + 176 + 4 = 220 parameters.
const SMALL: Qwen3Config = {
  vocab_size: 10, hidden_size: 4, intermediate_size: 8, num_hidden_layers: 1, num_attention_heads: 1, num_key_value_heads: 1,
  head_dim: 4, rms_norm_eps: 1e-6, rope_theta: 10000, tie_word_embeddings: true, max_position_embeddings: 64, initializer_range: 0.02,
};

describe('estimateTrainingState', () => {
  it('counts float32 copies: weights, gradients, two moments, π_old and (KL on) π_ref; LoRA only the frozen base', () => {
    const full = estimateTrainingState(SMALL, resolveConfig({ klCoef: 0.001 }));
    expect([full.params, full.trainable, full.bytes]).toEqual([220, 220, 4 * 220 * 6]);
    expect(estimateTrainingState(SMALL, resolveConfig({ klCoef: 0 })).bytes).toBe(4 * 220 * 5);
    const lora = estimateTrainingState(SMALL, resolveConfig({ model: { lora: { rank: 2, alpha: 4, targets: ['q', 'v'] } } }));
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
    expect(() => checkTrainingMemory(q06, resolveConfig({}), 'wasm')).toThrow(
      'config.model: a model of 596,049,920 parameters needs at least 13.32 GiB of training state on wasm (the weights, their gradients, AdamW\'s two moments, π_old\'s snapshot, π_ref\'s copy: 6 float32 copies, before activations), over WebAssembly\'s 4.00 GiB; train it on WebGPU (config.backend "webgpu", a hardware GPU), or train LoRA adapters on the frozen weights (config.model.lora)',
    );
    expect(() => checkTrainingMemory(q06, resolveConfig({ model: { lora: { rank: 8, alpha: 16, targets: ['q', 'v'] } } }), 'wasm')).not.toThrow();
    expect(() => checkTrainingMemory(q06, resolveConfig({}), 'webgpu')).not.toThrow();
    expect(() => checkTrainingMemory(QWEN3_PRESETS['qwen3-nano'], resolveConfig({}), 'wasm')).not.toThrow();
    expect(WASM_MEMORY_LIMIT_BYTES).toBe(65_536 * 65_536);
  });

  it('refuses before any weight is made: prepareRunAssetsWith never builds the 0.6B model on wasm', async () => {
    await selectBackend('wasm', { wasmPaths: getNodeWasmPaths() });
    const platform: RunPlatform = {
      loadSourceTokenizer: async () => ({}) as Qwen3Tokenizer,
      readWarmStartFile: async (name) => {
        throw new Error(`no file ${name} in this test`);
      },
      warmStartLocation: 'test/warm-start',
      createExecutor: () => ({}) as ToolExecutor,
    };
    // Building it would first allocate 2.4 GB of weights; the refusal comes before.
    await expect(prepareRunAssetsWith(platform, resolveConfig({ model: { preset: 'Qwen3-0.6B', init: 'scratch' } }))).rejects.toThrow(
      /^config\.model: a model of 596,049,920 parameters needs at least 13\.32 GiB of training state on wasm/,
    );
  });
});
