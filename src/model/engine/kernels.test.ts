// The engine's WebAssembly kernels against plain-JavaScript references written from the
// formulas (float64), on sizes that hit every tail path (rows not a multiple of 4, columns
// not a multiple of 8, several attention blocks, queries after a cached prefix); gemmPacked against
// gemm bit for bit (gemmPackedCheck.ts, which kernelsFma.test.ts runs on the fma build).
import { describe, expect, it } from 'vitest';
import { checkPackedGemm, PACKED_COLS, PACKED_DEPTHS, PACKED_ROWS } from './gemmPackedCheck';
import { KT_PLANE, KT_TILE } from './kvCache';
import { EngineRuntime } from './runtime';
import { packedColumns } from './weights';
import { buffersOn, values } from './kernelTestData';

const rt = new EngineRuntime(16 << 20);
const withBuffers = buffersOn(rt);

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe('matrix products', () => {
  for (const [M, N, K] of [
    [7, 13, 5],
    [9, 24, 33],
    [1, 3, 2],
    [16, 8, 4],
    [6, 17, 9],
    [2, 16, 3],
  ]) {
    it(`gemm and gemmTN at M=${M} N=${N} K=${K}, with and without accumulation`, () => {
      const A = values(M * K, 1);
      const B = values(K * N, 2);
      const C0 = values(M * N, 3);
      const ref = new Float64Array(M * N);
      for (let i = 0; i < M; i++)
        for (let j = 0; j < N; j++) for (let k = 0; k < K; k++) ref[i * N + j] += A[i * K + k] * B[k * N + j];
      withBuffers((put, zeros) => {
        const a = put(A);
        const b = put(B);
        const c = put(C0);
        rt.k.gemm(a, K, b, N, c, N, M, N, K, 0);
        expect(maxAbsDiff(rt.read(c, M * N), ref)).toBeLessThan(1e-5);
        rt.k.gemm(a, K, b, N, c, N, M, N, K, 1);
        expect(
          maxAbsDiff(
            rt.read(c, M * N),
            ref.map((x) => 2 * x),
          ),
        ).toBeLessThan(1e-5);
        // Aᵀ stored [K, M]: C = (Aᵀ)ᵀ B = A B again.
        const At = new Float32Array(K * M);
        for (let i = 0; i < M; i++) for (let k = 0; k < K; k++) At[k * M + i] = A[i * K + k];
        const at = put(At);
        rt.k.gemmTN(at, M, b, N, c, N, M, N, K, 0, zeros(rt.k.gemmTNScratchFloats(M, N, K)));
        expect(maxAbsDiff(rt.read(c, M * N), ref)).toBeLessThan(1e-5);
      });
    });
  }

  it("gemmTN (A's columns packed in its scratch) has gemm's bits on Aᵀ, strided A, with and without accumulation", () => {
    // Each element sums over k in order from 0 and then adds C's old value, in either kernel.
    const mismatches: string[] = [];
    for (const M of [1, 3, 4, 5, 8, 13, 64])
      for (const N of [1, 4, 7, 8, 13, 24])
        for (const K of [0, 1, 5, 300, 1100]) {
          const lda = M + 3;
          const A = values(M * K, M + 7 * N + K);
          const At = new Float32Array(K * lda).fill(Number.NaN); // the padding must not be read
          for (let i = 0; i < M; i++) for (let k = 0; k < K; k++) At[k * lda + i] = A[i * K + k];
          const B = values(K * N, 2 * K + N);
          const C0 = values(M * N, 5);
          withBuffers((put, zeros) => {
            const a = put(A);
            const at = put(At);
            const b = put(B);
            for (const acc of [0, 1]) {
              const c1 = put(C0);
              const c2 = put(C0);
              rt.k.gemm(a, K, b, N, c1, N, M, N, K, acc);
              rt.k.gemmTN(at, lda, b, N, c2, N, M, N, K, acc, zeros(rt.k.gemmTNScratchFloats(M, N, K)));
              const x = rt.read(c1, M * N);
              const y = rt.read(c2, M * N);
              if (!x.every((v, i) => Object.is(v, y[i]))) mismatches.push(`M ${M} N ${N} K ${K} acc ${acc}`);
            }
          });
        }
    expect(mismatches).toEqual([]);
  });

  it('gemmPacked on packTranspose panels has gemm bits: rows 1-20 and 64, tails, 1,022 columns, column blocks', () => {
    const { products, mismatches } = checkPackedGemm(rt);
    expect(mismatches.slice(0, 10)).toEqual([]);
    expect(products).toBe(PACKED_COLS.length * PACKED_DEPTHS.length * (2 * PACKED_ROWS.length + 2 * 20));
  });

  it('packedColumns: a column block of a packed matrix starts a panel', () => {
    expect(packedColumns(1024, 100, 16)).toBe(1024 + 16 * 100 * 4);
    expect(() => packedColumns(1024, 100, 12)).toThrow(/panel of 8/);
  });

  it('transpose', () => {
    const X = values(5 * 7, 4);
    withBuffers((put, zeros) => {
      const x = put(X);
      const y = zeros(35);
      rt.k.transpose(x, 7, y, 5, 5, 7);
      const Y = rt.read(y, 35);
      for (let r = 0; r < 5; r++) for (let c = 0; c < 7; c++) expect(Y[c * 5 + r]).toBe(X[r * 7 + c]);
    });
  });
});

