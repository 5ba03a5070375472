/**
 * Gradient buffers of one backward in engine memory: zeroed and allocated on first request,
 * only for the names asked for (a frozen weight's gradient is never formed), read back once
 * at the end and freed.
 */
import type { EngineRuntime } from './runtime';

export class GradBuffers {
  private readonly buffers = new Map<string, { ptr: number; floats: number }>();

  constructor(
    private readonly rt: EngineRuntime,
    private readonly names: ReadonlySet<string>,
  ) {}

  /** The buffer of `name` (floats values), or undefined when its gradient is not asked for. */
  get(name: string, floats: number): number | undefined {
    if (!this.names.has(name)) return undefined;
    let b = this.buffers.get(name);
    if (!b) {
      b = { ptr: this.rt.allocZeroed(floats), floats };
      this.buffers.set(name, b);
    }
    return b.ptr;
  }

  /** Copies of every buffer formed, by name. */
  collect(): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    for (const [name, b] of this.buffers) out.set(name, this.rt.read(b.ptr, b.floats));
    return out;
  }

  dispose(): void {
    for (const b of this.buffers.values()) this.rt.release(b.ptr);
    this.buffers.clear();
  }
}
