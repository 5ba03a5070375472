// Attention of one head in FlashAttention-2's manner: key blocks of BK with an online softmax
// per query block of BQ (no T×T score matrix), and its backward by recomputation.
import { addr, exp1, exp4, hsum, ld4, madd, rowMax, splat, st4 } from './simd';
import { gemm, gemmTNStrided } from './gemm';

const BQ: i32 = 32;
const BK: i32 = 64;

/**
 * kᵀ's layout. Key j's dimension d sits at kt + (j / 16)·ktTile + d·ldkt + j mod 16 (floats): a
 * [D, ldkt] plane has ktTile 16 (the next 16 keys are the next 16 columns); the KV cache's tiles,
 * [D, 16] blocks of 16 keys one after another, have ldkt 16 and ktTile 16·D, so attnDecode's block
 * of keys is one contiguous read of D·64 bytes instead of D rows far apart (kvCache.ts; at 1,300
 * cached keys a decode step's attention took 2.6–2.9 ms against 3.5–4.1 ms from planes). Only the
 * addresses change: every sum is the same either way.
 */
const KT_TILE: i32 = 16;

/** Address of key j0's column (row d = 0) of kᵀ, j0 a multiple of 16; the next 15 columns follow it. */
@inline function ktBlock(kt: usize, ktTile: i32, j0: i32): usize {
  return kt + (<usize>((j0 / KT_TILE) * ktTile + (j0 % KT_TILE)) << 2);
}

/** Floats of scratch attnFwd / attnBwd need for head dimension D. */
export function attnScratchFloats(D: i32): i32 {
  return BQ * BK * 2 + BQ * D + BQ * 4;
}

/**
 * Causal attention of one head, softmax(q kᵀ·scale) v, without the score matrix: key
 * blocks of BK with an online softmax, per query block of BQ. Query i sits at position
 * qPos0 + i·qStep (qStep 1: consecutive tokens; 0: the query heads of one KV head for one
 * token) and may read keys j ≤ its position (j < Tk). q rows [Tq] (ldq), kᵀ as a [D, ldkt]
 * plane (ktTile 16) or in [D, 16] tiles (ldkt 16, ktTile 16·D: KT_TILE), v rows [Tk] (ldv) → o rows
 * (ldo), lse[i·ldlse] = log Σ_j e^{s_ij}.
 */
export function attnFwd(
  q: usize, ldq: i32, kt: usize, ldkt: i32, ktTile: i32, v: usize, ldv: i32, o: usize, ldo: i32, lse: usize, ldlse: i32,
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
      if (ktTile == KT_TILE) gemm(addr(q, i0, ldq, 0), ldq, addr(kt, 0, ldkt, j0), ldkt, S, BK, bq, bk, D, 0);
      else
        // Tiles: one product per tile of the block (a gemm sums each element in one order whatever its columns).
        for (let t = 0; t < bk; t += KT_TILE)
          gemm(addr(q, i0, ldq, 0), ldq, ktBlock(kt, ktTile, j0 + t), ldkt, S + (<usize>t << 2), BK, bq, min(KT_TILE, bk - t), D, 0);
      for (let r = 0; r < bq; r++) {
        const limit = min(bk, qPos0 + (i0 + r) * qStep + 1 - j0);
        const srow = S + (<usize>(r * BK) << 2);
        if (limit <= 0) {
          memory.fill(srow, 0, <usize>bk << 2);
          continue;
        }
        const mx = rowMax(srow, limit) * scale;
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
      gemmTNStrided(P, BK, addr(dO, i0, lddo, 0), lddo, addr(dv, j0, lddv, 0), lddv, bk, D, bq, 1);
      gemm(dS, BK, addr(k, j0, ldk, 0), ldk, addr(dq, i0, lddq, 0), lddq, bq, D, bk, 1);
      gemmTNStrided(dS, BK, addr(q, i0, ldq, 0), ldq, addr(dk, j0, lddk, 0), lddk, bk, D, bq, 1);
    }
  }
}

