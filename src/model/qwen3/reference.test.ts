// Compares the TypeScript Qwen3 with the independent PyTorch reference
// (scripts/reference/qwen3_reference.py, float64) on cpu and wasm: logits, token
// log-probs, entropy, the mean next-token loss, gradients of named weights, and greedy
// generation. Fixture cases: GQA (4 q heads / 2 kv heads) untied, MQA (4 / 1) tied;
// both with a padded batch (one full row, one left-padded, one right-padded).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from './tf';
import { selectBackend, type BackendName } from '../backend';
import { computeQwen3Logits, disposeParams, loadQwen3Params } from './model';
import { computeTokenLogprobs } from './logprobs';
import { runEngineGradients } from './engineSession';
import { generateQwen3 } from './generate';
import { getNodeWasmPaths, readReferenceFixture } from './node';
import { checkAgainstReference, type ReferenceFixture } from './referenceCheck';
import type { ParamMap } from './linear';

const FIXTURE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const CASES = ['qwen3_gqa_untied', 'qwen3_mqa_tied'];

function getRef(fx: ReferenceFixture, name: string) {
  const t = fx.tensors.get(name);
  if (!t) throw new Error(`fixture lacks ${name}`);
  return t;
}

/** max |a − b| over entries where `keep` (if given) is 1, and max |b| there. */
function compareArrays(a: ArrayLike<number>, b: ArrayLike<number>, keep?: (i: number) => boolean) {
  let maxErr = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    if (keep && !keep(i)) continue;
    maxErr = Math.max(maxErr, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return { maxErr, scale };
}

for (const backend of ['cpu', 'wasm'] as BackendName[]) {
  describe(`Qwen3 vs PyTorch reference on ${backend}`, () => {
    beforeAll(async () => {
      const sel = await selectBackend(backend, { wasmPaths: getNodeWasmPaths() });
      expect(sel.backend).toBe(backend);
    });

    for (const name of CASES) {
      describe(name, () => {
        const fx = readReferenceFixture(FIXTURE_DIR, name);
        const [B, T] = getRef(fx, 'input_ids').shape;
        const V = fx.config.vocab_size;
        let params: ParamMap;
        let ids: tf.Tensor2D;
        let mask: tf.Tensor2D;
        const maskData = getRef(fx, 'attention_mask').data;

        beforeAll(() => {
          params = loadQwen3Params(fx.config, fx.tensors);
          ids = tf.tensor2d(Array.from(getRef(fx, 'input_ids').data), [B, T], 'int32');
          mask = tf.tensor2d(maskData, [B, T]);
        });
        afterAll(() => {
          disposeParams(params);
          tf.dispose([ids, mask]);
        });

        it('has the expected parameter set (lm_head only when untied)', () => {
          expect(params.has('lm_head.weight')).toBe(!fx.config.tie_word_embeddings);
          expect(fx.config.num_key_value_heads).toBeLessThan(fx.config.num_attention_heads);
        });

        it('logits match at every real token (max abs err < 1e-4 · max |logit|)', async () => {
          const logits = computeQwen3Logits(params, fx.config, ids, mask);
          const got = await logits.data();
          logits.dispose();
          const ref = getRef(fx, 'logits').data;
          const { maxErr, scale } = compareArrays(got, ref, (i) => maskData[Math.floor(i / V)] === 1);
          expect(scale).toBeGreaterThan(0.5); // the reference logits are not trivially small
          expect(maxErr / scale).toBeLessThan(1e-4);
        });

        it('token log-probs, entropy and mean loss match (chunked over positions)', async () => {
          // maxChunkElements = 5·V forces chunks of 5 positions over B·(T−1) = 27.
          const out = computeTokenLogprobs(params, fx.config, ids, mask, {
            withEntropy: true,
            maxChunkElements: 5 * V,
          });
          const [lp, ent, tm] = await Promise.all([out.logprobs.data(), out.entropy!.data(), out.targetMask.data()]);
          tf.dispose([out.logprobs, out.entropy!, out.targetMask]);
          expect(Array.from(tm)).toEqual(Array.from(getRef(fx, 'target_mask').data));
          expect(compareArrays(lp, getRef(fx, 'token_logprobs').data).maxErr).toBeLessThan(1e-4);
          expect(compareArrays(ent, getRef(fx, 'entropy').data).maxErr).toBeLessThan(1e-4);
          let sum = 0;
          let count = 0;
          for (let i = 0; i < lp.length; i++) {
            sum -= lp[i];
            count += tm[i];
          }
          expect(Math.abs(sum / count - fx.scalars.loss)).toBeLessThan(1e-5);
        });

        it('gradients of the mean next-token loss match (max abs err < 1e-3 · max(1, max |g|))', async () => {
          const lossFn = () =>
            tf.tidy(() => {
              const out = computeTokenLogprobs(params, fx.config, ids, mask, { maxChunkElements: 7 * V });
              return out.logprobs.sum().neg().div(out.targetMask.sum()) as tf.Scalar;
            });
          const { value, grads } = runEngineGradients(() => tf.variableGrads(lossFn, [...params.values()]));
          expect(Math.abs((await value.data())[0] - fx.scalars.loss)).toBeLessThan(1e-5);
          const gradNames = [...fx.tensors.keys()].filter((k) => k.startsWith('grad:')).map((k) => k.slice(5));
          expect(gradNames.length).toBe(5);
          for (const gName of gradNames) {
            const v = params.get(gName)!;
            const got = await grads[v.name].data();
            const { maxErr, scale } = compareArrays(got, getRef(fx, `grad:${gName}`).data);
            expect(scale, gName).toBeGreaterThan(0);
            expect(maxErr / Math.max(1, scale), gName).toBeLessThan(1e-3);
          }
          value.dispose();
          tf.dispose(Object.values(grads));
        });

        it('checkAgainstReference (the browser/WebGPU entry) reports errors within the thresholds', async () => {
          const r = await checkAgainstReference(fx);
          expect(r.backend).toBe(backend);
          expect(r.logitsRelErr).toBeLessThan(1e-4);
          expect(r.logprobsMaxErr).toBeLessThan(1e-4);
          expect(r.lossAbsErr).toBeLessThan(1e-5);
          expect(Object.keys(r.gradRelErr)).toHaveLength(5);
          for (const e of Object.values(r.gradRelErr)) expect(e).toBeLessThan(1e-3);
          expect(r.isGreedyEqual).toBe(true);
        });

        it('greedy generation with the KV cache reproduces the reference tokens', async () => {
          const prompts = [0, 1].map((i) => Array.from(getRef(fx, `greedy_prompt:${i}`).data));
          const expected = [0, 1].map((i) => Array.from(getRef(fx, `greedy:${i}`).data));
          // Both prompts in one batch: different lengths, so the shorter is left-padded.
          const rows = await generateQwen3(params, fx.config, prompts, {
            maxNewTokens: 8,
            temperature: 0,
            promptBucket: 4,
          });
          expect(rows.map((r) => r.tokens)).toEqual(expected);
        });
      });
    }
  });
}
