// The benchmark's result structure on a tiny config with one iteration (no timing
// assertions: a benchmark, not a test), the table's ratio arithmetic, and the PyTorch side
// on the same tiny shapes when a python3 with torch is installed.
import { beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../model/backend';
import { createTinyQwen3Config } from '../../model/weights/testFolders';
import { BENCH_METRICS, findTorchPython, formatBenchTable, listBenchCases, runTfjsBench, runTorchBench, type BenchReport } from './bench';

const TINY = createTinyQwen3Config({ vocab_size: 32, tie_word_embeddings: false, max_position_embeddings: 128 });

describe('pact bench', () => {
  beforeAll(async () => {
    await selectBackend('cpu');
  });

  it('measures the three throughputs of each case on the current backend', async () => {
    const cases = listBenchCases({ tiny: TINY }, 1);
    expect(cases[0].train).toEqual({ batch: 2, seq: 64, iters: 1 });
    expect(cases[0].gen).toEqual({ batch: 2, prompt: 16, new: 16, iters: 1 });
    // Smaller shapes for the test's sake.
    const rows = await runTfjsBench([{ ...cases[0], train: { batch: 2, seq: 16, iters: 1 }, gen: { batch: 2, prompt: 4, new: 3, iters: 1 } }], 'cpu');
    expect(rows.length).toBe(1);
    expect(rows[0].name).toBe('tiny');
    expect(rows[0].backend).toBe('cpu');
    // embed 32·16 = 512, lm_head (untied) 512, final norm 16; the layer: 2 norms 2·16, q 16·16 = 256,
    // k, v 2·(8·16) = 256, o 256, q_norm + k_norm 2·8, mlp 3·(32·16) = 1536 → 2352. Total 3392.
    expect(rows[0].params).toBe(3392);
    for (const m of [...BENCH_METRICS, 'logprob_tokens_per_s', 'train_lora_tokens_per_s'] as const) expect(Number.isFinite(rows[0][m]) && rows[0][m] > 0, m).toBe(true);
    // Training state, float32: AdamW's two moments of every weight, 2 · 3392 · 4 = 27136 bytes.
    // LoRA rank 8 on q [16, 16] and v [8, 16]: A_q 8·16 + B_q 16·8 + A_v 8·16 + B_v 8·8 = 448
    // values, held with their two moments: 3 · 448 · 4 = 5376 bytes.
    expect(rows[0].train_state_bytes).toBe(27136);
    expect(rows[0].train_lora_state_bytes).toBe(5376);
  });

  it('prints ours / PyTorch ratios', () => {
    const report: BenchReport = {
      date: 'd',
      node: 'v20',
      rows: [
        {
          name: 'tiny',
          backend: 'wasm',
          params: 3392,
          train_tokens_per_s: 100,
          gen_cache_tokens_per_s: 30,
          gen_nocache_tokens_per_s: 5,
          logprob_tokens_per_s: 400,
          train_lora_tokens_per_s: 150,
          train_state_bytes: 1 << 20,
          train_lora_state_bytes: 1 << 18,
        },
      ],
      torch: { torch: '1.13', threads: 1, results: [{ name: 'tiny', train_tokens_per_s: 50, gen_cache_tokens_per_s: 60, gen_nocache_tokens_per_s: 5 }] },
    };
    const lines = formatBenchTable(report);
    // 100/50 = 2.00, 30/60 = 0.50, 5/5 = 1.00
    expect(lines[2]).toMatch(/^tiny\s+wasm\s+0\.00M\s+100\.0 \(2\.00x\)\s+30\.0 \(0\.50x\)\s+5\.0 \(1\.00x\)$/);
    expect(lines[3]).toMatch(/^tiny\s+torch 1t\s+50\.0\s+60\.0\s+5\.0$/);
    expect(lines).toContain('(x) = ours / PyTorch 1.13 on the same machine, same shapes');
    expect(formatBenchTable({ ...report, torch: undefined, torchSkipped: 'no torch' })).toContain('PyTorch not run: no torch');
    // a read at 400 tok/s against a step at 100: 100/400 = 0.25 of a step's time
    expect(lines).toContain("  tiny wasm: 400.0 tok/s, 0.25x a training step's time");
    // 150/100 = 1.50; 0.25 MiB of 1 MiB = 0.250
    expect(lines.at(-1)).toBe('  tiny wasm: train 150.0 tok/s (1.50x the full step); training state 0.25 MiB against 1.00 MiB (0.250x)');
  });

  const torchPython = findTorchPython().python;
  it.skipIf(!torchPython)('runs the same tiny case in PyTorch and returns the same fields', () => {
    const [c] = listBenchCases({ tiny: TINY }, 1);
    const result = runTorchBench(torchPython!, [{ ...c, train: { batch: 2, seq: 16, iters: 1 }, gen: { batch: 2, prompt: 4, new: 3, iters: 1 } }], 1);
    expect(result.threads).toBe(1);
    expect(result.results.map((r) => r.name)).toEqual(['tiny']);
    for (const m of BENCH_METRICS) expect(result.results[0][m]).toBeGreaterThan(0);
  });
});
