// Next-token sampling per row of logits, bit for bit as generate.ts's sampleFromLogits computes
// it in JavaScript at temperature 1 (or greedy) and top-p 1: float64, one e^x per entry, the sum
// and the inverse CDF in index order. So each slice of a decode step can sample its own rows on its
// own thread, with the draws and log-probs the JavaScript sampler gives. e^x is fdlibm's, the one
// V8 computes Math.exp with (v8/src/base/ieee754.cc, from FreeBSD's e_exp.c), ported line by
// line; kernels.test.ts holds it to Math.exp bit for bit.

const HALF_LN2_HI: u32 = 0x3fd62e42; // |x| > 0.5·ln2: reduce the argument
const THREEHALF_LN2_HI: u32 = 0x3ff0a2b2; // |x| < 1.5·ln2: k = ±1
const TINY_HI: u32 = 0x3e300000; // |x| < 2⁻²⁸
const BIG_HI: u32 = 0x40862e42; // |x| ≥ 709.78…
const O_THRESHOLD: f64 = 7.09782712893383973096e2;
const U_THRESHOLD: f64 = -7.45133219101941108420e2;
const LN2_HI: f64 = 6.9314718036912381649e-1;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const INV_LN2: f64 = 1.442695040888963387;
const P1: f64 = 1.66666666666666019037e-1;
const P2: f64 = -2.77777777770155933842e-3;
const P3: f64 = 6.61375632143793436117e-5;
const P4: f64 = -1.6533902205465251539e-6;
const P5: f64 = 4.13813679705723846039e-8;
const E: f64 = 2.718281828459045;
const HUGE: f64 = 1.0e300;
const TWO_M1000: f64 = 9.3326361850321887899e-302; // 2⁻¹⁰⁰⁰
const TWO_1023: f64 = 8.988465674311579539e307; // 2¹⁰²³

/** e^x as fdlibm (and so V8's Math.exp) computes it. */
export function expFdlibm(x: f64): f64 {
  let hi: f64 = 0;
  let lo: f64 = 0;
  let k: i32 = 0;
  const bits = reinterpret<u64>(x);
  let hx = <u32>(bits >> 32);
  const xsb = <i32>(hx >> 31);
  hx &= 0x7fffffff;
  if (hx >= BIG_HI) {
    if (hx >= 0x7ff00000) {
      if (((hx & 0xfffff) | <u32>bits) != 0) return x + x; // NaN
      return xsb == 0 ? x : 0.0; // e^{+∞} = +∞, e^{−∞} = 0
    }
    if (x > O_THRESHOLD) return HUGE * HUGE; // overflow
    if (x < U_THRESHOLD) return TWO_M1000 * TWO_M1000; // underflow
  }
  if (hx > HALF_LN2_HI) {
    if (hx < THREEHALF_LN2_HI) {
      if (x == 1.0) return E;
      hi = x - (xsb != 0 ? -LN2_HI : LN2_HI);
      lo = xsb != 0 ? -LN2_LO : LN2_LO;
      k = 1 - xsb - xsb;
    } else {
      k = <i32>(INV_LN2 * x + (xsb != 0 ? -0.5 : 0.5));
      const t = <f64>k;
      hi = x - t * LN2_HI; // exact here
      lo = t * LN2_LO;
    }
    x = hi - lo;
  } else if (hx < TINY_HI) {
    if (HUGE + x > 1.0) return 1.0 + x;
  } else {
    k = 0;
  }
  const t = x * x;
  const twopk =
    k >= -1021
      ? reinterpret<f64>(<u64>(<u32>(0x3ff00000 + (k << 20))) << 32)
      : reinterpret<f64>(<u64>(<u32>(0x3ff00000 + ((k + 1000) << 20))) << 32);
  const c = x - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  if (k == 0) return 1.0 - ((x * c) / (c - 2.0) - x);
  const y = 1.0 - (lo - (x * c) / (2.0 - c) - hi);
  if (k >= -1021) {
    if (k == 1024) return y * 2.0 * TWO_1023;
    return y * twopk;
  }
  return y * twopk * TWO_M1000;
}

