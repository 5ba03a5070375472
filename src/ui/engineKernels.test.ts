import { describe, expect, it } from 'vitest';
import { KERNEL_VARIANTS } from '../model/engine/kernelChoice';
import { describeRunEngine, KERNEL_LABELS } from './engineKernels';

describe("a run's engine in words", () => {
  it('names the backend, and the kernels where the CPU engine served the run', () => {
    expect(describeRunEngine({ backend: 'wasm', engineKernels: 'fma' })).toBe('wasm · fma kernels');
    expect(describeRunEngine({ backend: 'cpu', engineKernels: 'simd' })).toBe('cpu · simd kernels');
    expect(describeRunEngine({ backend: 'webgpu' })).toBe('webgpu'); // the tfjs graph: no engine kernels
    expect(describeRunEngine({})).toBe(''); // a run that never trained (an import, say)
  });

  it('words every build the config accepts', () => {
    expect(Object.keys(KERNEL_LABELS)).toEqual([...KERNEL_VARIANTS]);
  });
});
