// The CPU engine's compute kernels (AssemblyScript → WebAssembly with 128-bit SIMD).
// Compiled by scripts/buildKernels.mjs into src/model/engine/kernelsWasm.ts; the
// TypeScript side (src/model/engine/) owns the memory and calls these with byte offsets.
// Conventions: float32 row-major matrices; `ld*` are row strides in floats; `acc` ≠ 0
// adds into the output instead of overwriting it. No allocation, no runtime: every
// buffer (scratch included) is passed in.

// ---------------------------------------------------------------- vector helpers

@inline function ld4(p: usize): v128 {
  return v128.load(p);
}
@inline function st4(p: usize, x: v128): void {
  v128.store(p, x);
}
@inline function splat(x: f32): v128 {
  return f32x4.splat(x);
}
@inline function madd(acc: v128, a: v128, b: v128): v128 {
  return f32x4.add(acc, f32x4.mul(a, b));
}
@inline function hsum(x: v128): f32 {
  return f32x4.extract_lane(x, 0) + f32x4.extract_lane(x, 1) + f32x4.extract_lane(x, 2) + f32x4.extract_lane(x, 3);
}
@inline function hmax(x: v128): f32 {
  return max(max(f32x4.extract_lane(x, 0), f32x4.extract_lane(x, 1)), max(f32x4.extract_lane(x, 2), f32x4.extract_lane(x, 3)));
}
@inline function addr(base: usize, row: i32, ld: i32, col: i32): usize {
  return base + ((<usize>row * <usize>ld + <usize>col) << 2);
}

/** e^x for 4 lanes: x = n·ln2 + r, |r| ≤ ln2/2, e^r by a degree-6 polynomial, 2^n in the exponent bits. Relative error ≈ 2e-7; x < −87.3 gives 0; x is capped at 88. */
@inline function exp4(x: v128): v128 {
  const lo = splat(-87.33654);
  const hi = splat(88.0);
  const isUnder = f32x4.lt(x, lo);
  x = f32x4.min(f32x4.max(x, lo), hi);
  const n = f32x4.nearest(f32x4.mul(x, splat(1.442695041)));
  let r = f32x4.sub(x, f32x4.mul(n, splat(0.693359375)));
  r = f32x4.sub(r, f32x4.mul(n, splat(-2.12194440e-4)));
  let p = splat(1.9875691500e-4);
  p = madd(splat(1.3981999507e-3), p, r);
  p = madd(splat(8.3334519073e-3), p, r);
  p = madd(splat(4.1665795894e-2), p, r);
  p = madd(splat(1.6666665459e-1), p, r);
  p = madd(splat(5.0000001201e-1), p, r);
  const r2 = f32x4.mul(r, r);
  p = f32x4.add(madd(r, p, r2), splat(1));
  const bits = i32x4.shl(i32x4.add(i32x4.trunc_sat_f32x4_s(n), i32x4.splat(127)), 23);
  const y = f32x4.mul(p, bits);
  return v128.andnot(y, isUnder);
}

@inline function exp1(x: f32): f32 {
  return f32x4.extract_lane(exp4(splat(x)), 0);
}

// ---------------------------------------------------------------- matrix products

