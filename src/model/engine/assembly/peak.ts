// The core's SIMD128 multiply-add rate, measured: a loop of 12 independent 4-lane multiply-adds
// that touches no memory (12 chains are more than a multiply-add's latency times the CPU's vector
// ports, on the cores the engine runs on), through the same `madd` as every kernel: a multiply and
// an add in the plain build, relaxed_madd in the fma build. `pact bench` divides the engine's
// achieved FLOP/s by it, so the peak is measured on the machine, not assumed from a clock.
import { madd, splat, hsum } from './simd';

/** `iters` rounds of 12 multiply-adds on 4 lanes (96·iters float32 FLOPs); the sum of every lane, so nothing is dead. */
export function maddPeak(iters: i32, x: f32): f32 {
  const a = splat(x);
  const b = splat(<f32>0.5);
  let s0 = splat(1), s1 = splat(2), s2 = splat(3), s3 = splat(4), s4 = splat(5), s5 = splat(6);
  let s6 = splat(7), s7 = splat(8), s8 = splat(9), s9 = splat(10), s10 = splat(11), s11 = splat(12);
  for (let i = 0; i < iters; i++) {
    s0 = madd(s0, a, b);
    s1 = madd(s1, a, b);
    s2 = madd(s2, a, b);
    s3 = madd(s3, a, b);
    s4 = madd(s4, a, b);
    s5 = madd(s5, a, b);
    s6 = madd(s6, a, b);
    s7 = madd(s7, a, b);
    s8 = madd(s8, a, b);
    s9 = madd(s9, a, b);
    s10 = madd(s10, a, b);
    s11 = madd(s11, a, b);
  }
  const t = f32x4.add(f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)), f32x4.add(f32x4.add(s4, s5), f32x4.add(s6, s7)));
  return hsum(f32x4.add(t, f32x4.add(f32x4.add(s8, s9), f32x4.add(s10, s11))));
}

/**
 * The sum of n floats at x (n a multiple of 32), read as 4-lane vectors into 8 independent sums:
 * a read stream with little arithmetic, whose bytes per second over a buffer far larger than the
 * caches is the rate at which the core reads memory (pact bench's floor for a decode step, which
 * streams every weight and every cached key and value once).
 */
export function streamSum(x: usize, n: i32): f32 {
  let s0 = splat(0), s1 = splat(0), s2 = splat(0), s3 = splat(0);
  let s4 = splat(0), s5 = splat(0), s6 = splat(0), s7 = splat(0);
  const end = x + (<usize>n << 2);
  for (let p = x; p < end; p += 128) {
    s0 = f32x4.add(s0, v128.load(p));
    s1 = f32x4.add(s1, v128.load(p + 16));
    s2 = f32x4.add(s2, v128.load(p + 32));
    s3 = f32x4.add(s3, v128.load(p + 48));
    s4 = f32x4.add(s4, v128.load(p + 64));
    s5 = f32x4.add(s5, v128.load(p + 80));
    s6 = f32x4.add(s6, v128.load(p + 96));
    s7 = f32x4.add(s7, v128.load(p + 112));
  }
  const t = f32x4.add(f32x4.add(f32x4.add(s0, s1), f32x4.add(s2, s3)), f32x4.add(f32x4.add(s4, s5), f32x4.add(s6, s7)));
  return hsum(t);
}
