/**
 * The CPU engine's WebAssembly runtime: one memory, the compiled kernels
 * (assembly/kernels.ts, embedded as base64 by scripts/buildKernels.mjs) and a first-fit
 * allocator over the memory, so that the engine can hold weights, activations and KV
 * caches as plain float32 buffers addressed by byte offset.
 *
 * Synchronous on purpose (WebAssembly.Module on 17 KB compiles in milliseconds, and
 * synchronous compilation is allowed in Node and in workers): tfjs custom ops call the
 * engine from synchronous code. Not for the page's main thread.
 *
 * Two builds of the kernels: plain SIMD (the default, whose bits every run so far has) and,
 * opt-in, relaxed SIMD's fused multiply-add where the runtime validates it (kernelChoice.ts;
 * a run asks by its config's engineKernels; docs/engine.md). One runtime switches between them
 * on its memory between runs.
 */
import { KERNELS_DATA_END, KERNELS_WASM_BASE64 } from './kernelsWasm';
import { KERNELS_RELAXED_WASM_BASE64 } from './kernelsWasmRelaxed';
import { withSharedMemoryImport } from './sharedMemoryImport';
import { runCalls, ThreadPool, type KernelCall } from './threads';
import { chooseKernels, describeMissingRelaxedSimd, hasRelaxedSimd, type KernelVariant } from './kernelChoice';

export { chooseKernels, hasRelaxedSimd, KERNEL_VARIANTS, type KernelVariant } from './kernelChoice';

/** The kernels' exports (pointers are byte offsets, sizes in floats). */
export interface Kernels {
  gemm(
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
  ): void;
  /** gemm with B packed in panels of 8 columns (assembly/gemm.ts; WeightCache.ptrPacked). */
  gemmPacked(
    a: number,
    lda: number,
    b: number,
    c: number,
    ldc: number,
    M: number,
    N: number,
    K: number,
    acc: number,
  ): void;
  /** dst = srcᵀ [cols, rows] in gemmPacked's panels, from src [rows, cols]. */
  packTranspose(src: number, rows: number, cols: number, dst: number): void;
  gemmTN(
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
    work: number,
  ): void;
  /** Floats of scratch gemmTN needs for an M × N product over K. */
  gemmTNScratchFloats(M: number, N: number, K: number): number;
  transpose(src: number, lds: number, dst: number, ldd: number, rows: number, cols: number): void;
  attnScratchFloats(D: number): number;
  /** Floats of scratch attnDecode needs for G query heads over Tk keys of dimension D. */
  attnDecodeScratchFloats(G: number, Tk: number, D: number): number;
  /** One new token's attention for the G query heads of one KV head over its Tk cached keys (assembly/attention.ts). */
  attnDecode(
    q: number,
    ldq: number,
    kt: number,
    ldkt: number,
    ktTile: number,
    v: number,
    ldv: number,
    o: number,
    ldo: number,
    G: number,
    Tk: number,
    D: number,
    scale: number,
    work: number,
  ): void;
  /** kᵀ a [D, ldkt] plane (ktTile KT_PLANE) or the KV cache's [D, 16] tiles (kvCache.ts). */
  attnFwd(
    q: number,
    ldq: number,
    kt: number,
    ldkt: number,
    ktTile: number,
    v: number,
    ldv: number,
    o: number,
    ldo: number,
    lse: number,
    ldlse: number,
    Tq: number,
    qPos0: number,
    qStep: number,
    Tk: number,
    D: number,
    scale: number,
    work: number,
  ): void;
  attnBwd(
    q: number,
    ldq: number,
    k: number,
    ldk: number,
    kt: number,
    ldkt: number,
    vt: number,
    ldvt: number,
    o: number,
    ldo: number,
    dO: number,
    lddo: number,
    lse: number,
    ldlse: number,
    dq: number,
    lddq: number,
    dk: number,
    lddk: number,
    dv: number,
    lddv: number,
    Tq: number,
    qPos0: number,
    Tk: number,
    D: number,
    scale: number,
    work: number,
  ): void;
  rmsnormFwd(
    x: number,
    ldx: number,
    w: number,
    y: number,
    ldy: number,
    rstd: number,
    rows: number,
    n: number,
    eps: number,
  ): void;
  rmsnormBwd(
    x: number,
    ldx: number,
    w: number,
    dy: number,
    lddy: number,
    rstd: number,
    dx: number,
    lddx: number,
    dw: number,
    rows: number,
    n: number,
    acc: number,
  ): void;
  rope(
    x: number,
    ld: number,
    T: number,
    nHeads: number,
    D: number,
    pos: number,
    cos: number,
    sin: number,
    sign: number,
  ): void;
  swigluFwd(g: number, u: number, a: number, n: number): void;
  swigluBwd(g: number, u: number, da: number, dg: number, du: number, n: number): void;
  axpy(x: number, y: number, n: number, alpha: number, acc: number): void;
  embedFwd(ids: number, n: number, table: number, H: number, out: number): void;
  embedBwd(ids: number, n: number, dOut: number, H: number, dTable: number): void;
  lmHeadRows(z: number, rows: number, V: number, targets: number, out: number): void;
  lmHeadGradRows(z: number, rows: number, V: number, targets: number, lse: number, gLogp: number, gEnt: number): void;
  sumSquares(x: number, n: number): number;
  /** y = e^x over n floats (n a multiple of 4), as every kernel computes e^x (assembly/simd.ts exp4). */
  expRows(x: number, y: number, n: number): void;
  /** 96·iters float32 FLOPs of register-only multiply-adds (assembly/peak.ts); returns their sum. */
  maddPeak(iters: number, x: number): number;
  /** The sum of n floats (n a multiple of 32) in 8 vector sums: a read stream (assembly/peak.ts). */
  streamSum(x: number, n: number): number;
  /**
   * Next-token draws per row of logits as generate.ts's sampleFromLogits makes them (temperature 1
   * or greedy, top-p 1; assembly/sampler.ts): u [rows] float64 (< 0: greedy), work `limit`
   * float64, out [rows, 6] float64: token, max, Σe over V, Σe over the first `limit`, e of the token, its logit.
   */
  sampleRows(z: number, rows: number, V: number, limit: number, u: number, work: number, out: number): void;
  /** e^x as fdlibm computes it (V8's Math.exp). */
  expFdlibm(x: number): number;
  /** out[i] = e^{x[i]}, n float64 each, two lanes at a time as sampleRows computes them (expFdlibm's bits). */
  expFdlibmRows(x: number, n: number, out: number): void;
}