/** Softmax attention of one head with queries at positions qPos0 + i over keys j ≤ position, in float64. */
function referenceAttention(q: Float32Array, k: Float32Array, v: Float32Array, Tq: number, qPos0: number, D: number) {
  const scale = 1 / Math.sqrt(D);
  const o = new Float64Array(Tq * D);
  const lse = new Float64Array(Tq);
  const probs: number[][] = [];
  for (let i = 0; i < Tq; i++) {
    const s: number[] = [];
    for (let j = 0; j <= qPos0 + i; j++) {
      let d0 = 0;
      for (let d = 0; d < D; d++) d0 += q[i * D + d] * k[j * D + d];
      s.push(d0 * scale);
    }
    const m = Math.max(...s);
    const z = s.reduce((acc, x) => acc + Math.exp(x - m), 0);
    lse[i] = m + Math.log(z);
    const p = s.map((x) => Math.exp(x - lse[i]));
    probs.push(p);
    for (let d = 0; d < D; d++) for (let j = 0; j < p.length; j++) o[i * D + d] += p[j] * v[j * D + d];
  }
  return { o, lse, probs, scale };
}

describe('attention', () => {
  // 70 queries after 37 cached keys: three query blocks, two key blocks, ragged ends.
  const D = 16;
  const qPos0 = 37;
  const Tq = 70;
  const Tk = qPos0 + Tq;
  const q = values(Tq * D, 5);
  const k = values(Tk * D, 6);
  const v = values(Tk * D, 7);
  const kt = new Float32Array(D * Tk);
  const vt = new Float32Array(D * Tk);
  for (let j = 0; j < Tk; j++)
    for (let d = 0; d < D; d++) {
      kt[d * Tk + j] = k[j * D + d];
      vt[d * Tk + j] = v[j * D + d];
    }
  const ref = referenceAttention(q, k, v, Tq, qPos0, D);

  it('attnFwd equals softmax(q kᵀ/√D) v with a causal mask, and its log-sum-exp', () => {
    withBuffers((put, zeros) => {
      const o = zeros(Tq * D);
      const lse = zeros(Tq);
      const work = zeros(rt.k.attnScratchFloats(D));
      rt.k.attnFwd(put(q), D, put(kt), Tk, KT_PLANE, put(v), D, o, D, lse, 1, Tq, qPos0, 1, Tk, D, ref.scale, work);
      expect(maxAbsDiff(rt.read(o, Tq * D), ref.o)).toBeLessThan(1e-5);
      expect(maxAbsDiff(rt.read(lse, Tq), ref.lse)).toBeLessThan(1e-5);
    });
  });

  it('attnFwd with qStep 0: several query rows at one position (GQA heads of a decoded token)', () => {
    withBuffers((put, zeros) => {
      const rows = 3;
      const o = zeros(rows * D);
      const lse = zeros(rows);
      const work = zeros(rt.k.attnScratchFloats(D));
      // Rows 0..2 are the same three queries as rows 5..7 of `q`, all at position qPos0 + 5.
      rt.k.attnFwd(
        put(q.slice(5 * D, 8 * D)),
        D,
        put(kt),
        Tk,
        KT_PLANE,
        put(v),
        D,
        o,
        D,
        lse,
        1,
        rows,
        qPos0 + 5,
        0,
        qPos0 + 6,
        D,
        ref.scale,
        work,
      );
      // Each row reads keys 0..qPos0+5 only, like query 5 of the causal reference.
      const expected = new Float64Array(rows * D);
      for (let r = 0; r < rows; r++) {
        const one = referenceAttention(q.slice((5 + r) * D, (6 + r) * D), k, v, 1, qPos0 + 5, D);
        expected.set(one.o, r * D);
      }
      expect(maxAbsDiff(rt.read(o, rows * D), expected)).toBeLessThan(1e-5);
    });
  });

  it("attnFwd reads kᵀ from the KV cache's [D, 16] tiles with the bits it gets from a plane", () => {
    // Tk = 107 keys: six full tiles and a ragged seventh; the tiles' unused columns hold NaN.
    const tiles = new Float32Array(D * 112).fill(NaN);
    for (let j = 0; j < Tk; j++)
      for (let d = 0; d < D; d++)
        tiles[Math.floor(j / KT_TILE) * KT_TILE * D + d * KT_TILE + (j % KT_TILE)] = k[j * D + d];
    withBuffers((put, zeros) => {
      const run = (keys: Float32Array, ldkt: number, ktTile: number) => {
        const o = zeros(Tq * D);
        const lse = zeros(Tq);
        const work = zeros(rt.k.attnScratchFloats(D));
        rt.k.attnFwd(put(q), D, put(keys), ldkt, ktTile, put(v), D, o, D, lse, 1, Tq, qPos0, 1, Tk, D, ref.scale, work);
        return [...rt.read(o, Tq * D), ...rt.read(lse, Tq)];
      };
      const fromPlane = run(kt, Tk, KT_PLANE);
      const fromTiles = run(tiles, KT_TILE, KT_TILE * D);
      expect(fromTiles.every(Number.isFinite)).toBe(true);
      expect(fromTiles).toEqual(fromPlane);
    });
  });

  // attnDecode: G query heads of one new token over Tk cached keys, read from a kᵀ plane of
  // capacity 40 and value rows interleaved with another head's (ldv 2·D), as the KV cache holds
  // them; the plane's columns and the value rows past Tk hold NaN, which must not reach o.
  for (const [G, D, Tk] of [
    [1, 16, 1],
    [2, 16, 15],
    [2, 48, 16],
    [3, 24, 17],
    [4, 128, 33],
    [2, 20, 40],
  ]) {
    it(`attnDecode equals softmax(q kᵀ/√D) v for G=${G} query heads, D=${D}, Tk=${Tk} (keys past Tk unread)`, () => {
      const cap = 40;
      const ldv = 2 * D;
      const kRows = values(cap * D, 11 + G);
      const vRows = values(cap * D, 12 + D);
      const qs = values(G * D, 13 + Tk);
      const plane = new Float32Array(D * cap).fill(NaN);
      const tiles = new Float32Array(D * 48).fill(NaN); // the KV cache's [D, 16] tiles (kvCache.ts), 3 of them
      const vInterleaved = new Float32Array(cap * ldv).fill(NaN);
      for (let j = 0; j < Tk; j++)
        for (let d = 0; d < D; d++) {
          plane[d * cap + j] = kRows[j * D + d];
          tiles[Math.floor(j / KT_TILE) * KT_TILE * D + d * KT_TILE + (j % KT_TILE)] = kRows[j * D + d];
          vInterleaved[j * ldv + D + d] = vRows[j * D + d]; // this head's values are the second half of each row
        }
      withBuffers((put, zeros) => {
        const ldo = D + 4;
        const scale = 1 / Math.sqrt(D);
        const run = (kt: Float32Array, ldkt: number, ktTile: number) => {
          const o = zeros(G * ldo);
          const work = put(new Float32Array(rt.k.attnDecodeScratchFloats(G, Tk, D)).fill(NaN));
          rt.k.attnDecode(
            put(qs),
            D,
            put(kt),
            ldkt,
            ktTile,
            put(vInterleaved) + D * 4,
            ldv,
            o,
            ldo,
            G,
            Tk,
            D,
            scale,
            work,
          );
          return rt.read(o, G * ldo);
        };
        const got = run(plane, cap, KT_PLANE);
        for (let r = 0; r < G; r++) {
          // Query r at position Tk − 1 reads keys 0..Tk − 1 (referenceAttention's qPos0 = Tk − 1).
          const want = referenceAttention(qs.slice(r * D, (r + 1) * D), kRows, vRows, 1, Tk - 1, D).o;
          expect(maxAbsDiff(got.slice(r * ldo, r * ldo + D), want)).toBeLessThan(2e-6);
          for (let d = D; d < ldo && r < G - 1; d++) expect(got[r * ldo + d]).toBe(0); // nothing written between rows
        }
        // The same keys from tiles: only the addresses differ, so the same bits.
        expect(Array.from(run(tiles, KT_TILE, KT_TILE * D))).toEqual(Array.from(got));
      });
    });
  }

  it('attnBwd equals the analytic gradient of Σ g ⊙ o', () => {
    const g = values(Tq * D, 8);
    // dV_j = Σ_i p_ij g_i;  dP_ij = g_i·v_j;  dS = P ⊙ (dP − Σ_j P dP);  dq = scale·dS k;  dk = scale·dSᵀ q.
    const dq = new Float64Array(Tq * D);
    const dk = new Float64Array(Tk * D);
    const dv = new Float64Array(Tk * D);
    for (let i = 0; i < Tq; i++) {
      const p = ref.probs[i];
      const dp = p.map((_, j) => {
        let s = 0;
        for (let d = 0; d < D; d++) s += g[i * D + d] * v[j * D + d];
        return s;
      });
      const dot = p.reduce((acc, pj, j) => acc + pj * dp[j], 0);
      p.forEach((pj, j) => {
        const ds = pj * (dp[j] - dot) * ref.scale;
        for (let d = 0; d < D; d++) {
          dv[j * D + d] += pj * g[i * D + d];
          dq[i * D + d] += ds * k[j * D + d];
          dk[j * D + d] += ds * q[i * D + d];
        }
      });
    }
    withBuffers((put, zeros) => {
      const o = zeros(Tq * D);
      const lse = zeros(Tq);
      const work = zeros(rt.k.attnScratchFloats(D));
      const [pq, pkt, pv, pk, pvt] = [put(q), put(kt), put(v), put(k), put(vt)];
      rt.k.attnFwd(pq, D, pkt, Tk, KT_PLANE, pv, D, o, D, lse, 1, Tq, qPos0, 1, Tk, D, ref.scale, work);
      const [gq, gk, gv] = [zeros(Tq * D), zeros(Tk * D), zeros(Tk * D)];
      rt.k.attnBwd(
        pq,
        D,
        pk,
        D,
        pkt,
        Tk,
        pvt,
        Tk,
        o,
        D,
        put(g),
        D,
        lse,
        1,
        gq,
        D,
        gk,
        D,
        gv,
        D,
        Tq,
        qPos0,
        Tk,
        D,
        ref.scale,
        work,
      );
      expect(maxAbsDiff(rt.read(gq, Tq * D), dq)).toBeLessThan(1e-4);
      expect(maxAbsDiff(rt.read(gk, Tk * D), dk)).toBeLessThan(1e-4);
      expect(maxAbsDiff(rt.read(gv, Tk * D), dv)).toBeLessThan(1e-4);
    });
  });
});

