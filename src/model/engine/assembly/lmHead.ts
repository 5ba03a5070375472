// The LM head per row of logits: log p(target), entropy and log-sum-exp, and the in-place
// gradient of the logits (the logits are recomputed in the backward, never kept).
import { exp1, exp4, hsum, ld4, madd, rowMax, splat, st4 } from './simd';

/**
 * Per row of logits z [rows, V]: lse, log p(target) and entropy lse − Σ p z.
 * out[r·3] = logp, out[r·3+1] = entropy, out[r·3+2] = lse.
 */
export function lmHeadRows(z: usize, rows: i32, V: i32, targets: usize, out: usize): void {
  const V4 = V & ~3;
  for (let r = 0; r < rows; r++) {
    const zr = z + ((<usize>r * <usize>V) << 2);
    const mx = rowMax(zr, V);
    const mm = splat(mx);
    let s = splat(0);
    let sz = splat(0);
    let i = 0;
    for (; i < V4; i += 4) {
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
