/**
 * Test support for the kernel tests (kernels.test.ts, kernelsExp.test.ts, gemmPackedCheck.ts):
 * reproducible inputs in [−1, 1) and buffers in an engine runtime's memory freed after each use.
 */
import type { EngineRuntime } from './runtime';

/** n floats in [−1, 1) from a linear congruential generator (the same for a seed on every run). */
export function values(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  });
}

type Put = (x: Float32Array | Int32Array) => number;
type Zeros = (n: number) => number;

/** Runs f with `put` (copies an array in) and `zeros` (n zeroed floats) on rt, and frees what they allocated. */
function withBuffers<T>(rt: EngineRuntime, f: (put: Put, zeros: Zeros) => T): T {
  const ptrs: number[] = [];
  try {
    return f(
      (x) => {
        const p = rt.allocFrom(x);
        ptrs.push(p);
        return p;
      },
      (n) => {
        const p = rt.allocZeroed(n);
        ptrs.push(p);
        return p;
      },
    );
  } finally {
    for (const p of ptrs) rt.release(p);
  }
}

/** withBuffers bound to one runtime (each test file's). */
export function buffersOn(rt: EngineRuntime): <T>(f: (put: Put, zeros: Zeros) => T) => T {
  return (f) => withBuffers(rt, f);
}
