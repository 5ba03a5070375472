/**
 * The one typed message protocol between the page and the trainer worker:
 * one union of requests (each with a request id), one union of
 * replies (carrying the id of the request they answer), one union of events the
 * worker pushes while a run goes on (no id), and exhaustive `switch`es on both sides.
 */
import type { KernelVariant } from '../src/model/engine/kernelChoice';
import type { TrainConfigInput } from '../src/recipes/config';
import type { StepMetrics, EvalMetrics, StepProgress } from '../src/recipes/types';
import type { RunRecord } from '../src/storage/schema';
import type { RolloutGroupView, RolloutView } from '../src/recipes/rollouts/rolloutViews';
import type { FtrlEvalSettings, FtrlEvalSummary } from '../src/run/ftrlEval';
import type { BfclEntryResult, BfclEvalSummary } from '../src/run/bfclEval';
import type { BfclDataTexts } from '../src/envs/bfcl/fileSource';
import type { BfclBackendSources } from '../src/envs/bfcl/pythonBackend';

export type { FtrlEvalSettings, FtrlEvalSummary, StepProgress };

export type { RolloutGroupView, RolloutView };

export type BackendName = 'webgpu' | 'wasm' | 'cpu';

/** What the worker found when it looked for a device to train on. */
export interface DeviceReport {
  /** The backend training will use. */
  backend: BackendName;
  /** Why a faster backend was not chosen; absent when WebGPU was found. */
  fallbackReason?: string;
  adapter?: {
    vendor: string;
    architecture: string;
    device: string;
    description: string;
    isFallbackAdapter: boolean;
  };
  limits?: {
    maxBufferSize: number;
    maxStorageBufferBindingSize: number;
    maxComputeWorkgroupStorageSize: number;
  };
  /**
   * `threads`: this worker is cross-origin isolated (SharedArrayBuffer available), so
   * tfjs-wasm runs its threaded SIMD build on every core; otherwise it runs one thread.
   */
  wasm: { available: boolean; simd: boolean; threads: boolean };
  hardwareConcurrency: number;
}

/** Result of running the PyTorch reference fixtures on one backend. */
export interface NumericsReport {
  /** The backend that actually ran (may differ from the one asked for). */
  backend: BackendName;
  fallbackReason?: string;
  cases: {
    name: string;
    /** max |logit − ref| / max |ref| */
    logitsRelErr: number;
    /** worst checked weight: max |g − ref| / max(1, max |ref|) */
    gradMaxRelErr: number;
    isGreedyEqual: boolean;
    isPass: boolean;
  }[];
}

/** The memory of the worker's JavaScript process, where the browser offers a reading. */
export interface ProcessMemory {
  bytes: number;
  /**
   * `measureUserAgentSpecificMemory`: the whole page with its workers (only under cross-origin
   * isolation); `performance.memory`: the worker's JavaScript heap (Chromium only, coarse).
   */
  source: 'measureUserAgentSpecificMemory' | 'performance.memory';
}

/**
 * The trainer's tfjs memory in use (`tf.memory()` in the worker), sampled on a timer and at
 * each progress report from inside a step (the `memory` event), and sent with each progress
 * event. `numBytesInGPU` / `numBytesInGPUAllocated` exist only on the WebGPU backend.
 */
export interface MemoryUsage {
  /** The backend the numbers are for. */
  backend: string;
  /** Bytes held by live tensors. */
  numBytes: number;
  numTensors: number;
  /** WebGPU: bytes of GPU buffers in use by tensors. */
  numBytesInGPU?: number;
  /** WebGPU: bytes of GPU buffers allocated, including pooled free ones (tfjs never frees them). */
  numBytesInGPUAllocated?: number;
  /** tfjs's own caveat (e.g. strings of unknown size), when it gives one. */
  unreliableReason?: string;
  /** When it was read (ms since the epoch). */
  sampledAt?: number;
  /** The most `numBytes` seen since the current step began (every sample, timer and progress). */
  peakBytes?: number;
  /** wasm backend: the size of its WebAssembly memory (it grows and is never given back). */
  wasmHeapBytes?: number;
  /**
   * The CPU engine (wasm/cpu backends: the model's forward, backward and decode run there, not
   * in tfjs tensors): bytes in its buffers now, the most since the step began, and the size of
   * its own WebAssembly memory (grows, never given back).
   */
  engine?: { bytes: number; peakBytes: number; memoryBytes: number };
  process?: ProcessMemory;
}

