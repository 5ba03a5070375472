/**
 * Prefill and decode are one call: extend appends tokens to KV-cache slots (kvCache.ts),
 * running the decoder over all new tokens of all slots together (the same layerForward as
 * training, on scratch buffers shared by every layer), and returns the next-token logits of
 * each slot after its last new token. A slot's new queries attend to its cached keys and
 * to its own new ones, causally.
 * A decode step (one new token per slot, several slots) on several threads is split by slots
 * instead: slots are independent through every layer, so each slice of slots runs the same
 * forward (embedding, layers, final norm, logits) as one task of kernel calls, recorded by a
 * TaskRecorder (threadSplit.ts) for the workers while the calling thread runs the last slice
 * itself, and the step is one dispatch. Same bits as one thread: every
 * kernel works row by row, and a gemm sums each element in one order whatever its tile.
 * runExtendSampled also draws each slot's next token where its logits are (assembly/sampler.ts:
 * the draws and log-probs of generate.ts's JavaScript sampler, bit for bit), inside the same task
 * as the slot's forward, so a decode step's sampling runs on every thread and no [slots, V] logits
 * are copied out.
 */
import { F, type EngineCore } from './core';
import { layerForward, type LayerActs } from './layer';
import { rmsnormForward } from './linear';
import { EMBED, FINAL_NORM, headName, listPassTensors } from './names';
import { attnDecodeCall, attnFwdCall, type KernelArgs } from './kernelCalls';
import { SAMPLE_OUT, type SampleRequest } from './sampling';
import { ensureSlotCapacity, slotKeys, writeSlotKeys, type KvSlot } from './kvCache';
import { allocAttnWork, callingThreadRuntime, mmPacked, TaskRecorder } from './threadSplit';
import type { EngineRuntime } from './runtime';
import type { KernelCall } from './threads';
import type { EngineParams } from './weights';

export interface ExtendItem {
  slot: KvSlot;
  tokens: ArrayLike<number>;
}

/** One attention scratch that every (one-token) attention call of a task reuses in turn. */
interface TaskAttnScratch {
  work: number;
}