// Two e^x at once (f64x2), the same bits as expFdlibm on each lane, with the same roundings in the
// same order (f64x2 add, sub, mul and div round as their scalar forms; the truncation and the
// conversions are exact). fdlibm has three ranges of |x|: no reduction below 0.5·ln2 (as its test
// reads the high word: up to 0x3fd62e42_ffffffff, a little past 0.5·ln2), k = ±1 below 1.5·ln2,
// k = (int)(x/ln2 ± 0.5) above. The general reduction gives k = ±1, hi = x ∓ ln2_hi, lo = ±ln2_lo
// over the middle range too (t = ±1 exactly), so it serves both; the lowest range is picked per
// lane, since just past 0.5·ln2 the general k is already ±1. There fdlibm returns 1 − ((x·c)/(c − 2) − x),
// which is the general 1 − ((lo − (x·c)/(2 − c)) − hi) at hi = x, lo = 0, k = 0 bit for bit
// (c − 2 = −(2 − c) exactly, and the quotient's sign with it). A pair with a lane fdlibm treats
// apart (|x| < 2⁻²⁸, the row maximum's 0 included; |x| ≥ 704, where it scales twice or overflows;
// x = 1; ±∞, NaN) is done by expFdlibm lane by lane. sampler.test.ts holds every lane to Math.exp.
const R_HALF: f64 = 0.3465735912322998; // 0x3fd62e43_00000000: |x| ≥ this ⇔ hx > HALF_LN2_HI
const R_TINY: f64 = 3.725290298461914e-9; // 2⁻²⁸: |x| < this ⇔ hx < TINY_HI
const R_SAFE: f64 = 704.0; // k ≥ −1016 below: one scaling by 2^k, no overflow

/** e^x on both lanes of x (f64x2), each lane expFdlibm's bits. */
@inline function expFdlibm2(x: v128): v128 {
  const ax = f64x2.abs(x);
  const isRegular = v128.and(
    v128.and(f64x2.ge(ax, f64x2.splat(R_TINY)), f64x2.lt(ax, f64x2.splat(R_SAFE))),
    f64x2.ne(x, f64x2.splat(1.0)),
  );
  if (!i64x2.all_true(isRegular)) {
    const e0 = expFdlibm(f64x2.extract_lane(x, 0));
    return f64x2.replace_lane(f64x2.splat(e0), 1, expFdlibm(f64x2.extract_lane(x, 1)));
  }
  const isNeg = f64x2.lt(x, f64x2.splat(0));
  const isSmall = f64x2.lt(ax, f64x2.splat(R_HALF)); // k = 0, no reduction
  // k = (int)(x/ln2 ± 0.5), hi = x − k·ln2_hi, lo = k·ln2_lo (|x| ≥ 1.5·ln2, and 0.5·ln2 to 1.5·ln2).
  const kInt = i32x4.trunc_sat_f64x2_s_zero(
    f64x2.add(f64x2.mul(f64x2.splat(INV_LN2), x), v128.bitselect(f64x2.splat(-0.5), f64x2.splat(0.5), isNeg)),
  );
  const t = f64x2.convert_low_i32x4_s(kInt);
  let hi = f64x2.sub(x, f64x2.mul(t, f64x2.splat(LN2_HI)));
  let lo = f64x2.mul(t, f64x2.splat(LN2_LO));
  let k = i64x2.extend_low_i32x4_s(kInt);
  // |x| < 0.5·ln2: hi = x, lo = 0, k = 0.
  hi = v128.bitselect(x, hi, isSmall);
  lo = v128.andnot(lo, isSmall);
  k = v128.andnot(k, isSmall);
  const r = f64x2.sub(hi, lo);
  const r2 = f64x2.mul(r, r);
  let p = f64x2.add(f64x2.splat(P4), f64x2.mul(r2, f64x2.splat(P5)));
  p = f64x2.add(f64x2.splat(P3), f64x2.mul(r2, p));
  p = f64x2.add(f64x2.splat(P2), f64x2.mul(r2, p));
  p = f64x2.add(f64x2.splat(P1), f64x2.mul(r2, p));
  const c = f64x2.sub(r, f64x2.mul(r2, p));
  const q = f64x2.div(f64x2.mul(r, c), f64x2.sub(f64x2.splat(2.0), c));
  const y = f64x2.sub(f64x2.splat(1.0), f64x2.sub(f64x2.sub(lo, q), hi));
  return f64x2.mul(y, i64x2.shl(i64x2.add(k, i64x2.splat(0x3ff)), 52));
}

