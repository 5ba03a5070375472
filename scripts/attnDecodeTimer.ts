/**
 * A timer of the decode attention kernel alone (not a test): attnDecode on one thread at
 * qwen3-nano's decode shape (2 query heads per KV head, head_dim 48, TK cached keys; kᵀ in the
 * KV cache's [D, 16] tiles), with the values in either layout: "rows", [cap][nKv·D] (both KV
 * heads' values of a position side by side, ldv nKv·D), or "heads", [nKv][cap][D] (each head's
 * values one contiguous run, ldv D). "warm": one cache buffer read again and again; "cold": 32
 * buffers (8 slots × 4 layers, a decode step's caches) read in turn, the bytes a step streams.
 * The layouts are timed in turn, ROUNDS times. Used for bench/2026-12-04-decode-attention.txt and
 * bench/2026-12-05-values-by-head.txt.
 *   TK=1300 CAP=2048 ROUNDS=3 node --import tsx scripts/attnDecodeTimer.ts
 */
import { EngineRuntime } from '../src/model/engine/runtime';

const D = 48;
const G = 2;
const NKV = 2;
const KD = NKV * D;
const TK = Number(process.env.TK ?? 1300);
const CAP = Number(process.env.CAP ?? 2048);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BUFFERS = 32;
const rt = new EngineRuntime(512 << 20, false);
const wave = (n: number, s: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + s) * 0.5);
const kts = Array.from({ length: BUFFERS }, (_, b) => rt.allocFrom(wave(KD * CAP, b)));
const vs = Array.from({ length: BUFFERS }, (_, b) => rt.allocFrom(wave(CAP * KD, b + 99)));
const q = rt.allocFrom(wave(NKV * G * D, 7));
const o = rt.alloc(NKV * G * D);
const work = rt.alloc(rt.k.attnDecodeScratchFloats(G, TK, D));
const scale = 1 / Math.sqrt(D);

type Layout = 'rows' | 'heads';

/** ms for one pass over `buffers` cache buffers × the KV heads, values in `layout`. */
function pass(layout: Layout, buffers: number, reps: number): number {
  const t0 = performance.now();
  for (let s = 0; s < reps; s++)
    for (let b = 0; b < buffers; b++)
      for (let gh = 0; gh < NKV; gh++) {
        const kt = kts[b] + gh * D * CAP * 4;
        const v = layout === 'rows' ? vs[b] + gh * D * 4 : vs[b] + gh * CAP * D * 4;
        rt.k.attnDecode(
          q + gh * G * D * 4,
          D,
          kt,
          16,
          16 * D,
          v,
          layout === 'rows' ? KD : D,
          o + gh * G * D * 4,
          D,
          G,
          TK,
          D,
          scale,
          work,
        );
      }
  return (performance.now() - t0) / reps;
}

/** The outputs of one call per head on buffer 0, both layouts holding the same values. */
function sameOutputs(): boolean {
  const f32 = () => new Float32Array(rt.memory.buffer);
  const rows = f32().slice(vs[0] >> 2, (vs[0] >> 2) + CAP * KD);
  const heads = new Float32Array(CAP * KD);
  for (let j = 0; j < CAP; j++)
    for (let g = 0; g < NKV; g++) for (let d = 0; d < D; d++) heads[g * CAP * D + j * D + d] = rows[j * KD + g * D + d];
  const out = (layout: Layout) => {
    f32().set(layout === 'rows' ? rows : heads, vs[0] >> 2);
    pass(layout, 1, 1);
    return f32().slice(o >> 2, (o >> 2) + NKV * G * D);
  };
  const a = out('rows');
  const b = out('heads');
  f32().set(rows, vs[0] >> 2);
  return a.every((x, i) => Object.is(x, b[i]));
}

console.log(`attnDecode, TK ${TK}, cap ${CAP}: the same bits from both layouts: ${sameOutputs()}`);
const mb = (BUFFERS * 2 * TK * KD * 4) / 1e6;
for (let round = 0; round < ROUNDS; round++) {
  const line: string[] = [];
  for (const layout of (round % 2 ? ['heads', 'rows'] : ['rows', 'heads']) as Layout[]) {
    const warm = (pass(layout, 1, 1000) * 1000) / NKV;
    const cold = pass(layout, BUFFERS, 50);
    line.push(
      `${layout}: warm ${warm.toFixed(1)} µs a call, cold ${cold.toFixed(2)} ms a step (${(mb / cold).toFixed(1)} GB/s)`,
    );
  }
  console.log(`round ${round + 1}: ${line.join('; ')}`);
}
