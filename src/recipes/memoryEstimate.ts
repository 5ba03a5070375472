/**
 * The training state a run holds at once, from the model's shape and the config alone, and
 * the refusal of a run that cannot fit its backend before any weight is uploaded.
 * Float32 throughout: the weights; for every trained weight its gradient, AdamW's two
 * moments and π_old's snapshot during a step; π_ref's copy of the weights when the KL reads
 * it (with LoRA the frozen base is π_ref and only the adapters train). Activations, the KV
 * cache and the CPU engine's buffers are not counted (they live apart: the engine has its own
 * WebAssembly memory, and its activations are chunked under a fixed budget), so this is a
 * lower bound of what the backend must hold: a run over it certainly cannot train.
 */
import { countQwen3Params, type Qwen3Config } from '../model/qwen3/config';
import type { TrainConfig } from './config';

/** One WebAssembly memory's most (65,536 pages of 64 KiB): tfjs-wasm's heap cannot grow past it. */
export const WASM_MEMORY_LIMIT_BYTES = 4 * 2 ** 30;

export interface TrainingStateEstimate {
  /** Parameters of the model. */
  params: number;
  /** Parameters the optimiser trains (the adapters' are left out under LoRA: a few % at most). */
  trainable: number;
  /** Float32 copies of the weights held at once, in words. */
  copies: string[];
  bytes: number;
}

export function estimateTrainingState(model: Qwen3Config, config: Pick<TrainConfig, 'klCoef' | 'model'>): TrainingStateEstimate {
  const params = countQwen3Params(model);
  const isLora = config.model.lora !== undefined;
  const trainable = isLora ? 0 : params;
  const copies = ['the weights'];
  if (trainable > 0) copies.push('their gradients', "AdamW's two moments", "π_old's snapshot");
  if (!isLora && config.klCoef > 0) copies.push("π_ref's copy");
  const bytes = 4 * (params + trainable * 4 + (!isLora && config.klCoef > 0 ? params : 0));
  return { params, trainable, copies, bytes };
}

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;

/**
 * Throws, naming the fields to change, when the run's training state cannot fit the backend:
 * on wasm, one WebAssembly memory (4 GiB). Other backends are not checked (WebGPU's limits
 * are the adapter's; cpu holds tensors in the JavaScript heap).
 */
export function checkTrainingMemory(model: Qwen3Config, config: Pick<TrainConfig, 'klCoef' | 'model'>, backend: string): void {
  if (backend !== 'wasm') return;
  const est = estimateTrainingState(model, config);
  if (est.bytes <= WASM_MEMORY_LIMIT_BYTES) return;
  throw new Error(
    `config.model: a model of ${est.params.toLocaleString('en-US')} parameters needs at least ${gib(est.bytes)} of training state on wasm ` +
      `(${est.copies.join(', ')}: ${est.bytes / (4 * est.params)} float32 copies, before activations), over WebAssembly's ${gib(WASM_MEMORY_LIMIT_BYTES)}; ` +
      `train it on WebGPU (config.backend "webgpu", a hardware GPU), or train LoRA adapters on the frozen weights (config.model.lora)`,
  );
}
