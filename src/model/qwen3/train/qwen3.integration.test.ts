/**
 * Integration with the Qwen3 model of src/model/qwen3 (its public facade only): a tiny
 * Qwen3 trained a few steps, full-parameter and with LoRA, sees its next-token loss
 * drop; tensor counts stay flat; the LoRA base stays bit-identical; merged weights give
 * the same logits as base + adapters.
 */
import * as tf from '@tensorflow/tfjs-core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { packTokenRows, Qwen3Model } from '../index';
import { createTinyQwen3Config } from '../../weights/testFolders';
import { AdamW, isNormOrBias } from './adamw';
import { createLora, disposeLora, mergeLora, setParamsTrainable } from './lora';
import { readArray, useCpuBackend } from './testBackend';
import { trainStep } from './trainStep';
import type { ParamMap } from './types';

beforeAll(useCpuBackend);

const disposables: { dispose(): void }[] = [];
afterEach(() => {
  disposables.splice(0).forEach((d) => d.dispose());
});

const TINY = createTinyQwen3Config({ vocab_size: 32, num_hidden_layers: 2, initializer_range: 0.1 });

/** 4 sequences, 2 micro-batches of 2 rows (the second row of each padded by 2). */
function makeBatches() {
  const rows = [
    [1, 2, 3, 4, 5, 6, 7, 8],
    [9, 10, 11, 12, 13, 14],
    [3, 1, 4, 1, 5, 9, 2, 6],
    [2, 7, 1, 8, 2, 8],
  ];
  const batches = [packTokenRows(rows.slice(0, 2), { side: 'right' }), packTokenRows(rows.slice(2), { side: 'right' })];
  for (const b of batches) disposables.push(b.inputIds, b.attentionMask);
  return batches;
}

/** Mean next-token NLL over the real targets of micro-batch i: −Σ logprobs / Σ targetMask. */
function makeLossFn(model: Qwen3Model, batches: ReturnType<typeof makeBatches>) {
  return (i: number): tf.Scalar => {
    const { logprobs, targetMask } = model.computeTokenLogprobs(batches[i].inputIds, batches[i].attentionMask);
    return tf.div(tf.neg(tf.sum(logprobs)), tf.sum(targetMask));
  };
}

describe('training the Qwen3 model', () => {
  it('full-parameter AdamW: loss drops over 6 steps, no tensor growth between steps', async () => {
    const model = Qwen3Model.fromConfig(TINY, 'train-integration');
    disposables.push(model);
    const batches = makeBatches();
    const optimizer = new AdamW(model.params, { weightDecay: 0.01, isNoDecay: isNormOrBias, beta2: 0.95 });
    disposables.push(optimizer);
    const lossFn = makeLossFn(model, batches);
    const step = () => trainStep({ params: model.params, lossFn, nMicro: 2, optimizer, maxGradNorm: 1, lr: 0.01 });
    const beforeFirst = tf.memory().numTensors;
    const first = await step();
    const afterFirst = tf.memory().numTensors;
    expect(afterFirst).toBe(beforeFirst);
    await step();
    expect(tf.memory().numTensors).toBe(afterFirst);
    await step();
    expect(tf.memory().numTensors).toBe(afterFirst);
    let last = first;
    for (let k = 0; k < 3; k++) last = await step();
    // Random init ≈ uniform over 32 tokens: loss ≈ ln 32 ≈ 3.47.
    expect(first.loss).toBeGreaterThan(3);
    expect(first.loss).toBeLessThan(4);
    expect(last.loss).toBeLessThan(first.loss - 0.3);
    expect(Number.isFinite(first.gradNorm) && first.gradNorm > 0).toBe(true);
  });

  it('LoRA on all projections: loss drops, base bit-identical, merged logits equal base + LoRA', async () => {
    const model = Qwen3Model.fromConfig(TINY, 'train-integration-lora');
    disposables.push(model);
    const batches = makeBatches();
    const baseBefore = new Map(
      await Promise.all([...model.params].map(async ([n, p]) => [n, await readArray(p)] as const)),
    );
    setParamsTrainable(model.params, false);
    const { lora, trainable } = createLora(model.params, {
      rank: 2,
      alpha: 4,
      targetModules: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'],
      seed: 7,
    });
    disposables.push({ dispose: () => disposeLora(lora) });
    expect(lora.size).toBe(2 * 7);
    model.lora = lora;
    const optimizer = new AdamW(trainable, { weightDecay: 0 });
    disposables.push(optimizer);
    const lossFn = makeLossFn(model, batches);
    const losses: number[] = [];
    for (let k = 0; k < 6; k++) {
      losses.push(
        (await trainStep({ params: trainable, lossFn, nMicro: 2, optimizer, maxGradNorm: 1, lr: 0.05 })).loss,
      );
    }
    expect(losses[5]).toBeLessThan(losses[0] - 0.05);
    for (const [name, p] of model.params) expect(await readArray(p), name).toEqual(baseBefore.get(name));

    const merged = mergeLora(model.params, lora);
    const mergedVars: ParamMap = new Map([...merged].map(([n, t]) => [n, tf.variable(t, false)]));
    merged.forEach((t) => t.dispose());
    const mergedModel = new Qwen3Model(TINY, mergedVars);
    disposables.push(mergedModel);
    const viaLora = await readArray(tf.tidy(() => model.computeLogits(batches[0].inputIds, batches[0].attentionMask)));
    const viaMerged = await readArray(
      tf.tidy(() => mergedModel.computeLogits(batches[0].inputIds, batches[0].attentionMask)),
    );
    const maxErr = Math.max(...viaLora.map((v, i) => Math.abs(v - viaMerged[i])));
    expect(maxErr).toBeLessThan(1e-4);
    // …and the adapters did change the model: base logits differ.
    model.lora = undefined;
    const viaBase = await readArray(tf.tidy(() => model.computeLogits(batches[0].inputIds, batches[0].attentionMask)));
    expect(Math.max(...viaLora.map((v, i) => Math.abs(v - viaBase[i])))).toBeGreaterThan(1e-2);
  });
});
