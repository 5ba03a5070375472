// The committed src/model/engine/kernelsWasm.ts is what scripts/buildKernels.mjs makes from
// the AssemblyScript source today, all four builds (a stale binary would test one kernel and ship another).
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { compileKernels, findDataEnd, renderModule } from './buildKernels.mjs';

it('kernelsWasm.ts matches a fresh compile of src/model/engine/assembly/kernels.ts', () => {
  const bytes = compileKernels();
  const relaxed = compileKernels(false, true);
  expect(findDataEnd(bytes)).toBeGreaterThan(0);
  expect(readFileSync(new URL('../src/model/engine/kernelsWasm.ts', import.meta.url), 'utf8')).toBe(
    renderModule(bytes, compileKernels(true), relaxed, compileKernels(true, true)),
  );
  // The relaxed-SIMD build is another binary, with f32x4.relaxed_madd (0xfd 0x85 0x02) in it.
  expect(relaxed.some((x: number, i: number) => x === 0xfd && relaxed[i + 1] === 0x85 && relaxed[i + 2] === 0x02)).toBe(
    true,
  );
  expect(relaxed.equals(bytes)).toBe(false);
}, 120_000);
