// The benchmark's structure (no timing assertions: a benchmark, not a test): the model-level
// cases on a tiny config, the FLOP count by hand, a whole step of the smoke experiment, the
// report's ratios and its refusal to print one against a reference BLAS, and the PyTorch side
// on a tiny config when python3 has torch.
import { beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { selectBackend } from '../../model/backend';
import { getNodeWasmPaths } from '../../model/qwen3/node';
import { createTinyQwen3Config } from '../../model/weights/testFolders';
import {
  countTrainFlops,
  findTorchPython,
  formatBenchReport,
  median,
  runPairs,
  describeCpu,
  engineCaseRates,
  pairMedians,
  runTorchReal,
  type BenchReport,
  type TorchReal,
} from './bench';
import { decodeStepWork, runKernelCases } from './benchKernels';
import { runStepBench } from './benchStep';

const TINY = createTinyQwen3Config({ vocab_size: 32, tie_word_embeddings: false, max_position_embeddings: 128 });

describe('pact bench', () => {
  beforeAll(async () => {
    await selectBackend('wasm', { wasmPaths: getNodeWasmPaths() });
  });

  it('counts a training step’s matmul FLOPs as the formula says', () => {
    // TINY: H 16, head_dim 8, 2 q heads, 1 kv head, I 32, 1 layer, V 32 (createTinyQwen3Config).
    const c = TINY;
    const H = c.hidden_size;
    const d = c.head_dim;
    const layer =
      2 * H * (c.num_attention_heads + 2 * c.num_key_value_heads) * d +
      2 * c.num_attention_heads * d * H +
      6 * H * c.intermediate_size +
      4 * c.num_attention_heads * d * 10;
    expect(countTrainFlops(c, 3, 10)).toBe(3 * 3 * 10 * (c.num_hidden_layers * layer + 2 * H * c.vocab_size));
    expect(countTrainFlops({ ...c, num_hidden_layers: 2 }, 1, 4)).toBeGreaterThan(countTrainFlops(c, 1, 4));
    // Causal: the attention term 2·nh·d·(T + 1) (keys a query sees, (T + 1)/2 on average) for 4·nh·d·T.
    const causalLayer = layer - 4 * c.num_attention_heads * d * 10 + 2 * c.num_attention_heads * d * 11;
    expect(countTrainFlops(c, 3, 10, true)).toBe(
      3 * 3 * 10 * (c.num_hidden_layers * causalLayer + 2 * H * c.vocab_size),
    );
  });

  it('measures decode, the training step, the read and the LoRA step of a case', async () => {
    const [r] = await runKernelCases([
      {
        name: 'tiny',
        config: TINY,
        decode: { batch: 2, context: 6, newTokens: 20 },
        train: { batch: 2, seq: 16, iters: 1 },
      },
    ]);
    expect(r.name).toBe('tiny');
    // embed 32·16 = 512, lm_head (untied) 512, final norm 16; the layer: 2 norms 2·16, q 16·16 = 256,
    // k, v 2·(8·16) = 256, o 256, q_norm + k_norm 2·8, mlp 3·(32·16) = 1536 → 2352. Total 3392.
    expect(r.params).toBe(3392);
    expect(r.train.flops_causal).toBeLessThan(r.train.flops);
    expect(r.train.gflops_causal / r.train.gflops).toBeCloseTo(r.train.flops_causal / r.train.flops, 9);
    for (const v of [
      r.decode.decode_tokens_per_s,
      r.decode.ms_per_step_first,
      r.decode.ms_per_step_last,
      r.train.tokens_per_s,
      r.train.gflops,
      r.read.tokens_per_s,
      r.lora.tokens_per_s,
    ]) {
      expect(Number.isFinite(v) && v > 0).toBe(true);
    }
    // Training state, float32: AdamW's two moments of every weight, 2 · 3392 · 4 = 27136 bytes.
    // LoRA rank 8 on q [16, 16] and v [8, 16]: A_q 8·16 + B_q 16·8 + A_v 8·16 + B_v 8·8 = 448
    // values, held with their two moments: 3 · 448 · 4 = 5376 bytes.
    expect(r.train.state_bytes).toBe(27136);
    expect(r.lora.state_bytes).toBe(5376);
  });

  it('measures a whole step of an experiment file by phase, with its tokens and peak memory', async () => {
    const [s] = await runStepBench(path.resolve('experiments/smoke.json'), { run: 'pact', steps: 1, useEngine: true });
    expect(s.run).toBe('pact-s1');
    expect(s.path).toBe('engine');
    expect(s.step).toBe(1);
    expect(s.tokens.generated).toBeGreaterThan(0);
    expect(s.tokens.rollout).toBeGreaterThan(s.tokens.generated);
    expect(s.rollouts.decode_tokens).toBeGreaterThan(0);
    expect(s.rollouts.prefill_tokens).toBeGreaterThan(0);
    expect(s.rollouts.tool_calls).toBeGreaterThanOrEqual(0);
    const phases = s.phases.rollouts_s + s.phases.logprobs_s + s.phases.update_s;
    expect(phases).toBeLessThanOrEqual(s.seconds + 1e-3);
    expect(s.memory.engine_peak_bytes).toBeGreaterThan(0);
    expect(s.memory.rss_peak_bytes).toBeGreaterThan(s.memory.engine_peak_bytes!);
    expect(Number.isFinite(s.metrics.loss)).toBe(true);
  }, 180_000);

  it('prints ours / PyTorch, and no ratio against a reference BLAS', () => {
    const report: BenchReport = {
      date: 'd',
      node: 'v20',
      cpu: 'cpu',
      cores: 2,
      matmul: { wasm: { engine: 20, tfjs: 10, simdPeak: 40, readGBs: 10 } },
      kernels: [
        {
          name: 'tiny',
          backend: 'wasm',
          path: 'engine',
          params: 3392,
          decode: {
            batch: 8,
            context: 1024,
            new_tokens: 576,
            prefill_s: 1,
            decode_s: 4,
            decode_tokens_per_s: 600,
            ms_per_step_first: 10,
            ms_per_step_last: 14,
            bytes_per_step: 30e6,
            flops_per_step: 80e6,
          },
          train: {
            batch: 8,
            seq: 1536,
            step_s: 10,
            tokens_per_s: 1200,
            flops: 1e11,
            gflops: 10,
            flops_causal: 6e10,
            gflops_causal: 6,
            state_bytes: 1 << 20,
          },
          read: { tokens_per_s: 4800 },
          lora: { tokens_per_s: 1800, state_bytes: 1 << 18 },
        },
      ],
      steps: [],
      torch: {
        torch: '1.13',
        threads: 1,
        cpu: 'AMD EPYC 7B13',
        baseline: 'fair',
        attention: 'chunked',
        attention_why: 'torch 1.13 has no scaled_dot_product_attention: query chunks of 256',
        attention_chunk: 256,
        blas: { kind: 'openblas', is_reference: false, library: 'OpenBLAS 0.3.21', kernel: 'Zen' },
        gemm: { n: 1024, gflops: 80 },
        decode: [
          { name: 'tiny', decode_tokens_per_s: 400, ms_per_step_first: 15, ms_per_step_last: 25, prefill_s: 0.5 },
        ],
        train: [{ name: 'tiny', tokens_per_s: 2400, step_s: 5, gflops: 20, fraction_of_gemm: 0.25, gflops_causal: 12 }],
      },
    };
    const text = formatBenchReport(report).join('\n');
    // 600 / 400 = 1.50; 1200 / 2400 = 0.50; 10 GFLOP/s of the engine's 20 = 0.50, of PyTorch's 80 = 0.12 (0.125 rounded)
    expect(text).toContain('600.0 tok/s (1.50× PyTorch)');
    expect(text).toContain(
      "1200.0 tok/s (0.50× PyTorch), 10.0 GFLOP/s = 0.50 of this backend's matmul rate, 0.25 of the SIMD128 peak, 0.13 of the native rate; counting causal FLOPs 6.0 GFLOP/s (PyTorch 2400.0 tok/s, 20.0 GFLOP/s, 12.0 causal)",
    );
    // The measured ceilings: 20 of a 40 GFLOP/s peak; PyTorch's 80 is 2×; a decode step of 30 MB at
    // 10 GB/s is 3 ms, 80 MFLOP at 40 GFLOP/s 2 ms, and 8 rows at 600 tok/s took 13.33 ms.
    expect(text).toContain(": 40.0 GFLOP/s; the engine's matmul reaches 0.50 of it, PyTorch's native matmul 2.00× it");
    expect(text).toContain("this core's read rate, measured (a 128 MiB stream, the engine's kernels): 10.0 GB/s");
    expect(text).toContain(
      "a decode step moves 30.0 MB (every weight, the rows' cached keys and values): 3.00 ms at the read rate; it computes 80.0 MFLOP: 2.00 ms at the SIMD peak; it took 13.33 ms",
    );
    // Every comparison names what PyTorch ran and where: baseline, attention, BLAS kernel, CPU.
    const side =
      'PyTorch 1.13, 1 thread(s), fair baseline (chunked attention, query chunks of 256); BLAS openblas (OpenBLAS 0.3.21), kernel Zen; CPU AMD EPYC 7B13';
    expect(text).toContain(side);
    expect(text).toContain(`  beside ${side}`);
    // Results from before the fair baseline (no `baseline` field) were textbook: said so beside the ratio.
    const old = formatBenchReport({ ...report, torch: { ...report.torch!, baseline: undefined } }).join('\n');
    expect(old).toContain("600.0 tok/s (1.50× PyTorch's textbook (unfair) baseline)");
    expect(old).toContain('textbook baseline (repeat_kv copies, T × T scores under a mask: not a fair yardstick)');
    // a read at 4800 against a step at 1200: 0.25 of a step's time per token; LoRA 1800/1200 = 1.50
    expect(text).toContain("4800.0 tok/s, 0.25× a training step's time per token");
    expect(text).toContain('1800.0 tok/s (1.50× the full step); training state 0 MiB against 1 MiB');
    const reference = formatBenchReport({
      ...report,
      torch: { ...report.torch!, blas: { kind: 'reference', is_reference: true, why: 'Debian reference BLAS' } },
    }).join('\n');
    expect(reference).toContain('no ratio: PyTorch ran on a reference BLAS');
    expect(reference).not.toMatch(/× PyTorch\)/);
  });

  it('takes the median of an odd and an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('--pairs: alternates which side runs first and divides each pair by its own PyTorch run', async () => {
    const order: string[] = [];
    let call = 0;
    // PyTorch's side, stubbed: decode 100, 200, 300 … tok/s and train 10, 20, 30 … in call order.
    const runTorch = (): TorchReal => {
      call++;
      order.push('torch');
      return {
        torch: 'stub',
        threads: 1,
        blas: { kind: 'openblas', is_reference: false },
        decode: [
          { name: 'tiny', decode_tokens_per_s: 100 * call, ms_per_step_first: 1, ms_per_step_last: 1, prefill_s: 0 },
        ],
        train: [{ name: 'tiny', tokens_per_s: 10 * call, step_s: 1, gflops: 1, fraction_of_gemm: 0.1 }],
      };
    };
    const spec = {
      name: 'tiny',
      config: TINY,
      decode: { batch: 2, context: 6, newTokens: 8 },
      train: { batch: 2, seq: 8, iters: 1 },
    };
    // The engine's side, stubbed too: decode 150 and train 5 tok/s every time (the real cases run
    // once, so that the stub's shape is what engineCaseRates gives).
    const real = await engineCaseRates(spec);
    expect(real.decode_tokens_per_s).toBeGreaterThan(0);
    expect(real.train_tokens_per_s).toBeGreaterThan(0);
    const runEngine = async () => {
      order.push('engine');
      return { ...real, decode_tokens_per_s: 150, train_tokens_per_s: 5, run: { call: order.length } };
    };
    const log = () => order.push('|');
    const pairs = await runPairs(3, 'tiny', runEngine, runTorch, log);
    expect(order).toEqual(['|', 'engine', 'torch', '|', 'torch', 'engine', '|', 'engine', 'torch']);
    expect(pairs.map((p) => p.first)).toEqual(['engine', 'torch', 'engine']);
    // decode 150/100, 150/200, 150/300; train 5/10, 5/20, 5/30
    expect(pairs.map((p) => p.decode_ratio)).toEqual([1.5, 0.75, 0.5]);
    expect(pairs.map((p) => p.train_ratio)).toEqual([0.5, 0.25, 5 / 30]);
    // The engine side's own record travels with its pair; the medians are of the middle pair.
    expect(pairs.map((p) => p.run)).toEqual([{ call: 2 }, { call: 6 }, { call: 8 }]);
    expect(pairMedians(pairs)).toEqual({ decode_ratio: 0.75, train_ratio: 0.25 });
  }, 120_000);

  it('prints each pair and the median and range of their ratios', () => {
    const pair = (ed: number, td: number, et: number, tt: number, first: 'engine' | 'torch') => ({
      first,
      engine: { decode_tokens_per_s: ed, train_tokens_per_s: et },
      torch: { decode_tokens_per_s: td, train_tokens_per_s: tt },
      decode_ratio: ed / td,
      train_ratio: et / tt,
    });
    const report: BenchReport = {
      date: 'd',
      node: 'v20',
      cpu: 'cpu',
      cores: 2,
      matmul: {},
      kernels: [],
      steps: [],
      torchSkipped: 'x',
      // decode 600/400 = 1.5, 500/500 = 1.0, 700/350 = 2.0; train 1200/2400 = 0.5, 1000/1000 = 1.0, 900/1800 = 0.5
      pairs: [
        pair(600, 400, 1200, 2400, 'engine'),
        pair(500, 500, 1000, 1000, 'torch'),
        pair(700, 350, 900, 1800, 'engine'),
      ],
    };
    const text = formatBenchReport(report).join('\n');
    expect(text).toContain('pair 2 (torch first): decode 500.0 / 500.0 = 1.00×; train 1000.0 / 1000.0 = 1.00×');
    expect(text).toContain('median: decode 1.50× (1.00–2.00), train 0.50× (0.50–1.00)');
  });

  const torchPython = findTorchPython().python;
  it.skipIf(!torchPython)(
    'runs the real-shape PyTorch cases on a tiny config and names its BLAS',
    () => {
      const result = runTorchReal(torchPython!, { tiny: TINY }, 1, 'gemm');
      expect(result.threads).toBe(1);
      expect(typeof result.blas.is_reference).toBe('boolean');
      expect(result.gemm!.gflops).toBeGreaterThan(0);
    },
    120_000,
  );
});