describe('pointwise kernels against finite differences', () => {
  const n = 12;
  const rows = 3;

  it('rmsnorm forward and backward', () => {
    const X = values(rows * n, 9);
    const W = values(n, 10);
    const G = values(rows * n, 11);
    const f = (x: Float32Array) => {
      let s = 0;
      for (let r = 0; r < rows; r++) {
        let ss = 0;
        for (let i = 0; i < n; i++) ss += x[r * n + i] ** 2;
        const rs = 1 / Math.sqrt(ss / n + 1e-6);
        for (let i = 0; i < n; i++) s += G[r * n + i] * x[r * n + i] * rs * W[i];
      }
      return s;
    };
    withBuffers((put, zeros) => {
      const x = put(X);
      const w = put(W);
      const y = zeros(rows * n);
      const rstd = zeros(rows);
      rt.k.rmsnormFwd(x, n, w, y, n, rstd, rows, n, 1e-6);
      const Y = rt.read(y, rows * n);
      let s = 0;
      for (let i = 0; i < rows * n; i++) s += G[i] * Y[i];
      expect(Math.abs(s - f(X))).toBeLessThan(1e-5);
      const dx = zeros(rows * n);
      const dw = zeros(n);
      rt.k.rmsnormBwd(x, n, w, put(G), n, rstd, dx, n, dw, rows, n, 0);
      const DX = rt.read(dx, rows * n);
      const h = 1e-3;
      for (const i of [0, 5, 17, 35]) {
        const xp = X.slice();
        const xm = X.slice();
        xp[i] += h;
        xm[i] -= h;
        expect(DX[i]).toBeCloseTo((f(xp) - f(xm)) / (2 * h), 3);
      }
    });
  });

  it('rope with sign −1 undoes rope with sign +1', () => {
    const D = 16;
    const T = 5;
    const X = values(T * 2 * D, 12);
    const half = D / 2;
    const cos = new Float32Array(10 * half);
    const sin = new Float32Array(10 * half);
    for (let p = 0; p < 10; p++)
      for (let j = 0; j < half; j++) {
        cos[p * half + j] = Math.cos(p * 10000 ** ((-2 * j) / D));
        sin[p * half + j] = Math.sin(p * 10000 ** ((-2 * j) / D));
      }
    withBuffers((put) => {
      const x = put(X);
      const pos = put(new Int32Array([3, 4, 5, 9, 0]));
      rt.k.rope(x, 2 * D, T, 2, D, pos, put(cos), put(sin), 1);
      const Y = rt.read(x, T * 2 * D);
      // token 1 (position 4), head 1, pair j = 2: x₁' = x₁c − x₂s.
      const base = 1 * 2 * D + D;
      const c = Math.cos(4 * 10000 ** (-4 / D));
      const s = Math.sin(4 * 10000 ** (-4 / D));
      expect(Y[base + 2]).toBeCloseTo(X[base + 2] * c - X[base + 2 + half] * s, 5);
      rt.k.rope(x, 2 * D, T, 2, D, pos, put(cos), put(sin), -1);
      expect(maxAbsDiff(rt.read(x, T * 2 * D), X)).toBeLessThan(1e-5);
    });
  });

  it('swiglu forward and backward', () => {
    const Gv = values(8, 13).map((x) => 4 * x);
    const Uv = values(8, 14);
    const Dv = values(8, 15);
    const silu = (g: number) => g / (1 + Math.exp(-g));
    withBuffers((put, zeros) => {
      const [g, u, a, dg, du] = [put(Gv), put(Uv), zeros(8), zeros(8), zeros(8)];
      rt.k.swigluFwd(g, u, a, 8);
      expect(
        maxAbsDiff(
          rt.read(a, 8),
          Array.from(Gv, (x, i) => silu(x) * Uv[i]),
        ),
      ).toBeLessThan(1e-6);
      rt.k.swigluBwd(g, u, put(Dv), dg, du, 8);
      const h = 1e-3;
      expect(
        maxAbsDiff(
          rt.read(du, 8),
          Array.from(Gv, (x, i) => Dv[i] * silu(x)),
        ),
      ).toBeLessThan(1e-6);
      expect(
        maxAbsDiff(
          rt.read(dg, 8),
          Array.from(Gv, (x, i) => (Dv[i] * Uv[i] * (silu(x + h) - silu(x - h))) / (2 * h)),
        ),
      ).toBeLessThan(1e-4);
    });
  });

  it('LM-head rows: log p(target), entropy, log-sum-exp, and the gradient of a·logp + b·entropy', () => {
    const V = 37; // not a multiple of 4: the scalar tail too
    const R = 2;
    const Z = values(R * V, 16).map((x) => 5 * x);
    const targets = new Int32Array([7, 35]);
    const stats = (z: Float32Array, r: number) => {
      const row = Array.from(z.subarray(r * V, (r + 1) * V));
      const m = Math.max(...row);
      const lse = m + Math.log(row.reduce((s, x) => s + Math.exp(x - m), 0));
      const ent = lse - row.reduce((s, x) => s + Math.exp(x - lse) * x, 0);
      return { logp: row[targets[r]] - lse, ent, lse };
    };
    const a = [0.7, -1.3];
    const b = [0.4, 2.0];
    const objective = (z: Float32Array) =>
      [0, 1].reduce((s, r) => s + a[r] * stats(z, r).logp + b[r] * stats(z, r).ent, 0);
    withBuffers((put, zeros) => {
      const z = put(Z);
      const t = put(targets);
      const out = zeros(R * 3);
      rt.k.lmHeadRows(z, R, V, t, out);
      const O = rt.read(out, R * 3);
      for (const r of [0, 1]) {
        const s = stats(Z, r);
        expect(O[r * 3]).toBeCloseTo(s.logp, 5);
        expect(O[r * 3 + 1]).toBeCloseTo(s.ent, 5);
        expect(O[r * 3 + 2]).toBeCloseTo(s.lse, 5);
      }
      const lse = put(new Float32Array([O[2], O[5]]));
      rt.k.lmHeadGradRows(z, R, V, t, lse, put(new Float32Array(a)), put(new Float32Array(b)));
      const dz = rt.read(z, R * V);
      const h = 1e-3;
      for (const i of [0, 7, 36, 40, 73]) {
        const zp = Z.slice();
        const zm = Z.slice();
        zp[i] += h;
        zm[i] -= h;
        expect(dz[i]).toBeCloseTo((objective(zp) - objective(zm)) / (2 * h), 3);
      }
    });
  });
});

