// Vector helpers of the kernels: 4-lane loads, stores and reductions, the row-major address
// of an element, and e^x on 4 lanes (all inlined where they are used).
// `madd` is the one place the two builds differ (docs/engine.md, "Fused multiply-add").

@inline export function ld4(p: usize): v128 {
  return v128.load(p);
}
@inline export function st4(p: usize, x: v128): void {
  v128.store(p, x);
}
@inline export function splat(x: f32): v128 {
  return f32x4.splat(x);
}
/**
 * acc + a·b on 4 lanes. The plain build rounds the product, then the sum; the relaxed-SIMD build
 * (--enable relaxed-simd) emits f32x4.relaxed_madd, one rounding where the CPU fuses (x86 FMA3,
 * arm64), the plain two elsewhere. Every vector dot product goes through here: the gemm tiles,
 * the norms' and the LM head's sums, the attention backward's row sums and exp4's polynomial.
 */
@inline export function madd(acc: v128, a: v128, b: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, acc);
  return f32x4.add(acc, f32x4.mul(a, b));
}
@inline export function hsum(x: v128): f32 {
  return f32x4.extract_lane(x, 0) + f32x4.extract_lane(x, 1) + f32x4.extract_lane(x, 2) + f32x4.extract_lane(x, 3);
}
@inline export function hmax(x: v128): f32 {
  return max(max(f32x4.extract_lane(x, 0), f32x4.extract_lane(x, 1)), max(f32x4.extract_lane(x, 2), f32x4.extract_lane(x, 3)));
}
@inline export function addr(base: usize, row: i32, ld: i32, col: i32): usize {
  return base + ((<usize>row * <usize>ld + <usize>col) << 2);
}

/** e^x for 4 lanes: x = n·ln2 + r, |r| ≤ ln2/2, e^r by a degree-6 polynomial, 2^n in the exponent bits. Relative error ≈ 2e-7; x < −87.3 gives 0; x is capped at 88. */
@inline export function exp4(x: v128): v128 {
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

@inline export function exp1(x: f32): f32 {
  return f32x4.extract_lane(exp4(splat(x)), 0);
}
