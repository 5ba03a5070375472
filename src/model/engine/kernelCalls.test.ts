// The kernel-call builders against the kernels themselves: each task kernel's parameter list in
// KERNEL_PARAMS is the one its AssemblyScript source declares (names and order) and has the
// compiled module's arity, and a builder lays named arguments out in that order.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KERNEL_PARAMS, attnBwdCall, attnFwdCall, kernelCall } from './kernelCalls';
import { EngineRuntime } from './runtime';
import { TASK_KERNELS } from './threads';

const ASSEMBLY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'assembly');

/** Parameter names of every exported function in the AssemblyScript sources. */
function readSignatures(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of readdirSync(ASSEMBLY).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(path.join(ASSEMBLY, file), 'utf8');
    for (const m of text.matchAll(/export function (\w+)\(([^)]*)\)/g)) {
      const params = m[2]
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p.length > 0)
        .map((p) => p.split(':')[0].trim());
      out.set(m[1], params);
    }
  }
  return out;
}

describe('kernel-call builders', () => {
  const signatures = readSignatures();
  const kernels = new EngineRuntime(1 << 20).k as unknown as Record<string, (...args: number[]) => unknown>;

  for (const name of TASK_KERNELS) {
    it(`${name}: the builder's fields are the kernel's parameters, in order, at the module's arity`, () => {
      expect(signatures.get(name), `export function ${name} in assembly/`).toBeDefined();
      expect([...KERNEL_PARAMS[name]]).toEqual(signatures.get(name));
      expect(kernels[name].length).toBe(KERNEL_PARAMS[name].length);
    });
  }

  it('lays named arguments out in signature order, whatever order they are written in', () => {
    const args = Object.fromEntries(KERNEL_PARAMS.attnBwd.map((p, i) => [p, 100 + i]));
    const shuffled = Object.fromEntries(Object.entries(args).reverse()) as typeof args;
    const call = attnBwdCall(shuffled as Parameters<typeof attnBwdCall>[0]);
    expect(call).toEqual(['attnBwd', ...KERNEL_PARAMS.attnBwd.map((_, i) => 100 + i)]);
    expect(call).toHaveLength(27);
    const fwd = attnFwdCall({
      work: 18,
      scale: 17,
      D: 16,
      Tk: 15,
      qStep: 14,
      qPos0: 13,
      Tq: 12,
      ldlse: 11,
      lse: 10,
      ldo: 9,
      o: 8,
      ldv: 7,
      v: 6,
      ktTile: 5,
      ldkt: 4,
      kt: 3,
      ldq: 2,
      q: 1,
    });
    expect(fwd).toEqual(['attnFwd', ...Array.from({ length: 18 }, (_, i) => i + 1)]);
    expect(kernelCall('gemm', { a: 1, lda: 2, b: 3, ldb: 4, c: 5, ldc: 6, M: 7, N: 8, K: 9, acc: 0 })).toEqual([
      'gemm',
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8,
      9,
      0,
    ]);
  });
});
