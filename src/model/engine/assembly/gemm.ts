// Matrix products on register tiles (4×8, 2×8, 1×8, 1×4, 1×1): C (+)= A·B with B row-major
// (gemm) or packed in panels of 8 columns (gemmPacked: the engine's weights as the forward reads
// them, each strip's K×8 block contiguous), C (+)= Aᵀ·B, the packing and a blocked transpose.
// Each element of C sums over k in order, whatever tile computes it.
import { addr, ld4, madd, splat, st4 } from './simd';

/**
 * A 4×8 tile of C = A·B at rows i, columns j; pb: row 0 of B's strip of columns [j, j + 8), sb: its row step in bytes.
 * The loop steps one pointer along row i of A (the other rows at fixed offsets from it) up to its
 * end: written with a counter k and a0…a3 + 4k, V8 (x64) rebuilt the four addresses from i and lda
 * every iteration and reloaded spilled values from the stack, and the tile ran at 0.67 of the SIMD
 * peak instead of 0.95 (docs/perf.md, "V8's code for the softmaxes and the tiles"). The same products in the same order.
 */
@inline function tile4x8(a: usize, sa: usize, pb: usize, sb: usize, c: usize, ldc: i32, i: i32, j: i32, K: i32, lda: i32, acc: i32): void {
  let pa = addr(a, i, lda, 0);
  const end = pa + (<usize>K << 2);
  const sa2 = sa + sa;
  const sa3 = sa2 + sa;
  let c00 = splat(0), c01 = splat(0), c10 = splat(0), c11 = splat(0);
  let c20 = splat(0), c21 = splat(0), c30 = splat(0), c31 = splat(0);
  while (pa < end) {
    const b0 = ld4(pb);
    const b1 = ld4(pb + 16);
    const x0 = v128.load32_splat(pa);
    const x1 = v128.load32_splat(pa + sa);
    const x2 = v128.load32_splat(pa + sa2);
    const x3 = v128.load32_splat(pa + sa3);
    c00 = madd(c00, x0, b0);
    c01 = madd(c01, x0, b1);
    c10 = madd(c10, x1, b0);
    c11 = madd(c11, x1, b1);
    c20 = madd(c20, x2, b0);
    c21 = madd(c21, x2, b1);
    c30 = madd(c30, x3, b0);
    c31 = madd(c31, x3, b1);
    pa += 4;
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

/** A 2×8 tile (its loop as tile4x8's). */
@inline function tile2x8(a: usize, sa: usize, pb: usize, sb: usize, c: usize, ldc: i32, i: i32, j: i32, K: i32, lda: i32, acc: i32): void {
  let pa = addr(a, i, lda, 0);
  const end = pa + (<usize>K << 2);
  let c00 = splat(0), c01 = splat(0), c10 = splat(0), c11 = splat(0);
  while (pa < end) {
    const b0 = ld4(pb);
    const b1 = ld4(pb + 16);
    const x0 = v128.load32_splat(pa);
    const x1 = v128.load32_splat(pa + sa);
    c00 = madd(c00, x0, b0);
    c01 = madd(c01, x0, b1);
    c10 = madd(c10, x1, b0);
    c11 = madd(c11, x1, b1);
    pa += 4;
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
@inline function tile1x8(a: usize, pb: usize, sb: usize, c: usize, ldc: i32, i: i32, j: i32, K: i32, lda: i32, acc: i32): void {
  let pa = addr(a, i, lda, 0);
  const end = pa + (<usize>K << 2);
  let c0 = splat(0), c1 = splat(0);
  while (pa < end) {
    const x = v128.load32_splat(pa);
    c0 = madd(c0, x, ld4(pb));
    c1 = madd(c1, x, ld4(pb + 16));
    pa += 4;
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

/** A 1×4 tile; pb: row 0 of B's columns [j, j + 4). */
@inline function tile1x4(a: usize, pb: usize, sb: usize, c: usize, ldc: i32, i: i32, j: i32, K: i32, lda: i32, acc: i32): void {
  let pa = addr(a, i, lda, 0);
  const end = pa + (<usize>K << 2);
  let c0 = splat(0);
  while (pa < end) {
    c0 = madd(c0, v128.load32_splat(pa), ld4(pb));
    pa += 4;
    pb += sb;
  }
  const p = addr(c, i, ldc, j);
  st4(p, acc ? f32x4.add(c0, ld4(p)) : c0);
}

/** One element of C; pb: row 0 of B's column j. */
@inline function tile1x1(a: usize, pb: usize, sb: usize, c: usize, ldc: i32, i: i32, j: i32, K: i32, lda: i32, acc: i32): void {
  let s: f32 = 0;
  for (let k = 0; k < K; k++) {
    s += load<f32>(addr(a, i, lda, k)) * load<f32>(pb);
    pb += sb;
  }
  const pc = addr(c, i, ldc, j);
  store<f32>(pc, acc ? load<f32>(pc) + s : s);
}

/** Rows [i0, i1) of C for columns [j, j + 8): tiles of 4, 2 and 1 rows. */
@inline function rowsOfStrip(a: usize, sa: usize, pb: usize, sb: usize, c: usize, ldc: i32, i0: i32, i1: i32, j: i32, K: i32, lda: i32, acc: i32): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) tile4x8(a, sa, pb, sb, c, ldc, i, j, K, lda, acc);
  for (; i + 2 <= i1; i += 2) tile2x8(a, sa, pb, sb, c, ldc, i, j, K, lda, acc);
  for (; i < i1; i++) tile1x8(a, pb, sb, c, ldc, i, j, K, lda, acc);
}

/**
 * gemm's loops for either layout of B: strip j (columns [j, j + 8), j < N8 = N & ~7) starts at
 * b + j·colStep and steps sb bytes a row; the tail columns [N8, N) are a row-major block at
 * b + N8·colStep with row stride ldt floats, in 1×4 tiles, then one element at a time.
 */
@inline function gemmStrips(a: usize, lda: i32, b: usize, colStep: usize, sb: usize, ldt: i32, c: usize, ldc: i32, M: i32, N: i32, K: i32, acc: i32): void {
  const N8 = N & ~7;
  const N4 = N & ~3;
  const sa = <usize>lda << 2;
  if (M <= 16) {
    for (let j = 0; j < N8; j += 8) rowsOfStrip(a, sa, b + <usize>j * colStep, sb, c, ldc, 0, M, j, K, lda, acc);
  } else {
    const M4 = M & ~3;
    for (let i = 0; i < M4; i += 4) for (let j = 0; j < N8; j += 8) tile4x8(a, sa, b + <usize>j * colStep, sb, c, ldc, i, j, K, lda, acc);
    if (M4 < M) for (let j = 0; j < N8; j += 8) rowsOfStrip(a, sa, b + <usize>j * colStep, sb, c, ldc, M4, M, j, K, lda, acc);
  }
  const bt = b + <usize>N8 * colStep;
  const st = <usize>ldt << 2;
  for (let i = 0; i < M; i++) {
    let j = N8;
    for (; j < N4; j += 4) tile1x4(a, bt + (<usize>(j - N8) << 2), st, c, ldc, i, j, K, lda, acc);
    for (; j < N; j++) tile1x1(a, bt + (<usize>(j - N8) << 2), st, c, ldc, i, j, K, lda, acc);
  }
}

/**
 * C[M,N] (+)= A[M,K] · B[K,N]. Register tiles of 4×8; for few rows (decode batches) each
 * 8-column strip of B is read once for all rows, else each block of 4 rows of A once for
 * all strips.
 */
export function gemm(a: usize, lda: i32, b: usize, ldb: i32, c: usize, ldc: i32, M: i32, N: i32, K: i32, acc: i32): void {
  gemmStrips(a, lda, b, 4, <usize>ldb << 2, ldb, c, ldc, M, N, K, acc);
}

/**
 * gemm with B [K, N] packed in panels (packTranspose's layout): for each strip s < N/8 of 8
 * columns, its K×8 block contiguous, element (k, 8s + c) at (s·K + k)·8 + c; then the N mod 8
 * tail columns as a row-major [K, N mod 8] block at N8·K. Columns [j0, N) with j0 a multiple of
 * 8 are the packed matrix at b + j0·K floats of width N − j0 (how callers split by columns).
 * The same tiles, in the same order over k, as gemm: the same bits.
 */
export function gemmPacked(a: usize, lda: i32, b: usize, c: usize, ldc: i32, M: i32, N: i32, K: i32, acc: i32): void {
  gemmStrips(a, lda, b, <usize>K << 2, 32, N & 7, c, ldc, M, N, K, acc);
}

/** Rows of A and B one pass of gemmTN reads: B's [TN_KB, N] block stays in the core's L2 for every 4 rows of C. */
const TN_KB: i32 = 512;

/** Floats of scratch gemmTN needs: four columns of A over a block of k, and C's partial sums when K spans several blocks. */
export function gemmTNScratchFloats(M: i32, N: i32, K: i32): i32 {
  return 4 * min(K, TN_KB) + (K > TN_KB ? M * N : 0);
}

/** 4 rows of sums at q (row step sq bytes), 4 floats each: from P, or zeros. */
@inline function start4(from: bool, q: usize, sq: usize): v128 {
  return from ? ld4(q) : splat(0);
}

/** Ends 4 rows' sums x0…x3 of columns [j, j + 4) at row i: into C (+ C with acc) when `to`, else into P at q (row step sq bytes). */
@inline function end4(to: bool, acc: i32, c: usize, ldc: i32, i: i32, j: i32, q: usize, sq: usize, x0: v128, x1: v128, x2: v128, x3: v128): void {
  if (to) {
    const p0 = addr(c, i, ldc, j);
    const p1 = addr(c, i + 1, ldc, j);
    const p2 = addr(c, i + 2, ldc, j);
    const p3 = addr(c, i + 3, ldc, j);
    st4(p0, acc ? f32x4.add(x0, ld4(p0)) : x0);
    st4(p1, acc ? f32x4.add(x1, ld4(p1)) : x1);
    st4(p2, acc ? f32x4.add(x2, ld4(p2)) : x2);
    st4(p3, acc ? f32x4.add(x3, ld4(p3)) : x3);
  } else {
    st4(q, x0);
    st4(q + sq, x1);
    st4(q + 2 * sq, x2);
    st4(q + 3 * sq, x3);
  }
}

/**
 * Rows [i, i + 4) of C (+)= Aᵀ·B over K rows of A and B, where A's 4 columns of row k are the 4
 * floats at pa0 + k·sa (sa bytes): 4×8 tiles, then 4×4, then one column at a time. `from`: each
 * sum starts at its partial sum in P (rows of ldp floats at p, columns as C's) instead of 0; `to`:
 * the sums go to C (added to C's own values with acc), else back to P for the next block of k.
 * Each sum runs over k in order either way, so splitting K changes no bit.
 */
@inline function tn4Rows(
  pa0: usize, sa: usize, b: usize, ldb: i32, c: usize, ldc: i32, i: i32, N: i32, K: i32, acc: i32,
  p: usize, ldp: i32, from: bool, to: bool,
): void {
  const N8 = N & ~7;
  const N4 = N & ~3;
  const sb = <usize>ldb << 2;
  const sq = <usize>ldp << 2;
  let j = 0;
  for (; j < N8; j += 8) {
    const q = addr(p, i, ldp, j);
    let c00 = start4(from, q, sq), c01 = start4(from, q + 16, sq);
    let c10 = start4(from, q + sq, sq), c11 = start4(from, q + sq + 16, sq);
    let c20 = start4(from, q + 2 * sq, sq), c21 = start4(from, q + 2 * sq + 16, sq);
    let c30 = start4(from, q + 3 * sq, sq), c31 = start4(from, q + 3 * sq + 16, sq);
    let pa = pa0;
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
    end4(to, acc, c, ldc, i, j, q, sq, c00, c10, c20, c30);
    end4(to, acc, c, ldc, i, j + 4, q + 16, sq, c01, c11, c21, c31);
  }
  for (; j < N4; j += 4) {
    const q = addr(p, i, ldp, j);
    let c0 = start4(from, q, sq), c1 = start4(from, q + sq, sq);
    let c2 = start4(from, q + 2 * sq, sq), c3 = start4(from, q + 3 * sq, sq);
    let pa = pa0;
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
    end4(to, acc, c, ldc, i, j, q, sq, c0, c1, c2, c3);
  }
  for (; j < N; j++) {
    for (let r = 0; r < 4; r++) {
      const q = addr(p, i + r, ldp, j);
      let s: f32 = from ? load<f32>(q) : 0;
      for (let k = 0; k < K; k++) s += load<f32>(pa0 + <usize>k * sa + (<usize>r << 2)) * load<f32>(addr(b, k, ldb, j));
      const pc = addr(c, i + r, ldc, j);
      if (to) store<f32>(pc, acc ? load<f32>(pc) + s : s);
      else store<f32>(q, s);
    }
  }
}

/** The rows of C past the last block of 4, one at a time (A strided). */
@inline function tnRowsLeft(a: usize, lda: i32, b: usize, ldb: i32, c: usize, ldc: i32, i: i32, M: i32, N: i32, K: i32, acc: i32): void {
  const N4 = N & ~3;
  const sa = <usize>lda << 2;
  const sb = <usize>ldb << 2;
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

/**
 * C[M,N] (+)= Aᵀ · B with A stored [K, M] (row stride lda) and B [K, N]; work: gemmTNScratchFloats(M, N, K).
 * K in blocks of TN_KB rows (each row of C keeps its partial sums in work between blocks), and in
 * each block every 4 rows of C first copy A's 4 columns into work as one [kn, 4] run: the tiles
 * then read A as one stream instead of 16 bytes a row lda·4 bytes apart (at the LM head's M of
 * 4,096, a new page every k), and B's block from L2 instead of all of B from memory again for
 * every 4 rows (a weight gradient over 12,288 rows: 25 MB of B, 48 times). Only values move:
 * every element still sums over k in order from 0 and then adds C's old value (with acc), the
 * same bits as gemmTNStrided and as gemm on Aᵀ (kernels.test.ts).
 */
export function gemmTN(a: usize, lda: i32, b: usize, ldb: i32, c: usize, ldc: i32, M: i32, N: i32, K: i32, acc: i32, work: usize): void {
  const sa = <usize>lda << 2;
  const M4 = M & ~3;
  const P = work + (<usize>(4 * min(K, TN_KB)) << 2);
  // One pass at least: K = 0 still writes C (zeros, or C itself with acc).
  let k0 = 0;
  do {
    const kn = min(TN_KB, K - k0);
    const from = k0 > 0;
    const to = k0 + kn >= K;
    const bk = addr(b, k0, ldb, 0);
    for (let i = 0; i < M4; i += 4) {
      let src = addr(a, k0, lda, i);
      for (let k = 0; k < kn; k++) {
        st4(work + (<usize>k << 4), ld4(src));
        src += sa;
      }
      tn4Rows(work, 16, bk, ldb, c, ldc, i, N, kn, acc, P, N, from, to);
    }
    k0 += TN_KB;
  } while (k0 < K);
  tnRowsLeft(a, lda, b, ldb, c, ldc, M4, M, N, K, acc);
}

/** gemmTN reading A in place, without scratch, K in one pass: for the attention backward's small blocks. */
export function gemmTNStrided(a: usize, lda: i32, b: usize, ldb: i32, c: usize, ldc: i32, M: i32, N: i32, K: i32, acc: i32): void {
  const sa = <usize>lda << 2;
  const M4 = M & ~3;
  for (let i = 0; i < M4; i += 4) tn4Rows(addr(a, 0, lda, i), sa, b, ldb, c, ldc, i, N, K, acc, 0, 0, false, true);
  tnRowsLeft(a, lda, b, ldb, c, ldc, M4, M, N, K, acc);
}

/**
 * dst = srcᵀ [cols, rows] packed for gemmPacked, from src [rows, cols] (row stride cols): panel s
 * holds rows [8s, 8s + 8) of src, dst[(s·cols + k)·8 + c] = src[8s + c, k]; the rows mod 8 last
 * ones after the panels as [cols, rows mod 8].
 */
export function packTranspose(src: usize, rows: i32, cols: i32, dst: usize): void {
  const R8 = rows & ~7;
  const rowBytes = <usize>cols << 2;
  for (let s = 0; s < R8; s += 8) {
    const p = src + <usize>s * rowBytes;
    let q = dst + ((<usize>s * <usize>cols) << 2);
    for (let k = 0; k < cols; k++) {
      const kk = <usize>k << 2;
      for (let c = 0; c < 8; c++) store<f32>(q + (<usize>c << 2), load<f32>(p + <usize>c * rowBytes + kk));
      q += 32;
    }
  }
  const t = rows - R8;
  const tail = dst + ((<usize>R8 * <usize>cols) << 2);
  for (let c = 0; c < t; c++) {
    const p = src + <usize>(R8 + c) * rowBytes;
    for (let k = 0; k < cols; k++) store<f32>(addr(tail, k, t, c), load<f32>(p + (<usize>k << 2)));
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