/** A 4×8 tile of C = A·B at rows i, columns j. */
@inline function tile4x8(a: usize, sa: usize, b: usize, sb: usize, c: usize, ldc: i32, i: i32, j: i32, K: i32, lda: i32, ldb: i32, acc: i32): void {
  const a0 = addr(a, i, lda, 0);
  const a1 = a0 + sa;
  const a2 = a1 + sa;
  const a3 = a2 + sa;
  let c00 = splat(0), c01 = splat(0), c10 = splat(0), c11 = splat(0);
  let c20 = splat(0), c21 = splat(0), c30 = splat(0), c31 = splat(0);
  let pb = addr(b, 0, ldb, j);
  for (let k = 0; k < K; k++) {
    const b0 = ld4(pb);
    const b1 = ld4(pb + 16);
    const kk = <usize>k << 2;
    const x0 = v128.load32_splat(a0 + kk);
    const x1 = v128.load32_splat(a1 + kk);
    const x2 = v128.load32_splat(a2 + kk);
    const x3 = v128.load32_splat(a3 + kk);
    c00 = madd(c00, x0, b0);
    c01 = madd(c01, x0, b1);
    c10 = madd(c10, x1, b0);
    c11 = madd(c11, x1, b1);
    c20 = madd(c20, x2, b0);
    c21 = madd(c21, x2, b1);
    c30 = madd(c30, x3, b0);
    c31 = madd(c31, x3, b1);
    pb += sb;
  }
  const p0 = addr(c, i, ldc, j);
  const p1 = addr(c, i + 1, ldc, j);
  const p2 = addr(c, i + 2, ldc, j);
  const p3 = addr(c, i + 3, ldc, j);
  if (acc) {
    c00 = f32x4.add(c00, ld4(p0));
    c01 = f32x4.add(c01, ld4(p0 + 16));
    c10 = f32x4.add(c10, ld4(p1));
    c11 = f32x4.add(c11, ld4(p1 + 16));
    c20 = f32x4.add(c20, ld4(p2));
    c21 = f32x4.add(c21, ld4(p2 + 16));
    c30 = f32x4.add(c30, ld4(p3));
    c31 = f32x4.add(c31, ld4(p3 + 16));
  }
  st4(p0, c00);
  st4(p0 + 16, c01);
  st4(p1, c10);
  st4(p1 + 16, c11);
  st4(p2, c20);
  st4(p2 + 16, c21);
  st4(p3, c30);
  st4(p3 + 16, c31);
}

/** A 2×8 tile. */
@inline function tile2x8(a: usize, sa: usize, b: usize, sb: usize, c: usize, ldc: i32, i: i32, j: i32, K: i32, lda: i32, ldb: i32, acc: i32): void {
  const a0 = addr(a, i, lda, 0);
  const a1 = a0 + sa;
  let c00 = splat(0), c01 = splat(0), c10 = splat(0), c11 = splat(0);
  let pb = addr(b, 0, ldb, j);
  for (let k = 0; k < K; k++) {
    const b0 = ld4(pb);
    const b1 = ld4(pb + 16);
    const kk = <usize>k << 2;
    const x0 = v128.load32_splat(a0 + kk);
    const x1 = v128.load32_splat(a1 + kk);
    c00 = madd(c00, x0, b0);
    c01 = madd(c01, x0, b1);
    c10 = madd(c10, x1, b0);
    c11 = madd(c11, x1, b1);
    pb += sb;
  }
  const p0 = addr(c, i, ldc, j);
  const p1 = addr(c, i + 1, ldc, j);
  if (acc) {
    c00 = f32x4.add(c00, ld4(p0));
    c01 = f32x4.add(c01, ld4(p0 + 16));
    c10 = f32x4.add(c10, ld4(p1));
    c11 = f32x4.add(c11, ld4(p1 + 16));
  }
  st4(p0, c00);
  st4(p0 + 16, c01);
  st4(p1, c10);
  st4(p1 + 16, c11);
}

/** A 1×8 tile. */
@inline function tile1x8(a: usize, b: usize, sb: usize, c: usize, ldc: i32, i: i32, j: i32, K: i32, lda: i32, ldb: i32, acc: i32): void {
  const a0 = addr(a, i, lda, 0);
  let c0 = splat(0), c1 = splat(0);
  let pb = addr(b, 0, ldb, j);
  for (let k = 0; k < K; k++) {
    const x = v128.load32_splat(a0 + (<usize>k << 2));
    c0 = madd(c0, x, ld4(pb));
    c1 = madd(c1, x, ld4(pb + 16));
    pb += sb;
  }
  const p = addr(c, i, ldc, j);
  if (acc) {
    c0 = f32x4.add(c0, ld4(p));
    c1 = f32x4.add(c1, ld4(p + 16));
  }
  st4(p, c0);
  st4(p + 16, c1);
}

