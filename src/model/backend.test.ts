import { describe, expect, it } from 'vitest';
import { findOversizedTensors, selectBackend } from './backend';
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
    await expect(selectBackend('tpu' as never)).rejects.toThrow(/webgpu, wasm, cpu/);
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
