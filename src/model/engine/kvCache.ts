/**
 * KV-cache slots for decode: per layer, keys as [nKv][D][cap] planes (attnFwd reads kᵀ
 * that way) and values as [cap][nKv·D] rows, for `cap` positions (a multiple of 64) that
 * grow by doubling. `tokens` are the ids whose keys and values the slot holds.
 */
import type { EngineCore } from './core';

/** One KV-cache slot: keys as [nKv][D][cap] planes and values as [cap][nKv·D] rows, per layer. */
export interface KvSlot {
  tokens: number[];
  cap: number;
  kt: number[];
  v: number[];
}

export function createSlot(e: EngineCore, capacity: number): KvSlot {
  const cap = Math.max(64, Math.ceil(capacity / 64) * 64);
  const slot: KvSlot = { tokens: [], cap, kt: [], v: [] };
  for (let i = 0; i < e.config.num_hidden_layers; i++) {
    slot.kt.push(e.rt.alloc(e.KD * cap));
    slot.v.push(e.rt.alloc(e.KD * cap));
  }
  return slot;
}

export function freeSlot(e: EngineCore, slot: KvSlot): void {
  for (const p of [...slot.kt, ...slot.v]) e.rt.release(p);
  slot.kt = [];
  slot.v = [];
  slot.tokens = [];
}

/** Copies the first `length` cached positions of `src` into `dst` (dst.cap ≥ length). */
export function copySlot(e: EngineCore, src: KvSlot, dst: KvSlot, length: number): void {
  const f32 = e.rt.f32;
  for (let i = 0; i < e.config.num_hidden_layers; i++) {
    for (let row = 0; row < e.KD; row++) {
      const s = (src.kt[i] >> 2) + row * src.cap;
      f32.copyWithin((dst.kt[i] >> 2) + row * dst.cap, s, s + length);
    }
    f32.copyWithin(dst.v[i] >> 2, src.v[i] >> 2, (src.v[i] >> 2) + length * e.KD);
  }
  dst.tokens = src.tokens.slice(0, length);
}

/** Grows a slot to hold `needed` positions. */
export function ensureSlotCapacity(e: EngineCore, slot: KvSlot, needed: number): void {
  if (needed <= slot.cap) return;
  const bigger = createSlot(e, Math.max(needed, slot.cap * 2));
  copySlot(e, slot, bigger, slot.tokens.length);
  const tokens = slot.tokens;
  freeSlot(e, slot);
  Object.assign(slot, bigger, { tokens });
}