/** A 1×4 tile. */
@inline function tile1x4(a: usize, b: usize, sb: usize, c: usize, ldc: i32, i: i32, j: i32, K: i32, lda: i32, ldb: i32, acc: i32): void {
  const a0 = addr(a, i, lda, 0);
  let c0 = splat(0);
  let pb = addr(b, 0, ldb, j);
  for (let k = 0; k < K; k++) {
    c0 = madd(c0, v128.load32_splat(a0 + (<usize>k << 2)), ld4(pb));
    pb += sb;
  }
  const p = addr(c, i, ldc, j);
  st4(p, acc ? f32x4.add(c0, ld4(p)) : c0);
}

/** One element of C. */
@inline function tile1x1(a: usize, b: usize, c: usize, ldc: i32, i: i32, j: i32, K: i32, lda: i32, ldb: i32, acc: i32): void {
  let s: f32 = 0;
  for (let k = 0; k < K; k++) s += load<f32>(addr(a, i, lda, k)) * load<f32>(addr(b, k, ldb, j));
  const pc = addr(c, i, ldc, j);
  store<f32>(pc, acc ? load<f32>(pc) + s : s);
}

/** Rows [i0, i1) of C for columns [j, j + 8): tiles of 4, 2 and 1 rows. */
@inline function rowsOfStrip(a: usize, sa: usize, b: usize, sb: usize, c: usize, ldc: i32, i0: i32, i1: i32, j: i32, K: i32, lda: i32, ldb: i32, acc: i32): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) tile4x8(a, sa, b, sb, c, ldc, i, j, K, lda, ldb, acc);
  for (; i + 2 <= i1; i += 2) tile2x8(a, sa, b, sb, c, ldc, i, j, K, lda, ldb, acc);
  for (; i < i1; i++) tile1x8(a, b, sb, c, ldc, i, j, K, lda, ldb, acc);
}

/**
 * C[M,N] (+)= A[M,K] · B[K,N]. Register tiles of 4×8; for few rows (decode batches) each
 * 8-column strip of B is read once for all rows, else each block of 4 rows of A once for
 * all strips.
 */
export function gemm(a: usize, lda: i32, b: usize, ldb: i32, c: usize, ldc: i32, M: i32, N: i32, K: i32, acc: i32): void {
  const N8 = N & ~7;
  const N4 = N & ~3;
  const sa = <usize>lda << 2;
  const sb = <usize>ldb << 2;
  if (M <= 16) {
    for (let j = 0; j < N8; j += 8) rowsOfStrip(a, sa, b, sb, c, ldc, 0, M, j, K, lda, ldb, acc);
  } else {
    const M4 = M & ~3;
    for (let i = 0; i < M4; i += 4) for (let j = 0; j < N8; j += 8) tile4x8(a, sa, b, sb, c, ldc, i, j, K, lda, ldb, acc);
    if (M4 < M) for (let j = 0; j < N8; j += 8) rowsOfStrip(a, sa, b, sb, c, ldc, M4, M, j, K, lda, ldb, acc);
  }
  for (let i = 0; i < M; i++) {
    let j = N8;
    for (; j < N4; j += 4) tile1x4(a, b, sb, c, ldc, i, j, K, lda, ldb, acc);
    for (; j < N; j++) tile1x1(a, b, c, ldc, i, j, K, lda, ldb, acc);
  }
}

