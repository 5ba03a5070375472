/**
 * Qwen3 in TensorFlow.js — the public API of src/model/qwen3.
 *
 * Architecture exactly as Hugging Face `modeling_qwen3.py`, checked against an independent
 * PyTorch reference (scripts/reference/qwen3_reference.py, fixtures in ./fixtures,
 * reference.test.ts). Parameters are a Map from HF tensor names to tf.Variables (linear
 * weights [out, in]); tfjs variable names are `<modelId>/<hfName>`.
 *
 * Facade: `Qwen3Model.fromPreset(name, seed)` or `fromTensors(config, tensors)`, then
 * computeLogits → [B, T, V], computeTokenLogprobs → {logprobs, targetMask [B, T−1], entropy?},
 * generate(prompts, opts) → GeneratedRow[]. Positions = cumsum(attentionMask) − 1, so padding
 * does not change a row's numbers; returned tensors are the caller's to dispose.
 * docs/model.md has the full usage, backends, LoRA, WebGPU sharding and what is not done.
 */
import * as tf from './tf';
import { countQwen3Params, getQwen3Preset, type Qwen3Config } from './config';
import { generateQwen3, type GenerateOptions, type GeneratedRow } from './generate';
import type { LoraMap, ParamMap } from './linear';
import { computeTokenLogprobs, type TokenLogprobOptions, type TokenLogprobs } from './logprobs';
import { releaseEngineCache } from './engineBridge';
import {
  computeQwen3Logits,
  disposeParams,
  initQwen3Params,
  loadQwen3Params,
  type HostTensor,
  type LoadParamsOptions,
} from './model';

export * from './config';
export * from './linear';
export * from './model';
export * from './logprobs';
export * from './generate';
export * from './batch';
export * from './vocabShards';
export * from './referenceCheck';
export { setEngineEnabled, getEngineEnabled, isEngineActive, ENGINE_MAX_PARAMS } from './engineBridge';
export { applyMatMulWeightT, applyBatchMatMul } from './matmul';
export { embedTokens, applyRmsNorm, getLmHeadWeight } from './layers';

export class Qwen3Model {
  /** Optional LoRA adapters applied by every forward of this facade. */
  lora?: LoraMap;

  constructor(
    readonly config: Qwen3Config,
    readonly params: ParamMap,
  ) {}

  static fromPreset(name: string, seed: number | string, opts: LoadParamsOptions = {}): Qwen3Model {
    const config = getQwen3Preset(name);
    return new Qwen3Model(config, initQwen3Params(config, seed, opts));
  }

  static fromConfig(config: Qwen3Config, seed: number | string, opts: LoadParamsOptions = {}): Qwen3Model {
    return new Qwen3Model(config, initQwen3Params(config, seed, opts));
  }

  static fromTensors(config: Qwen3Config, tensors: Map<string, HostTensor>, opts: LoadParamsOptions = {}): Qwen3Model {
    return new Qwen3Model(config, loadQwen3Params(config, tensors, opts));
  }

  /** [B, T, V] logits; materialises the full vocabulary: for small V or few positions. */
  computeLogits(inputIds: tf.Tensor2D, attentionMask: tf.Tensor2D): tf.Tensor3D {
    return computeQwen3Logits(this.params, this.config, inputIds, attentionMask, { lora: this.lora });
  }

  computeTokenLogprobs(
    inputIds: tf.Tensor2D,
    attentionMask: tf.Tensor2D,
    opts: TokenLogprobOptions = {},
  ): TokenLogprobs {
    return computeTokenLogprobs(this.params, this.config, inputIds, attentionMask, { lora: this.lora, ...opts });
  }

  generate(prompts: number[][], opts: GenerateOptions): Promise<GeneratedRow[]> {
    return generateQwen3(this.params, this.config, prompts, { lora: this.lora, ...opts });
  }

  countParams(): number {
    return countQwen3Params(this.config);
  }

  /** Disposes the parameters (not the LoRA adapters, which their creator owns). */
  dispose(): void {
    releaseEngineCache(this.params, this.config);
    disposeParams(this.params);
  }
}
