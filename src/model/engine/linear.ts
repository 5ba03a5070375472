/**
 * The engine's building blocks on named weights: a linear layer with its optional LoRA
 * adapter (Hu et al. 2021, Eq. 3: y = x Wᵀ + s·(x Aᵀ) Bᵀ) forward and backward side by side,
 * the RMSNorm of a named weight, and the copy of k (or v) rows into per-head planes.
 * Weights are [out, in] as in Hugging Face; the forward reads the cached transpose [in, out],
 * packed in panels (WeightCache.ptrPacked, mmPacked), the backward the original.
 */
import { F, type EngineCore } from './core';
import type { GradBuffers } from './gradBuffers';
import { loraGradName } from './names';
import { mm, mmPacked, mmTN, PARALLEL_ELEMENTS, sliceRows } from './threadSplit';
import { rmsnormFwdCall } from './kernelCalls';
import type { EngineParams } from './weights';

/** y (+)= x Wᵀ (+ s·(x Aᵀ) Bᵀ) for x [N, in]; returns the LoRA activation s·(x Aᵀ) [N, r] to keep, if any. */
export function linearForward(
  e: EngineCore,
  P: EngineParams,
  name: string,
  x: number,
  N: number,
  y: number,
  acc: number,
  keep: boolean,
): number | undefined {
  const { rt, weights } = e;
  const w = P.get(name);
  const [outDim, inDim] = w.shape;
  mmPacked(rt, x, inDim, weights.ptrPacked(w), y, outDim, N, outDim, inDim, acc);
  const ad = P.lora?.get(name);
  if (!ad) return undefined;
  const r = ad.A.shape[0];
  const t = rt.alloc(N * r);
  mmPacked(rt, x, inDim, weights.ptrPacked(ad.A), t, r, N, r, inDim, 0); // [N, r]
  rt.k.axpy(t, t, N * r, ad.scale, 0);
  mmPacked(rt, t, r, weights.ptrPacked(ad.B), y, outDim, N, outDim, r, 1);
  if (keep) return t;
  rt.release(t);
  return undefined;
}

/** dx (+)= dy W (+ LoRA), and the weight gradients asked for in `grads` (∂W += dyᵀ x). */
export function linearBackward(
  e: EngineCore,
  P: EngineParams,
  name: string,
  x: number,
  dy: number,
  N: number,
  dx: number,
  accDx: number,
  grads: GradBuffers,
  loraT: number | undefined,
): void {
  const { rt, weights } = e;
  const w = P.get(name);
  const [outDim, inDim] = w.shape;
  mm(rt, dy, outDim, weights.ptr(w), inDim, dx, inDim, N, inDim, outDim, accDx);
  const gW = grads.get(name, outDim * inDim);
  if (gW) mmTN(rt, dy, outDim, x, inDim, gW, inDim, outDim, inDim, N, 1);
  const ad = P.lora?.get(name);
  if (!ad) return;
  if (loraT === undefined) throw new Error(`engine: no LoRA activation kept for ${name}`);
  const r = ad.A.shape[0];
  const gB = grads.get(loraGradName(name, 'B'), outDim * r);
  if (gB) mmTN(rt, dy, outDim, loraT, r, gB, r, outDim, r, N, 1);
  const dt = rt.alloc(N * r);
  mm(rt, dy, outDim, weights.ptr(ad.B), r, dt, r, N, r, outDim, 0);
  rt.k.axpy(dt, dt, N * r, ad.scale, 0);
  const gA = grads.get(loraGradName(name, 'A'), r * inDim);
  if (gA) mmTN(rt, dt, r, x, inDim, gA, inDim, r, inDim, N, 1);
  mm(rt, dt, r, weights.ptr(ad.A), inDim, dx, inDim, N, inDim, r, 1);
  rt.release(dt);
}

/** y = RMSNorm(x) · w over `rows` rows of n (w the named weight); rstd [rows] kept for the backward. */
export function rmsnormForward(
  e: EngineCore,
  P: EngineParams,
  name: string,
  x: number,
  rows: number,
  n: number,
  y: number,
  rstd: number,
): void {
  const w = e.weights.ptr(P.get(name));
  const eps = e.config.rms_norm_eps;
  // Rows are independent: slices of rows give the same bits on any thread count.
  if (e.rt.threads === 1 || rows * n < PARALLEL_ELEMENTS) {
    e.rt.k.rmsnormFwd(x, n, w, y, n, rstd, rows, n, eps);
    return;
  }
  sliceRows(e.rt, rows, (r0, count) =>
    rmsnormFwdCall({
      x: x + r0 * n * F,
      ldx: n,
      w,
      y: y + r0 * n * F,
      ldy: n,
      rstd: rstd + r0 * F,
      rows: count,
      n,
      eps,
    }),
  );
}

/** Copies head columns of k [N, nKv·D] (or v) into [nKv][D][ld] planes, columns [col0, col0 + N). */
export function toPlanes(e: EngineCore, src: number, N: number, planes: number, ld: number, col0: number): void {
  const { D, KD } = e;
  for (let g = 0; g < e.nKv; g++) e.rt.k.transpose(src + g * D * F, KD, planes + (g * D * ld + col0) * F, ld, N, D);
}