/** C[M,N] (+)= Aᵀ · B with A stored [K, M] (row stride lda) and B [K, N]. */
export function gemmTN(a: usize, lda: i32, b: usize, ldb: i32, c: usize, ldc: i32, M: i32, N: i32, K: i32, acc: i32): void {
  const N8 = N & ~7;
  const N4 = N & ~3;
  const sa = <usize>lda << 2;
  const sb = <usize>ldb << 2;
  let i = 0;
  for (; i + 4 <= M; i += 4) {
    let j = 0;
    for (; j < N8; j += 8) {
      let c00 = splat(0), c01 = splat(0), c10 = splat(0), c11 = splat(0);
      let c20 = splat(0), c21 = splat(0), c30 = splat(0), c31 = splat(0);
      let pa = addr(a, 0, lda, i);
      let pb = addr(b, 0, ldb, j);
      for (let k = 0; k < K; k++) {
        const b0 = ld4(pb);
        const b1 = ld4(pb + 16);
        const x0 = v128.load32_splat(pa);
        const x1 = v128.load32_splat(pa + 4);
        const x2 = v128.load32_splat(pa + 8);
        const x3 = v128.load32_splat(pa + 12);
        c00 = madd(c00, x0, b0);
        c01 = madd(c01, x0, b1);
        c10 = madd(c10, x1, b0);
        c11 = madd(c11, x1, b1);
        c20 = madd(c20, x2, b0);
        c21 = madd(c21, x2, b1);
        c30 = madd(c30, x3, b0);
        c31 = madd(c31, x3, b1);
        pa += sa;
        pb += sb;
      }
      const p0 = addr(c, i, ldc, j);
      const p1 = addr(c, i + 1, ldc, j);
      const p2 = addr(c, i + 2, ldc, j);
      const p3 = addr(c, i + 3, ldc, j);
      if (acc) {
        c00 = f32x4.add(c00, ld4(p0));
        c01 = f32x4.add(c01, ld4(p0 + 16));
        c10 = f32x4.add(c10, ld4(p1));
        c11 = f32x4.add(c11, ld4(p1 + 16));
        c20 = f32x4.add(c20, ld4(p2));
        c21 = f32x4.add(c21, ld4(p2 + 16));
        c30 = f32x4.add(c30, ld4(p3));
        c31 = f32x4.add(c31, ld4(p3 + 16));
      }
      st4(p0, c00);
      st4(p0 + 16, c01);
      st4(p1, c10);
      st4(p1 + 16, c11);
      st4(p2, c20);
      st4(p2 + 16, c21);
      st4(p3, c30);
      st4(p3 + 16, c31);
    }
    for (; j < N4; j += 4) {
      let c0 = splat(0), c1 = splat(0), c2 = splat(0), c3 = splat(0);
      let pa = addr(a, 0, lda, i);
      let pb = addr(b, 0, ldb, j);
      for (let k = 0; k < K; k++) {
        const b0 = ld4(pb);
        c0 = madd(c0, v128.load32_splat(pa), b0);
        c1 = madd(c1, v128.load32_splat(pa + 4), b0);
        c2 = madd(c2, v128.load32_splat(pa + 8), b0);
        c3 = madd(c3, v128.load32_splat(pa + 12), b0);
        pa += sa;
        pb += sb;
      }
      const p0 = addr(c, i, ldc, j);
      const p1 = addr(c, i + 1, ldc, j);
      const p2 = addr(c, i + 2, ldc, j);
      const p3 = addr(c, i + 3, ldc, j);
      if (acc) {
        c0 = f32x4.add(c0, ld4(p0));
        c1 = f32x4.add(c1, ld4(p1));
        c2 = f32x4.add(c2, ld4(p2));
        c3 = f32x4.add(c3, ld4(p3));
      }
      st4(p0, c0);
      st4(p1, c1);
      st4(p2, c2);
      st4(p3, c3);
    }
    for (; j < N; j++) {
      for (let r = 0; r < 4; r++) {
        let s: f32 = 0;
        for (let k = 0; k < K; k++) s += load<f32>(addr(a, k, lda, i + r)) * load<f32>(addr(b, k, ldb, j));
        const pc = addr(c, i + r, ldc, j);
        store<f32>(pc, acc ? load<f32>(pc) + s : s);
      }
    }
  }
  for (; i < M; i++) {
    let j = 0;
    for (; j < N4; j += 4) {
      let c0 = splat(0);
      let pa = addr(a, 0, lda, i);
      let pb = addr(b, 0, ldb, j);
      for (let k = 0; k < K; k++) {
        c0 = madd(c0, v128.load32_splat(pa), ld4(pb));
        pa += sa;
        pb += sb;
      }
      const p = addr(c, i, ldc, j);
      st4(p, acc ? f32x4.add(c0, ld4(p)) : c0);
    }
    for (; j < N; j++) {
      let s: f32 = 0;
      for (let k = 0; k < K; k++) s += load<f32>(addr(a, k, lda, i)) * load<f32>(addr(b, k, ldb, j));
      const pc = addr(c, i, ldc, j);
      store<f32>(pc, acc ? load<f32>(pc) + s : s);
    }
  }
}