const PAGE = 65536;
/** The memory's largest size in pages (4 GiB), and the shared kernels' declared maximum. */
const MAX_PAGES = 65536;
const ALIGN = 64;
/** Never handed out: offset 0 (an invalid pointer) and the kernels' static data (math tables). */
const RESERVED = Math.ceil(Math.max(1024, KERNELS_DATA_END) / ALIGN) * ALIGN;

function decodeBase64(text: string): Uint8Array {
  if (typeof Buffer !== 'undefined') return new Uint8Array(Buffer.from(text, 'base64'));
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const KERNELS_BASE64: Record<KernelVariant, string> = { simd: KERNELS_WASM_BASE64, fma: KERNELS_RELAXED_WASM_BASE64 };

const compiled = new Map<string, WebAssembly.Module>();

function compileKernels(isShared: boolean, kernels: KernelVariant): WebAssembly.Module {
  const key = `${kernels}:${isShared ? 'shared' : 'private'}`;
  let module = compiled.get(key);
  if (!module) {
    const bytes = decodeBase64(KERNELS_BASE64[kernels]);
    module = new WebAssembly.Module((isShared ? withSharedMemoryImport(bytes, MAX_PAGES) : bytes) as BufferSource);
    compiled.set(key, module);
  }
  return module;
}

/**
 * One engine memory with its kernels and a first-fit free-list allocator (blocks aligned
 * to 64 bytes, adjacent free blocks merged). Memory grows on demand up to 4 GiB.
 */
export class EngineRuntime {
  readonly memory: WebAssembly.Memory;
  /** The kernels' exports, on this memory (replaced by useKernels). */
  k: Kernels;
  module: WebAssembly.Module;
  /** The build `k` runs (useKernels switches it). */
  kernels: KernelVariant;
  /** Worker threads on this memory (shared runtimes only), once started. */
  private pool: ThreadPool | null = null;
  private free: { start: number; size: number }[] = [];
  private readonly sizes = new Map<number, number>();
  private top = RESERVED;
  private live = 0;
  /** Largest number of bytes allocated at once (reset with resetPeak). */
  peakAllocatedBytes = 0;
  private f32Cache: Float32Array | null = null;
  private i32Cache: Int32Array | null = null;

  /**
   * `isShared`: a shared memory (SharedArrayBuffer) that worker threads can run kernels on;
   * `kernels`: the build (`fma` throws where relaxed SIMD is missing: chooseKernels falls back).
   */
  constructor(
    initialBytes = 64 << 20,
    readonly isShared = false,
    kernels: KernelVariant = 'simd',
  ) {
    this.memory = new WebAssembly.Memory({
      initial: Math.ceil(initialBytes / PAGE),
      maximum: MAX_PAGES,
      shared: isShared,
    });
    const built = this.instantiate(kernels);
    this.module = built.module;
    this.k = built.k;
    this.kernels = kernels;
  }

  /** The build `kernels` instantiated on this memory (its data segment is the same in every build). */
  private instantiate(kernels: KernelVariant): { module: WebAssembly.Module; k: Kernels } {
    if (kernels === 'fma' && !hasRelaxedSimd())
      throw new Error(`engine: the fma kernels need relaxed SIMD: ${describeMissingRelaxedSimd()}`);
    const module = compileKernels(this.isShared, kernels);
    const instance = new WebAssembly.Instance(module, {
      env: {
        memory: this.memory,
        abort: () => {
          throw new Error('engine kernel abort');
        },
      },
    });
    return { module, k: instance.exports as unknown as Kernels };
  }

  /**
   * Runs `kernels` from now on, on the same memory: every buffer (weights, caches) stays where it
   * is, and the threads restart on the new build. Between runs only: a step in flight would mix
   * the builds' bits.
   */
  async useKernels(kernels: KernelVariant): Promise<void> {
    if (kernels === this.kernels) return;
    const built = this.instantiate(kernels);
    this.module = built.module;
    this.k = built.k;
    this.kernels = kernels;
    if (this.pool) await this.startThreads(this.pool.size);
  }

  /** Threads that run kernels (1: this one only). */
  get threads(): number {
    return this.pool?.size ?? 1;
  }

  /** Starts worker threads (a shared runtime only) so that `parallel` uses `threads` threads. */
  async startThreads(threads: number): Promise<void> {
    if (!this.isShared) throw new Error('engine: threads need a runtime on shared memory');
    this.pool?.stop();
    this.pool =
      threads > 1
        ? await ThreadPool.start(threads, this.module, this.memory, this.k as unknown as Record<string, unknown>)
        : null;
  }

  /** Runs tasks (each a sequence of kernel calls writing memory no other task touches) on every thread. */
  parallel(tasks: readonly (readonly KernelCall[])[]): void {
    if (this.pool) {
      this.pool.run(tasks);
      return;
    }
    for (const task of tasks) runCalls(this.k as unknown as Record<string, (...args: number[]) => void>, task);
  }

  /**
   * Runs `tasks` on the worker threads while the calling thread runs `local` (kernel calls of its
   * own, on memory no task touches, dispatching nothing), then returns when both are done. With
   * no workers, `local` and then the tasks run here.
   */
  parallelBeside(tasks: readonly (readonly KernelCall[])[], local: () => void): void {
    if (this.pool) {
      this.pool.runBeside(tasks, local);
      return;
    }
    local();
    this.parallel(tasks);
  }

  /** Bytes currently allocated (live buffers). */
  get allocatedBytes(): number {
    return this.live;
  }

  resetPeak(): void {
    this.peakAllocatedBytes = this.live;
  }

  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** A float32 view of the whole memory (re-created after growth). */
  get f32(): Float32Array {
    const buffer = this.memory.buffer;
    if (!this.f32Cache || this.f32Cache.buffer !== buffer || this.f32Cache.byteLength !== buffer.byteLength)
      this.f32Cache = new Float32Array(buffer);
    return this.f32Cache;
  }

  get i32(): Int32Array {
    const buffer = this.memory.buffer;
    if (!this.i32Cache || this.i32Cache.buffer !== buffer || this.i32Cache.byteLength !== buffer.byteLength)
      this.i32Cache = new Int32Array(buffer);
    return this.i32Cache;
  }

  /** Allocates `floats` 4-byte values (uninitialised); returns the byte offset. */
  alloc(floats: number): number {
    const size = Math.max(ALIGN, Math.ceil((floats * 4) / ALIGN) * ALIGN);
    for (let i = 0; i < this.free.length; i++) {
      const block = this.free[i];
      if (block.size < size) continue;
      const ptr = block.start;
      if (block.size === size) this.free.splice(i, 1);
      else {
        block.start += size;
        block.size -= size;
      }
      this.sizes.set(ptr, size);
      this.count(size);
      return ptr;
    }
    const ptr = this.top;
    const end = ptr + size;
    if (end > this.memory.buffer.byteLength) {
      const need = Math.ceil((end - this.memory.buffer.byteLength) / PAGE);
      const grow = Math.max(need, Math.ceil(this.memory.buffer.byteLength / PAGE / 4));
      try {
        this.memory.grow(Math.min(grow, MAX_PAGES - this.memory.buffer.byteLength / PAGE));
      } catch {
        throw new Error(
          `engine: out of memory allocating ${(size / 2 ** 20).toFixed(1)} MiB (${(this.memory.buffer.byteLength / 2 ** 20).toFixed(0)} MiB in use of at most 4096)`,
        );
      }
      if (end > this.memory.buffer.byteLength)
        throw new Error(`engine: out of memory allocating ${(size / 2 ** 20).toFixed(1)} MiB`);
    }
    this.top = end;
    this.sizes.set(ptr, size);
    this.count(size);
    return ptr;
  }

  private count(size: number): void {
    this.live += size;
    if (this.live > this.peakAllocatedBytes) this.peakAllocatedBytes = this.live;
  }

  /** Allocates and zeroes. */
  allocZeroed(floats: number): number {
    const ptr = this.alloc(floats);
    this.f32.fill(0, ptr >> 2, (ptr >> 2) + floats);
    return ptr;
  }

  /** Allocates and copies `data` in. */
  allocFrom(data: Float32Array | Int32Array): number {
    const ptr = this.alloc(data.length);
    if (data instanceof Int32Array) this.i32.set(data, ptr >> 2);
    else this.f32.set(data, ptr >> 2);
    return ptr;
  }

  release(ptr: number): void {
    const size = this.sizes.get(ptr);
    if (size === undefined) throw new Error(`engine: release of an unknown pointer ${ptr}`);
    this.sizes.delete(ptr);
    this.live -= size;
    let i = 0;
    while (i < this.free.length && this.free[i].start < ptr) i++;
    this.free.splice(i, 0, { start: ptr, size });
    // Merge with the neighbours.
    if (i + 1 < this.free.length && this.free[i].start + this.free[i].size === this.free[i + 1].start) {
      this.free[i].size += this.free[i + 1].size;
      this.free.splice(i + 1, 1);
    }
    if (i > 0 && this.free[i - 1].start + this.free[i - 1].size === this.free[i].start) {
      this.free[i - 1].size += this.free[i].size;
      this.free.splice(i, 1);
    }
    // A free block at the top goes back to the bump pointer.
    const last = this.free[this.free.length - 1];
    if (last && last.start + last.size === this.top) {
      this.top = last.start;
      this.free.pop();
    }
  }

  /** A copy of `floats` values at `ptr`. */
  read(ptr: number, floats: number): Float32Array {
    return this.f32.slice(ptr >> 2, (ptr >> 2) + floats);
  }

  /** A view (valid until the next allocation that grows memory). */
  view(ptr: number, floats: number): Float32Array {
    return this.f32.subarray(ptr >> 2, (ptr >> 2) + floats);
  }

  write(ptr: number, data: ArrayLike<number>, offsetFloats = 0): void {
    this.f32.set(data, (ptr >> 2) + offsetFloats);
  }
}

let current: EngineRuntime | null = null;
/** The kernels the process-wide runtime is (or will be) created with (configureEngineKernels). */
let configuredKernels: KernelVariant = 'simd';

/** The runtime if the engine has started one (no allocation: for memory readings). */
export function peekEngineRuntime(): EngineRuntime | null {
  return current;
}

/** The process-wide (or worker-wide) runtime. */
export function getEngineRuntime(): EngineRuntime {
  current ??= new EngineRuntime(64 << 20, false, configuredKernels);
  return current;
}

/**
 * The kernels the engine runs from now on (call between runs, like configureEngineThreads before
 * one): `fma` where relaxed SIMD validates, else `simd` and a warning to show once saying why.
 * A runtime already started switches build on its own memory (EngineRuntime.useKernels).
 */
export async function configureEngineKernels(
  asked: KernelVariant,
): Promise<{ kernels: KernelVariant; warning?: string }> {
  const choice = chooseKernels(asked);
  configuredKernels = choice.kernels;
  await current?.useKernels(choice.kernels);
  return choice;
}

/** Whether this context can share memory with threads (Node; a cross-origin-isolated page or worker). */
export function canShareMemory(): boolean {
  const g = globalThis as { SharedArrayBuffer?: unknown; crossOriginIsolated?: boolean };
  return typeof g.SharedArrayBuffer === 'function' && g.crossOriginIsolated !== false;
}

/**
 * Runs the engine on `threads` threads (call before the engine is first used; results do not
 * depend on the thread count). Returns the threads in use and, when fewer, why.
 */
export async function configureEngineThreads(threads: number): Promise<{ threads: number; reason?: string }> {
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`engine threads must be an integer ≥ 1, got ${threads}`);
  if (threads === 1) return { threads: current?.threads ?? 1 };
  if (!canShareMemory())
    return { threads: 1, reason: 'SharedArrayBuffer is unavailable (the page is not cross-origin isolated)' };
  if (current && !current.isShared) return { threads: 1, reason: 'the engine was already in use on unshared memory' };
  current ??= new EngineRuntime(64 << 20, true, configuredKernels);
  if (current.threads !== threads) await current.startThreads(threads);
  return { threads: current.threads };
}
