/**
 * The LM head over the plan's head items, in chunks of e.headChunk items so that no
 * [items, V] logits are ever held:
 *   forward:  z = h Wᵀ [c, V] (Wᵀ packed in panels: mmPacked), then per row log p(target), entropy and lse (lmHeadRows);
 *   backward: z again, dz = ∂/∂z of each item's terms in place (lmHeadGradRows, summed over
 *             the rows an item feeds), ∂h = dz W scattered back to the items' hidden rows,
 *             and ∂W += dzᵀ h.
 */
import { F, type EngineCore } from './core';
import type { GradBuffers } from './gradBuffers';
import { lmHeadGradRowsCall, lmHeadRowsCall } from './kernelCalls';
import { headName } from './names';
import type { HeadPlan } from './plan';
import { mm, mmPacked, mmTN, sliceRows } from './threadSplit';
import type { EngineParams } from './weights';

/** Copies the hidden rows and targets of head items [j0, j0 + c) into h [c, H] and t [c]. */
function gatherHead(e: EngineCore, head: HeadPlan, j0: number, c: number, xnF: number, h: number, t: number): void {
  const f32 = e.rt.f32;
  const H = e.H;
  for (let r = 0; r < c; r++) {
    const src = (xnF >> 2) + head.hidden[j0 + r] * H;
    f32.copyWithin((h >> 2) + r * H, src, src + H);
  }
  e.rt.i32.set(head.target.subarray(j0, j0 + c), t >> 2);
}

/** Walks the LM-head items in chunks: gathers their hidden rows, z = h Wᵀ, and their stats [c, 3] (logp, entropy, lse). */
export function runHead(
  e: EngineCore,
  P: EngineParams,
  head: HeadPlan,
  xnF: number,
  onChunk: (j0: number, count: number, stats: number) => void,
): void {
  const { rt, H, V } = e;
  const C = e.headChunk;
  const z = rt.alloc(C * V);
  const stats = rt.alloc(C * 3);
  const h = rt.alloc(C * H);
  const t = rt.alloc(C);
  const headT = e.weights.ptrPacked(P.get(headName(e.config)));
  try {
    for (let j0 = 0; j0 < head.hidden.length; j0 += C) {
      const c = Math.min(C, head.hidden.length - j0);
      gatherHead(e, head, j0, c, xnF, h, t);
      mmPacked(rt, h, H, headT, z, V, c, V, H, 0);
      sliceRows(rt, c, (r0, n) =>
        lmHeadRowsCall({ z: z + r0 * V * F, rows: n, V, targets: t + r0 * F, out: stats + r0 * 3 * F }),
      );
      onChunk(j0, c, stats);
    }
  } finally {
    for (const p of [z, stats, h, t]) rt.release(p);
  }
}

/**
 * Backward of the LM head: ∂xnF [N, H] (returned, zeroed then scattered into) from the
 * upstream gradients of each output's log-prob and entropy, and ∂W into `grads` when asked.
 */
export function headBackward(
  e: EngineCore,
  P: EngineParams,
  head: HeadPlan,
  N: number,
  xnF: number,
  headLse: number,
  gLogp: readonly ArrayLike<number>[],
  gEnt: readonly ArrayLike<number>[] | null,
  grads: GradBuffers,
): number {
  const { rt, H, V } = e;
  const k = rt.k;
  const dxnF = rt.allocZeroed(N * H);
  const C = e.headChunk;
  const z = rt.alloc(C * V);
  const hc = rt.alloc(C * H);
  const dh = rt.alloc(C * H);
  const tc = rt.alloc(C);
  const gl = rt.alloc(C);
  const ge = rt.alloc(C);
  const name = headName(e.config);
  const headW = P.get(name);
  const headT = e.weights.ptrPacked(headW);
  const headPtr = e.weights.ptr(headW);
  const gHead = grads.get(name, V * H);
  for (let j0 = 0; j0 < head.hidden.length; j0 += C) {
    const c = Math.min(C, head.hidden.length - j0);
    gatherHead(e, head, j0, c, xnF, hc, tc);
    const f32 = rt.f32;
    for (let r = 0; r < c; r++) {
      const o = head.outs[j0 + r];
      let sl = 0;
      let se = 0;
      for (let m = 0; m < o.length; m += 2) {
        sl += gLogp[o[m]][o[m + 1]];
        if (gEnt) se += gEnt[o[m]][o[m + 1]];
      }
      f32[(gl >> 2) + r] = sl;
      f32[(ge >> 2) + r] = se;
    }
    mmPacked(rt, hc, H, headT, z, V, c, V, H, 0);
    sliceRows(rt, c, (r0, n) =>
      lmHeadGradRowsCall({
        z: z + r0 * V * F,
        rows: n,
        V,
        targets: tc + r0 * F,
        lse: headLse + (j0 + r0) * F,
        gLogp: gl + r0 * F,
        gEnt: ge + r0 * F,
      }),
    );
    mm(rt, z, V, headPtr, H, dh, H, c, H, V, 0);
    for (let r = 0; r < c; r++) k.axpy(dh + r * H * F, dxnF + head.hidden[j0 + r] * H * F, H, 1, 1);
    if (gHead) mmTN(rt, z, V, hc, H, gHead, H, V, H, c, 1);
  }
  for (const p of [z, hc, dh, tc, gl, ge]) rt.release(p);
  return dxnF;
}