it('the allocator reuses freed memory and merges neighbours', () => {
  const before = rt.allocatedBytes;
  const a = rt.alloc(100);
  const b = rt.alloc(100);
  const c = rt.alloc(100);
  rt.release(a);
  rt.release(b);
  const d = rt.alloc(200); // fits the merged a + b block
  expect(d).toBe(a);
  rt.release(c);
  rt.release(d);
  expect(rt.allocatedBytes).toBe(before);
});

it("maddPeak runs 12 chains of `iters` multiply-adds on 4 lanes (pact bench's 96·iters FLOPs)", () => {
  // x = 2 and b = 0.5: each multiply-add adds exactly 1, so chain k (starting at k) ends at k + iters,
  // and the lanes' sum is 4 · Σₖ (k + iters) = 4 · (78 + 12 · iters), exact in float32.
  for (const iters of [0, 1, 7, 1000]) expect(rt.k.maddPeak(iters, 2)).toBe(4 * (78 + 12 * iters));
});

it('streamSum adds every float of its buffer', () => {
  // 1, 2, …, 256: each of the 8 vector sums gets 8 vectors, and every partial sum is an integer below 2²⁴.
  withBuffers((put) => {
    const x = put(Float32Array.from({ length: 256 }, (_, i) => i + 1));
    expect(rt.k.streamSum(x, 256)).toBe((256 * 257) / 2);
    expect(rt.k.streamSum(x, 32)).toBe((32 * 33) / 2);
    expect(rt.k.streamSum(x, 0)).toBe(0);
  });
});
