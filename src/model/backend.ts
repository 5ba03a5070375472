/**
 * TensorFlow.js backend selection for the policy: WebGPU → wasm → cpu, starting from
 * the preferred backend, reporting the chosen backend and why each better one was
 * skipped (so the UI can say "running on wasm: navigator.gpu is absent"). 'auto' is the
 * same order, except that a software WebGPU adapter (SwiftShader, isFallbackAdapter) is
 * passed over: it computes correctly but runs 6–45× slower than wasm.
 *
 * Runs unchanged in Node, the page and a module worker: no Node imports here. In Node,
 * pass `wasmPaths` (see src/model/qwen3/node.ts `getNodeWasmPaths`); in the browser pass
 * the three .wasm URLs imported with `?url`. In a cross-origin isolated page tfjs-wasm runs
 * its threaded SIMD build; `wasmThreads` sets how many threads it uses.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';

import { BACKEND_ORDER, type BackendName } from './backendNames';

export { BACKEND_ORDER, type BackendName };

/** What a run asks for: a backend by name, or 'auto' (the fastest one this device offers). */
export type BackendPreference = BackendName | 'auto';

/** The adapter fields that say what kind of GPU stands behind it (GPUAdapterInfo). */
export interface AdapterKindInfo {
  vendor?: unknown;
  architecture?: unknown;
  description?: unknown;
  isFallbackAdapter?: unknown;
}

/**
 * True for a WebGPU adapter that runs on the CPU: the browser's own flag (isFallbackAdapter,
 * on the adapter's info or, in older browsers, on the adapter), or a known software
 * implementation by name (SwiftShader, llvmpipe/lavapipe, Microsoft Basic Render Driver).
 */
export function isSoftwareAdapter(info: AdapterKindInfo | undefined, adapterFlag?: unknown): boolean {
  if (info?.isFallbackAdapter === true || adapterFlag === true) return true;
  const text = [info?.vendor, info?.architecture, info?.description].filter((v) => typeof v === 'string').join(' ');
  return /swiftshader|llvmpipe|lavapipe|basic render/i.test(text);
}

export interface BackendLimits {
  /** Largest buffer one shader binding may address (bytes); bigger weights must be sharded. */
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
}

export interface BackendSelection {
  backend: BackendName;
  /** Why the backends before `backend` in the order were not used; absent when none was skipped. */
  reason?: string;
  /** WebGPU adapter description (vendor, architecture, …) when the backend is webgpu. */
  adapterInfo?: Record<string, unknown>;
  limits?: BackendLimits;
  /**
   * wasm: the threads tfjs-wasm computes with (1 unless its threaded build runs, which needs
   * a cross-origin isolated page; never in Node).
   */
  wasmThreads?: number;
}

export interface SelectBackendOptions {
  /** Folder URL/path prefix, or a map file name → URL, for tfjs-backend-wasm's .wasm files. */
  wasmPaths?: string | Record<string, string>;
  /**
   * Threads for tfjs-wasm's threaded build (tf.wasm.setThreadsCount), read when the wasm
   * backend first starts in this process. tfjs caps it at 8 and at half the logical cores
   * (the app's builds lift the halving: scripts/crossOriginIsolation.ts). Without
   * cross-origin isolation (or in Node) tfjs runs one thread whatever this says.
   */
  wasmThreads?: number;
}

interface GpuLike {
  requestAdapter(): Promise<{
    info?: object;
    isFallbackAdapter?: boolean;
    limits: { maxStorageBufferBindingSize: number; maxBufferSize: number };
  } | null>;
}

function getNavigatorGpu(): GpuLike | undefined {
  const nav = (globalThis as { navigator?: { gpu?: GpuLike } }).navigator;
  return nav?.gpu;
}

