/**
 * What a training step holds at once, from the model's shape and the config alone, and the
 * refusal of a run that cannot fit its backend before any weight is uploaded.
 * Two memories: the tfjs backend's (weights; per trained weight its gradient, AdamW's two
 * moments and π_old's snapshot; π_ref's copy when the KL reads it; with LoRA the frozen base
 * is π_ref and only the adapters train) and, where the CPU engine serves the model, the
 * engine's own WebAssembly memory (resident weight versions, gradients, the rollouts' KV
 * cache, the kept activations of one chunk). On the tfjs graph (WebGPU, models past the
 * engine) the activations are a lower bound: one T×T attention map per head and layer.
 * Rows are bounded by the config: a rollout by maxPromptTokens + maxResponseTokens, a
 * trace-conditioned row [x; h*; τ] by that plus an expert trace taken as long as a response.
 */
import { countQwen3Params, type Qwen3Config } from '../../model/qwen3/config';
import { ENGINE_ACTIVATION_BUDGET_BYTES, engineServesShape } from '../../model/qwen3/engineBridge';
import { engineActivationBytes, engineSlotBytes, engineWeightCacheBytes } from '../../model/engine/qwen3Engine';
import type { TrainConfig } from '../config';
import type { BackendLimits } from '../../model/backend';
import { bufferLimitBytes, graphRowBytes } from '../../model/qwen3/graphBuffers';

/** One WebAssembly memory's most (65,536 pages of 64 KiB): tfjs-wasm's heap and the engine's cannot grow past it. */
export const WASM_MEMORY_LIMIT_BYTES = 4 * 2 ** 30;

type MemoryConfig = Pick<
  TrainConfig,
  'klCoef' | 'model' | 'batchPrompts' | 'rolloutsPerPrompt' | 'maxPromptTokens' | 'maxResponseTokens' | 'microBatchRows'
>;

export interface TrainingStateEstimate {
  /** Parameters of the model. */
  params: number;
  /** Parameters the optimiser trains (the adapters' are left out under LoRA: a few % at most). */
  trainable: number;
  /** Float32 copies of the weights held at once, in words. */
  copies: string[];
  bytes: number;
}

export function estimateTrainingState(
  model: Qwen3Config,
  config: Pick<TrainConfig, 'klCoef' | 'model'>,
): TrainingStateEstimate {
  const params = countQwen3Params(model);
  const isLora = config.model.lora !== undefined;
  const trainable = isLora ? 0 : params;
  const copies = ['the weights'];
  if (trainable > 0) copies.push('their gradients', "AdamW's two moments", "π_old's snapshot");
  if (!isLora && config.klCoef > 0) copies.push("π_ref's copy");
  const bytes = 4 * (params + trainable * 4 + (!isLora && config.klCoef > 0 ? params : 0));
  return { params, trainable, copies, bytes };
}

/** One named share of a step's memory, in bytes. */
export interface MemoryPart {
  what: string;
  bytes: number;
}

export interface StepMemoryEstimate {
  /** The training state (part of the backend's memory). */
  state: TrainingStateEstimate;
  /** Whether the CPU engine runs the model's forward/backward and decoding (wasm, cpu; up to ENGINE_MAX_PARAMS). */
  engine: boolean;
  /** Longest row a step reads: a trace-conditioned [x; h*; τ]. */
  longestRowTokens: number;
  /** The tfjs backend's memory. */
  backend: MemoryPart[];
  /** The engine's WebAssembly memory (empty when the engine does not serve the model). */
  engineParts: MemoryPart[];
}

const total = (parts: readonly MemoryPart[]) => parts.reduce((s, p) => s + p.bytes, 0);

