/**
 * What a TrainingSession needs from the browser worker: IndexedDB, the tfjs backend, the
 * run's assets and Trainer (runAssets.ts over the browser platform, its policy read around each
 * generation), the run locks, and the memory readings: tfjs's count of live tensors, the wasm backend's WebAssembly memory, and
 * the process's memory where the browser offers it (measureUserAgentSpecificMemory under
 * cross-origin isolation, else Chromium's performance.memory).
 */
import * as tf from '@tensorflow/tfjs-core';
import '../src/recipes';
import { createRunTrainer, prepareRunAssetsWith } from '../src/run/runAssets';
import { buildRolloutViews } from '../src/recipes/rollouts/rolloutViews';
import { LanguageRoutingExecutor } from '../src/envs/ftrl/languageExecutor';
import type { PolicySampler } from '../src/recipes/types';
import { PactStore } from '../src/storage';
import { readStorageEstimate } from '../src/storage/storageRoom';
import { buildCheckpointRecord } from './checkpointRecord';
import { toMemoryUsage, type MemoryUsage, type ProcessMemory } from './protocol';
import { holdRunLock } from './runLock';
import { createBrowserPlatform } from './runPlatform';
import { activateBackend } from './tfBrowser';
import { peekEngineRuntime } from '../src/model/engine/runtime';
import type { LoadedRun, SessionDeps } from './trainingSession';

type PerformanceWithMemory = Performance & {
  memory?: { usedJSHeapSize?: number };
  measureUserAgentSpecificMemory?: () => Promise<{ bytes: number }>;
};

let lastMeasured: ProcessMemory | undefined;
let isMeasuring = false;

/** The process's memory, where offered: the latest finished whole-page measurement, or this worker's JS heap. */
export function readProcessMemory(): ProcessMemory | undefined {
  const perf = globalThis.performance as PerformanceWithMemory | undefined;
  if (!perf) return undefined;
  if (
    (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated &&
    typeof perf.measureUserAgentSpecificMemory === 'function'
  ) {
    if (!isMeasuring) {
      isMeasuring = true; // it resolves after the next garbage collection, seconds later
      perf
        .measureUserAgentSpecificMemory()
        .then((r) => (lastMeasured = { bytes: r.bytes, source: 'measureUserAgentSpecificMemory' }))
        .catch(() => undefined)
        .finally(() => (isMeasuring = false));
    }
    if (lastMeasured) return lastMeasured;
  }
  const used = perf.memory?.usedJSHeapSize;
  return typeof used === 'number' && Number.isFinite(used) ? { bytes: used, source: 'performance.memory' } : undefined;
}

function readWasmHeapBytes(): number | undefined {
  if (tf.getBackend() !== 'wasm') return undefined;
  const heap = (tf.backend() as { wasm?: { HEAPU8?: Uint8Array } }).wasm?.HEAPU8;
  return heap ? heap.buffer.byteLength : undefined;
}

/** tfjs memory now, with the wasm heap and the process's memory where they can be read. */
export function readWorkerMemory(): MemoryUsage | undefined {
  try {
    const usage = toMemoryUsage(tf.getBackend() ?? 'none', tf.memory() as unknown as Record<string, unknown>);
    const wasmHeapBytes = readWasmHeapBytes();
    if (wasmHeapBytes !== undefined) usage.wasmHeapBytes = wasmHeapBytes;
    const rt = peekEngineRuntime();
    if (rt) usage.engine = { bytes: rt.allocatedBytes, peakBytes: rt.peakAllocatedBytes, memoryBytes: rt.memoryBytes };
    const process = readProcessMemory();
    if (process) usage.process = process;
    return usage;
  } catch {
    return undefined; // no backend yet: nothing to report
  }
}

/** What a checkpoint of a run holds, in words (the storage check's message). */
function describeCheckpoint(params: number, isLora: boolean): string {
  const n = params.toLocaleString('en-US');
  return isLora
    ? `${n} parameters: the merged policy, the frozen base and the adapters with AdamW's moments`
    : `${n} parameters: the weights, π_ref's copy and AdamW's two moments`;
}

/** A macrotask turn: the worker's timer and incoming messages (Pause, Stop) run in it. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * The policy with a memory reading before and after each generation, and one turn of the
 * event loop after it (a step otherwise gives the worker's timer and messages no turn).
 */
function readAroundGeneration(policy: PolicySampler, onInStep: () => void): PolicySampler {
  return {
    async generate(prompts, opts) {
      onInStep();
      const rows = await policy.generate(prompts, opts);
      onInStep();
      await yieldToEventLoop();
      return rows;
    },
  };
}

export function createBrowserSessionDeps(): SessionDeps {
  return {
    openStore: () => PactStore.open(),
    async loadRun(config, { resume, modelFiles, taskFile, onProgress, onInStep }): Promise<LoadedRun> {
      const selection = await activateBackend(config.backend ?? 'auto');
      // A checkpoint that carries its model shape rebuilds the policy itself (a folder or an
      // imported run resumes without its files); older records reload the run's model.init.
      const checkpointPolicy = resume?.modelConfig
        ? { modelConfig: resume.modelConfig, mapping: resume.mapping }
        : undefined;
      const assets = await prepareRunAssetsWith(createBrowserPlatform({ modelFiles, taskFile }), config, {
        checkpointPolicy,
      });
      // FTRL sources: the task file's Python tools (runPlatform.ts createFtrlExecutor) count their calls.
      const routed = assets.executor instanceof LanguageRoutingExecutor ? assets.executor : null;
      const disposeAssets = () => {
        assets.policy.model.dispose();
        (assets.executor as { dispose?: () => void }).dispose?.();
      };
      try {
        const trainer = createRunTrainer(config, assets, {
          onProgress,
          wrapPolicy: (policy) => readAroundGeneration(policy, onInStep),
        });
        if (resume) trainer.importState(resume.state);
        return {
          trainer,
          backend: selection.backend,
          fallbackReason: selection.reason,
          nParams: assets.policy.model.countParams(),
          wasmThreads: selection.wasmThreads,
          engineThreads: selection.engineThreads,
          ...(assets.engineKernels ? { engineKernels: assets.engineKernels } : {}),
          ...(assets.engineKernelsWarning ? { engineKernelsWarning: assets.engineKernelsWarning } : {}),
          viewRollouts: (step) =>
            buildRolloutViews(
              step,
              trainer.lastGroups,
              trainer.lastScores,
              trainer.lastRoutes,
              config,
              trainer.tokenizer,
            ),
          ...(routed ? { readPythonCounts: () => ({ ...routed.pythonCounts }) } : {}),
          checkpointSize: {
            bytes: trainer.stateBytes,
            what: describeCheckpoint(assets.policy.model.countParams(), config.model.lora !== undefined),
          },
          buildCheckpoint: async (runId) =>
            buildCheckpointRecord(
              runId,
              await trainer.exportState(),
              assets.policy.mapping,
              assets.policy.model.config,
            ),
          dispose: () => {
            trainer.dispose();
            disposeAssets();
          },
        };
      } catch (e) {
        disposeAssets();
        throw e;
      }
    },
    estimateStorage: readStorageEstimate,
    readMemory: readWorkerMemory,
    resetMemoryPeak: () => peekEngineRuntime()?.resetPeak(),
    holdLock: holdRunLock,
    every: (ms, tick) => {
      const id = setInterval(tick, ms);
      return () => clearInterval(id);
    },
    now: () => Date.now(),
    logError: (...args) => console.error(...args),
  };
}
