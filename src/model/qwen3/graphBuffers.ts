/**
 * The largest single tensors the tfjs graph makes, and the largest one the backend can hold.
 * On the graph (WebGPU, and wasm or cpu where the CPU engine does not serve the model) a forward
 * over B rows of T tokens holds, per layer, the attention scores and their softmax [B, heads, T,
 * T] (attention.ts computeGqaAttention), the mask [B, 1, T, T], the MLP's [B, T, intermediate]
 * and the hidden states [B, T, hidden], each one tensor. On WebGPU each tensor is one GPUBuffer
 * bound as storage, so it must fit the device's maxBufferSize and maxStorageBufferBindingSize
 * (a larger one fails validation, and tfjs does not raise it: the step reads garbage).
 */
import * as tf from './tf';
import type { Qwen3Config } from './config';
import type { BackendLimits } from '../backend';

/** Prefill rows of the graph's generation on a backend without buffer limits: at most this many bytes a tensor. */
export const GRAPH_PREFILL_BYTES = 512 * 2 ** 20;

/** Bytes of the largest tensor one row of T tokens adds to a forward on the graph. */
export function graphRowBytes(config: Qwen3Config, T: number): number {
  const heads = config.num_attention_heads;
  return 4 * Math.max(heads * T * T, T * config.intermediate_size, T * config.hidden_size);
}

/**
 * The device limits of the active tfjs backend (backend.ts BackendLimits): WebGPU's, else undefined
 * (wasm and cpu have none per tensor). The loader holds the weights to them with vocabulary shards.
 */
export function readBackendBufferLimits(): BackendLimits | undefined {
  if (tf.getBackend() !== 'webgpu') return undefined;
  const limits = (tf.backend() as { device?: { limits?: Partial<BackendLimits> } }).device?.limits;
  const { maxBufferSize, maxStorageBufferBindingSize } = limits ?? {};
  if (typeof maxBufferSize !== 'number' || typeof maxStorageBufferBindingSize !== 'number') return undefined;
  return { maxBufferSize, maxStorageBufferBindingSize };
}

/** The most bytes one tensor may take under `limits` (the smaller of the two). */
export function bufferLimitBytes(limits: BackendLimits): number {
  return Math.min(limits.maxBufferSize, limits.maxStorageBufferBindingSize);
}

/**
 * Rows of a prefill over `slots` tokens that one forward takes at once: as many as keep its
 * largest tensor within `budgetBytes` (at least 1; a row alone over it is refused before a run by
 * memoryEstimate.ts checkTrainingMemory).
 */
export function prefillRowsPerChunk(config: Qwen3Config, slots: number, budgetBytes: number): number {
  return Math.max(1, Math.floor(budgetBytes / graphRowBytes(config, slots)));
}

/** The prefill budget on the active backend: WebGPU's buffer limit, else GRAPH_PREFILL_BYTES. */
export function defaultPrefillBytes(): number {
  const limits = readBackendBufferLimits();
  return limits ? bufferLimitBytes(limits) : GRAPH_PREFILL_BYTES;
}
