import * as tf from '@tensorflow/tfjs-core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { accumulateGradients } from './accumulate';
import { AdamW, isNormOrBias } from './adamw';
import { readArray, useCpuBackend } from './testBackend';
import { computeMlpLoss, createMlp, makeValues } from './toyModels';
import { trainStep } from './trainStep';
import type { ParamMap } from './types';

beforeAll(useCpuBackend);

const disposables: { dispose(): void }[] = [];
afterEach(() => {
  disposables.splice(0).forEach((d) => d.dispose());
});

/** Linear regression y = x·w + b, N = 8 rows, 3 features. */
function makeRegression() {
  const xValues = makeValues(8 * 3, 7);
  const yValues = Array.from(
    { length: 8 },
    (_, n) => xValues[3 * n] - 2 * xValues[3 * n + 1] + 0.5 * xValues[3 * n + 2] + 0.3,
  );
  const x = tf.tensor2d(xValues, [8, 3]);
  const y = tf.tensor2d(yValues, [8, 1]);
  const params: ParamMap = new Map<string, tf.Variable>([
    ['lin.weight', tf.variable(tf.tensor2d([[0.1, 0.2, -0.1]]))],
    ['lin.bias', tf.variable(tf.tensor1d([0]))],
  ]);
  disposables.push(x, y, ...params.values());
  /** Mean squared error on rows [start, end). */
  const lossOn = (start: number, end: number): tf.Scalar => {
    const xs = tf.slice(x, [start, 0], [end - start, 3]);
    const ys = tf.slice(y, [start, 0], [end - start, 1]);
    const pred = tf.add(tf.matMul(xs, params.get('lin.weight')!, false, true), params.get('lin.bias')!); // [n, 1]
    return tf.mean(tf.square(tf.sub(pred, ys)));
  };
  /** Hand-derived full-batch gradient: dL/dw_j = (2/N) Σ_n r_n x_nj, dL/db = (2/N) Σ_n r_n, r = pred − y. */
  const computeAnalytic = (w: number[], b: number) => {
    const gw = [0, 0, 0];
    let gb = 0;
    let loss = 0;
    for (let n = 0; n < 8; n++) {
      const r = w[0] * xValues[3 * n] + w[1] * xValues[3 * n + 1] + w[2] * xValues[3 * n + 2] + b - yValues[n];
      loss += (r * r) / 8;
      for (let j = 0; j < 3; j++) gw[j] += (2 / 8) * r * xValues[3 * n + j];
      gb += (2 / 8) * r;
    }
    return { gw, gb, loss };
  };
  return { params, lossOn, computeAnalytic };
}

describe('accumulateGradients', () => {
  it('mean over 4 micro-batches of 2 equals the full-batch gradient of the mean loss', async () => {
    const { params, lossOn, computeAnalytic } = makeRegression();
    const { gw, gb, loss } = computeAnalytic([0.1, 0.2, -0.1], 0);
    const acc = accumulateGradients(params, (i) => lossOn(2 * i, 2 * i + 2), 4, 'mean');
    const full = accumulateGradients(params, () => lossOn(0, 8), 1);
    for (const [name, want] of [
      ['lin.weight', gw],
      ['lin.bias', [gb]],
    ] as const) {
      const got = await readArray(acc.grads.get(name)!);
      const gotFull = await readArray(full.grads.get(name)!);
      want.forEach((v, j) => {
        expect(got[j]).toBeCloseTo(v, 5);
        expect(got[j]).toBeCloseTo(gotFull[j], 6);
      });
    }
    expect((await acc.loss.data())[0]).toBeCloseTo(loss, 5);
    [...acc.grads.values(), acc.loss, ...full.grads.values(), full.loss].forEach((t) => t.dispose());
  });

  it("'sum' adds the micro-batch gradients without averaging", async () => {
    const { params, lossOn } = makeRegression();
    // Each micro loss is (1/2)·Σ over its 2 rows; dividing by 4 micro-batches gives the full mean.
    const summed = accumulateGradients(params, (i) => tf.div(lossOn(2 * i, 2 * i + 2), 4), 4, 'sum');
    const mean = accumulateGradients(params, (i) => lossOn(2 * i, 2 * i + 2), 4, 'mean');
    const a = await readArray(summed.grads.get('lin.weight')!);
    const b = await readArray(mean.grads.get('lin.weight')!);
    a.forEach((v, j) => expect(v).toBeCloseTo(b[j], 6));
    [...summed.grads.values(), summed.loss, ...mean.grads.values(), mean.loss].forEach((t) => t.dispose());
  });

  it('rejects a non-scalar loss clearly and leaks nothing', () => {
    const { params, lossOn } = makeRegression();
    const before = tf.memory().numTensors;
    expect(() =>
      accumulateGradients(
        params,
        (i) => (i === 1 ? (tf.stack([lossOn(0, 2), lossOn(2, 4)]) as unknown as tf.Scalar) : lossOn(0, 2)),
        3,
      ),
    ).toThrow(/lossFn\(1\) must return a scalar tensor, got a tensor of shape \[2\]/);
    expect(tf.memory().numTensors).toBe(before);
    expect(() => accumulateGradients(params, () => lossOn(0, 2), 0)).toThrow(/nMicro/);
  });
});