/** out[i] = e^{x[i]} for n float64 at x, two at a time as sampleRows takes them (expFdlibm's bits; tests). */
export function expFdlibmRows(x: usize, n: i32, out: usize): void {
  let i = 0;
  for (; i + 2 <= n; i += 2) v128.store(out + (<usize>i << 3), expFdlibm2(v128.load(x + (<usize>i << 3))));
  for (; i < n; i++) store<f64>(out + (<usize>i << 3), expFdlibm(load<f64>(x + (<usize>i << 3))));
}

/** z[i] (float32) − m as float64, for i and i + 1: the arguments of two e^x. */
@inline function minus2(z: usize, i: i32, m: v128): v128 {
  return f64x2.sub(f64x2.promote_low_f32x4(v128.load64_zero(z + (<usize>i << 2))), m);
}

/**
 * Σ_{i<n} e^{z[i] − m} in index order (float64), two e^x at a time, each e^x also stored to
 * work[i] (float64) unless work is 0 (the runtime never hands out offset 0).
 */
@inline function sumExp(z: usize, n: i32, m: f64, work: usize): f64 {
  const m2 = f64x2.splat(m);
  let s: f64 = 0;
  let i = 0;
  for (; i + 2 <= n; i += 2) {
    const e = expFdlibm2(minus2(z, i, m2));
    if (work) v128.store(work + (<usize>i << 3), e);
    s += f64x2.extract_lane(e, 0);
    s += f64x2.extract_lane(e, 1);
  }
  for (; i < n; i++) {
    const e = expFdlibm(<f64>load<f32>(z + (<usize>i << 2)) - m);
    if (work) store<f64>(work + (<usize>i << 3), e);
    s += e;
  }
  return s;
}

/** sampleRows' output per row: 6 float64. */
const SAMPLE_OUT_F64 = 6;

/**
 * For each row r of logits z [rows, V] (float32): over all V ids, the maximum m (NaN never
 * counts; −∞ when no entry is above it) and s = Σ e^{z − m} in index order (float64); over the
 * first `limit` ids (the ids that may be sampled), the same mh, sh and the first id of their
 * maximum; then, when u[r] ≥ 0 (a uniform draw in [0, 1), float64), the first id i < limit with
 * u[r]·sh < Σ_{j ≤ i} e^{z_j − mh}, else (greedy, u[r] < 0, or no id reached) that argmax.
 * out[r·6 …] (float64): token, m, s, sh, e^{z_token − mh}, z_token. work: `limit` float64.
 */
export function sampleRows(z: usize, rows: i32, V: i32, limit: i32, u: usize, work: usize, out: usize): void {
  for (let r = 0; r < rows; r++) {
    const zr = z + ((<usize>r * <usize>V) << 2);
    // The head [0, limit): its maximum and the first id of it, as sampleFromLogits finds them.
    let mh: f64 = -Infinity;
    let argmax: i32 = 0;
    for (let i = 0; i < limit; i++) {
      const v = <f64>load<f32>(zr + (<usize>i << 2));
      if (v > mh) {
        mh = v;
        argmax = i;
      }
    }
    const ur = load<f64>(u + (<usize>r << 3));
    const isSampling = ur >= 0;
    const sh = sumExp(zr, limit, mh, isSampling ? work : 0);
    // All V ids (the log-prob's normaliser), when the head is not all of them.
    let m = mh;
    let s = sh;
    if (limit < V) {
      m = -Infinity;
      for (let i = 0; i < V; i++) {
        const v = <f64>load<f32>(zr + (<usize>i << 2));
        if (v > m) m = v;
      }
      s = sumExp(zr, V, m, 0);
    }
    let token = argmax;
    let p: f64 = 1;
    if (isSampling) {
      const target = ur * sh;
      let cum: f64 = 0;
      p = load<f64>(work + (<usize>argmax << 3));
      for (let i = 0; i < limit; i++) {
        const e = load<f64>(work + (<usize>i << 3));
        cum += e;
        if (target < cum) {
          token = i;
          p = e;
          break;
        }
      }
    }
    const o = out + <usize>(r * SAMPLE_OUT_F64 * 8);
    store<f64>(o, <f64>token);
    store<f64>(o + 8, m);
    store<f64>(o + 16, s);
    store<f64>(o + 24, sh);
    store<f64>(o + 32, p);
    store<f64>(o + 40, <f64>load<f32>(zr + (<usize>token << 2)));
  }
}
