/**
 * Causal attention of a training batch over its segments (plan.ts), forward and backward,
 * one kernel call per (segment, head) in FlashAttention-2's manner (kernels attnFwd and
 * attnBwd: no T×T score matrix; the backward recomputes the scores from the kept lse).
 * A row's suffix attends to the shared prefix's keys, then to its own: its keys and values
 * are gathered into buffers of its own first, and its key gradients scattered back.
 */
import { F, type EngineCore } from './core';
import { attnBwdCall, attnFwdCall } from './kernelCalls';
import type { LayerActs } from './layer';
import { KT_PLANE } from './kvCache';
import { toPlanes } from './linear';
import type { BatchPlan, Segment } from './plan';
import type { KernelCall } from './threads';
import { allocAttnWork } from './threadSplit';

/** Keys and values a segment attends to: kᵀ planes [nKv][D][ldkt], v rows [Tk][KD], k rows (backward) and temporaries to free. */
interface KeyView {
  kt: number;
  ldkt: number;
  v: number;
  k: number;
  Tk: number;
  temps: number[];
}

/**
 * Keys and values a segment attends to, as attnFwd reads them: its own (columns of the batch
 * planes), or its parent's followed by its own, copied into temporaries ([nKv][D][Tk] planes
 * and [Tk][KD] rows, plus key rows for the backward).
 */
function gatherKeys(e: EngineCore, a: LayerActs, plan: BatchPlan, s: Segment, withRows: boolean): KeyView {
  const { rt, KD, D, nKv } = e;
  const N = plan.N;
  if (s.parent < 0) {
    return { kt: a.kt + s.off * F, ldkt: N, v: a.v + s.off * KD * F, k: a.k + s.off * KD * F, Tk: s.len, temps: [] };
  }
  const p = plan.segments[s.parent];
  const Tk = p.len + s.len;
  const kt = rt.alloc(KD * Tk);
  const v = rt.alloc(KD * Tk);
  const f32 = rt.f32;
  for (let r = 0; r < nKv * D; r++) {
    const src = (a.kt >> 2) + r * N;
    f32.copyWithin((kt >> 2) + r * Tk, src + p.off, src + p.off + p.len);
    f32.copyWithin((kt >> 2) + r * Tk + p.len, src + s.off, src + s.off + s.len);
  }
  f32.copyWithin(v >> 2, (a.v >> 2) + p.off * KD, (a.v >> 2) + (p.off + p.len) * KD);
  f32.copyWithin((v >> 2) + p.len * KD, (a.v >> 2) + s.off * KD, (a.v >> 2) + (s.off + s.len) * KD);
  const temps = [kt, v];
  let k = 0;
  if (withRows) {
    k = rt.alloc(KD * Tk);
    f32.copyWithin(k >> 2, (a.k >> 2) + p.off * KD, (a.k >> 2) + (p.off + p.len) * KD);
    f32.copyWithin((k >> 2) + p.len * KD, (a.k >> 2) + s.off * KD, (a.k >> 2) + (s.off + s.len) * KD);
    temps.push(k);
  }
  return { kt, ldkt: Tk, v, k, Tk, temps };
}

/** a.o and a.lse from a.q, a.k, a.v over the plan's segments (also writes the key planes a.kt). */
export function attendSegments(e: EngineCore, a: LayerActs, plan: BatchPlan): void {
  const { rt, QD, KD, D, nH, group } = e;
  const { N, segments } = plan;
  toPlanes(e, a.k, N, a.kt, N, 0);
  const views = segments.map((s) => gatherKeys(e, a, plan, s, false));
  const work = allocAttnWork(rt, D, segments.length * nH);
  const tasks: KernelCall[][] = [];
  segments.forEach((s, si) => {
    const keys = views[si];
    for (let h = 0; h < nH; h++) {
      const g = Math.floor(h / group);
      tasks.push([
        attnFwdCall({
          q: a.q + (s.off * QD + h * D) * F,
          ldq: QD,
          kt: keys.kt + g * D * keys.ldkt * F,
          ldkt: keys.ldkt,
          ktTile: KT_PLANE,
          v: keys.v + g * D * F,
          ldv: KD,
          o: a.o + (s.off * QD + h * D) * F,
          ldo: QD,
          lse: a.lse + (h * N + s.off) * F,
          ldlse: 1,
          Tq: s.len,
          qPos0: keys.Tk - s.len,
          qStep: 1,
          Tk: keys.Tk,
          D,
          scale: e.scale,
          work: work[si * nH + h],
        }),
      ]);
    }
  });
  rt.parallel(tasks);
  for (const p of [...work, ...views.flatMap((v) => v.temps)]) rt.release(p);
}

