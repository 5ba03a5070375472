/**
 * Weights in engine memory: each tensor is uploaded once per version (its `key`, the
 * tfjs dataId, changes when an optimiser step assigns a new value, so a new version gets a
 * new entry and its own packed copy) and, for linear weights and LoRA adapters, kept with
 * its transpose [in, out] as the forward product reads it, packed in panels of 8 columns
 * (gemmPacked, assembly/gemm.ts): a decode step streams every weight once for a few rows, and
 * a strip's 8 columns are then K·8 contiguous floats instead of 8 floats at a stride of N per
 * row. The [out, in] original stays row-major (the backward's B operand). An LRU over a byte
 * budget bounds the memory (the policy, π_old and π_ref are three versions); entries in use
 * by a pending backward are pinned.
 */
import type { EngineRuntime } from './runtime';

/** One parameter as the engine reads it. */
export interface EngineTensor {
  /** Identity of this version of the values (tfjs: the tensor's dataId). */
  key: object;
  shape: readonly number[];
  read(): Float32Array;
}

export interface EngineLoraAdapter {
  /** [r, in] */
  A: EngineTensor;
  /** [out, r] */
  B: EngineTensor;
  scale: number;
}

/** A parameter set: HF name → tensor, plus optional LoRA adapters by the adapted weight's name. */
export interface EngineParams {
  get(name: string): EngineTensor;
  lora?: ReadonlyMap<string, EngineLoraAdapter>;
}

/**
 * Columns [j0, N) of a packed B [K, N] (WeightCache.ptrPacked) as a packed matrix of width N − j0:
 * its pointer. j0 must start a panel (a multiple of 8); a block [j0, j0 + n) that ends before N
 * must be whole panels (n a multiple of 8), one that ends at N carries the tail columns with it.
 */
export function packedColumns(b: number, K: number, j0: number): number {
  if (j0 % 8 !== 0) throw new Error(`engine: column ${j0} of a packed matrix does not start a panel of 8`);
  return b + j0 * K * 4;
}

interface Entry {
  ptr: number;
  /** The transpose [cols, rows] of a matrix packed in panels (packedColumns), made on first request. */
  packed?: number;
  floats: number;
  pins: number;
  lastUse: number;
}

export class WeightCache {
  private readonly entries = new Map<object, Entry>();
  private clock = 0;

  constructor(
    private readonly rt: EngineRuntime,
    /** Bytes of weights kept resident before least-recently-used versions are freed. */
    private readonly budgetBytes: number,
  ) {}

  private entry(t: EngineTensor): Entry {
    let e = this.entries.get(t.key);
    if (!e) {
      const data = t.read();
      const expected = t.shape.reduce((a, b) => a * b, 1);
      if (data.length !== expected)
        throw new Error(`engine: tensor of shape [${t.shape.join(', ')}] has ${data.length} values`);
      this.evict(data.length * 4);
      e = { ptr: this.rt.allocFrom(data), floats: data.length, pins: 0, lastUse: 0 };
      this.entries.set(t.key, e);
    }
    e.lastUse = ++this.clock;
    return e;
  }

  /** Pointer to the values [rows, cols]. */
  ptr(t: EngineTensor): number {
    return this.entry(t).ptr;
  }

  /**
   * Pointer to the transpose B = Wᵀ [cols, rows] = [K, N] of a matrix W [rows, cols], packed for
   * gemmPacked (mmPacked): for each strip s < N/8 of 8 columns of B, its K×8 block contiguous
   * (element (k, 8s + c) at (s·K + k)·8 + c), then the N mod 8 last columns as a row-major
   * [K, N mod 8] block. As many floats as W.
   */
  ptrPacked(t: EngineTensor): number {
    const e = this.entry(t);
    if (e.packed === undefined) {
      const [rows, cols] = t.shape;
      this.evict(e.floats * 4);
      e.packed = this.rt.alloc(e.floats);
      this.rt.k.packTranspose(e.ptr, rows, cols, e.packed);
    }
    return e.packed;
  }

  pin(tensors: readonly EngineTensor[]): void {
    for (const t of tensors) this.entry(t).pins++;
  }

  unpin(tensors: readonly EngineTensor[]): void {
    for (const t of tensors) {
      const e = this.entries.get(t.key);
      if (e && e.pins > 0) e.pins--;
    }
  }

  private residentBytes(): number {
    let total = 0;
    for (const e of this.entries.values()) total += e.floats * 4 * (e.packed === undefined ? 1 : 2);
    return total;
  }

  /** Frees least-recently-used unpinned versions until `incoming` more bytes fit the budget. */
  private evict(incoming: number): void {
    let resident = this.residentBytes();
    if (resident + incoming <= this.budgetBytes) return;
    const order = [...this.entries.entries()]
      .filter(([, e]) => e.pins === 0)
      .sort((a, b) => a[1].lastUse - b[1].lastUse);
    for (const [key, e] of order) {
      if (resident + incoming <= this.budgetBytes) break;
      this.free(key, e);
      resident -= e.floats * 4 * (e.packed === undefined ? 1 : 2);
    }
  }

  private free(key: object, e: Entry): void {
    this.rt.release(e.ptr);
    if (e.packed !== undefined) this.rt.release(e.packed);
    this.entries.delete(key);
  }

  /** Frees every unpinned version. */
  clear(): void {
    for (const [key, e] of [...this.entries.entries()]) if (e.pins === 0) this.free(key, e);
  }
}