/** Picks the fields of `tf.memory()` the page shows (plain numbers only, so it clones). */
export function toMemoryUsage(backend: string, info: Record<string, unknown>): MemoryUsage {
  const num = (k: string): number | undefined =>
    typeof info[k] === 'number' && Number.isFinite(info[k]) ? (info[k] as number) : undefined;
  const usage: MemoryUsage = { backend, numBytes: num('numBytes') ?? 0, numTensors: num('numTensors') ?? 0 };
  const gpu = num('numBytesInGPU');
  const gpuAllocated = num('numBytesInGPUAllocated');
  if (gpu !== undefined) usage.numBytesInGPU = gpu;
  if (gpuAllocated !== undefined) usage.numBytesInGPUAllocated = gpuAllocated;
  if (info.unreliable === true) {
    const reasons = Array.isArray(info.reasons) ? info.reasons.filter((r): r is string => typeof r === 'string') : [];
    usage.unreliableReason = reasons.length > 0 ? reasons.join('; ') : 'tfjs marks the count as unreliable';
  }
  return usage;
}

/** What a failed run leaves for its report: logged to the console, sent to the page, copyable there. */
export interface RunFailureReport {
  runId: string;
  runName: string;
  message: string;
  stack?: string;
  /** The step that was running (completed steps + 1), or the step evaluated when an evaluation failed. */
  step: number;
  /** The resolved training config. */
  config: Record<string, unknown>;
  backend?: string;
  /** ms since the epoch. */
  at: number;
}

/** Where a run is. */
export type RunPhase = 'loading' | 'rollouts' | 'update' | 'eval' | 'checkpoint' | 'idle';
export type RunState = 'running' | 'paused' | 'stopped' | 'finished' | 'failed';

/** The policy an FTRL evaluation runs. */
export type EvalPolicySpec =
  | { kind: 'warm-start' }
  /** A saved run's newest checkpoint in IndexedDB. */
  | { kind: 'checkpoint'; runId: string }
  /** A Qwen3 folder the user picked; File objects clone as references. */
  | { kind: 'folder'; name: string; files: File[] };

/** What an FTRL evaluation reports to the page. */
export interface FtrlEvalReport {
  summary: FtrlEvalSummary;
  fileName: string;
  /** Where the policy came from, in words. */
  policySource: string;
  /** The model's window (max_position_embeddings). */
  contextTokens: number;
  settings: FtrlEvalSettings;
  backend: BackendName;
  fallbackReason?: string;
  /** Pyodide's load time in ms; absent when no task fit the window (Pyodide was not needed). */
  pyodideLoadMs?: number;
  seconds: number;
}

export type FtrlEvalPhase = 'loading' | 'python' | 'rollouts';

/** A BFCL evaluation's settings (the Task files panel's BFCL section; `pact eval-bfcl`'s flags). */
export interface BfclEvalSettings {
  /** The first N entries of each file; undefined = all. */
  limit?: number;
  maxResponseTokens: number;
  /** BFCL's MAXIMUM_STEP_LIMIT (20). */
  maxSteps: number;
  toolTimeoutMs: number;
  backend: BackendName;
}

/** What a BFCL evaluation reports to the page. */
export interface BfclEvalReport {
  summary: BfclEvalSummary;
  policySource: string;
  contextTokens: number;
  /** Backend classes the entries need that did not import (class → error). */
  classProblems: Record<string, string>;
  settings: BfclEvalSettings;
  backend: BackendName;
  fallbackReason?: string;
  pyodideLoadMs: number;
  /** True when Stop ended it early: the summary holds the entries done. */
  isStopped: boolean;
  seconds: number;
}

