// The committed src/model/engine/kernelsWasm.ts is what scripts/buildKernels.mjs makes from
// the AssemblyScript source today (a stale binary would test one kernel and ship another).
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { compileKernels, findDataEnd, renderModule } from './buildKernels.mjs';

it('kernelsWasm.ts matches a fresh compile of src/model/engine/assembly/kernels.ts', () => {
  const bytes = compileKernels();
  expect(findDataEnd(bytes)).toBeGreaterThan(0);
  expect(readFileSync(new URL('../src/model/engine/kernelsWasm.ts', import.meta.url), 'utf8')).toBe(
    renderModule(bytes, compileKernels(true)),
  );
}, 60_000);
