// The CPU engine, through the tfjs bridge the trainer uses (computeTokenLogprobs' custom op and
// generateQwen3's KV cache), against PyTorch float64 (scripts/reference/engine_fixtures.py) at
// realistic head sizes and lengths:
//   engine_d128_gqa_untied_long  head_dim 128, 4 q / 2 kv heads, untied, 1 layer, hidden 8,
//                                V = 2,048; rows of 1,024, 700 and 37 tokens, right-padded:
//                                1,758 LM-head items = 4 of the engine's 512-item head chunks
//                                (lm_head.weight's gradient accumulates over them); greedy from
//                                1,000- and 517-token prompts.
//   engine_d64_mqa_tied_prefix   head_dim 64, 4 q / 1 kv head, tied, 2 layers, hidden 16,
//                                V = 1,024; rows of 1,160, 920 and 720 tokens sharing a 160-token
//                                prefix (computed once), left-padded: 2,479 items = 3 chunks of
//                                1,024; greedy in two calls (a repeated prompt, then prompts that
//                                extend the cached rows).
// Every parameter's gradient is compared (iterating over the model's parameter names), relative
// to that tensor's largest reference entry. The weights are not stored: both sides compute them
// from a hash (weightsFromHash; the generator's per-tensor sums guard the agreement).
// With PACT_FMA=1 under relaxed SIMD (kernelsFma.test.ts runs this file so) the engine runs the
// fused multiply-add kernels, held to the same bounds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from '../qwen3/tf';
import { selectBackend } from '../backend';
import { getNodeWasmPaths, readReferenceFixture } from '../qwen3/node';
import { listQwen3ParamShapes, type Qwen3Config } from '../qwen3/config';
import { disposeParams, loadQwen3Params, type HostTensor } from '../qwen3/model';
import { computeTokenLogprobs } from '../qwen3/logprobs';
import { generateQwen3 } from '../qwen3/generate';
import { packTokenRows } from '../qwen3/batch';
import { isEngineActive, setEngineEnabled } from '../qwen3/engineBridge';
import { runEngineGradients } from '../qwen3/engineSession';
import type { ReferenceFixture } from '../qwen3/referenceCheck';
import type { ParamMap } from '../qwen3/linear';
import { configureEngineKernels } from './runtime';

const FIXTURE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const CASES = ['engine_d128_gqa_untied_long', 'engine_d64_mqa_tied_prefix'];

/**
 * float32 engine vs float64 reference. Measured when written (the engine's bits are fixed, so
 * these are stable): log-prob / entropy errors ≤ 3e-6, gradient errors ≤ 4e-6 of the tensor's
 * largest entry, objective 8e-6, decode vs forward 8e-7; the bounds leave a factor 10–25.
 */
const TOL = {
  /** max |log p − ref| and max |entropy − ref| over every target; |mean NLL − ref|. */
  logprob: 5e-5,
  /** max |g − ref| / max |ref|, per parameter tensor. */
  grad: 1e-4,
  /** |objective − ref|. */
  objective: 1e-4,
  /** max |log p (KV-cache decode) − log p (full forward)|, both float32. */
  decodeVsForward: 1e-5,
};

// ------------------------------------------------------------------ the generator's weights

