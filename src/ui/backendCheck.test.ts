import { describe, expect, it } from 'vitest';
import type { DeviceReport } from '../../workers/protocol';
import { describeBackendProblem } from './backendCheck';

const noGpu: DeviceReport = {
  backend: 'wasm',
  fallbackReason: 'navigator.gpu.requestAdapter() returned null',
  wasm: { available: true, simd: true, threads: false },
  hardwareConcurrency: 2,
};
const software: DeviceReport = {
  ...noGpu,
  backend: 'webgpu',
  fallbackReason: undefined,
  adapter: { vendor: 'google', architecture: 'swiftshader', device: '', description: '', isFallbackAdapter: true },
};

describe('describeBackendProblem', () => {
  it('says before Train that webgpu cannot run without an adapter, naming the reason and the way out', () => {
    expect(describeBackendProblem('webgpu', noGpu)).toBe(
      'backend webgpu: this browser offers no WebGPU adapter (navigator.gpu.requestAdapter() returned null), ' +
        'so the run would fall back to wasm; choose auto or wasm',
    );
  });

  it('accepts webgpu over any adapter (a software one too: the user asked for it), and every other choice', () => {
    expect(describeBackendProblem('webgpu', software)).toBeNull();
    for (const choice of ['auto', 'wasm', 'cpu']) expect(describeBackendProblem(choice, noGpu)).toBeNull();
    expect(describeBackendProblem('webgpu', null)).toBeNull(); // the probe has not answered yet
  });

  it('says wasm cannot run where WebAssembly is missing', () => {
    const noWasm = { ...noGpu, backend: 'cpu' as const, wasm: { available: false, simd: false, threads: false } };
    expect(describeBackendProblem('wasm', noWasm)).toMatch(/no WebAssembly, so the run would fall back to cpu/);
  });
});