export function estimateStepMemory(model: Qwen3Config, config: MemoryConfig, backend: string): StepMemoryEstimate {
  const state = estimateTrainingState(model, config);
  const rollout = config.maxPromptTokens + config.maxResponseTokens;
  const longestRowTokens = rollout + config.maxResponseTokens;
  const backendParts: MemoryPart[] = [{ what: `training state (${state.copies.join(', ')})`, bytes: state.bytes }];
  const engine = engineServesShape(model, backend);
  if (!engine) {
    // One micro-batch's attention maps [rows, heads, T, T], kept per layer for the backward.
    const T = longestRowTokens;
    const maps = 4 * config.microBatchRows * model.num_attention_heads * T * T * model.num_hidden_layers;
    backendParts.push({
      what: `attention maps of ${config.microBatchRows} row(s) of ${T} tokens (at least)`,
      bytes: maps,
    });
    return { state, engine, longestRowTokens, backend: backendParts, engineParts: [] };
  }
  const versions = 1 + (state.trainable > 0 ? 1 : 0) + (state.trainable > 0 && config.klCoef > 0 ? 1 : 0);
  const weights = Math.min(2 * versions * 4 * state.params, engineWeightCacheBytes(model));
  const slots = config.batchPrompts * config.rolloutsPerPrompt;
  // A slot's capacity is its prompt plus the turn's reserve, rounded up to 64 positions.
  const capacity = Math.ceil(rollout / 64) * 64 + 64;
  // A chunk holds rows up to the budget, or one row alone past it; the backward adds one layer's worth.
  const chunk = Math.max(ENGINE_ACTIVATION_BUDGET_BYTES, engineActivationBytes(model, longestRowTokens));
  const engineParts: MemoryPart[] = [
    { what: `weights (${versions} version(s) with their transposes)`, bytes: weights },
    { what: 'gradients', bytes: 4 * state.trainable },
    { what: `KV cache (${slots} rollouts × ${capacity} positions)`, bytes: slots * engineSlotBytes(model, capacity) },
    { what: 'kept activations of one chunk', bytes: chunk },
  ];
  return { state, engine, longestRowTokens, backend: backendParts, engineParts };
}

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;
const list = (parts: readonly MemoryPart[]) => parts.map((p) => `${p.what} ${gib(p.bytes)}`).join(', ');

/**
 * Throws, naming the fields to change, when a step cannot fit: on wasm, the training state
 * and the graph's activations in one WebAssembly memory; where the engine serves the model
 * (wasm or cpu), its own WebAssembly memory; on WebGPU (`limits`, the device's), the largest
 * single tensor against its buffer limits (checkBufferLimits). The GPU's total memory is not
 * offered by WebGPU, so it is not checked.
 */
export function checkTrainingMemory(
  model: Qwen3Config,
  config: MemoryConfig,
  backend: string,
  limits?: BackendLimits,
): void {
  const est = estimateStepMemory(model, config, backend);
  if (limits && !est.engine) checkBufferLimits(model, config, est.longestRowTokens, limits);
  const { state } = est;
  const onBackend = backend === 'wasm' ? total(est.backend) : 0;
  if (onBackend > WASM_MEMORY_LIMIT_BYTES) {
    const isState = state.bytes > WASM_MEMORY_LIMIT_BYTES;
    throw new Error(
      `config.model: a model of ${state.params.toLocaleString('en-US')} parameters needs at least ${gib(onBackend)} on wasm ` +
        `(${list(est.backend)}), over WebAssembly's ${gib(WASM_MEMORY_LIMIT_BYTES)}; ` +
        (isState
          ? 'train it on WebGPU (config.backend "webgpu", a hardware GPU), or train LoRA adapters on the frozen weights (config.model.lora)'
          : `shorten the rows (config.maxPromptTokens ${config.maxPromptTokens}, config.maxResponseTokens ${config.maxResponseTokens}) or train on WebGPU`),
    );
  }
  const onEngine = total(est.engineParts);
  if (onEngine > WASM_MEMORY_LIMIT_BYTES) {
    throw new Error(
      `config: a step needs about ${gib(onEngine)} in the CPU engine's memory (${list(est.engineParts)}), ` +
        `over WebAssembly's ${gib(WASM_MEMORY_LIMIT_BYTES)}; lower config.batchPrompts (${config.batchPrompts}) or ` +
        `config.rolloutsPerPrompt (${config.rolloutsPerPrompt}), or shorten the rows (config.maxPromptTokens ${config.maxPromptTokens}, ` +
        `config.maxResponseTokens ${config.maxResponseTokens})`,
    );
  }
}

