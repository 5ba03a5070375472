/**
 * How one product is split into tasks for the runtime's threads: a gemm by blocks of rows
 * (or of columns, in multiples of 8, when there are few rows; mmPacked for B packed in panels,
 * whose column blocks start at panel offsets), a gemmTN by rows of C, a rows-wise kernel (the
 * LM head's, RMSNorm's) by slices of rows, an elementwise one (SwiGLU) by slices of a multiple
 * of 4. Every task writes its own part of the output, and each element is computed in the same
 * order whoever computes it, so the result has the same bits on any thread count.
 * Products under PARALLEL_FLOPS run on the calling thread.
 * A TaskRecorder turns engine code written against the runtime (layerForward, mm, …) into one
 * task: its kernel calls are listed instead of run, so a whole forward over a few rows can go to
 * one thread (decode.ts splits a decode step's slots so).
 */
import { F } from './core';
import type { EngineRuntime, Kernels } from './runtime';
import { gemmCall, gemmPackedCall, gemmTNCall } from './kernelCalls';
import { packedColumns } from './weights';
import { runCalls, TASK_KERNELS, type KernelCall, type TaskKernel } from './threads';

/** Products smaller than this run on the calling thread (a dispatch costs tens of µs). */
const PARALLEL_FLOPS = 4e6;

/** A block of C: rows [i0, i0 + m), columns [j0, j0 + n). */
interface ProductPart {
  i0: number;
  m: number;
  j0: number;
  n: number;
}

/** Parts of C [M, N] for the threads: blocks of rows, or of columns (multiples of 8) for few rows; null: one part on this thread. */
function productParts(T: number, M: number, N: number, K: number): ProductPart[] | null {
  if (T === 1 || 2 * M * N * K < PARALLEL_FLOPS) return null;
  const parts: ProductPart[] = [];
  if (M >= 8 * T) {
    const step = Math.ceil(M / (2 * T) / 4) * 4;
    for (let i0 = 0; i0 < M; i0 += step) parts.push({ i0, m: Math.min(step, M - i0), j0: 0, n: N });
  } else {
    const step = Math.max(8, Math.ceil(N / (2 * T) / 8) * 8);
    for (let j0 = 0; j0 < N; j0 += step) parts.push({ i0: 0, m: M, j0, n: Math.min(step, N - j0) });
  }
  return parts;
}

/** C (+)= A·B (kernels.gemm), split over the runtime's threads by rows, or by columns for few rows. */
export function mm(
  rt: EngineRuntime,
  a: number,
  lda: number,
  b: number,
  ldb: number,
  c: number,
  ldc: number,
  M: number,
  N: number,
  K: number,
  acc: number,
): void {
  const parts = productParts(rt.threads, M, N, K);
  if (!parts) {
    rt.k.gemm(a, lda, b, ldb, c, ldc, M, N, K, acc);
    return;
  }
  rt.parallel(
    parts.map(({ i0, m, j0, n }) => [
      gemmCall({ a: a + i0 * lda * F, lda, b: b + j0 * F, ldb, c: c + (i0 * ldc + j0) * F, ldc, M: m, N: n, K, acc }),
    ]),
  );
}

/**
 * C (+)= A·B with B [K, N] packed in panels (kernels.gemmPacked; the weight cache's ptrPacked),
 * split as mm splits: a column block [j0, j0 + n) is the packed matrix at packedColumns(b, K, j0).
 */
export function mmPacked(
  rt: EngineRuntime,
  a: number,
  lda: number,
  b: number,
  c: number,
  ldc: number,
  M: number,
  N: number,
  K: number,
  acc: number,
): void {
  const parts = productParts(rt.threads, M, N, K);
  if (!parts) {
    rt.k.gemmPacked(a, lda, b, c, ldc, M, N, K, acc);
    return;
  }
  rt.parallel(
    parts.map(({ i0, m, j0, n }) => [
      gemmPackedCall({
        a: a + i0 * lda * F,
        lda,
        b: packedColumns(b, K, j0),
        c: c + (i0 * ldc + j0) * F,
        ldc,
        M: m,
        N: n,
        K,
        acc,
      }),
    ]),
  );
}