function fnv1a(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** engine_fixtures.py hash_uniform: lowbias32((i + salt·0x9E3779B9) mod 2^32) → [−1, 1) in 24 bits. */
function hashUniform(salt: number, n: number): Float64Array {
  const out = new Float64Array(n);
  const base = Math.imul(salt, 0x9e3779b9) >>> 0;
  for (let i = 0; i < n; i++) {
    let x = (i + base) >>> 0;
    x ^= x >>> 16;
    x = Math.imul(x, 0x7feb352d) >>> 0;
    x ^= x >>> 15;
    x = Math.imul(x, 0x846ca68b) >>> 0;
    x ^= x >>> 16;
    out[i] = ((x >>> 8) / 16777216) * 2 - 1;
  }
  return out;
}

/** The weights of engine_fixtures.py hash_weights: matrices u·√(3/fan_in), norms 1 + 0.1·u, in float32. */
function weightsFromHash(config: Qwen3Config, seed: number): Map<string, HostTensor> {
  const out = new Map<string, HostTensor>();
  for (const [name, shape] of listQwen3ParamShapes(config)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const u = hashUniform((seed ^ fnv1a(name)) >>> 0, n);
    const s = shape.length === 2 ? Math.sqrt(3 / shape[1]) : 0;
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = shape.length === 2 ? u[i] * s : 1 + 0.1 * u[i];
    out.set(name, { shape, data });
  }
  return out;
}

// ------------------------------------------------------------------ helpers

function getRef(fx: ReferenceFixture, name: string): Float32Array {
  const t = fx.tensors.get(name);
  if (!t) throw new Error(`fixture lacks ${name}`);
  return t.data;
}

function fixtureRows(fx: ReferenceFixture): number[][] {
  const flat = getRef(fx, 'rows');
  const rows: number[][] = [];
  let o = 0;
  for (const L of getRef(fx, 'row_lengths')) {
    rows.push(Array.from(flat.subarray(o, o + L)));
    o += L;
  }
  return rows;
}

function maxAbsErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let e = 0;
  for (let i = 0; i < a.length; i++) e = Math.max(e, Math.abs(a[i] - b[i]));
  return Number.isNaN(e) ? Infinity : e;
}

/** Row b's values at target positions (its L_b − 1 columns after its padding), rows back to back. */
function unpad(values: number[][], rows: number[][], left: boolean): number[] {
  const W = values[0].length;
  return rows.flatMap((r, b) => {
    const start = left ? W + 1 - r.length : 0;
    return values[b].slice(start, start + r.length - 1);
  });
}

/** The engine's LM-head chunk (EngineCore.headChunk, core.ts): items per z = h Wᵀ block. */
function headChunk(V: number): number {
  return Math.max(4, Math.floor((1 << 20) / V / 4) * 4);
}

