// Row and element kernels: RMSNorm forward and backward, rotate-half RoPE, SwiGLU forward and
// backward, axpy, the embedding gather and its scatter-add, the sum of squares, and e^x over a
// row (exp4 as every kernel inlines it, exported for its bit-for-bit test).
import { addr, exp4, hsum, ld4, madd, ones, splat, st4 } from './simd';

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
    const sig = f32x4.div(ones(), f32x4.add(ones(), exp4(f32x4.neg(gv))));
    st4(a + o, f32x4.mul(f32x4.mul(gv, sig), ld4(u + o)));
  }
}

/** dg = da·u·σ(g)(1 + g(1 − σ(g))), du = da·silu(g). */
export function swigluBwd(g: usize, u: usize, da: usize, dg: usize, du: usize, n: i32): void {
  for (let i = 0; i < n; i += 4) {
    const o = <usize>i << 2;
    const gv = ld4(g + o);
    const sig = f32x4.div(ones(), f32x4.add(ones(), exp4(f32x4.neg(gv))));
    const d = ld4(da + o);
    st4(du + o, f32x4.mul(d, f32x4.mul(gv, sig)));
    const dsilu = f32x4.mul(sig, f32x4.add(ones(), f32x4.mul(gv, f32x4.sub(ones(), sig))));
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

/** Sum of squares of n values (n a multiple of 4), for gradient norms. */
export function sumSquares(x: usize, n: i32): f64 {
  let s: f64 = 0;
  for (let i = 0; i < n; i += 4) {
    const v = ld4(x + (<usize>i << 2));
    s += <f64>hsum(f32x4.mul(v, v));
  }
  return s;
}

/** y = e^x over n floats (n a multiple of 4): exp4, which the softmaxes, the LM head and SwiGLU inline. */
export function expRows(x: usize, y: usize, n: i32): void {
  for (let i = 0; i < n; i += 4) st4(y + (<usize>i << 2), exp4(ld4(x + (<usize>i << 2))));
}