/**
 * Row slices of a gemmTN big enough to split, whatever the thread count: its scratch is then the
 * same on 1, 2 or 3 threads, and so is the engine's peak memory, which a run records and which
 * e2e/wasmThreads.spec.ts and threads.test.ts compare across thread counts.
 */
const TN_SLICES = 4;

/**
 * C (+)= Aᵀ·B (kernels.gemmTN, A stored [K, M]), split over the threads in TN_SLICES slices of rows
 * of C. One scratch buffer holds every slice's part (A's packed columns and, over long K, partial
 * sums: gemmTNScratchFloats); on one thread the whole product is one call on it (one call streams B
 * once, four slices four times: 4–5 % slower for a weight gradient over 12,288 rows).
 */
export function mmTN(
  rt: EngineRuntime,
  a: number,
  lda: number,
  b: number,
  ldb: number,
  c: number,
  ldc: number,
  M: number,
  N: number,
  K: number,
  acc: number,
): void {
  const split = 2 * M * N * K >= PARALLEL_FLOPS && M >= 8;
  const step = split ? Math.ceil(M / TN_SLICES / 4) * 4 : M;
  const rows = Array.from({ length: Math.ceil(M / step) }, (_, t) => Math.min(step, M - t * step));
  const floats = rows.map((m) => rt.k.gemmTNScratchFloats(m, N, K));
  const work = rt.alloc(floats.reduce((x, y) => x + y, 0));
  try {
    if (rt.threads === 1 || rows.length === 1) {
      rt.k.gemmTN(a, lda, b, ldb, c, ldc, M, N, K, acc, work);
      return;
    }
    let w = work;
    rt.parallel(
      rows.map((m, t) => {
        const i0 = t * step;
        const call = gemmTNCall({ a: a + i0 * F, lda, b, ldb, c: c + i0 * ldc * F, ldc, M: m, N, K, acc, work: w });
        w += floats[t] * F;
        return [call];
      }),
    );
  } finally {
    rt.release(work);
  }
}

/** Runs a rows-wise kernel (lmHeadRows, lmHeadGradRows) over `rows` rows in slices, one task each. */
export function sliceRows(rt: EngineRuntime, rows: number, slice: (r0: number, count: number) => KernelCall): void {
  const T = rt.threads;
  const step = T === 1 ? rows : Math.max(1, Math.ceil(rows / (2 * T)));
  const tasks: KernelCall[][] = [];
  for (let r0 = 0; r0 < rows; r0 += step) tasks.push([slice(r0, Math.min(step, rows - r0))]);
  rt.parallel(tasks);
}

/** Elementwise and row kernels over fewer floats than this run as one call (a dispatch costs tens of µs). */
export const PARALLEL_ELEMENTS = 1 << 16;

/**
 * Runs an elementwise kernel over `n` floats (n a multiple of 4) in slices whose starts are
 * multiples of 4, one task each: every element goes through the same 4-wide arithmetic wherever
 * its slice starts, so the bits do not depend on the thread count.
 */
export function sliceElements(rt: EngineRuntime, n: number, slice: (i0: number, count: number) => KernelCall): void {
  const T = rt.threads;
  if (T === 1 || n < PARALLEL_ELEMENTS) {
    rt.parallel([[slice(0, n)]]);
    return;
  }
  const step = Math.ceil(n / (2 * T) / 4) * 4;
  const tasks: KernelCall[][] = [];
  for (let i0 = 0; i0 < n; i0 += step) tasks.push([slice(i0, Math.min(step, n - i0))]);
  rt.parallel(tasks);
}

