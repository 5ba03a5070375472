// The CPU engine against the tfjs graph of the same Qwen3 (itself checked against PyTorch in
// src/model/qwen3/reference.test.ts): log-probs, entropies and the gradients of a weighted sum
// of both, for full weights and for LoRA adapters on a frozen base, on a padded batch with rows
// longer than one attention block; then generation, with the KV cache reused across calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '../qwen3/tf';
import { selectBackend } from '../backend';
import { getNodeWasmPaths } from '../qwen3/node';
import { Qwen3Model, type Qwen3Config } from '../qwen3';
import { packTokenRows } from '../qwen3/batch';
import { getEngineEnabled, setEngineEnabled } from '../qwen3/engineBridge';
import { runEngineGradients } from '../qwen3/engineSession';
import { createLora, disposeLora, setParamsTrainable } from '../qwen3/train';
import { getEngineRuntime } from './runtime';

const CONFIG: Qwen3Config = {
  vocab_size: 95, // not a multiple of 4, like pruned vocabularies (the warm start's 1,022)
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 256,
  initializer_range: 0.2,
};

function ids(n: number, seed: number): number[] {
  let s = seed;
  return Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % 95;
  });
}

/** With the engine on or off, the value and every gradient of Σ a·logp + Σ b·entropy. */
async function evaluate(
  model: Qwen3Model,
  rows: number[][],
  side: 'left' | 'right',
  useEngine: boolean,
  vars: tf.Variable[],
) {
  const was = getEngineEnabled();
  setEngineEnabled(useEngine);
  try {
    const { inputIds, attentionMask } = packTokenRows(rows, { side });
    const [B, T] = inputIds.shape;
    const a = tf.tensor2d(
      ids(B * (T - 1), 7).map((x) => x / 48 - 1),
      [B, T - 1],
    );
    const b = tf.tensor2d(
      ids(B * (T - 1), 8).map((x) => x / 96),
      [B, T - 1],
    );
    let logp: number[][] = [];
    let ent: number[][] = [];
    const { value, grads } = runEngineGradients(() =>
      tf.variableGrads(() => {
        const out = model.computeTokenLogprobs(inputIds, attentionMask, { withEntropy: true });
        logp = out.logprobs.arraySync();
        ent = out.entropy!.arraySync();
        return tf.add(tf.sum(tf.mul(out.logprobs, a)), tf.sum(tf.mul(out.entropy!, b))) as tf.Scalar;
      }, vars),
    );
    const g = new Map<string, Float32Array>();
    for (const v of vars) g.set(v.name, (await grads[v.name].data()) as Float32Array);
    const result = { value: (await value.data())[0], logp, ent, grads: g };
    tf.dispose([inputIds, attentionMask, a, b, value, ...Object.values(grads)]);
    return result;
  } finally {
    setEngineEnabled(was);
  }
}

function maxRelErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let err = 0;
  let scale = 1e-3;
  for (let i = 0; i < a.length; i++) {
    err = Math.max(err, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return err / scale;
}

for (const backend of ['wasm', 'cpu'] as const) {
  describe(`engine vs tfjs graph on ${backend}`, () => {
    let model: Qwen3Model;
    beforeAll(async () => {
      await selectBackend(backend, { wasmPaths: getNodeWasmPaths() });
      model = Qwen3Model.fromConfig(CONFIG, 3);
    });
    afterAll(() => model.dispose());

    for (const side of ['right', 'left'] as const) {
      it(`log-probs, entropies and all gradients agree (${side}-padded rows of 70, 45 and 100 tokens)`, async () => {
        const rows = [ids(70, 1), ids(45, 2), ids(100, 3)];
        const vars = [...model.params.values()];
        const before = getEngineRuntime().allocatedBytes;
        const viaEngine = await evaluate(model, rows, side, true, vars);
        const viaGraph = await evaluate(model, rows, side, false, vars);
        expect(Math.abs(viaEngine.value - viaGraph.value) / Math.abs(viaGraph.value)).toBeLessThan(1e-5);
        expect(maxRelErr(viaEngine.logp.flat(), viaGraph.logp.flat())).toBeLessThan(1e-5);
        expect(maxRelErr(viaEngine.ent.flat(), viaGraph.ent.flat())).toBeLessThan(1e-5);
        expect(viaEngine.grads.size).toBe(model.params.size);
        for (const [name, g] of viaGraph.grads)
          expect(maxRelErr(viaEngine.grads.get(name)!, g), name).toBeLessThan(1e-4);
        // Weights stay cached; the activations of the pass are all released.
        const cached = getEngineRuntime().allocatedBytes - before;
        expect(cached).toBeLessThanOrEqual(2 * 4 * model.countParams() + (1 << 16));
      });
    }

    it("a row past max_position_embeddings (PACT's [x; h*; τ] can be) is read as the graph reads it, not refused", async () => {
      const rows = [ids(CONFIG.max_position_embeddings + 40, 21), ids(30, 22)];
      const vars = [...model.params.values()];
      const viaEngine = await evaluate(model, rows, 'right', true, vars);
      const viaGraph = await evaluate(model, rows, 'right', false, vars);
      expect(maxRelErr(viaEngine.logp.flat(), viaGraph.logp.flat())).toBeLessThan(1e-5);
      for (const [name, g] of viaGraph.grads) expect(maxRelErr(viaEngine.grads.get(name)!, g), name).toBeLessThan(1e-4);
    });

    it('rows that share a prefix (computed once) give the same log-probs and gradients as the graph', async () => {
      const prefix = ids(53, 11);
      const rows = [
        [...prefix, ...ids(40, 12)],
        [...prefix, ...ids(1, 13)],
        [...prefix, ...ids(75, 14)],
      ];
      const vars = [...model.params.values()];
      const viaEngine = await evaluate(model, rows, 'right', true, vars);
      const viaGraph = await evaluate(model, rows, 'right', false, vars);
      expect(maxRelErr(viaEngine.logp.flat(), viaGraph.logp.flat())).toBeLessThan(1e-5);
      expect(maxRelErr(viaEngine.ent.flat(), viaGraph.ent.flat())).toBeLessThan(1e-5);
      for (const [name, g] of viaGraph.grads) expect(maxRelErr(viaEngine.grads.get(name)!, g), name).toBeLessThan(1e-4);
    });

    it('LoRA on a frozen base: gradients of A and B agree, and no base gradient is formed', async () => {
      const { lora, trainable } = createLora(model.params, {
        rank: 4,
        alpha: 8,
        targetModules: ['q', 'v', 'down'],
        seed: 5,
      });
      // B starts at zero; move it so that the adapters change the output.
      for (const [name, v] of trainable) if (name.includes('lora_B')) v.assign(tf.mul(tf.onesLike(v), 0.05));
      model.lora = lora;
      setParamsTrainable(model.params, false);
      try {
        const shared = ids(40, 15);
        const rows = [[...shared, ...ids(26, 16)], [...shared, ...ids(9, 17)], ids(30, 5)];
        const vars = [...trainable.values()];
        const viaEngine = await evaluate(model, rows, 'right', true, vars);
        const viaGraph = await evaluate(model, rows, 'right', false, vars);
        expect(maxRelErr(viaEngine.logp.flat(), viaGraph.logp.flat())).toBeLessThan(1e-5);
        for (const [name, g] of viaGraph.grads) {
          expect(Math.max(...Array.from(g, Math.abs)), name).toBeGreaterThan(0);
          expect(maxRelErr(viaEngine.grads.get(name)!, g), name).toBeLessThan(1e-4);
        }
      } finally {
        model.lora = undefined;
        setParamsTrainable(model.params, true);
        disposeLora(lora);
      }
    });

    it('generation: the same tokens and log-probs as the tfjs KV cache, and a second call that extends the first reuses its rows', async () => {
      const prompts = [ids(20, 9), ids(33, 10), ids(20, 9)]; // rows 0 and 2 repeat one prompt
      const opts = { maxNewTokens: 12, temperature: 0 };
      setEngineEnabled(false);
      const graph = await model.generate(prompts, opts);
      setEngineEnabled(true);
      const engine = await model.generate(prompts, opts);
      expect(engine.map((r) => r.tokens)).toEqual(graph.map((r) => r.tokens));
      expect(
        maxRelErr(
          engine.flatMap((r) => r.logprobs),
          graph.flatMap((r) => r.logprobs),
        ),
      ).toBeLessThan(1e-4);
      // Turn 2: each context = prompt + its generated tokens + an observation.
      const next = prompts.map((p, b) => [...p, ...engine[b].tokens, ...ids(7, 20 + b)]);
      const reused = await model.generate(next, { maxNewTokens: 6, temperature: 0 });
      setEngineEnabled(false);
      const fresh = await model.generate(next, { maxNewTokens: 6, temperature: 0 });
      setEngineEnabled(true);
      expect(reused.map((r) => r.tokens)).toEqual(fresh.map((r) => r.tokens));
      expect(
        maxRelErr(
          reused.flatMap((r) => r.logprobs),
          fresh.flatMap((r) => r.logprobs),
        ),
      ).toBeLessThan(1e-4);
    });
  });
}
