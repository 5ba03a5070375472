/**
 * Types shared by the training machinery (optimiser, clipping, accumulation, LoRA,
 * snapshots). They restate, structurally, the contract of the Qwen3 model in
 * `src/model/qwen3/` so this folder does not depend on its progress:
 * - parameters are a `Map` from Hugging Face tensor names (`model.layers.0.self_attn.q_proj.weight`)
 *   to `tf.Variable`s, linear weights in PyTorch layout [out, in];
 * - LoRA adapters are a `Map` keyed by the adapted weight's name, with A [r, in], B [out, r]
 *   and y = x Wᵀ + scale · (x Aᵀ) Bᵀ.
 */
import type * as tf from '@tensorflow/tfjs-core';

/** Trainable parameters by name. */
export type ParamMap = Map<string, tf.Variable>;

/** Gradients (or any tensors) by parameter name. */
export type TensorMap = Map<string, tf.Tensor>;

/** One LoRA adapter: A [r, in] (random), B [out, r] (zeros at init), scale = alpha / r. */
export interface LoraAdapter {
  A: tf.Variable;
  B: tf.Variable;
  scale: number;
}

/** LoRA adapters keyed by the adapted weight's name (e.g. `model.layers.0.self_attn.q_proj.weight`). */
export type LoraMap = Map<string, LoraAdapter>;

/** A tensor as plain data, for checkpoints (safetensors, IndexedDB). Float32 only. */
export interface NamedArray {
  name: string;
  shape: number[];
  data: Float32Array;
}
