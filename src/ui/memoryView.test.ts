import { describe, expect, it } from 'vitest';
import { toMemoryUsage } from '../../workers/protocol';
import { describeMemory, formatBytes, PROCESS_MEMORY_ABSENT } from './memoryView';

describe('formatBytes', () => {
  it('uses binary units with three significant figures', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1024)).toBe('1.00 KiB');
    expect(formatBytes(1536)).toBe('1.50 KiB'); // 1536 / 1024 = 1.5
    expect(formatBytes(25 * 2 ** 20)).toBe('25.0 MiB');
    expect(formatBytes(300 * 2 ** 20)).toBe('300 MiB');
    expect(formatBytes(1.25 * 2 ** 30)).toBe('1.25 GiB');
    // 4 * 1024 * 1024 * 1024 * 1024 * 3 = 3 TiB (largest unit)
    expect(formatBytes(3 * 2 ** 40)).toBe('3.00 TiB');
    expect(formatBytes(-1)).toBe('—');
    expect(formatBytes(Number.NaN)).toBe('—');
  });
});

describe('toMemoryUsage + describeMemory', () => {
  it('wasm: bytes and tensor count, no GPU line', () => {
    const m = toMemoryUsage('wasm', {
      numBytes: 3 * 2 ** 20 + 512 * 1024,
      numTensors: 1,
      numDataBuffers: 1,
      unreliable: false,
    });
    expect(m).toEqual({ backend: 'wasm', numBytes: 3670016, numTensors: 1 });
    // 3.5 MiB = 3 MiB + 512 KiB
    expect(describeMemory(m)).toEqual({
      inUse: '3.50 MiB in 1 tensor (wasm)',
      gpu: null,
      caveat: null,
      peak: null,
      wasmHeap: null,
      engine: null,
      process: PROCESS_MEMORY_ABSENT,
      sampledAt: null,
    });
  });

  it('webgpu: the GPU buffer bytes in use and allocated', () => {
    const m = toMemoryUsage('webgpu', {
      numBytes: 40 * 2 ** 20,
      numTensors: 1234,
      numBytesInGPU: 18 * 2 ** 20,
      numBytesInGPUAllocated: 24 * 2 ** 20,
      numBytesInGPUFree: 6 * 2 ** 20,
    });
    expect(m).toEqual({
      backend: 'webgpu',
      numBytes: 41943040,
      numTensors: 1234,
      numBytesInGPU: 18874368,
      numBytesInGPUAllocated: 25165824,
    });
    expect(describeMemory(m)).toMatchObject({
      inUse: '40.0 MiB in 1,234 tensors (webgpu)',
      gpu: '18.0 MiB in use · 24.0 MiB allocated (pooled)',
      caveat: null,
    });
  });

  it("keeps tfjs's reason when it marks the count unreliable, and drops non-numbers", () => {
    const m = toMemoryUsage('cpu', { numBytes: 'x', numTensors: 2, unreliable: true, reasons: ['string tensors'] });
    expect(m).toEqual({ backend: 'cpu', numBytes: 0, numTensors: 2, unreliableReason: 'string tensors' });
    expect(describeMemory(m).caveat).toBe('tfjs: string tensors');
    expect(toMemoryUsage('cpu', { numBytes: 8, numTensors: 2, unreliable: true }).unreliableReason).toBe(
      'tfjs marks the count as unreliable',
    );
  });
});

describe('a live reading', () => {
  it("words the step's peak, the WebAssembly memory, the process's memory and when it was read", () => {
    const lines = describeMemory({
      backend: 'wasm',
      numBytes: 27.8 * 2 ** 20,
      numTensors: 184,
      peakBytes: 140 * 2 ** 20,
      wasmHeapBytes: 2.4 * 2 ** 30,
      engine: { bytes: 3 * 2 ** 20, peakBytes: 243 * 2 ** 20, memoryBytes: 320 * 2 ** 20 },
      process: { bytes: 96 * 2 ** 20, source: 'performance.memory' },
      sampledAt: Date.UTC(2026, 0, 1, 14, 3, 5),
    });
    expect(lines).toEqual({
      inUse: '27.8 MiB in 184 tensors (wasm)',
      gpu: null,
      caveat: null,
      peak: 'peak 140 MiB in this step',
      wasmHeap: '2.40 GiB of WebAssembly memory (grows as needed, never given back)',
      engine: '3.00 MiB in use · peak 243 MiB in this step · 320 MiB of its WebAssembly memory',
      process: "96.0 MiB: the trainer worker's JavaScript heap (performance.memory)",
      sampledAt: 'read at 14:03:05 UTC',
    });
    expect(
      describeMemory({
        backend: 'webgpu',
        numBytes: 0,
        numTensors: 0,
        process: { bytes: 2 ** 30, source: 'measureUserAgentSpecificMemory' },
      }).process,
    ).toBe('1.00 GiB: this page with its workers (measureUserAgentSpecificMemory)');
  });
});