/** dst[c, r] = src[r, c] for a rows × cols block. */
export function transpose(src: usize, lds: i32, dst: usize, ldd: i32, rows: i32, cols: i32): void {
  const B = 16;
  for (let r0 = 0; r0 < rows; r0 += B) {
    const r1 = min(rows, r0 + B);
    for (let c0 = 0; c0 < cols; c0 += B) {
      const c1 = min(cols, c0 + B);
      for (let r = r0; r < r1; r++) {
        for (let c = c0; c < c1; c++) store<f32>(addr(dst, c, ldd, r), load<f32>(addr(src, r, lds, c)));
      }
    }
  }
}

// ---------------------------------------------------------------- attention (one head)

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

// ---------------------------------------------------------------- norms, rope, activations

/** y = x · rsqrt(mean(x²) + eps) · w over rows of n; rstd[r] kept for the backward. */
export function rmsnormFwd(x: usize, ldx: i32, w: usize, y: usize, ldy: i32, rstd: usize, rows: i32, n: i32, eps: f32): void {
  const n4 = n & ~3;
  for (let r = 0; r < rows; r++) {
    const xr = addr(x, r, ldx, 0);
    const yr = addr(y, r, ldy, 0);
    let s = splat(0);
    let i = 0;
    for (; i < n4; i += 4) {
      const v = ld4(xr + (<usize>i << 2));
      s = madd(s, v, v);
    }
    let ss = hsum(s);
    for (; i < n; i++) {
      const v = load<f32>(xr + (<usize>i << 2));
      ss += v * v;
    }
    const rs: f32 = <f32>1 / Mathf.sqrt(ss / <f32>n + eps);
    store<f32>(rstd + (<usize>r << 2), rs);
    const rv = splat(rs);
    i = 0;
    for (; i < n4; i += 4) st4(yr + (<usize>i << 2), f32x4.mul(f32x4.mul(ld4(xr + (<usize>i << 2)), rv), ld4(w + (<usize>i << 2))));
    for (; i < n; i++) store<f32>(yr + (<usize>i << 2), load<f32>(xr + (<usize>i << 2)) * rs * load<f32>(w + (<usize>i << 2)));
  }
}

/** dx (+)= rstd·(w⊙dy) − x·rstd³/n·Σ(x⊙w⊙dy);  dw += Σ_r dy⊙x·rstd (dw may be 0 = skip). */
export function rmsnormBwd(
  x: usize, ldx: i32, w: usize, dy: usize, lddy: i32, rstd: usize, dx: usize, lddx: i32, dw: usize, rows: i32, n: i32, acc: i32,
): void {
  for (let r = 0; r < rows; r++) {
    const xr = addr(x, r, ldx, 0);
    const gr = addr(dy, r, lddy, 0);
    const dr = addr(dx, r, lddx, 0);
    const rs = load<f32>(rstd + (<usize>r << 2));
    let s = splat(0);
    for (let i = 0; i < n; i += 4) s = madd(s, f32x4.mul(ld4(xr + (<usize>i << 2)), ld4(w + (<usize>i << 2))), ld4(gr + (<usize>i << 2)));
    const k = splat((hsum(s) * rs * rs * rs) / <f32>n);
    const rv = splat(rs);
    for (let i = 0; i < n; i += 4) {
      const o = <usize>i << 2;
      let v = f32x4.sub(f32x4.mul(f32x4.mul(ld4(w + o), ld4(gr + o)), rv), f32x4.mul(ld4(xr + o), k));
      if (acc) v = f32x4.add(v, ld4(dr + o));
      st4(dr + o, v);
      if (dw) st4(dw + o, madd(ld4(dw + o), f32x4.mul(ld4(gr + o), ld4(xr + o)), rv));
    }
  }
}

/**
 * Rotate-half RoPE in place on rows [T] of nHeads heads of D (row stride ld): with the
 * angle table cos/sin [P, D/2] and pos[t] (int32), x₁' = x₁c − x₂s, x₂' = x₂c + x₁s.
 * sign = −1 applies the inverse rotation (the backward).
 */
