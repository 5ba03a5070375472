/**
 * Test support (kernels.test.ts on the plain build, kernelsFma.test.ts on the fma build): gemmPacked
 * on packTranspose's panels against gemm on the row-major B, bit for bit, over decode and training
 * shapes (rows 1–20 and 64; columns in whole panels, with a tail of 1–7, fewer than 8 in all, and
 * qwen3-nano's vocabulary 1,022; depths 1–600; with and without accumulation; strides past the
 * width), whole and split into column blocks at panel offsets (packedColumns) as the threads split.
 */
import type { EngineRuntime } from './runtime';
import { packedColumns } from './weights';
import { values } from './kernelTestData';

export const PACKED_ROWS = [...Array.from({ length: 20 }, (_, i) => i + 1), 64];
export const PACKED_COLS = [6, 13, 8, 16, 24, 44, 100, 1022];
export const PACKED_DEPTHS = [1, 2, 3, 7, 64, 191, 600];

/** W [rows, cols] → Wᵀ [cols, rows] in panels of 8 columns, then the tail block, written out from the layout's definition. */
export function packReference(w: Float32Array, rows: number, cols: number): Float32Array {
  const K = cols;
  const N = rows;
  const N8 = N & ~7;
  const t = N - N8;
  const out = new Float32Array(N * K);
  for (let s = 0; s < N8 / 8; s++)
    for (let k = 0; k < K; k++) for (let c = 0; c < 8; c++) out[(s * K + k) * 8 + c] = w[(8 * s + c) * K + k];
  for (let k = 0; k < K; k++) for (let c = 0; c < t; c++) out[N8 * K + k * t + c] = w[(N8 + c) * K + k];
  return out;
}

function sameBits(x: Float32Array, y: Float32Array): boolean {
  const a = new Uint32Array(x.buffer, x.byteOffset, x.length);
  const b = new Uint32Array(y.buffer, y.byteOffset, y.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Runs every case on `rt`'s kernels; returns how many products were compared and which differed. */
export function checkPackedGemm(rt: EngineRuntime): { products: number; mismatches: string[] } {
  const mismatches: string[] = [];
  let products = 0;
  const k = rt.k;
  for (const N of PACKED_COLS) {
    for (const K of PACKED_DEPTHS) {
      const W = values(N * K, 7 * N + K); // [N, K]: the weight as stored, [out, in]
      const B = new Float32Array(K * N); // Wᵀ [K, N] row-major
      for (let n = 0; n < N; n++) for (let kk = 0; kk < K; kk++) B[kk * N + n] = W[n * K + kk];
      const Mmax = PACKED_ROWS[PACKED_ROWS.length - 1];
      const lda = K + 3;
      const ldc = N + 5;
      const ptrs: number[] = [];
      const put = (x: Float32Array) => {
        const p = rt.allocFrom(x);
        ptrs.push(p);
        return p;
      };
      try {
        const w = put(W);
        const b = put(B);
        const bp = put(new Float32Array(N * K).fill(NaN));
        k.packTranspose(w, N, K, bp);
        if (!sameBits(rt.read(bp, N * K), packReference(W, N, K)))
          mismatches.push(`packTranspose N=${N} K=${K}: not the panel layout`);
        const a = put(values(Mmax * lda, N + 3 * K)) + 4; // A one float past its buffer's start
        const C0 = values(Mmax * ldc + 1, K + N);
        const c1 = put(C0);
        const c2 = put(C0);
        for (const M of PACKED_ROWS) {
          for (const acc of [0, 1]) {
            const floats = M * ldc + 1;
            rt.write(c1, C0.subarray(0, floats));
            rt.write(c2, C0.subarray(0, floats));
            k.gemm(a, lda, b, N, c1 + 4, ldc, M, N, K, acc);
            k.gemmPacked(a, lda, bp, c2 + 4, ldc, M, N, K, acc);
            products++;
            const expected = rt.read(c1, floats);
            if (!sameBits(expected, rt.read(c2, floats)))
              mismatches.push(`gemmPacked M=${M} N=${N} K=${K} acc=${acc}: not gemm's bits`);
            // Column blocks at panel offsets, as mmPacked splits for few rows.
            if (acc === 0 || M > 20) continue;
            for (const step of [8, 16]) {
              rt.write(c2, C0.subarray(0, floats));
              for (let j0 = 0; j0 < N; j0 += step)
                k.gemmPacked(a, lda, packedColumns(bp, K, j0), c2 + 4 + j0 * 4, ldc, M, Math.min(step, N - j0), K, 1);
              products++;
              if (!sameBits(expected, rt.read(c2, floats)))
                mismatches.push(`gemmPacked M=${M} N=${N} K=${K} in blocks of ${step} columns: not gemm's bits`);
            }
          }
        }
      } finally {
        for (const p of ptrs) rt.release(p);
      }
    }
  }
  return { products, mismatches };
}
