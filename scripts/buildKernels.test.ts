// The committed src/model/engine/kernelsWasm.ts and kernelsWasmRelaxed.ts are what scripts/buildKernels.mjs makes from
// the AssemblyScript source today (a stale binary would test one kernel and ship another), and
// the shared-memory kernels the runtime derives from it are asc's own `--sharedMemory` builds,
// byte for byte.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { withSharedMemoryImport } from '../src/model/engine/sharedMemoryImport';
// @ts-expect-error: a plain .mjs script without types
import { compileKernels, findDataEnd, renderModule } from './buildKernels.mjs';

it('kernelsWasm.ts and kernelsWasmRelaxed.ts match a fresh compile of src/model/engine/assembly/kernels.ts', () => {
  const bytes = compileKernels();
  const relaxed = compileKernels(false, true);
  expect(findDataEnd(bytes)).toBeGreaterThan(0);
  const texts = renderModule(bytes, relaxed);
  expect(readFileSync(new URL('../src/model/engine/kernelsWasm.ts', import.meta.url), 'utf8')).toBe(texts.plain);
  expect(readFileSync(new URL('../src/model/engine/kernelsWasmRelaxed.ts', import.meta.url), 'utf8')).toBe(
    texts.relaxed,
  );
  // The relaxed-SIMD build is another binary, with f32x4.relaxed_madd (0xfd 0x85 0x02) in it.
  expect(relaxed.some((x: number, i: number) => x === 0xfd && relaxed[i + 1] === 0x85 && relaxed[i + 2] === 0x02)).toBe(
    true,
  );
  expect(relaxed.equals(bytes)).toBe(false);
}, 120_000);

it("the shared-memory kernels made by rewriting the memory import are asc's --sharedMemory builds", () => {
  for (const relaxed of [false, true]) {
    const own = new Uint8Array(compileKernels(false, relaxed));
    const shared = new Uint8Array(compileKernels(true, relaxed));
    expect(shared.length).toBe(own.length + 3); // the maximum, 65,536 pages, is 3 bytes of LEB128
    expect(Buffer.from(withSharedMemoryImport(own, 65536)).equals(Buffer.from(shared))).toBe(true);
    if (relaxed) continue; // Node 20 compiles relaxed SIMD only behind a flag
    // A shared memory with that maximum instantiates it; the private build refuses one.
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: true });
    expect(() => new WebAssembly.Instance(new WebAssembly.Module(shared), { env: { memory } })).not.toThrow();
    expect(() => new WebAssembly.Instance(new WebAssembly.Module(own), { env: { memory } })).toThrow();
  }
  // A module without a memory import is refused by name, not rewritten into nonsense.
  const noImports = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  expect(() => withSharedMemoryImport(noImports, 65536)).toThrow(/imports no memory/);
}, 120_000);
