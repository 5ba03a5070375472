// Row-sharded embedding / LM head (for WebGPU buffer limits) computes exactly what the
// unsharded model computes: logits, log-probs, entropy, gradients, greedy generation;
// and the export path merges the shards back. Runs on cpu and wasm.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from './tf';
import { selectBackend, type BackendName } from '../backend';
import { getNodeWasmPaths } from './node';
import { createTinyQwen3Config } from '../weights/testFolders';
import { computeQwen3Logits, disposeParams, initQwen3Params } from './model';
import { computeTokenLogprobs } from './logprobs';
import { generateQwen3 } from './generate';
import { packTokenRows } from './batch';
import { readParamsToHost } from './vocabShards';
import type { ParamMap } from './linear';
import { getEngineEnabled, setEngineEnabled } from './engineBridge';

// Embedding [96, 16] = 6144 bytes is the only tensor above the 2500-byte limit
// (largest other: mlp [32, 16] = 2048 bytes). Rows per shard = ⌊2500 / (4·16)⌋ = 39
// → shards of 39, 39 and 18 rows.
const BASE = createTinyQwen3Config({ vocab_size: 96, num_hidden_layers: 2, initializer_range: 0.3 });
const LIMIT_BYTES = 2500;
const ROWS = [
  [3, 40, 41, 80, 95, 0, 38, 39, 78],
  [77, 2, 94, 39, 40],
];

async function compare(a: tf.Tensor, b: tf.Tensor, tol = 1e-5) {
  const [x, y] = await Promise.all([a.data(), b.data()]);
  expect(x.length).toBe(y.length);
  let maxErr = 0;
  for (let i = 0; i < x.length; i++) maxErr = Math.max(maxErr, Math.abs(x[i] - y[i]));
  expect(maxErr).toBeLessThan(tol);
}

for (const backend of ['cpu', 'wasm'] as BackendName[]) {
  for (const isTied of [true, false]) {
    describe(`vocabulary sharding on ${backend}, ${isTied ? 'tied' : 'untied'}`, () => {
      const config = { ...BASE, tie_word_embeddings: isTied };
      let plain: ParamMap;
      let sharded: ParamMap;
      // Sharded weights run on the tfjs graph (the CPU engine serves unsharded models only), so
      // both sides take that graph here: the comparison is sharded against unsharded, not
      // engine against tfjs (the engine has its own tests against the PyTorch reference).
      const wasEngineEnabled = getEngineEnabled();
      beforeAll(async () => {
        setEngineEnabled(false);
        await selectBackend(backend, { wasmPaths: getNodeWasmPaths() });
        plain = initQwen3Params(config, 3);
        sharded = initQwen3Params(config, 3, { maxTensorBytes: LIMIT_BYTES });
      });
      afterAll(() => {
        setEngineEnabled(wasEngineEnabled);
        disposeParams(plain);
        disposeParams(sharded);
      });

      it('splits only the vocabulary matrices, 39 + 39 + 18 rows', () => {
        expect(sharded.has('model.embed_tokens.weight')).toBe(false);
        expect([0, 1, 2].map((k) => sharded.get(`model.embed_tokens.weight#shard${k}`)!.shape[0])).toEqual([
          39, 39, 18,
        ]);
        expect(sharded.has('model.embed_tokens.weight#shard3')).toBe(false);
        expect(sharded.has('lm_head.weight#shard2')).toBe(!isTied);
        expect(sharded.get('model.layers.0.mlp.up_proj.weight')!.shape).toEqual([32, 16]);
      });

      it('gives the same logits, log-probs, entropy and gradients', async () => {
        const { inputIds, attentionMask } = packTokenRows(ROWS);
        const la = computeQwen3Logits(plain, config, inputIds, attentionMask);
        const lb = computeQwen3Logits(sharded, config, inputIds, attentionMask);
        await compare(la, lb);
        const lossOf = (params: ParamMap) => () =>
          tf.tidy(() => {
            const out = computeTokenLogprobs(params, config, inputIds, attentionMask, {
              withEntropy: true,
              maxChunkElements: 4 * 96,
            });
            return out.logprobs.sum().add(out.entropy!.sum().mul(0.3)).neg() as tf.Scalar;
          });
        const ga = tf.variableGrads(lossOf(plain), [...plain.values()]);
        const gb = tf.variableGrads(lossOf(sharded), [...sharded.values()]);
        await compare(ga.value, gb.value);
        const gradOf = (params: ParamMap, grads: tf.NamedTensorMap, name: string) => grads[params.get(name)!.name];
        for (const name of ['model.embed_tokens.weight', ...(isTied ? [] : ['lm_head.weight'])]) {
          const merged = tf.concat(
            [0, 1, 2].map((k) => gradOf(sharded, gb.grads, `${name}#shard${k}`)),
            0,
          );
          await compare(gradOf(plain, ga.grads, name), merged);
          // The embedding gradient is non-zero in every shard (ids span all three).
          expect(
            (
              await tf
                .abs(gradOf(sharded, gb.grads, `${name}#shard2`))
                .sum()
                .data()
            )[0],
          ).toBeGreaterThan(0);
          merged.dispose();
        }
        await compare(
          gradOf(plain, ga.grads, 'model.layers.1.self_attn.q_proj.weight'),
          gradOf(sharded, gb.grads, 'model.layers.1.self_attn.q_proj.weight'),
        );
        tf.dispose([
          la,
          lb,
          inputIds,
          attentionMask,
          ga.value,
          gb.value,
          ...Object.values(ga.grads),
          ...Object.values(gb.grads),
        ]);
      });

      it('generates the same greedy tokens', async () => {
        const opts = { maxNewTokens: 6, temperature: 0, promptBucket: 4 };
        const a = await generateQwen3(plain, config, ROWS, opts);
        const b = await generateQwen3(sharded, config, ROWS, opts);
        expect(b.map((r) => r.tokens)).toEqual(a.map((r) => r.tokens));
      });

      it('merges shards back for export', async () => {
        const host = await readParamsToHost(sharded);
        const ref = await plain.get('model.embed_tokens.weight')!.data();
        expect(host.get('model.embed_tokens.weight')!.shape).toEqual([96, 16]);
        expect(Array.from(host.get('model.embed_tokens.weight')!.data)).toEqual(Array.from(ref));
        expect([...host.keys()].some((k) => k.includes('#shard'))).toBe(false);
      });
    });
  }
}

describe('sharding limits', () => {
  it('refuses to shard anything but the vocabulary matrices', async () => {
    await selectBackend('cpu');
    expect(() => initQwen3Params(BASE, 1, { maxTensorBytes: 1500 })).toThrow(
      /'model\.layers\.0\.mlp\.gate_proj\.weight' is 2048 bytes/,
    );
  });
});
