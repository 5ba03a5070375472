// Attention of one head in FlashAttention-2's manner: key blocks of BK with an online softmax
// per query block of BQ (no T×T score matrix), and its backward by recomputation.
import { addr, exp1, exp4, hsum, ld4, madd, splat, st4 } from './simd';
import { gemm, gemmTN } from './gemm';

const BQ: i32 = 32;
const BK: i32 = 64;

/** Floats of scratch attnFwd / attnBwd need for head dimension D. */
export function attnScratchFloats(D: i32): i32 {
  return BQ * BK * 2 + BQ * D + BQ * 4;
}

/**
 * Causal attention of one head, softmax(q kᵀ·scale) v, without the score matrix: key
 * blocks of BK with an online softmax, per query block of BQ. Query i sits at position
 * qPos0 + i·qStep (qStep 1: consecutive tokens; 0: the query heads of one KV head for one
 * token) and may read keys j ≤ its position (j < Tk). q rows [Tq] (ldq), kᵀ as a [D, ldkt]
 * plane, v rows [Tk] (ldv) → o rows (ldo), lse[i·ldlse] = log Σ_j e^{s_ij}.
 */
export function attnFwd(
  q: usize, ldq: i32, kt: usize, ldkt: i32, v: usize, ldv: i32, o: usize, ldo: i32, lse: usize, ldlse: i32,
  Tq: i32, qPos0: i32, qStep: i32, Tk: i32, D: i32, scale: f32, work: usize,
): void {
  const S = work;
  const A = S + (<usize>(BQ * BK) << 2);
  const m = A + (<usize>(BQ * D) << 2);
  const l = m + (<usize>BQ << 2);
  for (let i0 = 0; i0 < Tq; i0 += BQ) {
    const bq = min(BQ, Tq - i0);
    memory.fill(A, 0, <usize>(bq * D) << 2);
    for (let r = 0; r < bq; r++) {
      store<f32>(m + (<usize>r << 2), -Infinity);
      store<f32>(l + (<usize>r << 2), 0);
    }
    const jEnd = min(Tk, qPos0 + (i0 + bq - 1) * qStep + 1);
    for (let j0 = 0; j0 < jEnd; j0 += BK) {
      const bk = min(BK, jEnd - j0);
      gemm(addr(q, i0, ldq, 0), ldq, addr(kt, 0, ldkt, j0), ldkt, S, BK, bq, bk, D, 0);
      for (let r = 0; r < bq; r++) {
        const limit = min(bk, qPos0 + (i0 + r) * qStep + 1 - j0);
        const srow = S + (<usize>(r * BK) << 2);
        if (limit <= 0) {
          memory.fill(srow, 0, <usize>bk << 2);
          continue;
        }
        let mx: f32 = -Infinity;
        for (let c = 0; c < limit; c++) mx = max(mx, load<f32>(srow + (<usize>c << 2)));
        mx *= scale;
        const mOld = load<f32>(m + (<usize>r << 2));
        const mNew = max(mOld, mx);
        const corr = mOld == -Infinity ? <f32>0 : exp1(mOld - mNew);
        let sum = splat(0);
        const sc = splat(scale);
        const mn = splat(mNew);
        const lim4 = limit & ~3;
        let c = 0;
        for (; c < lim4; c += 4) {
          const p = exp4(f32x4.sub(f32x4.mul(ld4(srow + (<usize>c << 2)), sc), mn));
          st4(srow + (<usize>c << 2), p);
          sum = f32x4.add(sum, p);
        }
        let tail: f32 = 0;
        for (; c < limit; c++) {
          const p = exp1(load<f32>(srow + (<usize>c << 2)) * scale - mNew);
          store<f32>(srow + (<usize>c << 2), p);
          tail += p;
        }
        for (; c < bk; c++) store<f32>(srow + (<usize>c << 2), 0);
        store<f32>(l + (<usize>r << 2), load<f32>(l + (<usize>r << 2)) * corr + hsum(sum) + tail);
        store<f32>(m + (<usize>r << 2), mNew);
        if (corr != 1) {
          const arow = A + (<usize>(r * D) << 2);
          const cv = splat(corr);
          for (let d = 0; d < D; d += 4) st4(arow + (<usize>d << 2), f32x4.mul(ld4(arow + (<usize>d << 2)), cv));
        }
      }
      gemm(S, BK, addr(v, j0, ldv, 0), ldv, A, D, bq, D, bk, 1);
    }
    for (let r = 0; r < bq; r++) {
      const lr = load<f32>(l + (<usize>r << 2));
      const inv = lr > 0 ? <f32>1 / lr : <f32>0;
      const arow = A + (<usize>(r * D) << 2);
      const orow = addr(o, i0 + r, ldo, 0);
      const iv = splat(inv);
      for (let d = 0; d < D; d += 4) st4(orow + (<usize>d << 2), f32x4.mul(ld4(arow + (<usize>d << 2)), iv));
      store<f32>(lse + (<usize>((i0 + r) * ldlse) << 2), lr > 0 ? load<f32>(m + (<usize>r << 2)) + Mathf.log(lr) : <f32>0);
    }
  }
}

