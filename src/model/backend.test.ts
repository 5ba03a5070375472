import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOversizedTensors, isSoftwareAdapter, selectBackend } from './backend';
import { getNodeWasmPaths } from './qwen3/node';
import { listQwen3ParamShapes, QWEN3_PRESETS } from './qwen3/config';

describe('selectBackend', () => {
  it('falls back from webgpu to wasm in Node and says why', async () => {
    const sel = await selectBackend(undefined, { wasmPaths: getNodeWasmPaths() });
    expect(sel.backend).toBe('wasm');
    expect(sel.reason).toMatch(/^webgpu: navigator\.gpu is absent/);
  });

  it('takes cpu when asked, with no fallback reason', async () => {
    const sel = await selectBackend('cpu');
    expect(sel).toEqual({ backend: 'cpu' });
  });

  it('rejects an unknown name with the valid ones', async () => {
    await expect(selectBackend('tpu' as never)).rejects.toThrow(/auto, webgpu, wasm, cpu/);
  });
});

describe("selectBackend('auto') with a software WebGPU adapter", () => {
  // Chromium's SwiftShader adapter as this machine's headless Chromium reports it.
  const swiftShader = {
    info: { vendor: 'google', architecture: 'swiftshader', device: '', description: '', isFallbackAdapter: true },
    limits: { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30 },
  };
  let requests = 0;
  beforeAll(() => {
    Object.defineProperty(globalThis, 'navigator', {
      value: { gpu: { requestAdapter: async () => (requests++, swiftShader) } },
      configurable: true,
    });
  });
  afterAll(() => {
    Reflect.deleteProperty(globalThis, 'navigator');
  });

  it('passes the software adapter over for wasm and says why', async () => {
    const sel = await selectBackend('auto', { wasmPaths: getNodeWasmPaths() });
    expect(sel.backend).toBe('wasm');
    expect(sel.reason).toBe(
      'webgpu: the only adapter is a software fallback (google · swiftshader), slower than wasm; choose the webgpu backend to use it anyway',
    );
  });

  it('still tries that adapter when webgpu is asked for by name', async () => {
    const before = requests;
    const sel = await selectBackend('webgpu', { wasmPaths: getNodeWasmPaths() });
    expect(requests).toBeGreaterThan(before);
    // Node has no GPU device behind the stand-in adapter: tfjs fails to start, which is not the software refusal.
    expect(sel.reason ?? '').not.toMatch(/software fallback/);
  });
});

describe('isSoftwareAdapter', () => {
  it('knows a software adapter by its flag or its name, and a hardware one by neither', () => {
    expect(isSoftwareAdapter({ vendor: 'google', architecture: 'swiftshader' })).toBe(true);
    expect(isSoftwareAdapter({ vendor: 'mesa', description: 'llvmpipe (LLVM 15.0.6, 256 bits)' })).toBe(true);
    expect(isSoftwareAdapter({ vendor: 'microsoft', description: 'Microsoft Basic Render Driver' })).toBe(true);
    expect(isSoftwareAdapter({ vendor: 'x' }, true)).toBe(true);
    expect(isSoftwareAdapter({ vendor: 'nvidia', architecture: 'hopper', isFallbackAdapter: false })).toBe(false);
    expect(isSoftwareAdapter(undefined)).toBe(false);
  });
});

describe('findOversizedTensors', () => {
  it('flags the Qwen3-0.6B embedding above a 128 MiB binding limit', () => {
    // 151936 · 1024 · 4 bytes = 622 329 856 > 134 217 728; the largest other weight,
    // gate/up [3072, 1024], is 12 582 912 bytes.
    const big = findOversizedTensors(listQwen3ParamShapes(QWEN3_PRESETS['Qwen3-0.6B']), 128 * 1024 * 1024);
    expect(big).toEqual([['model.embed_tokens.weight', 622_329_856]]);
  });
});