describe('trainStep', () => {
  it('returns the pre-update loss and grad norm, and moves each param by lr on the first Adam step', async () => {
    const { params, lossOn, computeAnalytic } = makeRegression();
    const { gw, gb, loss } = computeAnalytic([0.1, 0.2, -0.1], 0);
    const optimizer = new AdamW(params, { weightDecay: 0, eps: 1e-12 });
    disposables.push(optimizer);
    const result = await trainStep({
      params,
      lossFn: (i) => lossOn(4 * i, 4 * i + 4),
      nMicro: 2,
      optimizer,
      maxGradNorm: 1e9,
      lr: 0.01,
    });
    // grad_norm = √(Σ gw² + gb²); loss is the full-batch mean squared error.
    expect(result.loss).toBeCloseTo(loss, 5);
    expect(result.gradNorm).toBeCloseTo(Math.hypot(...gw, gb), 5);
    // First AdamW step with wd = 0: m̂ = g, √v̂ = |g|, so p ← p − lr·sign(g) (clipping rescales g, not its sign).
    const w = await readArray(params.get('lin.weight')!);
    [0.1, 0.2, -0.1].forEach((w0, j) => expect(w[j]).toBeCloseTo(w0 - 0.01 * Math.sign(gw[j]), 6));
    expect((await readArray(params.get('lin.bias')!))[0]).toBeCloseTo(-0.01 * Math.sign(gb), 6);
  });

  it('trains a 2-layer MLP: the loss drops, and two steps leak no tensors', async () => {
    const params = createMlp(4, 8, 11);
    const x = tf.tensor2d(makeValues(16 * 4, 3), [16, 4]);
    const y = tf.tidy(() => tf.sin(tf.sum(x, 1, true)) as tf.Tensor2D); // [16, 1]
    disposables.push(x, y, ...params.values());
    const optimizer = new AdamW(params, { weightDecay: 0.01, isNoDecay: isNormOrBias });
    disposables.push(optimizer);
    const step = () =>
      trainStep({
        params,
        lossFn: (i) => computeMlpLoss(params, x, y, 4 * i, 4 * i + 4),
        nMicro: 4,
        optimizer,
        maxGradNorm: 1,
        lr: 0.03,
      });

    const before = tf.memory().numTensors;
    const first = await step();
    const afterOne = tf.memory().numTensors;
    await step();
    expect(afterOne).toBe(before);
    expect(tf.memory().numTensors).toBe(before);

    let last = first;
    for (let k = 0; k < 40; k++) last = await step();
    expect(Number.isFinite(first.gradNorm)).toBe(true);
    expect(last.loss).toBeLessThan(0.5 * first.loss);
  });

  it('refuses params the optimiser does not manage, and bad numbers, before any work', async () => {
    const { params, lossOn } = makeRegression();
    const onlyWeight = new Map([['lin.weight', params.get('lin.weight')!]]);
    const optimizer = new AdamW(onlyWeight);
    disposables.push(optimizer);
    const args = { params, lossFn: () => lossOn(0, 8), nMicro: 1, optimizer, maxGradNorm: 1, lr: 0.1 };
    await expect(trainStep(args)).rejects.toThrow(/"lin\.bias" is not managed by the optimizer/);
    await expect(trainStep({ ...args, params: onlyWeight, lr: Number.NaN })).rejects.toThrow(/lr/);
    await expect(trainStep({ ...args, params: onlyWeight, maxGradNorm: 0 })).rejects.toThrow(/maxGradNorm/);
  });
});
