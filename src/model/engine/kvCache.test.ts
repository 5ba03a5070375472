// The KV cache's key tiles (kvCache.ts): keys written at any positions, in runs that start and end
// inside tiles, sit where the layout says (position j, head g, dimension d at
// g·cap·D + ⌊j/16⌋·16·D + d·16 + j mod 16), and a copy or a slot's growth keeps every one of them.
import { describe, expect, it } from 'vitest';
import { getQwen3Preset } from '../qwen3/config';
import { createEngineCore } from './core';
import { copySlot, createSlot, ensureSlotCapacity, KT_TILE, writeSlotKeys, type KvSlot } from './kvCache';
import { EngineRuntime } from './runtime';

const config = { ...getQwen3Preset('qwen3-nano'), num_hidden_layers: 2 };
const e = createEngineCore(config, new EngineRuntime(16 << 20));
const { D, KD, nKv } = e;

/** Key (position j, head g, dimension d) as the test writes it: a value no two entries share. */
const key = (layer: number, j: number, g: number, d: number) => layer * 1e6 + j * 1000 + g * 100 + d;

/** Every written key of `slot`, read back by the layout's formula, against key(). */
function expectKeys(slot: KvSlot, n: number): void {
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const all = e.rt.read(slot.kt[i], KD * slot.cap);
    const wrong: string[] = [];
    for (let g = 0; g < nKv; g++)
      for (let j = 0; j < n; j++)
        for (let d = 0; d < D; d++) {
          const got = all[g * slot.cap * D + Math.floor(j / 16) * 16 * D + d * 16 + (j % 16)];
          if (got !== key(i, j, g, d)) wrong.push(`layer ${i} j ${j} g ${g} d ${d}: ${got}`);
        }
    expect(wrong.slice(0, 5)).toEqual([]);
  }
}

describe('KV cache key tiles', () => {
  it('are 16 keys wide, the width the attention kernels read (with a 64-position capacity step)', () => {
    expect(KT_TILE).toBe(16);
    expect(createSlot(e, 1).cap % KT_TILE).toBe(0);
  });

  it('hold keys written in runs that start and end inside tiles where the layout puts them', () => {
    const slot = createSlot(e, 100);
    // Runs of 5, 1, 27, 16 and 1 positions: inside a tile, across two and three tiles, tile-aligned.
    const runs = [5, 1, 27, 16, 1];
    let p = 0;
    for (const n of runs) {
      for (let i = 0; i < config.num_hidden_layers; i++) {
        const rows = new Float32Array(n * KD);
        for (let r = 0; r < n; r++)
          for (let g = 0; g < nKv; g++) for (let d = 0; d < D; d++) rows[r * KD + g * D + d] = key(i, p + r, g, d);
        const src = e.rt.allocFrom(rows);
        writeSlotKeys(e, slot, i, src, n, p);
        e.rt.release(src);
      }
      p += n;
      slot.tokens.push(...new Array<number>(n).fill(0));
    }
    expectKeys(slot, p);

    // A copy of the first 33 positions into a slot of another capacity, then growth past 64.
    const other = createSlot(e, 200);
    copySlot(e, slot, other, 33);
    expect(other.cap).not.toBe(slot.cap);
    expectKeys(other, 33);
    ensureSlotCapacity(e, slot, 300);
    expect(slot.cap).toBeGreaterThanOrEqual(300);
    expectKeys(slot, p);
  });
});
