/**
 * KV-cache slots for decode: per layer, keys as kᵀ in tiles and values as [cap][nKv·D] rows, for
 * `cap` positions (a multiple of 64) that grow by doubling. `tokens` are the ids whose keys and
 * values the slot holds.
 *
 * Key tiles: each KV head's kᵀ is cap / 16 tiles of [D, 16] floats, one after another, so the key
 * of position j, head g, dimension d sits at g·cap·D + (j / 16)·16·D + d·16 + j mod 16. attnDecode
 * reads 16 keys as one contiguous D·64 bytes (a [D, cap] plane spread them over D rows cap·4 bytes
 * apart, which streamed at about half the core's bandwidth); attnFwd reads the same tiles by
 * ktTile (assembly/attention.ts). The layout moves addresses only: every sum is the same.
 *
 *   head g:  [ tile 0: d=0 │ j0..j15 ][ d=1 │ j0..j15 ] … [ d=D−1 │ j0..j15 ] [ tile 1: d=0 │ j16..j31 ] …
 */
import { F, type EngineCore } from './core';

/** Keys per kᵀ tile (assembly/attention.ts KT_TILE). */
export const KT_TILE = 16;
/** ktTile of a [D, ld] plane: the next tile is the next 16 columns. */
export const KT_PLANE = KT_TILE;

/** One KV-cache slot: keys as kᵀ tiles and values as [cap][nKv·D] rows, per layer. */
export interface KvSlot {
  tokens: number[];
  cap: number;
  kt: number[];
  v: number[];
}

/** The kᵀ arguments of head g of layer i's keys in `slot` (attnFwd / attnDecode). */
export function slotKeys(
  e: EngineCore,
  slot: KvSlot,
  i: number,
  g: number,
): { kt: number; ldkt: number; ktTile: number } {
  return { kt: slot.kt[i] + g * e.D * slot.cap * F, ldkt: KT_TILE, ktTile: KT_TILE * e.D };
}

/**
 * Writes n keys, rows of [nKv·D] from `src` (row stride KD floats), into layer i's tiles of `slot`
 * at positions p0 … p0 + n − 1: per head, one transpose per run of positions inside one tile.
 */
export function writeSlotKeys(e: EngineCore, slot: KvSlot, i: number, src: number, n: number, p0: number): void {
  const { D, KD } = e;
  for (let g = 0; g < e.nKv; g++) {
    const head = slotKeys(e, slot, i, g).kt;
    for (let r = 0; r < n;) {
      const p = p0 + r;
      const run = Math.min(n - r, KT_TILE - (p % KT_TILE));
      const dst = head + (Math.floor(p / KT_TILE) * KT_TILE * D + (p % KT_TILE)) * F;
      e.rt.k.transpose(src + (r * KD + g * D) * F, KD, dst, KT_TILE, run, D);
      r += run;
    }
  }
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
  const { D, KD } = e;
  // Whole tiles: a head's first ⌈length / 16⌉ tiles are one run of floats in either slot.
  const tileFloats = Math.ceil(length / KT_TILE) * KT_TILE * D;
  for (let i = 0; i < e.config.num_hidden_layers; i++) {
    for (let g = 0; g < e.nKv; g++) {
      const s = (src.kt[i] >> 2) + g * D * src.cap;
      f32.copyWithin((dst.kt[i] >> 2) + g * D * dst.cap, s, s + tileFloats);
    }
    f32.copyWithin(dst.v[i] >> 2, src.v[i] >> 2, (src.v[i] >> 2) + length * KD);
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