export function rope(x: usize, ld: i32, T: i32, nHeads: i32, D: i32, pos: usize, cos: usize, sin: usize, sign: f32): void {
  const half = D >> 1;
  for (let t = 0; t < T; t++) {
    const p = load<i32>(pos + (<usize>t << 2));
    const ct = cos + (<usize>(p * half) << 2);
    const st = sin + (<usize>(p * half) << 2);
    for (let h = 0; h < nHeads; h++) {
      const xr = addr(x, t, ld, h * D);
      for (let j = 0; j < half; j += 4) {
        const o = <usize>j << 2;
        const c = ld4(ct + o);
        const s = f32x4.mul(ld4(st + o), splat(sign));
        const x1 = ld4(xr + o);
        const x2 = ld4(xr + o + (<usize>half << 2));
        st4(xr + o, f32x4.sub(f32x4.mul(x1, c), f32x4.mul(x2, s)));
        st4(xr + o + (<usize>half << 2), f32x4.add(f32x4.mul(x2, c), f32x4.mul(x1, s)));
      }
    }
  }
}

/** a = silu(g) ⊙ u over n values. */
export function swigluFwd(g: usize, u: usize, a: usize, n: i32): void {
  for (let i = 0; i < n; i += 4) {
    const o = <usize>i << 2;
    const gv = ld4(g + o);
    const sig = f32x4.div(splat(1), f32x4.add(splat(1), exp4(f32x4.neg(gv))));
    st4(a + o, f32x4.mul(f32x4.mul(gv, sig), ld4(u + o)));
  }
}

/** dg = da·u·σ(g)(1 + g(1 − σ(g))), du = da·silu(g). */
export function swigluBwd(g: usize, u: usize, da: usize, dg: usize, du: usize, n: i32): void {
  for (let i = 0; i < n; i += 4) {
    const o = <usize>i << 2;
    const gv = ld4(g + o);
    const sig = f32x4.div(splat(1), f32x4.add(splat(1), exp4(f32x4.neg(gv))));
    const d = ld4(da + o);
    st4(du + o, f32x4.mul(d, f32x4.mul(gv, sig)));
    const dsilu = f32x4.mul(sig, f32x4.add(splat(1), f32x4.mul(gv, f32x4.sub(splat(1), sig))));
    st4(dg + o, f32x4.mul(f32x4.mul(d, ld4(u + o)), dsilu));
  }
}

/** y (+)= x · alpha over n values (x and y may be the same buffer). */
export function axpy(x: usize, y: usize, n: i32, alpha: f32, acc: i32): void {
  const av = splat(alpha);
  const n4 = n & ~3;
  let i = 0;
  for (; i < n4; i += 4) {
    const o = <usize>i << 2;
    const v = f32x4.mul(ld4(x + o), av);
    st4(y + o, acc ? f32x4.add(ld4(y + o), v) : v);
  }
  for (; i < n; i++) {
    const o = <usize>i << 2;
    const v = load<f32>(x + o) * alpha;
    store<f32>(y + o, acc ? load<f32>(y + o) + v : v);
  }
}

/** out[t] = table[ids[t]] (rows of H). */
export function embedFwd(ids: usize, n: i32, table: usize, H: i32, out: usize): void {
  const bytes = <usize>H << 2;
  for (let t = 0; t < n; t++) memory.copy(out + <usize>t * bytes, table + <usize>load<i32>(ids + (<usize>t << 2)) * bytes, bytes);
}

/** dTable[ids[t]] += dOut[t]. */
export function embedBwd(ids: usize, n: i32, dOut: usize, H: i32, dTable: usize): void {
  for (let t = 0; t < n; t++) {
    const dst = dTable + ((<usize>load<i32>(ids + (<usize>t << 2)) * <usize>H) << 2);
    const src = dOut + ((<usize>t * <usize>H) << 2);
    for (let i = 0; i < H; i += 4) st4(dst + (<usize>i << 2), f32x4.add(ld4(dst + (<usize>i << 2)), ld4(src + (<usize>i << 2))));
  }
}

// ---------------------------------------------------------------- LM head rows

/**
 * Per row of logits z [rows, V]: lse, log p(target) and entropy lse − Σ p z.
 * out[r·3] = logp, out[r·3+1] = entropy, out[r·3+2] = lse.
 */
