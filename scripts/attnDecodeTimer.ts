/**
 * A timer of the decode attention kernels alone (not a test): attnFwd (the flash kernel with qStep
 * 0, what decode used before) against attnDecode, on one thread, at qwen3-nano's decode shape: 2
 * query heads per KV head, head_dim 48, TK cached keys. "warm": one cache buffer read again and
 * again; "cold": 32 buffers (8 slots × 4 layers, a decode step's caches) read in turn, the bytes a
 * step streams. Used for bench/2026-12-04-decode-attention.txt.
 *   TK=1300 CAP=2048 node --import tsx scripts/attnDecodeTimer.ts
 */
import { EngineRuntime } from '../src/model/engine/runtime';

const D = 48;
const G = 2;
const KD = 2 * D;
const TK = Number(process.env.TK ?? 1300);
const CAP = Number(process.env.CAP ?? 2048);
const BUFFERS = 32;
const rt = new EngineRuntime(256 << 20, false);
const wave = (n: number, s: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898 + s) * 0.5);
const kts = Array.from({ length: BUFFERS }, (_, b) => rt.allocFrom(wave(KD * CAP, b)));
const vs = Array.from({ length: BUFFERS }, (_, b) => rt.allocFrom(wave(CAP * KD, b + 99)));
const q = rt.allocFrom(wave(2 * G * D, 7));
const o = rt.alloc(2 * G * D);
const lse = rt.alloc(2 * G);
const fwdWork = rt.alloc(rt.k.attnScratchFloats(D));
const decWork = rt.alloc(rt.k.attnDecodeScratchFloats(G, TK, D));
const scale = 1 / Math.sqrt(D);

/** ms for one pass over `buffers` cache buffers × 2 KV heads with the kernel. */
function pass(kernel: 'attnFwd' | 'attnDecode', buffers: number, reps: number): number {
  const t0 = performance.now();
  for (let s = 0; s < reps; s++)
    for (let b = 0; b < buffers; b++)
      for (let gh = 0; gh < 2; gh++) {
        const qh = q + gh * G * D * 4;
        const kt = kts[b] + gh * D * CAP * 4;
        const v = vs[b] + gh * D * 4;
        if (kernel === 'attnFwd')
          rt.k.attnFwd(qh, D, kt, CAP, v, KD, o, D, lse, 1, G, TK - 1, 0, TK, D, scale, fwdWork);
        else rt.k.attnDecode(qh, D, kt, CAP, v, KD, o, D, G, TK, D, scale, decWork);
      }
  return (performance.now() - t0) / reps;
}

const mb = (BUFFERS * 2 * TK * KD * 4) / 1e6;
for (let rep = 0; rep < 3; rep++) {
  const warmF = (pass('attnFwd', 1, 1000) * 1000) / 2;
  const warmD = (pass('attnDecode', 1, 1000) * 1000) / 2;
  const coldF = pass('attnFwd', BUFFERS, 50);
  const coldD = pass('attnDecode', BUFFERS, 50);
  console.log(
    `TK ${TK}: warm ${warmF.toFixed(1)} vs ${warmD.toFixed(1)} µs a call (attnFwd vs attnDecode); ` +
      `cold ${coldF.toFixed(2)} vs ${coldD.toFixed(2)} ms a step = ${(mb / coldF).toFixed(1)} vs ${(mb / coldD).toFixed(1)} GB/s of cache`,
  );
}
