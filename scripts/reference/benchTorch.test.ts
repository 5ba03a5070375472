/**
 * scripts/reference/bench_torch.py's real-shape mode (`--real`), on a tiny config: the JSON
 * that `pact bench` reads, the training FLOP counts (full and causal) against the header's
 * formula worked by hand, the thread count reaching OpenBLAS's own pool, the BLAS verdict on
 * faked libraries, the fair baseline against the float64 reference (`--check`), the textbook
 * baseline still runnable, and the preallocated-cache decode against full recomputation. Runs
 * where a python3 with torch is installed (Debian's python3-torch); skipped with the reason
 * otherwise.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findTorchPython } from '../../src/model/torchPython';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, 'bench_torch.py');
const TINY = {
  vocab_size: 64,
  hidden_size: 32,
  intermediate_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 8,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
};
const torch = findTorchPython();

function runPython(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(torch.python!, args, {
    encoding: 'utf8',
    cwd: HERE,
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe.skipIf(!torch.python)(
  `bench_torch.py --real ${torch.python ? `(${torch.python})` : `(skipped: ${torch.reason})`}`,
  () => {
    it('reports gemm, decode and train for each config, with the BLAS and the threads it ran on', () => {
      const out = JSON.parse(
        runPython(
          [
            SCRIPT,
            '--real',
            '--config',
            `tiny=${JSON.stringify(TINY)}`,
            '--threads',
            '2',
            '--decode',
            '2x16+8',
            '--train',
            '2x32',
            '--gemm-n',
            '256',
          ],
          {
            OPENBLAS_NUM_THREADS: '1', // the script must override it with --threads
          },
        ),
      );
      expect([out.mode, out.device, out.threads]).toEqual(['real', 'cpu', 2]);
      // The fair baseline by default, on the attention this torch has; the CPU and BLAS kernel named.
      expect(out.baseline).toBe('fair');
      expect(['chunked', 'sdpa']).toContain(out.attention);
      expect(out.attention_chunk).toBe(256);
      expect(typeof out.cpu).toBe('string');
      if (out.blas.kind === 'openblas') expect(out.blas.kernel).toMatch(/\S/);
      expect(out.gemm.n).toBe(256);
      expect(out.gemm.gflops).toBeGreaterThan(0);
      expect(out.blas.gemm_gflops).toBe(out.gemm.gflops);
      expect(typeof out.blas.is_reference).toBe('boolean');
      if (out.blas.kind === 'openblas') expect(out.blas.openblas_threads).toBe(2);

      const [dec] = out.decode;
      expect([dec.name, dec.batch, dec.context, dec.new_tokens]).toEqual(['tiny', 2, 16, 8]);
      expect(dec.decode_tokens_per_s).toBeCloseTo((2 * 7) / dec.decode_s, 6); // 7 steps after the prefill's token
      expect(dec.tokens_per_s).toBeCloseTo((2 * 8) / (dec.prefill_s + dec.decode_s), 6);

      const [train] = out.train;
      // Header formula by hand, H 32, I 64, L 2, d 8, nh 4, nkv 2, V 64, T 32:
      // per token 2·(2·32·8·8 + 2·4·8·32 + 6·32·64 + 4·4·8·32) + 2·32·64 = 2·22 528 + 4 096 = 49 152;
      // 3 (forward + backward) · B·T = 3·64 → 9 437 184.
      expect(train.flops).toBe(9_437_184);
      // Causal: the attention term 2·nh·d·(T + 1) = 2·4·8·33 = 2 112 instead of 4 096:
      // 2·(4 096 + 2 048 + 12 288 + 2 112) + 4 096 = 45 184 per token · 3·64 → 8 675 328.
      expect(train.flops_causal).toBe(8_675_328);
      expect(train.gflops_causal).toBeCloseTo(train.flops_causal / train.step_s / 1e9, 6);
      expect(train.params).toBe(64 * 32 + 2 * (3 * 32 * 64 + 32 * 32 + 2 * 32 * 16 + 32 * 32 + 2 * 32 + 2 * 8) + 32);
      expect(train.tokens_per_s).toBeCloseTo(64 / train.step_s, 6);
      expect(train.gflops).toBeCloseTo(train.flops / train.step_s / 1e9, 6);
      expect(train.fraction_of_gemm).toBeCloseTo(train.gflops / out.gemm.gflops, 6);
      expect(Math.abs(train.loss - Math.log(64))).toBeLessThan(0.2); // N(0, 0.02²) weights: near uniform
    }, 120_000);

    it('the fair baseline computes the reference log-probs, loss and cached decode (float64, every attention path)', () => {
      const out = JSON.parse(runPython([SCRIPT, '--check']));
      // chunked (query chunks of 3 over 11 tokens), the textbook path, torch's own
      // scaled_dot_product_attention where it exists, and an emulated one (its GQA views and
      // enable_gqa plumbing), each GQA untied and MQA tied.
      expect(out.attention).toEqual(
        expect.arrayContaining(['chunked', 'textbook', 'sdpa-emulated', 'sdpa-emulated-gqa']),
      );
      expect(out.cases).toHaveLength(2 * out.attention.length);
      for (const c of out.cases) {
        const label = `${c.attention}, ${c.num_key_value_heads} kv head(s)`;
        expect(c.logprob_scale, label).toBeGreaterThan(1);
        expect(c.logprob_max_err, label).toBeLessThan(1e-10);
        expect(c.loss_err, label).toBeLessThan(1e-10);
        expect(c.decode_logit_max_err, label).toBeLessThan(1e-10);
      }
    }, 60_000);

    it('--baseline textbook still runs the earlier baseline (for the figures measured with it)', () => {
      const out = JSON.parse(
        runPython([
          SCRIPT,
          '--real',
          '--config',
          `tiny=${JSON.stringify(TINY)}`,
          '--baseline',
          'textbook',
          '--cases',
          'decode,train',
          '--decode',
          '1x8+4',
          '--train',
          '1x16',
          '--gemm-n',
          '64',
        ]),
      );
      expect([out.baseline, out.attention]).toEqual(['textbook', 'textbook']);
      expect(out.train[0].tokens_per_s).toBeGreaterThan(0);
      expect(out.decode[0].decode_tokens_per_s).toBeGreaterThan(0);
    }, 60_000);

    it('calls a reference BLAS a reference BLAS, and an unknown one by its gemm rate', () => {
      const verdicts = JSON.parse(
        runPython([
          '-c',
          `
import json, torch, blas_info as b
cpu = torch.device("cpu")
b.openblas_libraries = lambda: []
out = {}
for name, loaded, gflops in [("reference", ["/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"], 90.0),
                             ("unknown_slow", ["/opt/x/libfoo_blas.so"], 5.0),
                             ("unknown_fast", ["/opt/x/libfoo_blas.so"], 90.0)]:
    b.loaded_blas_libraries = lambda loaded=loaded: loaded
    v = b.describe_blas(cpu, gflops)
    out[name] = [v["kind"], v["is_reference"]]
print(json.dumps(out))
`,
        ]),
      );
      expect(verdicts).toEqual({
        reference: ['reference', true],
        unknown_slow: ['unknown', true],
        unknown_fast: ['unknown', false],
      });
    }, 60_000);

    it("sets OpenBLAS's kernel only where it fell back to one without AVX2 on a CPU that has it", () => {
      const cases = JSON.parse(
        runPython([
          '-c',
          `
import json, openblas_core as o
intel = frozenset("fma avx2 avx512f avx512cd avx512bw avx512dq avx512vl avx512_bf16".split())
skx = intel - {"avx512_bf16"}
avx2 = frozenset({"fma", "avx2"})
print(json.dumps([
    o.choose_kernel("Prescott", intel)[0],       # Emerald Rapids on OpenBLAS 0.3.21 (seen 2026-12-05)
    o.choose_kernel("Prescott", skx)[0],
    o.choose_kernel("Sandybridge", avx2)[0],
    o.choose_kernel("Haswell", intel)[0],        # a kernel OpenBLAS chose with AVX2: kept
    o.choose_kernel("Prescott", frozenset({"sse3"}))[0],  # nothing better to pick
    o.choose_kernel("Prescott", intel, "Haswell")[0],     # the user's OPENBLAS_CORETYPE wins
    o.choose_kernel(None, intel)[0],             # not OpenBLAS
]))
`,
        ]),
      );
      expect(cases).toEqual(['Cooperlake', 'SkylakeX', 'Haswell', null, null, null, null]);
      // On this machine: the kernel the baseline runs on has AVX2 wherever the CPU does, and the
      // report says whether it was OpenBLAS's own choice.
      const out = JSON.parse(
        runPython([SCRIPT, '--real', '--config', `tiny=${JSON.stringify(TINY)}`, '--cases', 'gemm', '--gemm-n', '64'], {
          OPENBLAS_CORETYPE: '',
        }),
      );
      if (out.blas.kind === 'openblas') {
        const flags = runPython(['-c', 'import openblas_core as o; print(o.kernel_for_flags(o.cpu_flags()))']).trim();
        expect(out.blas.kernel_choice.why).toMatch(/\S/);
        if (flags !== 'None') expect(out.blas.kernel).not.toMatch(/^(Prescott|Core2|Penryn|Nehalem|Sandybridge|Atom)$/);
      }
    }, 60_000);

    it('decodes with the preallocated cache to the logits of full recomputation', () => {
      const maxErr = Number(
        runPython([
          '-c',
          `
import torch, bench_torch as b
c = ${JSON.stringify(TINY).replace(/true/g, 'True')}
torch.manual_seed(0)
m = b.Qwen3(c).eval()
B, P, N = 3, 10, 12
cache = [{"cap": P + N, "len": 0, "k": torch.zeros(B, 2, P + N, 8), "v": torch.zeros(B, 2, P + N, 8)} for _ in m.layers]
seq = torch.randint(0, 64, (B, P))
err = 0.0
with torch.no_grad():
    logits = m(seq, 0, cache)[:, -1]
    for s in range(N):
        err = max(err, float((logits - m(seq)[:, -1]).abs().max()))
        nxt = logits.argmax(-1, keepdim=True)
        seq = torch.cat((seq, nxt), 1)
        logits = m(nxt, P + s, cache)[:, -1]
print(err)
`,
        ]),
      );
      expect(maxErr).toBeLessThan(1e-5);
    }, 60_000);
  },
);