export type WorkerRequest =
  | { id: number; type: 'probe-device' }
  | { id: number; type: 'check-numerics'; backend: BackendName }
  /**
   * Starts a new run with `config`, or resumes `resumeRunId` from its last checkpoint.
   * `modelFiles`: the files of a Qwen3 folder the user picked (config.model.init names it,
   * "folder:<name>"); File objects clone as references, the worker reads them. `taskFile`: the
   * FTRL file loaded in the Task files panel (config.tasks.source "ftrl", config.tasks.path its
   * name); its Python tools run in Pyodide in the worker.
   */
  | {
      id: number;
      type: 'start';
      config: TrainConfigInput;
      resumeRunId?: string;
      maxSteps?: number;
      modelFiles?: File[];
      taskFile?: { name: string; text: string };
    }
  | { id: number; type: 'pause' }
  | { id: number; type: 'resume' }
  /** One step while paused. */
  | { id: number; type: 'step' }
  | { id: number; type: 'stop' }
  /**
   * Evaluates a policy on FTRL tasks (the text of a file the page loaded): greedy rollouts,
   * Python tools in Pyodide, Solve-R/P/F1 per category. Progress comes as
   * `ftrl-eval-progress` events carrying this request's id; the reply is `ftrl-eval`.
   */
  | {
      id: number;
      type: 'eval-ftrl';
      tasksText: string;
      fileName: string;
      policy: EvalPolicySpec;
      settings: FtrlEvalSettings;
    }
  /**
   * Evaluates a policy on BFCL v4 multi-turn entries (src/run/bfclEval.ts) with BFCL's backends
   * from the user's copy of its source, in Pyodide. Progress: `bfcl-eval-progress` events
   * carrying this request's id; the reply is `bfcl-eval`.
   */
  | {
      id: number;
      type: 'eval-bfcl';
      data: BfclDataTexts;
      sources: BfclBackendSources;
      policy: EvalPolicySpec;
      settings: BfclEvalSettings;
    }
  /** Stops the FTRL or BFCL evaluation in progress after its current task or entry. */
  | { id: number; type: 'stop-eval' };

/**
 * Sent once by the page when it makes the worker (no id, no reply): a port to the tool sandbox
 * frame (src/envs/sandbox/browserSandbox.ts), which a worker cannot open itself. Tool code of
 * every run and evaluation in the worker runs there.
 */
export interface ToolSandboxSetup {
  type: 'tool-sandbox';
  port: MessagePort;
}

/** Everything the page sends the worker. */
export type WorkerInbound = WorkerRequest | ToolSandboxSetup;

export type WorkerResponse =
  | { id: number; type: 'device'; report: DeviceReport }
  | { id: number; type: 'numerics'; report: NumericsReport }
  /** `wasmThreads`: on wasm, the threads tfjs-wasm computes with; `engineThreads`: the CPU engine's (wasm, cpu). */
  | {
      id: number;
      type: 'started';
      run: RunRecord;
      backend: BackendName;
      fallbackReason?: string;
      nParams: number;
      wasmThreads?: number;
      engineThreads?: number;
      /** The CPU engine's kernels where it serves the model (wasm, cpu), and why not those the config asked for. */
      engineKernels?: KernelVariant;
      engineKernelsWarning?: string;
    }
  | { id: number; type: 'ftrl-eval'; report: FtrlEvalReport }
  | { id: number; type: 'bfcl-eval'; report: BfclEvalReport }
  | { id: number; type: 'ok' }
  | { id: number; type: 'error'; message: string };

/** Pushed by the worker while a run goes on. */
export type WorkerEvent =
  | {
      type: 'progress';
      runId: string;
      step: number;
      totalSteps: number;
      phase: RunPhase;
      state: RunState;
      message?: string;
      memory?: MemoryUsage;
    }
  | { type: 'metrics'; runId: string; metrics: StepMetrics }
  | { type: 'eval'; runId: string; metrics: EvalMetrics }
  | { type: 'rollouts'; runId: string; groups: RolloutGroupView[] }
  /**
   * Inside a step: its phase, units done of total, tokens and turn (StepProgress, from the
   * trainer's onProgress hook); `step` is the step it belongs to, `elapsedMs` the time since it began.
   */
  | { type: 'step-progress'; runId: string; step: number; progress: StepProgress; elapsedMs: number }
  /** A memory reading taken while the run is loaded (about once a second, and from inside a step). */
  | { type: 'memory'; runId: string; memory: MemoryUsage }
  | { type: 'run-error'; runId: string; message: string; failure: RunFailureReport }
  /** An FTRL evaluation's progress; `requestId` is the `eval-ftrl` request's id. */
  | {
      type: 'ftrl-eval-progress';
      requestId: number;
      phase: FtrlEvalPhase;
      message: string;
      done: number;
      total: number;
    }
  /** A BFCL evaluation's progress; `entry`: the verdict of the entry just done. */
  | {
      type: 'bfcl-eval-progress';
      requestId: number;
      phase: FtrlEvalPhase;
      message: string;
      done: number;
      total: number;
      entry?: BfclEntryResult;
    };

export type WorkerMessage = WorkerResponse | WorkerEvent;

export type WorkerRequestType = WorkerRequest['type'];

/** True for replies (they carry the id of the request they answer). */
export function isResponse(msg: WorkerMessage): msg is WorkerResponse {
  return typeof (msg as { id?: unknown }).id === 'number';
}
