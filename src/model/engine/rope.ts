/**
 * RoPE angle tables in engine memory: cos and sin [positions, D/2] of the angle
 * p·θ^(−2j/D), computed in double as computeHostRopeTables does, grown on demand (doubling)
 * past max_position_embeddings: PACT's [x; h*; τ] rows can be longer, and the tfjs graph
 * computes RoPE for any position, so the engine does too.
 */
import type { EngineRuntime } from './runtime';

export class RopeTables {
  /** Pointers to cos and sin [positions, D/2]. */
  cos = 0;
  sin = 0;
  private positions = 0;

  constructor(
    private readonly rt: EngineRuntime,
    private readonly D: number,
    private readonly theta: number,
    positions: number,
  ) {
    this.ensure(positions);
  }

  /** Grows the tables to hold at least `positions` positions. */
  ensure(positions: number): void {
    if (positions <= this.positions) return;
    const P = Math.max(positions, 2 * this.positions);
    const half = this.D / 2;
    const cos = new Float32Array(P * half);
    const sin = new Float32Array(P * half);
    for (let p = 0; p < P; p++) {
      for (let j = 0; j < half; j++) {
        const angle = p * (1 / Math.pow(this.theta, (2 * j) / this.D));
        cos[p * half + j] = Math.cos(angle);
        sin[p * half + j] = Math.sin(angle);
      }
    }
    if (this.positions > 0) {
      this.rt.release(this.cos);
      this.rt.release(this.sin);
    }
    this.cos = this.rt.allocFrom(cos);
    this.sin = this.rt.allocFrom(sin);
    this.positions = P;
  }
}
