/**
 * Prefill and decode are one call: extend appends tokens to KV-cache slots (kvCache.ts),
 * running the decoder over all new tokens of all slots together (the same layerForward as
 * training, on scratch buffers shared by every layer), and returns the next-token logits of
 * each slot after its last new token. A slot's new queries attend to its cached keys and
 * to its own new ones, causally.
 */
import { F, type EngineCore } from './core';
import { layerForward, type LayerActs } from './layer';
import { rmsnormForward, toPlanes } from './linear';
import { EMBED, FINAL_NORM, headName, listPassTensors } from './names';
import { attnFwdCall, type KernelArgs } from './kernelCalls';
import { ensureSlotCapacity, type KvSlot } from './kvCache';
import { allocAttnWork, mm } from './threadSplit';
import type { EngineParams } from './weights';

export interface ExtendItem {
  slot: KvSlot;
  tokens: ArrayLike<number>;
}

/**
 * Layer i's attention for the new tokens: writes their keys and values into each slot at
 * its next positions, then each query reads the slot's keys up to its own position.
 */
function attendSlots(
  e: EngineCore,
  i: number,
  items: readonly ExtendItem[],
  counts: readonly number[],
  offsets: readonly number[],
  a: LayerActs,
): void {
  const { rt, QD, KD, D, nH, nKv, group } = e;
  // One call per (slot, head), or per (slot, KV head) for a single new token; each gets its
  // own scratch and log-sum-exp rows (decode never reads the lse), allocated once all are known.
  const calls: Omit<KernelArgs<'attnFwd'>, 'lse' | 'ldlse' | 'work'>[] = [];
  items.forEach((it, j) => {
    const s = it.slot;
    const start = s.tokens.length;
    const c = counts[j];
    toPlanes(e, a.k + offsets[j] * KD * F, c, s.kt[i], s.cap, start);
    rt.f32.copyWithin((s.v[i] >> 2) + start * KD, (a.v >> 2) + offsets[j] * KD, (a.v >> 2) + (offsets[j] + c) * KD);
    if (c === 1) {
      // One token: the `group` query heads of a KV head are adjacent rows at one position.
      for (let gh = 0; gh < nKv; gh++) {
        calls.push({
          q: a.q + (offsets[j] * QD + gh * group * D) * F,
          ldq: D,
          kt: s.kt[i] + gh * D * s.cap * F,
          ldkt: s.cap,
          v: s.v[i] + gh * D * F,
          ldv: KD,
          o: a.o + (offsets[j] * QD + gh * group * D) * F,
          ldo: D,
          Tq: group,
          qPos0: start,
          qStep: 0,
          Tk: start + 1,
          D,
          scale: e.scale,
        });
      }
      return;
    }
    for (let h = 0; h < nH; h++) {
      const gh = Math.floor(h / group);
      calls.push({
        q: a.q + (offsets[j] * QD + h * D) * F,
        ldq: QD,
        kt: s.kt[i] + gh * D * s.cap * F,
        ldkt: s.cap,
        v: s.v[i] + gh * D * F,
        ldv: KD,
        o: a.o + (offsets[j] * QD + h * D) * F,
        ldo: QD,
        Tq: c,
        qPos0: start,
        qStep: 1,
        Tk: start + c,
        D,
        scale: e.scale,
      });
    }
  });
  const work = allocAttnWork(rt, D, calls.length);
  const lseRows = Math.max(nH, ...counts);
  const lseAll = rt.alloc(calls.length * lseRows);
  const tasks = calls.map((args, t) => [
    attnFwdCall({ ...args, lse: lseAll + t * lseRows * F, ldlse: 1, work: work[t] }),
  ]);
  rt.parallel(tasks);
  for (const w of work) rt.release(w);
  rt.release(lseAll);
}

/**
 * Appends `tokens` to each slot (positions continue from the slot's length) and returns the
 * next-token logits of each slot after its last new token: [items, V], a copy.
 */
export function runExtend(e: EngineCore, P: EngineParams, items: readonly ExtendItem[]): Float32Array {
  const { rt, H, QD, KD, I, nH, V } = e;
  const k = rt.k;
  const counts = items.map((it) => it.tokens.length);
  if (counts.some((c) => c < 1)) throw new Error('engine.extend: every slot needs at least one new token');
  const offsets: number[] = [];
  let N = 0;
  for (const c of counts) {
    offsets.push(N);
    N += c;
  }
  for (const it of items) {
    const needed = it.slot.tokens.length + it.tokens.length;
    e.rope.ensure(needed);
    ensureSlotCapacity(e, it.slot, needed);
  }
  const pinned = listPassTensors(e.config, P);
  e.weights.pin(pinned);
  const temps: number[] = [];
  const tmp = (floats: number) => {
    const p = rt.alloc(floats);
    temps.push(p);
    return p;
  };
  try {
    const ids = tmp(N);
    const pos = tmp(N);
    const i32 = rt.i32;
    items.forEach((it, j) => {
      const start = it.slot.tokens.length;
      for (let t = 0; t < counts[j]; t++) {
        const id = it.tokens[t];
        if (!Number.isInteger(id) || id < 0 || id >= V)
          throw new Error(`engine.extend: token ${id} is not in [0, ${V})`);
        i32[(ids >> 2) + offsets[j] + t] = id;
        i32[(pos >> 2) + offsets[j] + t] = start + t;
      }
    });
    const x = tmp(N * H);
    k.embedFwd(ids, N, e.weights.ptr(P.get(EMBED)), H, x);
    // Scratch for every layer; nothing reads a norm's rstd, xn1, xn2 or g again, so they are shared.
    const rstd = tmp(N * Math.max(nH, 1));
    const xn = tmp(N * H);
    const g = tmp(N * I);
    const scratch: LayerActs = {
      x,
      rstd1: rstd,
      xn1: xn,
      qraw: tmp(N * QD),
      rstdq: rstd,
      kraw: tmp(N * KD),
      rstdk: rstd,
      v: tmp(N * KD),
      q: tmp(N * QD),
      k: tmp(N * KD),
      kt: 0,
      o: tmp(N * QD),
      lse: 0,
      g,
      u: tmp(N * I),
      a: g,
      hmid: tmp(N * H),
      rstd2: rstd,
      xn2: xn,
      lora: new Map(),
    };
    for (let i = 0; i < e.config.num_hidden_layers; i++) {
      layerForward(e, P, i, scratch, N, pos, x, (a) => attendSlots(e, i, items, counts, offsets, a), false);
    }
    for (const [j, it] of items.entries()) for (let t = 0; t < counts[j]; t++) it.slot.tokens.push(it.tokens[t]);
    // Logits of each slot's last new token.
    const last = tmp(items.length * H);
    items.forEach((_, j) =>
      rt.f32.copyWithin(
        (last >> 2) + j * H,
        (x >> 2) + (offsets[j] + counts[j] - 1) * H,
        (x >> 2) + (offsets[j] + counts[j]) * H,
      ),
    );
    rmsnormForward(e, P, FINAL_NORM, last, items.length, H, xn, rstd);
    const z = tmp(items.length * V);
    mm(rt, xn, H, e.weights.ptrT(P.get(headName(e.config))), V, z, V, items.length, V, H, 0);
    return rt.read(z, items.length * V);
  } finally {
    for (const p of temps) rt.release(p);
    e.weights.unpin(pinned);
  }
}
