// The fused multiply-add kernels (relaxed SIMD, opt-in: docs/engine.md, "Fused multiply-add").
// Without relaxed SIMD (Node 20 without its flag: a plain vitest run), asking for them gives the
// plain kernels and a warning; then a child vitest under --experimental-wasm-relaxed-simd with
// PACT_FMA=1 runs threads.test.ts (fma: the same bits on 1, 2 and 3 threads, and fma against plain),
// qwen3EngineReference.test.ts (fma against float64 PyTorch, the same bounds) and this file, whose
// relaxed-SIMD tests then check that every fma build instantiates and whether this CPU fuses, and
// that the fma gemmPacked has the fma gemm's bits (gemmPackedCheck.ts, as kernels.test.ts on plain).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { checkPackedGemm } from './gemmPackedCheck';
import { chooseKernels, configureEngineKernels, EngineRuntime, hasRelaxedSimd } from './runtime';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const RELAXED_SIMD_FLAG = '--experimental-wasm-relaxed-simd';
const CHILD_FILES = [
  'src/model/engine/threads.test.ts',
  'src/model/engine/qwen3EngineReference.test.ts',
  'src/model/engine/kernelsFma.test.ts',
];

/**
 * One gemm element, x0·b0 + x1·b1 with x0·b0 = −(1 + 2⁻¹¹) and x1·b1 = (1 + 2⁻¹²)² = 1 + 2⁻¹¹ + 2⁻²⁴:
 * 2⁻²⁴ where the multiply-add is fused, 0 where the product is rounded first (2⁻²⁴ is half an
 * ulp there, and the tie goes to the even 1 + 2⁻¹¹).
 */
function fusedResidue(rt: EngineRuntime): number {
  const a = rt.allocFrom(new Float32Array([-1, 1 + 2 ** -12])); // A [1, 2]
  const b = rt.allocFrom(new Float32Array([...Array(4).fill(1 + 2 ** -11), ...Array(4).fill(1 + 2 ** -12)])); // B [2, 4]
  const c = rt.allocZeroed(4); // C [1, 4]: one 1×4 vector tile
  rt.k.gemm(a, 2, b, 4, c, 4, 1, 4, 2, 0);
  const out = rt.read(c, 4);
  for (const p of [a, b, c]) rt.release(p);
  expect(new Set(out).size).toBe(1);
  return out[0];
}

it.runIf(!hasRelaxedSimd())(
  'asks for fma without relaxed SIMD: the plain kernels, and a warning saying why',
  async () => {
    expect(chooseKernels('simd')).toEqual({ kernels: 'simd' });
    const choice = await configureEngineKernels('fma');
    expect(choice.kernels).toBe('simd');
    expect(choice.warning).toMatch(/relaxed SIMD is unavailable.*--experimental-wasm-relaxed-simd.*plain SIMD kernels/);
    expect(() => new EngineRuntime(1 << 20, false, 'fma')).toThrow(/relaxed SIMD/);
    const rt = new EngineRuntime(1 << 20);
    await expect(rt.useKernels('fma')).rejects.toThrow(/relaxed SIMD/);
    expect(rt.kernels).toBe('simd');
    expect(fusedResidue(rt)).toBe(0);
  },
);

/** The residue of one gemm element run as two tasks, on the calling thread and a worker thread. */
function fusedResidueThreaded(rt: EngineRuntime): number[] {
  const a = rt.allocFrom(new Float32Array([-1, 1 + 2 ** -12])); // A [1, 2]
  const b = rt.allocFrom(new Float32Array([...Array(4).fill(1 + 2 ** -11), ...Array(4).fill(1 + 2 ** -12)])); // B [2, 4]
  const c = [rt.allocZeroed(4), rt.allocZeroed(4)]; // one C [1, 4] per task
  rt.parallel(c.map((ci) => [['gemm', a, 2, b, 4, ci, 4, 1, 4, 2, 0]]));
  const out = c.map((ci) => rt.read(ci, 4)[0]);
  for (const p of [a, b, ...c]) rt.release(p);
  return out;
}

it.runIf(hasRelaxedSimd())('runs the fma kernels, private and shared, fused where the CPU fuses', async () => {
  expect(chooseKernels('fma')).toEqual({ kernels: 'fma' });
  expect(fusedResidue(new EngineRuntime(1 << 20))).toBe(0);
  const residues = [new EngineRuntime(1 << 20, false, 'fma'), new EngineRuntime(1 << 20, true, 'fma')].map(
    fusedResidue,
  );
  expect(residues[1]).toBe(residues[0]);
  expect([0, 2 ** -24]).toContain(residues[0]);
  console.log(`fma kernels on this CPU: ${residues[0] === 0 ? 'not fused (a product, then a sum)' : 'fused'}`);

  // A runtime switches build between runs on its own memory, its threads with it.
  const rt = new EngineRuntime(1 << 20, true);
  await rt.startThreads(2);
  const kept = rt.allocFrom(new Float32Array([1, 2, 3]));
  expect(fusedResidueThreaded(rt)).toEqual([0, 0]);
  await rt.useKernels('fma');
  expect([rt.kernels, rt.threads]).toEqual(['fma', 2]);
  expect(fusedResidueThreaded(rt)).toEqual([residues[0], residues[0]]);
  await rt.useKernels('simd');
  expect(fusedResidueThreaded(rt)).toEqual([0, 0]);
  expect([...rt.read(kept, 3)]).toEqual([1, 2, 3]);
  await rt.startThreads(1);
});

it.runIf(hasRelaxedSimd())('fma gemmPacked on packTranspose panels has the fma gemm bits', () => {
  const { products, mismatches } = checkPackedGemm(new EngineRuntime(16 << 20, false, 'fma'));
  expect(mismatches.slice(0, 10)).toEqual([]);
  expect(products).toBeGreaterThan(4000);
});

it.runIf(!hasRelaxedSimd())(
  `under ${RELAXED_SIMD_FLAG}, the fma engine passes the thread and reference tests`,
  (ctx) => {
    const probe = spawnSync(process.execPath, [RELAXED_SIMD_FLAG, '-e', ''], { encoding: 'utf8' });
    if (probe.status !== 0)
      ctx.skip(`node ${process.version} does not know ${RELAXED_SIMD_FLAG}: ${probe.stderr.trim().slice(0, 200)}`);
    // The child is a vitest run of its own (none of this run's VITEST_* variables), in plain text.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')));
    const child = spawnSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/vitest/vitest.mjs'),
        'run',
        ...CHILD_FILES,
        `--execArgv=${RELAXED_SIMD_FLAG}`,
        '--maxWorkers=1',
      ],
      {
        cwd: ROOT,
        env: { ...env, PACT_FMA: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
        encoding: 'utf8',
        timeout: 540_000,
      },
    );
    const output = `${child.stdout}\n${child.stderr}`;
    expect(child.status, output.slice(-4000)).toBe(0);
    const measured = output.split('\n').filter((l) => l.startsWith('fma '));
    console.log(measured.join('\n'));
    expect(measured.some((l) => l.startsWith('fma vs plain kernels:'))).toBe(true);
    expect(measured.some((l) => l.startsWith('fma kernels on this CPU:'))).toBe(true);
    expect(output).toMatch(/Test Files\s+3 passed/);
  },
  600_000,
);