/** Scratch buffers for `n` attention calls of head dimension D that may run at once (one each). */
export function allocAttnWork(rt: EngineRuntime, D: number, n: number): number[] {
  const floats = rt.k.attnScratchFloats(D);
  return Array.from({ length: n }, () => rt.alloc(floats));
}

/** Runtime members other than kernels, threads and the allocator: memory views and copies. */
const MEMORY_MEMBERS = ['f32', 'i32', 'allocZeroed', 'allocFrom', 'read', 'view', 'write'] as const;

/**
 * The runtime as the calling thread alone sees it: `threads` is 1 (so no product splits) and
 * `parallel` runs each task's calls at once, here; kernels, allocator and memory are the real
 * runtime's. For the calling thread's share of work while the workers run theirs
 * (EngineRuntime.parallelBeside: decode.ts runs a decode step's last slice so).
 */
export function callingThreadRuntime(rt: EngineRuntime): EngineRuntime {
  const stand = {
    k: rt.k,
    threads: 1,
    alloc: (floats: number) => rt.alloc(floats),
    release: (ptr: number) => rt.release(ptr),
    parallel: (tasks: readonly (readonly KernelCall[])[]) => {
      for (const task of tasks) runCalls(rt.k as unknown as Record<string, (...args: number[]) => void>, task);
    },
  };
  for (const key of MEMORY_MEMBERS) {
    Object.defineProperty(stand, key, {
      get: () => {
        const v = (rt as unknown as Record<string, unknown>)[key];
        return typeof v === 'function' ? v.bind(rt) : v;
      },
    });
  }
  return stand as unknown as EngineRuntime;
}

/**
 * A stand-in for the runtime that records instead of running: `runtime.k.<kernel>(…)` appends a
 * call to `calls`, `parallel(tasks)` appends every task's calls in order, `threads` is 1 (so mm
 * never splits), `alloc` is the real runtime's and `release` waits for `releaseAll`, called once
 * the calls have run (a buffer freed at record time could be handed to the next recording while
 * this task still uses it). Reading or writing memory from JS throws: a task is kernel calls only.
 */
export class TaskRecorder {
  readonly calls: KernelCall[] = [];
  /** Pass it where an EngineRuntime is read (e.g. `{ ...core, rt: recorder.runtime }`). */
  readonly runtime: EngineRuntime;
  private readonly released: number[] = [];

  constructor(private readonly rt: EngineRuntime) {
    const k: Record<string, unknown> = {};
    for (const name of Object.keys(rt.k))
      k[name] = () => {
        throw new Error(`engine: kernel ${name} cannot run inside a task (threads.ts TASK_KERNELS)`);
      };
    for (const name of TASK_KERNELS)
      k[name] = (...args: (number | TaskKernel)[]) => {
        args.unshift(name); // the call is the arguments' own array
        this.calls.push(args as KernelCall);
      };
    k.attnScratchFloats = (D: number) => rt.k.attnScratchFloats(D);
    k.attnDecodeScratchFloats = (G: number, Tk: number, D: number) => rt.k.attnDecodeScratchFloats(G, Tk, D);
    const noMemory = (): never => {
      throw new Error('engine: a recorded task reaches memory through kernel calls only');
    };
    const stand = {
      k: k as unknown as Kernels,
      threads: 1,
      alloc: (floats: number) => rt.alloc(floats),
      release: (ptr: number) => void this.released.push(ptr),
      parallel: (tasks: readonly (readonly KernelCall[])[]) => {
        for (const task of tasks) this.calls.push(...task);
      },
    };
    for (const key of MEMORY_MEMBERS) Object.defineProperty(stand, key, { get: noMemory });
    this.runtime = stand as unknown as EngineRuntime;
  }

  /** Frees what the recorded code released; call after its calls have run (or will never run). */
  releaseAll(): void {
    for (const p of this.released.splice(0)) this.rt.release(p);
  }
}
