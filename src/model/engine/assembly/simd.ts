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
/**
 * The lane-wise maximum of n floats at p (n a multiple of 4), as one f32x4.max chain over them would
 * give it, in four chains: V8 (x64) writes wasm's f32x4.max as about 8 dependent instructions (it
 * orders ±0 and NaN), so one chain waits on each; max is exact and its order does not matter (a
 * NaN wins, +0 over −0), so the bits are the same (a NaN's payload aside).
 */
@inline export function maxLanes(p: usize, n: i32): v128 {
  let m0 = splat(-Infinity);
  let m1 = m0;
  let m2 = m0;
  let m3 = m0;
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    const q = p + (<usize>i << 2);
    m0 = f32x4.max(m0, ld4(q));
    m1 = f32x4.max(m1, ld4(q + 16));
    m2 = f32x4.max(m2, ld4(q + 32));
    m3 = f32x4.max(m3, ld4(q + 48));
  }
  for (; i < n; i += 4) m0 = f32x4.max(m0, ld4(p + (<usize>i << 2)));
  return f32x4.max(f32x4.max(m0, m1), f32x4.max(m2, m3));
}
/** The largest of n floats at p: maxLanes over the whole vectors, then the rest one at a time (the same bits as a scalar max in order). */
@inline export function rowMax(p: usize, n: i32): f32 {
  const n4 = n & ~3;
  let mx = hmax(maxLanes(p, n4));
  for (let i = n4; i < n; i++) mx = max(mx, load<f32>(p + (<usize>i << 2)));
  return mx;
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

/**
 * exp4's constants, read from the module's static data rather than written as v128 constants: V8
 * (TurboFan, x64) does not keep a constant vector in a register across a loop but rebuilds it at
 * each use (a 64-bit move, a move into a vector register and a shuffle, two of them on the vector
 * ports), 13 times per call here; a broadcast load is one load-port µop (with the changes below,
 * attnDecode went from 22.9 to 19.8 ns a key alone on the Intel Xeon of docs/perf.md). The values
 * are the constants exp4 had before, to the bit.
 */
const EXP_F32 = memory.data<f32>([
  -87.33654, // 0: lo, below which e^x is 0
  88.0, // 1: hi, the cap
  1.442695041, // 2: log2 e
  12582912.0, // 3: 1.5·2^23, whose sum with x·log2 e rounds it to the nearest integer, ties to even
  0.693359375, // 4: ln 2, high part
  -2.12194440e-4, // 5: ln 2, low part
  1.9875691500e-4, // 6..11: e^r's polynomial, highest power first
  1.3981999507e-3,
  8.3334519073e-3,
  4.1665795894e-2,
  1.6666665459e-1,
  5.0000001201e-1,
  1.0, // 12
]);
/** 127 − 0x4b400000: the bits of 1.5·2^23 + n less those of 1.5·2^23, plus the exponent bias. */
const EXP_BIAS = memory.data<i32>([127 - 0x4b400000]);
@inline function expC(i: i32): v128 {
  return v128.load32_splat(EXP_F32 + (<usize>i << 2));
}
/** 1 on 4 lanes, read from the static data as exp4's constants are (for loops that add or divide by 1). */
@inline export function ones(): v128 {
  return expC(12);
}

/**
 * e^x for 4 lanes: x = n·ln2 + r, |r| ≤ ln2/2, e^r by a degree-6 polynomial, 2^n in the exponent bits. Relative error ≈ 2e-7; x < −87.3 gives 0; x is capped at 88.
 * n = roundeven(x·log2 e) as the sum with 1.5·2^23 rounds it (|x·log2 e| < 2^22, so that sum's ulp
 * is 1), and 2^n's exponent is that sum's low bits: the same n, bit for bit, as f32x4.nearest and
 * i32x4.trunc_sat_f32x4_s gave, in 2 instructions where V8 emits 1 and about 8. The clamp uses
 * pmin/pmax (one minps/maxps each, where wasm's min/max take about 8 to order ±0 and NaN): the
 * bounds are neither 0 nor NaN, so every x that is not NaN clamps to the same bits (a NaN x still
 * gives a NaN, its payload unspecified as before).
 */
@inline export function exp4(x: v128): v128 {
  const lo = expC(0);
  const isUnder = f32x4.lt(x, lo);
  x = f32x4.pmin(f32x4.pmax(x, lo), expC(1));
  const nm = f32x4.add(f32x4.mul(x, expC(2)), expC(3));
  const n = f32x4.sub(nm, expC(3));
  let r = f32x4.sub(x, f32x4.mul(n, expC(4)));
  r = f32x4.sub(r, f32x4.mul(n, expC(5)));
  let p = expC(6);
  p = madd(expC(7), p, r);
  p = madd(expC(8), p, r);
  p = madd(expC(9), p, r);
  p = madd(expC(10), p, r);
  p = madd(expC(11), p, r);
  const r2 = f32x4.mul(r, r);
  p = f32x4.add(madd(r, p, r2), expC(12));
  const bits = i32x4.shl(i32x4.add(nm, v128.load32_splat(EXP_BIAS)), 23);
  const y = f32x4.mul(p, bits);
  return v128.andnot(y, isUnder);
}

@inline export function exp1(x: f32): f32 {
  return f32x4.extract_lane(exp4(splat(x)), 0);
}
