// Who declares an engine pass differentiable (runEngineGradients, not tfjs internals), that a
// disagreement with tfjs' tape throws instead of training without gradients, and that the
// session frees forwards whose backward never came, also when the loss throws.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from './tf';
import { selectBackend } from '../backend';
import { Qwen3Model, type Qwen3Config } from './index';
import { packTokenRows } from './batch';
import { isEngineActive } from './engineBridge';
import { getActiveEngineSession, readTfjsTape, runEngineGradients } from './engineSession';
import { getEngineRuntime } from '../engine/runtime';

const CONFIG: Qwen3Config = {
  vocab_size: 64,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 8,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 64,
  initializer_range: 0.2,
};

describe('engine sessions', () => {
  let model: Qwen3Model;
  let vars: tf.Variable[];
  const batch = () => packTokenRows([Array.from({ length: 20 }, (_, i) => (i * 7) % 64), [3, 1, 4, 1, 5, 9, 2, 6]]);
  const lossOf = (out: { logprobs: tf.Tensor2D }) => tf.sum(out.logprobs).neg() as tf.Scalar;

  beforeAll(async () => {
    await selectBackend('cpu');
    model = Qwen3Model.fromConfig(CONFIG, 5);
    vars = [...model.params.values()];
    expect(isEngineActive(model.params, CONFIG)).toBe(true);
  });
  afterAll(() => model.dispose());

  it("reads tfjs' tape as idle outside a gradient call and as recording inside one", () => {
    // If a tfjs upgrade renames gradientDepth this fails here (and the check turns itself off).
    expect(readTfjsTape()).toBe('idle');
    let inside = '';
    const x = tf.variable(tf.scalar(2));
    const { value, grads } = tf.variableGrads(() => {
      inside = readTfjsTape();
      return x.square() as tf.Scalar;
    }, [x]);
    expect(inside).toBe('recording');
    tf.dispose([value, ...Object.values(grads), x]);
  });

  it('gradients through the engine inside runEngineGradients; the same call without it throws with the fix', () => {
    const { inputIds, attentionMask } = batch();
    const { value, grads } = runEngineGradients(() =>
      tf.variableGrads(() => lossOf(model.computeTokenLogprobs(inputIds, attentionMask)), vars),
    );
    expect(Object.keys(grads)).toHaveLength(vars.length);
    expect(Math.max(...Array.from(grads[vars[0].name].dataSync(), Math.abs))).toBeGreaterThan(0);
    expect(getActiveEngineSession()).toBeNull();
    expect(() => tf.variableGrads(() => lossOf(model.computeTokenLogprobs(inputIds, attentionMask)), vars)).toThrow(
      /not declared differentiable.*runEngineGradients/,
    );
    tf.dispose([value, ...Object.values(grads), inputIds, attentionMask]);
  });

  it('a forward inside a session but outside the tape throws (declared differentiable, nothing records)', () => {
    const { inputIds, attentionMask } = batch();
    expect(() => runEngineGradients(() => model.computeTokenLogprobs(inputIds, attentionMask))).toThrow(
      /differentiable.*tfjs records no gradient/,
    );
    tf.dispose([inputIds, attentionMask]);
  });

  it('frees the activations of forwards whose backward never ran, when the call returns and when it throws', () => {
    const { inputIds, attentionMask } = batch();
    // Warm the weight cache so that only activations remain to compare.
    runEngineGradients(() => {
      const r = tf.variableGrads(() => lossOf(model.computeTokenLogprobs(inputIds, attentionMask)), vars);
      tf.dispose([r.value, ...Object.values(r.grads)]);
    });
    const rt = getEngineRuntime();
    const before = rt.allocatedBytes;
    let during = 0;
    const result = runEngineGradients(() =>
      tf.variableGrads(() => {
        const unused = model.computeTokenLogprobs(inputIds, attentionMask); // never reaches the loss
        const used = model.computeTokenLogprobs(inputIds, attentionMask);
        during = rt.allocatedBytes;
        tf.dispose([unused.logprobs, unused.targetMask]);
        return lossOf(used);
      }, vars),
    );
    expect(during).toBeGreaterThan(before);
    expect(rt.allocatedBytes).toBe(before);
    tf.dispose([result.value, ...Object.values(result.grads)]);
    expect(() =>
      runEngineGradients(() =>
        tf.variableGrads(() => {
          model.computeTokenLogprobs(inputIds, attentionMask);
          throw new Error('loss failed');
        }, vars),
      ),
    ).toThrow('loss failed');
    expect(rt.allocatedBytes).toBe(before);
    expect(getActiveEngineSession()).toBeNull();
    tf.dispose([inputIds, attentionMask]);
  });
});
