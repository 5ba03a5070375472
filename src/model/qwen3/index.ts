/**
 * Qwen3 in TensorFlow.js — the public API of src/model/qwen3.
 *
 * Architecture exactly as Hugging Face `modeling_qwen3.py` (checked against an
 * independent PyTorch reference: scripts/reference/qwen3_reference.py, fixtures in
 * ./fixtures, test reference.test.ts). Parameters are a Map from HF tensor names to
 * tf.Variables (linear weights [out, in]); tfjs variable names are `<modelId>/<hfName>`
 * (getHfNameOfVariable strips the prefix).
 *
 * Facade (what the trainer and the workers use):
 *   const model = Qwen3Model.fromPreset('qwen3-nano', seed)        // random init
 *   const model = Qwen3Model.fromTensors(parseQwen3Config(json), tensorsByName)  // HF weights
 *   model.config, model.params (Map<hfName, tf.Variable>), model.lora (optional LoraMap)
 *   model.computeLogits(inputIds [B,T] int32, attentionMask [B,T]) → [B, T, V]   (small V)
 *   model.computeTokenLogprobs(inputIds, attentionMask, {withEntropy?}) →
 *       {logprobs [B,T−1], targetMask [B,T−1], entropy?}  (differentiable, chunked, no [B,T,V])
 *   await model.generate(prompts: number[][], {maxNewTokens, temperature, topP, random,
 *       stopTokenIds, stopStrings, decode, cacheLength}) → GeneratedRow[] per prompt
 *       {tokens, logprobs (model at T=1), samplingLogprobs, finishReason, stop}
 *   model.countParams(), model.dispose()
 * Batches: packTokenRows(rows, {padTokenId, side}) → {inputIds, attentionMask}.
 * Backend: selectBackend('webgpu' | 'wasm' | 'cpu') in src/model/backend.ts; in Node,
 *   wasmPaths = getNodeWasmPaths() from ./node (the only file here importing Node modules).
 *   Plain Node (tsx, not vitest/vite) also needs the ESM resolve hook ./nodeResolveHook.mjs.
 * Reference check (any backend, browser-safe): parseReferenceFixture + checkAgainstReference
 *   (./referenceCheck) — the entry for the WebGPU/Chromium comparison.
 * Speed: linear layers and attention go through ./matmul (explicit transposes + custom
 *   gradients): tfjs-wasm's transposed-operand matmuls were 10–60× slower.
 *
 * Conventions: positions = cumsum(attentionMask) − 1, so left and right padding give
 * the same numbers as an unpadded row; tensors returned to the caller are theirs to
 * dispose. LoRA: applyLinear (./linear) adds scale·(x Aᵀ)Bᵀ for names present in the
 * LoRA map; freeze the base with `v.trainable = false` so no base gradient is built.
 *
 * WebGPU buffer limits: pass `{maxTensorBytes: selection.limits.maxStorageBufferBindingSize}`
 * to fromTensors/fromConfig; the embedding / LM head are then stored as row shards
 * (`model.embed_tokens.weight#shard0`, …; vocabShards.ts) and every reader handles
 * them. For export, `await readParamsToHost(params)` merges shards back under HF names.
 *
 * Not done: float16 storage; sharding of tensors other than the vocabulary matrices.
 */
import * as tf from './tf';
import { countQwen3Params, getQwen3Preset, type Qwen3Config } from './config';
import { generateQwen3, type GenerateOptions, type GeneratedRow } from './generate';
import type { LoraMap, ParamMap } from './linear';
import { computeTokenLogprobs, type TokenLogprobOptions, type TokenLogprobs } from './logprobs';
import { releaseEngineCache } from './engineBridge';
import { computeQwen3Logits, disposeParams, initQwen3Params, loadQwen3Params, type HostTensor, type LoadParamsOptions } from './model';

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

  computeTokenLogprobs(inputIds: tf.Tensor2D, attentionMask: tf.Tensor2D, opts: TokenLogprobOptions = {}): TokenLogprobs {
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