export function lmHeadRows(z: usize, rows: i32, V: i32, targets: usize, out: usize): void {
  const V4 = V & ~3;
  for (let r = 0; r < rows; r++) {
    const zr = z + ((<usize>r * <usize>V) << 2);
    let mv = splat(-Infinity);
    let i = 0;
    for (; i < V4; i += 4) mv = f32x4.max(mv, ld4(zr + (<usize>i << 2)));
    let mx = hmax(mv);
    for (; i < V; i++) mx = max(mx, load<f32>(zr + (<usize>i << 2)));
    const mm = splat(mx);
    let s = splat(0);
    let sz = splat(0);
    for (i = 0; i < V4; i += 4) {
      const zi = ld4(zr + (<usize>i << 2));
      const e = exp4(f32x4.sub(zi, mm));
      s = f32x4.add(s, e);
      sz = madd(sz, e, zi);
    }
    let sum = hsum(s);
    let szSum = hsum(sz);
    for (; i < V; i++) {
      const zi = load<f32>(zr + (<usize>i << 2));
      const e = exp1(zi - mx);
      sum += e;
      szSum += e * zi;
    }
    const lse = mx + Mathf.log(sum);
    const t = load<i32>(targets + (<usize>r << 2));
    const o = out + (<usize>(r * 3) << 2);
    store<f32>(o, load<f32>(zr + (<usize>t << 2)) - lse);
    store<f32>(o + 4, lse - szSum / sum);
    store<f32>(o + 8, lse);
  }
}

/**
 * In place z → dz for rows of logits, given lse[r] and the upstream gradients gLogp[r],
 * gEnt[r]: with p = e^{z − lse} and E = Σ p z, dz = gLogp·(onehot(target) − p) − gEnt·p⊙(z − E).
 */
export function lmHeadGradRows(z: usize, rows: i32, V: i32, targets: usize, lse: usize, gLogp: usize, gEnt: usize): void {
  const V4 = V & ~3;
  for (let r = 0; r < rows; r++) {
    const zr = z + ((<usize>r * <usize>V) << 2);
    const l1 = load<f32>(lse + (<usize>r << 2));
    const lseR = splat(l1);
    const gl = load<f32>(gLogp + (<usize>r << 2));
    const ge = load<f32>(gEnt + (<usize>r << 2));
    let E: f32 = 0;
    if (ge != 0) {
      let sz = splat(0);
      let i = 0;
      for (; i < V4; i += 4) {
        const zi = ld4(zr + (<usize>i << 2));
        sz = madd(sz, exp4(f32x4.sub(zi, lseR)), zi);
      }
      E = hsum(sz);
      for (; i < V; i++) {
        const zi = load<f32>(zr + (<usize>i << 2));
        E += exp1(zi - l1) * zi;
      }
    }
    const glv = splat(gl);
    const gev = splat(ge);
    const Ev = splat(E);
    let i = 0;
    for (; i < V4; i += 4) {
      const o = <usize>i << 2;
      const zi = ld4(zr + o);
      const p = exp4(f32x4.sub(zi, lseR));
      st4(zr + o, f32x4.neg(f32x4.add(f32x4.mul(p, glv), f32x4.mul(f32x4.mul(p, f32x4.sub(zi, Ev)), gev))));
    }
    for (; i < V; i++) {
      const o = <usize>i << 2;
      const zi = load<f32>(zr + o);
      const p = exp1(zi - l1);
      store<f32>(zr + o, -(p * gl + p * (zi - E) * ge));
    }
    const t = load<i32>(targets + (<usize>r << 2));
    store<f32>(zr + (<usize>t << 2), load<f32>(zr + (<usize>t << 2)) + gl);
  }
}

/** Sum of squares of n values (n a multiple of 4), for gradient norms. */
export function sumSquares(x: usize, n: i32): f64 {
  let s: f64 = 0;
  for (let i = 0; i < n; i += 4) {
    const v = ld4(x + (<usize>i << 2));
    s += <f64>hsum(f32x4.mul(v, v));
  }
  return s;
}
