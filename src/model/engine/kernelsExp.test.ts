// e^x as every kernel inlines it (exp4, through the expRows export) against a float32 model of its
// formulation, bit for bit, and the row maxima the softmaxes take (the LM head's, attnFwd's) found
// at every position of a row. docs/engine.md, "What V8 makes of the kernels".
import { describe, expect, it } from 'vitest';
import { KT_PLANE } from './kvCache';
import { EngineRuntime } from './runtime';
import { buffersOn, values } from './kernelTestData';

const rt = new EngineRuntime(16 << 20);
const withBuffers = buffersOn(rt);

describe('e^x and the row maxima the softmaxes take', () => {
  const f = Math.fround;
  /** Round half to even, as f32x4.nearest does. */
  const roundEven = (t: number) => {
    const r = Math.round(t);
    return r - t === 0.5 && r % 2 !== 0 ? r - 1 : r;
  };
  /**
   * exp4 as written before its constants moved to static data (2026-12-05), op by op in float32
   * (the plain build: madd(acc, a, b) = acc + a·b, each rounded): the clamp with wasm's min/max, n
   * by f32x4.nearest, 2ⁿ from i32x4.trunc_sat, the polynomial, the result 0 below −87.33654.
   */
  function exp4Reference(x: number): number {
    const lo = f(-87.33654);
    if (Number.isNaN(x)) return NaN;
    const c = Math.min(Math.max(x, lo), 88);
    const n = roundEven(f(c * f(1.442695041)));
    let r = f(c - f(n * f(0.693359375)));
    r = f(r - f(n * f(-2.1219444e-4)));
    let p = f(1.98756915e-4);
    for (const k of [1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1])
      p = f(f(k) + f(p * r));
    p = f(f(r + f(p * f(r * r))) + 1);
    return x < lo ? 0 : f(p * 2 ** n);
  }

  it('exp4 (every softmax, the LM head, SwiGLU) gives its reference bits on every 4,096th float32 and at rounding ties', () => {
    const bits = new Uint32Array(2 ** 20 + 1024);
    for (let i = 0; i < 2 ** 20; i++) bits[i] = i * 4096 + (i % 4093); // every sign, exponent and 2^20 mantissas
    // Ties: x whose x·log2 e is k + ½ exactly in float32, where nearest rounds to even (±0.5 → 0, 1.5 → 2).
    const x = new Float32Array(bits.buffer);
    let ties = 0;
    for (let k = -126; k < 127 && ties < 1024; k++) {
      const y = new Float32Array([(k + 0.5) / 1.442695041]);
      const u = new Uint32Array(y.buffer);
      for (let d = -64; d <= 64; d++) {
        const z = new Float32Array(new Uint32Array([u[0] + d]).buffer)[0];
        if (f(z * f(1.442695041)) === k + 0.5 && ties < 1024) x[2 ** 20 + ties++] = z;
      }
    }
    expect(ties).toBeGreaterThan(100);
    const n = 2 ** 20 + ties - (ties % 4);
    withBuffers((put, zeros) => {
      const y = zeros(n);
      rt.k.expRows(put(x.subarray(0, n)), y, n);
      const got = rt.read(y, n);
      const wrong: string[] = [];
      for (let i = 0; i < n && wrong.length < 5; i++) {
        const want = exp4Reference(x[i]);
        if (!(Object.is(got[i], want) || (Number.isNaN(got[i]) && Number.isNaN(want))))
          wrong.push(`e^${x[i]}: ${got[i]}, reference ${want}`);
      }
      expect(wrong).toEqual([]);
    });
    // The reference itself, against Math.exp where e^x is a normal float32.
    for (const t of [-87, -10, -1, -1e-3, 0, 0.5, 1, 10, 88]) expect(exp4Reference(t) / Math.exp(t)).toBeCloseTo(1, 6);
  });

  it('the LM head finds its row maximum anywhere in the row (a logit 200 above the rest at each position)', () => {
    // With the maximum missed, e^(z − max) is capped at e^88 and the log-sum-exp comes out near 88.
    for (const V of [4, 7, 36, 64, 70]) {
      const Z = values(V * V, 20 + V);
      for (let r = 0; r < V; r++) Z[r * V + r] = 200;
      withBuffers((put, zeros) => {
        const out = zeros(V * 3);
        rt.k.lmHeadRows(put(Z), V, V, put(new Int32Array(V)), out);
        const O = rt.read(out, V * 3);
        for (let r = 0; r < V; r++) expect(O[r * 3 + 2], `V ${V}, maximum at ${r}`).toBeCloseTo(200, 4);
      });
    }
  });

  it("attnFwd's log-sum-exp finds the dominant key at every position of a row (scores 354 above the rest)", () => {
    const D = 8;
    for (const Tk of [5, 37, 64, 100]) {
      const q = new Float32Array(D);
      q[0] = 1000;
      for (let i = 0; i < Tk; i++) {
        const kt = new Float32Array(D * Tk); // kᵀ as a [D, Tk] plane: only key i has a first dimension
        kt[i] = 1;
        withBuffers((put, zeros) => {
          const lse = zeros(1);
          const scale = 1 / Math.sqrt(D);
          const work = zeros(rt.k.attnScratchFloats(D));
          const o = zeros(D);
          rt.k.attnFwd(
            put(q),
            D,
            put(kt),
            Tk,
            KT_PLANE,
            put(values(Tk * D, i)),
            D,
            o,
            D,
            lse,
            1,
            1,
            Tk - 1,
            1,
            Tk,
            D,
            scale,
            work,
          );
          expect(rt.read(lse, 1)[0], `Tk ${Tk}, key ${i}`).toBeCloseTo(1000 * scale, 3);
        });
      }
    }
  });
});