const describeLimits = (limits: BackendLimits) =>
  `maxBufferSize ${gib(limits.maxBufferSize)}, maxStorageBufferBindingSize ${gib(limits.maxStorageBufferBindingSize)}`;

/**
 * Throws, naming the field to change, when one tensor of a step on the tfjs graph cannot be one
 * GPU buffer (graphBuffers.ts): a layer's KV cache of the step's rollouts, or a training
 * micro-batch's attention scores [microBatchRows, heads, T, T] at the longest row (a
 * trace-conditioned [x; h*; τ]; a rollout's prompt is shorter, and the generation's prefill is cut
 * into rows that fit). The weights are the loader's: it shards the vocabulary matrices to the
 * limit and refuses any other tensor over it (model.ts).
 */
export function checkBufferLimits(
  model: Qwen3Config,
  config: Pick<
    MemoryConfig,
    'microBatchRows' | 'maxPromptTokens' | 'maxResponseTokens' | 'batchPrompts' | 'rolloutsPerPrompt'
  >,
  longestRowTokens: number,
  limits: BackendLimits,
): void {
  const limit = bufferLimitBytes(limits);
  // The rollouts' KV cache: one [rollouts, kv heads, positions, head_dim] tensor per layer for keys
  // and one for values (generate.ts), positions up to a rollout's prompt and responses.
  const slots = config.batchPrompts * config.rolloutsPerPrompt;
  const positions = Math.ceil((config.maxPromptTokens + config.maxResponseTokens) / 16) * 16 + 16;
  const slotBytes = 4 * model.num_key_value_heads * positions * model.head_dim;
  if (slots * slotBytes > limit) {
    throw new Error(
      `config.rolloutsPerPrompt: the rollouts' KV cache holds ${slots} rollouts (config.batchPrompts ${config.batchPrompts} × ` +
        `config.rolloutsPerPrompt ${config.rolloutsPerPrompt}) of up to ${positions.toLocaleString('en-US')} positions in ` +
        `one buffer a layer ([${slots}, ${model.num_key_value_heads}, ${positions}, ${model.head_dim}] float32, ` +
        `${gib(slots * slotBytes)}), over this GPU's buffer limit (${describeLimits(limits)}); at most ` +
        `${Math.floor(limit / slotBytes)} rollouts a step fit, or shorten the rows`,
    );
  }
  const T = longestRowTokens;
  const row = graphRowBytes(model, T);
  const rows = config.microBatchRows;
  if (rows * row <= limit) return;
  const shape = `[${rows}, ${model.num_attention_heads}, ${T}, ${T}]`;
  const what = `${rows} row(s) of up to ${T.toLocaleString('en-US')} tokens make tensors of ${gib(rows * row)} (attention scores ${shape} float32) in one buffer`;
  throw new Error(
    row > limit
      ? `config.maxResponseTokens: ${what}, over this GPU's buffer limit (${describeLimits(limits)}) even at one row; ` +
          `shorten the rows (config.maxPromptTokens ${config.maxPromptTokens}, config.maxResponseTokens ` +
          `${config.maxResponseTokens}: a trace-conditioned row holds the prompt and two responses' worth) or train on wasm`
      : `config.microBatchRows: ${what}, over this GPU's buffer limit (${describeLimits(limits)}); set ` +
          `config.microBatchRows to at most ${Math.floor(limit / row)} (the update is the same for any value)`,
  );
}