describe('decodeStepWork', () => {
  it('counts the bytes and FLOPs of a decode step by hand', () => {
    // 2 layers, 1 KV head of dimension 4, 2 query heads, hidden 8, vocabulary 10, tied: 100 parameters
    // read once. Mean length 10 + (5 − 1)/2 = 12: per row 2·2·1·4·12 = 192 cached floats; 2 rows.
    const c = createTinyQwen3Config({
      vocab_size: 10,
      hidden_size: 8,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      head_dim: 4,
      tie_word_embeddings: true,
    });
    const w = decodeStepWork(c, 100, 2, 10, 5);
    expect(w.bytes).toBe(4 * (100 + 2 * 192));
    // FLOPs: 2 rows × (2·100 + attention 4·2 layers·2 heads·4·12 = 768)
    expect(w.flops).toBe(2 * (200 + 768));
    // Untied, the input table (10 × 8) is read a row at a time, not whole: not in the bytes.
    expect(decodeStepWork({ ...c, tie_word_embeddings: false }, 180, 2, 10, 5).bytes).toBe(4 * (100 + 2 * 192));
  });
});

describe('describeCpu', () => {
  it('names the family, model and vector features from /proc/cpuinfo, and the bare name elsewhere', () => {
    const info = [
      'processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 fma avx2 avx512f avx512bw',
      'processor\t: 1\ncpu family\t: 99\nmodel\t\t: 9\nmodel name\t: other',
    ].join('\n\n');
    expect(describeCpu(info)).toBe('AMD EPYC (family 26, model 2; fma, avx2, avx512f)');
    expect(
      describeCpu('processor\t: 0\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel Xeon\nflags\t\t: sse2'),
    ).toBe('Intel Xeon (family 6, model 85)');
    expect(describeCpu('processor\t: 0\nmodel name\t: Apple M2')).toBe('Apple M2');
  });
});