/**
 * Backward of attnFwd for one head (FlashAttention-2's recomputation): with P = e^{s − lse},
 * dV += Pᵀ dO, dP = dO vᵀ, dS = P ⊙ (dP − rowsum(dO ⊙ o)), dq += scale·dS k, dk += scale·dSᵀ q.
 * dq, dk, dv accumulate (callers zero them). vᵀ as a [D, ldvt] plane.
 */
export function attnBwd(
  q: usize, ldq: i32, k: usize, ldk: i32, kt: usize, ldkt: i32, vt: usize, ldvt: i32,
  o: usize, ldo: i32, dO: usize, lddo: i32, lse: usize, ldlse: i32,
  dq: usize, lddq: i32, dk: usize, lddk: i32, dv: usize, lddv: i32,
  Tq: i32, qPos0: i32, Tk: i32, D: i32, scale: f32, work: usize,
): void {
  const P = work;
  const dS = P + (<usize>(BQ * BK) << 2);
  const Dv = dS + (<usize>(BQ * BK) << 2);
  for (let i0 = 0; i0 < Tq; i0 += BQ) {
    const bq = min(BQ, Tq - i0);
    for (let r = 0; r < bq; r++) {
      let s = splat(0);
      const orow = addr(o, i0 + r, ldo, 0);
      const grow = addr(dO, i0 + r, lddo, 0);
      for (let d = 0; d < D; d += 4) s = madd(s, ld4(orow + (<usize>d << 2)), ld4(grow + (<usize>d << 2)));
      store<f32>(Dv + (<usize>r << 2), hsum(s));
    }
    const jEnd = min(Tk, qPos0 + i0 + bq);
    for (let j0 = 0; j0 < jEnd; j0 += BK) {
      const bk = min(BK, jEnd - j0);
      gemm(addr(q, i0, ldq, 0), ldq, addr(kt, 0, ldkt, j0), ldkt, P, BK, bq, bk, D, 0);
      gemm(addr(dO, i0, lddo, 0), lddo, addr(vt, 0, ldvt, j0), ldvt, dS, BK, bq, bk, D, 0);
      for (let r = 0; r < bq; r++) {
        const limit = max(0, min(bk, qPos0 + i0 + r + 1 - j0));
        const prow = P + (<usize>(r * BK) << 2);
        const drow = dS + (<usize>(r * BK) << 2);
        const L = splat(load<f32>(lse + (<usize>((i0 + r) * ldlse) << 2)));
        const Dr = splat(load<f32>(Dv + (<usize>r << 2)));
        const sc = splat(scale);
        const lim4 = limit & ~3;
        let c = 0;
        for (; c < lim4; c += 4) {
          const p = exp4(f32x4.sub(f32x4.mul(ld4(prow + (<usize>c << 2)), sc), L));
          st4(prow + (<usize>c << 2), p);
          st4(drow + (<usize>c << 2), f32x4.mul(f32x4.mul(p, f32x4.sub(ld4(drow + (<usize>c << 2)), Dr)), sc));
        }
        const l1 = f32x4.extract_lane(L, 0);
        const d1 = f32x4.extract_lane(Dr, 0);
        for (; c < limit; c++) {
          const p = exp1(load<f32>(prow + (<usize>c << 2)) * scale - l1);
          store<f32>(prow + (<usize>c << 2), p);
          store<f32>(drow + (<usize>c << 2), p * (load<f32>(drow + (<usize>c << 2)) - d1) * scale);
        }
        for (; c < bk; c++) {
          store<f32>(prow + (<usize>c << 2), 0);
          store<f32>(drow + (<usize>c << 2), 0);
        }
      }
      gemmTN(P, BK, addr(dO, i0, lddo, 0), lddo, addr(dv, j0, lddv, 0), lddv, bk, D, bq, 1);
      gemm(dS, BK, addr(k, j0, ldk, 0), ldk, addr(dq, i0, lddq, 0), lddq, bq, D, bk, 1);
      gemmTN(dS, BK, addr(q, i0, ldq, 0), ldq, addr(dk, j0, lddk, 0), lddk, bk, D, bq, 1);
    }
  }
}