/** Keys a decode score block covers (four vectors per query row). */
const DK: i32 = 16;

/** Floats of scratch attnDecode needs: G rows of scores over Tk keys rounded up to DK, and a DK-key block of kᵀ. */
export function attnDecodeScratchFloats(G: i32, Tk: i32, D: i32): i32 {
  return G * ((Tk + DK - 1) & ~(DK - 1)) + D * DK;
}

/**
 * Rows r0 (and r0 + 1 when `two`) of x [.., n] (ldx) times n rows of 16 columns from b (row step
 * ldb floats): out row r = scale_r · Σ_t x[r][t]·b[t], each column summed over t in order (as
 * gemm does), into out (ldo). The decode kernel's two products: the scores (x = q, b = a DK-key
 * slice of kᵀ, scale 1, exact) and the weighted values (x = the weights, b = 16 columns of v,
 * scale 1/Σ weights).
 */
@inline function rowsBy16(x: usize, ldx: i32, r0: i32, two: bool, b: usize, ldb: i32, n: i32, out: usize, ldo: i32, scale0: f32, scale1: f32): void {
  const x0 = addr(x, r0, ldx, 0);
  const x1 = two ? x0 + (<usize>ldx << 2) : x0;
  let a0 = splat(0), a1 = splat(0), a2 = splat(0), a3 = splat(0);
  let b0 = splat(0), b1 = splat(0), b2 = splat(0), b3 = splat(0);
  let pb = b;
  const step = <usize>ldb << 2;
  for (let t = 0; t < n; t++) {
    const v0 = ld4(pb);
    const v1 = ld4(pb + 16);
    const v2 = ld4(pb + 32);
    const v3 = ld4(pb + 48);
    const tt = <usize>t << 2;
    const s0 = v128.load32_splat(x0 + tt);
    a0 = madd(a0, s0, v0);
    a1 = madd(a1, s0, v1);
    a2 = madd(a2, s0, v2);
    a3 = madd(a3, s0, v3);
    if (two) {
      const s1 = v128.load32_splat(x1 + tt);
      b0 = madd(b0, s1, v0);
      b1 = madd(b1, s1, v1);
      b2 = madd(b2, s1, v2);
      b3 = madd(b3, s1, v3);
    }
    pb += step;
  }
  const o0 = addr(out, r0, ldo, 0);
  const c0 = splat(scale0);
  st4(o0, f32x4.mul(a0, c0));
  st4(o0 + 16, f32x4.mul(a1, c0));
  st4(o0 + 32, f32x4.mul(a2, c0));
  st4(o0 + 48, f32x4.mul(a3, c0));
  if (two) {
    const o1 = o0 + (<usize>ldo << 2);
    const c1 = splat(scale1);
    st4(o1, f32x4.mul(b0, c1));
    st4(o1 + 16, f32x4.mul(b1, c1));
    st4(o1 + 32, f32x4.mul(b2, c1));
    st4(o1 + 48, f32x4.mul(b3, c1));
  }
}

/** The weighted values of rowsBy16 for 4 columns from d0 (head dimensions that are not a multiple of 16). */
@inline function weighBlock4(p: usize, ldp: i32, r0: i32, two: bool, v: usize, ldv: i32, d0: i32, Tk: i32, o: usize, ldo: i32, inv0: f32, inv1: f32): void {
  const p0 = addr(p, r0, ldp, 0);
  const p1 = two ? p0 + (<usize>ldp << 2) : p0;
  let a0 = splat(0), b0 = splat(0);
  let pv = addr(v, 0, ldv, d0);
  const step = <usize>ldv << 2;
  for (let j = 0; j < Tk; j++) {
    const v0 = ld4(pv);
    const jj = <usize>j << 2;
    a0 = madd(a0, v128.load32_splat(p0 + jj), v0);
    if (two) b0 = madd(b0, v128.load32_splat(p1 + jj), v0);
    pv += step;
  }
  const o0 = addr(o, r0, ldo, d0);
  st4(o0, f32x4.mul(a0, splat(inv0)));
  if (two) st4(o0 + (<usize>ldo << 2), f32x4.mul(b0, splat(inv1)));
}