function copyInfo(info: object | undefined): Record<string, unknown> | undefined {
  if (!info) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of ['vendor', 'architecture', 'device', 'description', 'isFallbackAdapter']) {
    const v = (info as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/**
 * Tries one backend; returns a selection, or a string saying why it is unavailable.
 * `isSoftwareRefused`: a software WebGPU adapter counts as unavailable ('auto').
 */
async function tryBackend(
  name: BackendName,
  opts: SelectBackendOptions,
  isSoftwareRefused = false,
): Promise<BackendSelection | string> {
  try {
    if (name === 'webgpu') {
      const gpu = getNavigatorGpu();
      if (!gpu) return 'navigator.gpu is absent (Node, or a browser without WebGPU)';
      const adapter = await gpu.requestAdapter();
      if (!adapter) return 'requestAdapter() returned null (no WebGPU adapter; Chromium needs --enable-unsafe-webgpu)';
      if (
        isSoftwareRefused &&
        isSoftwareAdapter(adapter.info as AdapterKindInfo | undefined, adapter.isFallbackAdapter)
      ) {
        const info = (adapter.info ?? {}) as AdapterKindInfo;
        const name =
          [info.vendor, info.architecture].filter((v) => typeof v === 'string' && v !== '').join(' · ') || 'unnamed';
        return `the only adapter is a software fallback (${name}), slower than wasm; choose the webgpu backend to use it anyway`;
      }
      await import('@tensorflow/tfjs-backend-webgpu');
      if (!(await tf.setBackend('webgpu'))) return 'tf.setBackend("webgpu") failed';
      return {
        backend: 'webgpu',
        adapterInfo: copyInfo(adapter.info),
        limits: {
          maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
          maxBufferSize: adapter.limits.maxBufferSize,
        },
      };
    }
    if (name === 'wasm') {
      const wasm = await import('@tensorflow/tfjs-backend-wasm');
      if (opts.wasmPaths !== undefined) {
        wasm.setWasmPaths(opts.wasmPaths as string);
      }
      if (opts.wasmThreads !== undefined) wasm.setThreadsCount(Math.max(1, Math.floor(opts.wasmThreads)));
      if (!(await tf.setBackend('wasm')))
        return 'tf.setBackend("wasm") failed (were the .wasm files found? pass wasmPaths)';
      return { backend: 'wasm', wasmThreads: wasm.getThreadsCount() };
    }
    await import('@tensorflow/tfjs-backend-cpu');
    if (!(await tf.setBackend('cpu'))) return 'tf.setBackend("cpu") failed';
    return { backend: 'cpu' };
  } catch (err) {
    return `failed to start: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * Selects the first working backend in webgpu → wasm → cpu order, starting at
 * `preferred` (default webgpu), and makes it tfjs's active backend. 'auto' starts at
 * webgpu but takes it only on a hardware adapter.
 */
export async function selectBackend(
  preferred: BackendPreference = 'webgpu',
  opts: SelectBackendOptions = {},
): Promise<BackendSelection> {
  const isAuto = preferred === 'auto';
  const start = isAuto ? 0 : BACKEND_ORDER.indexOf(preferred);
  if (start < 0)
    throw new Error(`selectBackend: unknown backend '${preferred}'; valid: auto, ${BACKEND_ORDER.join(', ')}`);
  const skipped: string[] = [];
  for (const name of BACKEND_ORDER.slice(start)) {
    const result = await tryBackend(name, opts, isAuto);
    if (typeof result !== 'string') {
      await tf.ready();
      return skipped.length > 0 ? { ...result, reason: skipped.join('; ') } : result;
    }
    skipped.push(`${name}: ${result}`);
  }
  throw new Error(`selectBackend: no backend available (${skipped.join('; ')})`);
}

/**
 * Parameters whose float32 size exceeds `maxBytes` (e.g. a WebGPU adapter's
 * maxStorageBufferBindingSize): [name, bytes] pairs. The Qwen3 loader shards the
 * vocabulary matrices itself (loadQwen3Params' maxTensorBytes); anything else listed
 * here cannot run on that adapter.
 */
export function findOversizedTensors(shapes: Map<string, number[]>, maxBytes: number): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (const [name, shape] of shapes) {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    if (bytes > maxBytes) out.push([name, bytes]);
  }
  return out;
}