/** Adds ∂q, ∂k, ∂v (zeroed [N, QD], [N, KD], [N, KD]) of the segments' attention given ∂o. */
export function attendSegmentsBackward(
  e: EngineCore,
  a: LayerActs,
  plan: BatchPlan,
  dO: number,
  dq: number,
  dk: number,
  dv: number,
): void {
  const { rt, QD, KD, D, nKv, group } = e;
  const k = rt.k;
  const { N, segments } = plan;
  const prepared = segments.map((s) => {
    const keys = gatherKeys(e, a, plan, s, true);
    const vt = rt.alloc(KD * keys.Tk);
    toPlanes(e, keys.v, keys.Tk, vt, keys.Tk, 0);
    // A segment with a parent writes its keys' gradients to a buffer of its own first.
    const dkS = s.parent < 0 ? dk + s.off * KD * F : rt.allocZeroed(KD * keys.Tk);
    const dvS = s.parent < 0 ? dv + s.off * KD * F : rt.allocZeroed(KD * keys.Tk);
    return { s, keys, vt, dkS, dvS };
  });
  const work = allocAttnWork(rt, D, segments.length * nKv);
  const tasks: KernelCall[][] = [];
  prepared.forEach(({ s, keys, vt, dkS, dvS }, si) => {
    for (let g = 0; g < nKv; g++) {
      // The heads of one KV head add into its dk, dv: one task, in order.
      const calls: KernelCall[] = [];
      for (let h = g * group; h < (g + 1) * group; h++) {
        const head = (s.off * QD + h * D) * F; // this head's columns of the query-side rows
        calls.push(
          attnBwdCall({
            q: a.q + head,
            ldq: QD,
            k: keys.k + g * D * F,
            ldk: KD,
            kt: keys.kt + g * D * keys.ldkt * F,
            ldkt: keys.ldkt,
            vt: vt + g * D * keys.Tk * F,
            ldvt: keys.Tk,
            o: a.o + head,
            ldo: QD,
            dO: dO + head,
            lddo: QD,
            lse: a.lse + (h * N + s.off) * F,
            ldlse: 1,
            dq: dq + head,
            lddq: QD,
            dk: dkS + g * D * F,
            lddk: KD,
            dv: dvS + g * D * F,
            lddv: KD,
            Tq: s.len,
            qPos0: keys.Tk - s.len,
            Tk: keys.Tk,
            D,
            scale: e.scale,
            work: work[si * nKv + g],
          }),
        );
      }
      tasks.push(calls);
    }
  });
  rt.parallel(tasks);
  for (const { s, keys, vt, dkS, dvS } of prepared) {
    if (s.parent >= 0) {
      const p = segments[s.parent];
      k.axpy(dkS, dk + p.off * KD * F, p.len * KD, 1, 1);
      k.axpy(dvS, dv + p.off * KD * F, p.len * KD, 1, 1);
      k.axpy(dkS + p.len * KD * F, dk + s.off * KD * F, s.len * KD, 1, 1);
      k.axpy(dvS + p.len * KD * F, dv + s.off * KD * F, s.len * KD, 1, 1);
      rt.release(dkS);
      rt.release(dvS);
    }
    rt.release(vt);
    for (const t of keys.temps) rt.release(t);
  }
  for (const w of work) rt.release(w);
}