/**
 * Attention of G query heads that share one KV head, for one new token that reads every cached
 * key j < Tk (decode): the scores of all keys first (DK keys a block, the last block's kᵀ columns
 * copied beside zeros), then each row's max, e^{(s − max)·scale} and their sum, then Σ_j p_j v_j
 * over the keys in order, divided by the sum. No online rescaling and no per-block calls; each
 * score sums over d in order like gemm (attnFwd's scores to the bit), the rest rounds in its own
 * order. q rows [G] (ldq), kᵀ as attnFwd reads it (a plane or tiles: ktTile), v rows [Tk] (ldv) →
 * o rows (ldo). D a multiple of 4; work: attnDecodeScratchFloats(G, Tk, D) floats.
 */
export function attnDecode(
  q: usize, ldq: i32, kt: usize, ldkt: i32, ktTile: i32, v: usize, ldv: i32, o: usize, ldo: i32,
  G: i32, Tk: i32, D: i32, scale: f32, work: usize,
): void {
  const lds = (Tk + DK - 1) & ~(DK - 1);
  const S = work;
  const pad = S + (<usize>(G * lds) << 2);
  const full = Tk & ~(DK - 1);
  const rest = Tk - full;
  if (rest > 0) {
    // The last keys' kᵀ columns beside zeros, so every block reads DK columns in bounds.
    memory.fill(pad, 0, <usize>(D * DK) << 2);
    for (let d = 0; d < D; d++)
      memory.copy(pad + (<usize>(d * DK) << 2), ktBlock(kt, ktTile, full) + (<usize>(d * ldkt) << 2), <usize>rest << 2);
  }
  for (let r = 0; r < G; r += 2) {
    const two = r + 1 < G;
    for (let j0 = 0; j0 < full; j0 += DK) rowsBy16(q, ldq, r, two, ktBlock(kt, ktTile, j0), ldkt, D, S + (<usize>j0 << 2), lds, 1, 1);
    if (rest > 0) rowsBy16(q, ldq, r, two, pad, DK, D, S + (<usize>full << 2), lds, 1, 1);
  }
  const sc = splat(scale);
  let inv0: f32 = 0;
  for (let r = 0; r < G; r++) {
    const srow = S + (<usize>(r * lds) << 2);
    for (let c = Tk; c < lds; c++) store<f32>(srow + (<usize>c << 2), -Infinity);
    const mn = splat(rowMax(srow, lds) * scale);
    let sum = splat(0);
    for (let c = 0; c < lds; c += 4) {
      const e = exp4(f32x4.sub(f32x4.mul(ld4(srow + (<usize>c << 2)), sc), mn));
      st4(srow + (<usize>c << 2), e);
      sum = f32x4.add(sum, e);
    }
    const l = hsum(sum);
    const inv: f32 = l > 0 ? <f32>1 / l : <f32>0;
    // Rows are weighed in pairs once both have their weights: an even row keeps its 1/sum.
    if (r % 2 == 0) inv0 = inv;
    if (r % 2 == 1 || r + 1 == G) {
      const r0 = r & ~1;
      const two = r0 + 1 < G;
      const i1: f32 = two ? inv : 0;
      let d0 = 0;
      for (; d0 + 16 <= D; d0 += 16) rowsBy16(S, lds, r0, two, addr(v, 0, ldv, d0), ldv, Tk, addr(o, 0, ldo, d0), ldo, inv0, i1);
      for (; d0 < D; d0 += 4) weighBlock4(S, lds, r0, two, v, ldv, d0, Tk, o, ldo, inv0, i1);
    }
  }
}