describe('CPU engine vs PyTorch float64 (scripts/reference/engine_fixtures.py)', () => {
  beforeAll(async () => {
    const sel = await selectBackend('wasm', { wasmPaths: getNodeWasmPaths() });
    expect(sel.backend).toBe('wasm');
    setEngineEnabled(true);
    if (process.env.PACT_FMA === '1') expect(await configureEngineKernels('fma')).toEqual({ kernels: 'fma' });
  });

  for (const name of CASES) {
    describe(name, () => {
      const fx = readReferenceFixture(FIXTURE_DIR, name);
      const config = fx.config;
      const rows = fixtureRows(fx);
      const left = fx.scalars.left_padded === 1;
      const seed = fx.scalars.seed;
      let params: ParamMap;

      beforeAll(() => {
        params = loadQwen3Params(config, weightsFromHash(config, seed));
      });
      afterAll(() => disposeParams(params));

      it('rebuilds the generator weights (per-tensor sums) and runs on the engine', async () => {
        expect(isEngineActive(params, config)).toBe(true);
        for (const [pname, v] of params) {
          const data = await v.data();
          let sum = 0;
          for (const x of data) sum += x;
          const ref = fx.scalars[`wsum:${pname}`];
          expect(ref, pname).toBeTypeOf('number');
          expect(Math.abs(sum - ref), pname).toBeLessThan(1e-9 * Math.max(1, data.length));
        }
      });

      it('covers what it claims: several LM-head chunks, the head sizes, the padding side', () => {
        const items = rows.reduce((s, r) => s + r.length - 1, 0);
        expect(items).toBeGreaterThanOrEqual(2.5 * headChunk(config.vocab_size));
        expect([64, 128]).toContain(config.head_dim);
        expect(config.num_key_value_heads).toBeLessThan(config.num_attention_heads);
        expect(new Set(rows.map((r) => r.length)).size).toBe(rows.length); // ragged
      });

      it('log-probs and entropies of every target match', () => {
        const { inputIds, attentionMask } = packTokenRows(rows, { side: left ? 'left' : 'right' });
        const out = computeTokenLogprobs(params, config, inputIds, attentionMask, { withEntropy: true });
        const lp = unpad(out.logprobs.arraySync(), rows, left);
        const ent = unpad(out.entropy!.arraySync(), rows, left);
        tf.dispose([inputIds, attentionMask, out.logprobs, out.entropy!, out.targetMask]);
        expect(maxAbsErr(lp, getRef(fx, 'token_logprobs'))).toBeLessThan(TOL.logprob);
        expect(maxAbsErr(ent, getRef(fx, 'entropy'))).toBeLessThan(TOL.logprob);
        expect(Math.abs(-lp.reduce((a, b) => a + b, 0) / lp.length - fx.scalars.loss)).toBeLessThan(TOL.logprob);
      });

      it('every parameter gradient of (−Σ log p + c·Σ entropy) / #targets matches', async () => {
        const { inputIds, attentionMask } = packTokenRows(rows, { side: left ? 'left' : 'right' });
        const c = fx.scalars.entropy_coef;
        const vars = [...params.values()];
        const { value, grads } = runEngineGradients(() =>
          tf.variableGrads(
            () =>
              tf.tidy(() => {
                const out = computeTokenLogprobs(params, config, inputIds, attentionMask, { withEntropy: true });
                const terms = tf.add(tf.neg(out.logprobs), tf.mul(out.entropy!, c)).mul(out.targetMask);
                return terms.sum().div(out.targetMask.sum()) as tf.Scalar;
              }),
            vars,
          ),
        );
        expect(Math.abs((await value.data())[0] - fx.scalars.objective)).toBeLessThan(TOL.objective);
        const refNames = [...fx.tensors.keys()].filter((k) => k.startsWith('grad:')).map((k) => k.slice(5));
        expect(new Set(refNames)).toEqual(new Set(params.keys()));
        const errors: Record<string, number> = {};
        for (const [pname, v] of params) {
          const got = await grads[v.name].data();
          const ref = getRef(fx, `grad:${pname}`);
          let scale = 0;
          for (const x of ref) scale = Math.max(scale, Math.abs(x));
          expect(scale, pname).toBeGreaterThan(0);
          errors[pname] = maxAbsErr(got, ref) / scale;
        }
        tf.dispose([value, inputIds, attentionMask, ...Object.values(grads)]);
        for (const [pname, e] of Object.entries(errors)) expect(e, pname).toBeLessThan(TOL.grad);
      });

      it('greedy KV-cache decode gives the reference tokens, and the log-probs of the full forward', async () => {
        const prompts: number[][] = [];
        for (let i = 0; fx.tensors.has(`greedy:${i}`); i++) prompts.push(Array.from(getRef(fx, `greedy_prompt:${i}`)));
        expect(prompts.length).toBeGreaterThan(0);
        // One generate call per run of prompts with the same number of new tokens (the fixture's
        // turns: a later call's prompts extend the rows the previous call left in the cache).
        const got: { tokens: number[]; logprobs: number[] }[] = [];
        for (let i = 0; i < prompts.length;) {
          const n = getRef(fx, `greedy:${i}`).length;
          let j = i;
          while (j < prompts.length && getRef(fx, `greedy:${j}`).length === n) j++;
          got.push(...(await generateQwen3(params, config, prompts.slice(i, j), { maxNewTokens: n, temperature: 0 })));
          i = j;
        }
        got.forEach((row, i) => {
          expect(row.tokens, `prompt ${i}`).toEqual(Array.from(getRef(fx, `greedy:${i}`)));
          expect(maxAbsErr(row.logprobs, getRef(fx, `greedy_logprobs:${i}`)), `prompt ${i}`).toBeLessThan(TOL.logprob);
        });
        // The same sequences through the full (training) forward: the decode's log-probs.
        const seqs = prompts.map((p, i) => [...p, ...got[i].tokens]);
        const { inputIds, attentionMask } = packTokenRows(seqs, { side: 'right' });
        const out = computeTokenLogprobs(params, config, inputIds, attentionMask);
        const full = out.logprobs.arraySync();
        tf.dispose([inputIds, attentionMask, out.logprobs, out.targetMask]);
        seqs.forEach((s, i) => {
          const decoded = full[i].slice(prompts[i].length - 1, s.length - 1);
          expect(maxAbsErr(decoded, got[i].logprobs), `prompt ${i}`).toBeLessThan(TOL.decodeVsForward);
        });
      });
    });
  }
});
