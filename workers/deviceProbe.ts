/**
 * Probes the device the trainer will use, in the order PACT Lab prefers:
 * WebGPU → wasm (SIMD) → cpu, and says why a faster backend was skipped.
 * Runs in the worker, because training runs there and WebGPU availability
 * can differ between the page and a worker.
 */
import { isSoftwareAdapter } from '../src/model/backend';
import type { DeviceReport } from './protocol';

// The smallest valid wasm module using a SIMD instruction (v128.const / i8x16.popcnt
// equivalent from wasm-feature-detect): validates only where SIMD is supported.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

function probeWasm(): DeviceReport['wasm'] {
  if (typeof WebAssembly !== 'object') return { available: false, simd: false, threads: false };
  let simd: boolean;
  try {
    simd = WebAssembly.validate(SIMD_PROBE);
  } catch {
    simd = false;
  }
  // tfjs-wasm's threaded build needs shared memory, which only a cross-origin isolated page has.
  const threads =
    (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true &&
    typeof SharedArrayBuffer === 'function';
  return { available: true, simd, threads };
}

export async function probeDevice(): Promise<DeviceReport> {
  const wasm = probeWasm();
  const hardwareConcurrency = typeof navigator !== 'undefined' ? (navigator.hardwareConcurrency ?? 1) : 1;
  const fallback = (reason: string): DeviceReport => ({
    backend: wasm.available ? 'wasm' : 'cpu',
    fallbackReason: wasm.available
      ? reason
      : `${reason}; WebAssembly is not available either, so plain JavaScript (cpu) is used`,
    wasm,
    hardwareConcurrency,
  });

  const gpu = typeof navigator !== 'undefined' ? (navigator as Navigator & { gpu?: GPU }).gpu : undefined;
  if (!gpu) {
    return fallback(
      'this browser exposes no WebGPU (navigator.gpu is missing): use a recent Chrome/Edge, or Chromium with --enable-unsafe-webgpu',
    );
  }
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (e) {
    return fallback(`WebGPU requestAdapter() failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!adapter) {
    return fallback(
      'WebGPU is present but requestAdapter() returned no adapter (GPU blocked or disabled in this browser)',
    );
  }
  const info = (adapter as GPUAdapter & { info?: GPUAdapterInfo }).info;
  return {
    backend: 'webgpu',
    adapter: {
      vendor: info?.vendor ?? '',
      architecture: info?.architecture ?? '',
      device: info?.device ?? '',
      description: info?.description ?? '',
      // The flag sits on the info in current browsers, on the adapter in older ones; SwiftShader by name.
      isFallbackAdapter: isSoftwareAdapter(
        info as GPUAdapterInfo & { isFallbackAdapter?: boolean },
        (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter,
      ),
    },
    limits: {
      maxBufferSize: adapter.limits.maxBufferSize,
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize,
    },
    wasm,
    hardwareConcurrency,
  };
}