/** Floats of scratch an attnDecode call of the engine's KV-head group needs over Tk keys. */
export const decodeScratchFloats = (e: EngineCore, Tk: number) => e.rt.k.attnDecodeScratchFloats(e.group, Tk, e.D);

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
  shared?: TaskAttnScratch,
): void {
  const { rt, QD, KD, D, nH, nKv, group } = e;
  // A single new token: one attnDecode call per (slot, KV head), its `group` query heads adjacent
  // rows. Several: one attnFwd call per (slot, head). Each call gets its own scratch (and attnFwd
  // its log-sum-exp rows, which extend never reads), unless the calls run one after another
  // (`shared`, sized for the longest slot: a decode step on one thread, or in one task). The calls
  // are built as they are found (a decode step makes 64 at qwen3-nano's batch 8, every step).
  const temps: number[] = [];
  const scratch = (floats: number) => {
    const p = rt.alloc(floats);
    temps.push(p);
    return p;
  };
  try {
    const decodes: KernelCall[] = [];
    const fwds: Omit<KernelArgs<'attnFwd'>, 'lse' | 'ldlse' | 'work'>[] = [];
    items.forEach((it, j) => {
      const s = it.slot;
      const start = s.tokens.length;
      const c = counts[j];
      writeSlotKeys(e, s, i, a.k + offsets[j] * KD * F, c, start);
      rt.k.axpy(a.v + offsets[j] * KD * F, s.v[i] + start * KD * F, c * KD, 1, 0); // a copy: x·1 is x
      if (c === 1) {
        for (let gh = 0; gh < nKv; gh++) {
          const keys = slotKeys(e, s, i, gh);
          decodes.push(
            attnDecodeCall({
              q: a.q + (offsets[j] * QD + gh * group * D) * F,
              ldq: D,
              kt: keys.kt,
              ldkt: keys.ldkt,
              ktTile: keys.ktTile,
              v: s.v[i] + gh * D * F,
              ldv: KD,
              o: a.o + (offsets[j] * QD + gh * group * D) * F,
              ldo: D,
              G: group,
              Tk: start + 1,
              D,
              scale: e.scale,
              work: shared ? shared.work : scratch(decodeScratchFloats(e, start + 1)),
            }),
          );
        }
        return;
      }
      if (shared) throw new Error('engine: shared attention scratch is for one token per slot');
      for (let h = 0; h < nH; h++) {
        const gh = Math.floor(h / group);
        fwds.push({
          q: a.q + (offsets[j] * QD + h * D) * F,
          ldq: QD,
          ...slotKeys(e, s, i, gh),
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
    if (shared) {
      rt.parallel([decodes]);
      return;
    }
    const fwdWork = allocAttnWork(rt, D, fwds.length);
    temps.push(...fwdWork);
    const lseRows = Math.max(nH, ...counts);
    const lseAll = scratch(Math.max(1, fwds.length * lseRows));
    rt.parallel([
      ...decodes.map((call) => [call]),
      ...fwds.map((args, t) => [attnFwdCall({ ...args, lse: lseAll + t * lseRows * F, ldlse: 1, work: fwdWork[t] })]),
    ]);
  } finally {
    for (const p of temps) rt.release(p);
  }
}

/**
 * An extend's scratch (pointers): per new token, or per item for `last`, `z` and the draws
 * (`draw`: a uniform per item, float64; `drawn`: sampleRows' output per item; 0 unless sampling).
 */
type ExtendBuffers = Record<
  | 'ids'
  | 'pos'
  | 'x'
  | 'rstd'
  | 'xn'
  | 'qraw'
  | 'kraw'
  | 'v'
  | 'q'
  | 'k'
  | 'o'
  | 'g'
  | 'u'
  | 'hmid'
  | 'last'
  | 'z'
  | 'draw'
  | 'drawn',
  number
>;
/** The buffers with one row per item rather than per new token. */
const PER_ITEM = new Set<keyof ExtendBuffers>(['last', 'z', 'draw', 'drawn']);

/** Floats per row of each buffer. */
function rowFloats(e: EngineCore): ExtendBuffers {
  const { H, QD, KD, I, nH, V } = e;
  return {
    ids: 1,
    pos: 1,
    x: H,
    rstd: Math.max(nH, 1),
    xn: H,
    qraw: QD,
    kraw: KD,
    v: KD,
    q: QD,
    k: KD,
    o: QD,
    g: I,
    u: I,
    hmid: H,
    last: H,
    z: V,
    draw: 2,
    drawn: 2 * SAMPLE_OUT,
  };
}

/** Every buffer advanced by r0 rows (a slice of a decode step, whose rows are its items). */
function rowsFrom(e: EngineCore, b: ExtendBuffers, r0: number): ExtendBuffers {
  const widths = rowFloats(e);
  const out = { ...b };
  for (const key of Object.keys(b) as (keyof ExtendBuffers)[])
    if (b[key] !== 0) out[key] = b[key] + r0 * widths[key] * F;
  return out;
}

/**
 * The decoder over the new tokens of `items` (ids and positions written in b): embedding, every
 * layer (keys and values into the slots), then the logits after each item's last token into b.z.
 * Kernel calls only, so a TaskRecorder can take it as one task.
 */
function forwardSlots(
  e: EngineCore,
  P: EngineParams,
  items: readonly ExtendItem[],
  counts: readonly number[],
  offsets: readonly number[],
  b: ExtendBuffers,
  shared?: TaskAttnScratch,
  sample?: { limit: number; work: number },
): void {
  const { rt, H, V } = e;
  const N = counts.reduce((n, c) => n + c, 0);
  rt.k.embedFwd(b.ids, N, e.weights.ptr(P.get(EMBED)), H, b.x);
  // One set for every layer; nothing reads a norm's rstd, xn1, xn2 or g again, so they are shared.
  const scratch: LayerActs = {
    x: b.x,
    rstd1: b.rstd,
    xn1: b.xn,
    qraw: b.qraw,
    rstdq: b.rstd,
    kraw: b.kraw,
    rstdk: b.rstd,
    v: b.v,
    q: b.q,
    k: b.k,
    kt: 0,
    o: b.o,
    lse: 0,
    g: b.g,
    u: b.u,
    a: b.g,
    hmid: b.hmid,
    rstd2: b.rstd,
    xn2: b.xn,
    lora: new Map(),
  };
  for (let i = 0; i < e.config.num_hidden_layers; i++) {
    layerForward(e, P, i, scratch, N, b.pos, b.x, (a) => attendSlots(e, i, items, counts, offsets, a, shared), false);
  }
  // Logits of each slot's last new token (in decode every row is one).
  let last = b.x;
  if (counts.some((c) => c !== 1)) {
    last = b.last;
    items.forEach((_, j) => rt.k.axpy(b.x + (offsets[j] + counts[j] - 1) * H * F, last + j * H * F, H, 1, 0));
  }
  rmsnormForward(e, P, FINAL_NORM, last, items.length, H, b.xn, b.rstd);
  mmPacked(rt, b.xn, H, e.weights.ptrPacked(P.get(headName(e.config))), b.z, V, items.length, V, H, 0);
  if (sample) rt.k.sampleRows(b.z, items.length, V, sample.limit, b.draw, sample.work, b.drawn);
}

/**
 * How a decode step of `items` slots splits over `threads` threads: [first item, items] per
 * slice, min(threads, items) slices of sizes within one of each other, or slices of a multiple of
 * 4 (gemm's 4×8 tile) where that adds at most one row to the largest.
 */
export function decodeSlices(items: number, threads: number): [number, number][] {
  const S = Math.min(threads, items);
  const even = Math.ceil(items / S);
  const by4 = Math.ceil(even / 4) * 4;
  const out: [number, number][] = [];
  if (by4 - even <= 1 && by4 < items) {
    for (let r0 = 0; r0 < items; r0 += by4) out.push([r0, Math.min(by4, items - r0)]);
    return out;
  }
  const base = Math.floor(items / S);
  let r0 = 0;
  for (let s = 0; s < S; s++) {
    const n = base + (s < items % S ? 1 : 0);
    out.push([r0, n]);
    r0 += n;
  }
  return out;
}

/**
 * A decode step as one dispatch: each slice's whole forward is one task, recorded, except the
 * last slice's (never larger than the others), which the calling thread runs itself while the
 * workers run the others: its recording does not come before the workers start, and the thread
 * that starts last takes the least.
 */
function forwardSlices(
  e: EngineCore,
  P: EngineParams,
  items: readonly ExtendItem[],
  b: ExtendBuffers,
  limit: number | null,
): void {
  const { rt } = e;
  const slices = decodeSlices(items.length, rt.threads);
  const own = slices[slices.length - 1];
  const rest = slices.slice(0, -1);
  const recorders: TaskRecorder[] = [];
  try {
    const tasks = rest.map(([r0, n]) => {
      const rec = new TaskRecorder(rt);
      recorders.push(rec);
      forwardSlice(e, P, items, b, limit, rec.runtime, r0, n);
      return rec.calls;
    });
    rt.parallelBeside(tasks, () => forwardSlice(e, P, items, b, limit, callingThreadRuntime(rt), own[0], own[1]));
  } finally {
    for (const rec of recorders) rec.releaseAll();
  }
}

/**
 * Slots [r0, r0 + n) of a decode step from embedding to drawn tokens, on `sub` (a TaskRecorder's
 * runtime, or the calling thread's): its attention calls one after another on one scratch, for
 * its longest slot, and its own sampling scratch.
 */
function forwardSlice(
  e: EngineCore,
  P: EngineParams,
  items: readonly ExtendItem[],
  b: ExtendBuffers,
  limit: number | null,
  sub: EngineRuntime,
  r0: number,
  n: number,
): void {
  const slice = items.slice(r0, r0 + n);
  const shared = { work: sub.alloc(decodeScratchFloats(e, Math.max(...slice.map((it) => it.slot.tokens.length + 1)))) };
  const sample = limit === null ? undefined : { limit, work: sub.alloc(2 * limit) };
  try {
    const ones = new Array<number>(n).fill(1);
    const offsets = ones.map((_, j) => j);
    forwardSlots({ ...e, rt: sub }, P, slice, ones, offsets, rowsFrom(e, b, r0), shared, sample);
  } finally {
    sub.release(shared.work);
    if (sample) sub.release(sample.work);
  }
}

/**
 * Appends `tokens` to each slot (positions continue from the slot's length) and returns the
 * next-token logits of each slot after its last new token: [items, V], a copy.
 */
export function runExtend(e: EngineCore, P: EngineParams, items: readonly ExtendItem[]): Float32Array {
  return extendWith(e, P, items, null) as Float32Array;
}

/**
 * runExtend, then each slot's next token drawn from its logits as generate.ts's sampleFromLogits
 * draws it (`request.draws[j]`: item j's uniform in [0, 1), or < 0 for greedy; the choice among
 * the first `request.limit` ids): [items, SAMPLE_OUT] float64 (sampling.ts reads a row).
 */
export function runExtendSampled(
  e: EngineCore,
  P: EngineParams,
  items: readonly ExtendItem[],
  request: SampleRequest,
): Float64Array {
  const { limit, draws } = request;
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= e.V))
    throw new Error(`engine.extendSampled: limit must be an integer in [1, ${e.V}], got ${limit}`);
  if (draws.length !== items.length)
    throw new Error(`engine.extendSampled: ${draws.length} draws for ${items.length} slots`);
  return extendWith(e, P, items, request) as Float64Array;
}

function extendWith(
  e: EngineCore,
  P: EngineParams,
  items: readonly ExtendItem[],
  request: SampleRequest | null,
): Float32Array | Float64Array {
  const { rt, V } = e;
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
  const isDecode = N === items.length;
  const pinned = listPassTensors(e.config, P);
  e.weights.pin(pinned);
  const temps: number[] = [];
  try {
    const widths = rowFloats(e);
    const b = {} as ExtendBuffers;
    for (const key of Object.keys(widths) as (keyof ExtendBuffers)[]) {
      const rows = PER_ITEM.has(key) ? items.length : N;
      const isUnused = (key === 'last' && isDecode) || ((key === 'draw' || key === 'drawn') && !request);
      b[key] = isUnused ? 0 : rt.alloc(rows * widths[key]);
      if (b[key] !== 0) temps.push(b[key]);
    }
    if (request) new Float64Array(rt.memory.buffer, b.draw, items.length).set(request.draws);
    const i32 = rt.i32;
    items.forEach((it, j) => {
      const start = it.slot.tokens.length;
      for (let t = 0; t < counts[j]; t++) {
        const id = it.tokens[t];
        if (!Number.isInteger(id) || id < 0 || id >= V)
          throw new Error(`engine.extend: token ${id} is not in [0, ${V})`);
        i32[(b.ids >> 2) + offsets[j] + t] = id;
        i32[(b.pos >> 2) + offsets[j] + t] = start + t;
      }
    });
    // A decode step on several threads: slots are independent through every layer, so each
    // thread runs a slice of them from embedding to logits (one dispatch instead of many).
    const limit = request ? request.limit : null;
    if (isDecode && items.length > 1 && rt.threads > 1) forwardSlices(e, P, items, b, limit);
    else if (isDecode && rt.threads === 1) forwardSlice(e, P, items, b, limit, rt, 0, items.length);
    else {
      const work = limit === null ? 0 : rt.alloc(2 * limit);
      if (work !== 0) temps.push(work);
      forwardSlots(e, P, items, counts, offsets, b, undefined, limit === null ? undefined : { limit, work });
    }
    for (const [j, it] of items.entries()) for (let t = 0; t < counts[j]; t++) it.slot.tokens.push(it.tokens[t]);
    if (request) return new Float64Array(rt.memory.buffer, b.drawn, items.length * SAMPLE_OUT).slice();
    return rt.read(b.z, items.length * V);
  } finally {
    for (const p of temps) rt.release(p);
    e.weights.unpin(pinned);
  }
}
