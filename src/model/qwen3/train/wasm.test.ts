/**
 * The training step on the wasm backend (the demo's backend in browsers without WebGPU):
 * three AdamW steps of a 2-layer MLP with accumulation and clipping must land on the same
 * weights as on the cpu backend, and leak no tensors.
 */
import * as tf from '@tensorflow/tfjs-core';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdamW, isNormOrBias } from './adamw';
import { readArray, useCpuBackend } from './testBackend';
import { computeMlpLoss, createMlp, makeValues } from './toyModels';
import { trainStep } from './trainStep';

const require = createRequire(import.meta.url);

beforeAll(async () => {
  await useCpuBackend();
  setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')) + '/');
});
afterAll(async () => {
  await tf.setBackend('cpu');
});

async function trainThreeSteps(): Promise<{ weights: number[][]; losses: number[]; leaked: number }> {
  const params = createMlp(4, 6, 13);
  const x = tf.tensor2d(makeValues(12 * 4, 5), [12, 4]);
  const y = tf.tidy(() => tf.sin(tf.sum(x, 1, true)) as tf.Tensor2D); // [12, 1]
  const optimizer = new AdamW(params, { weightDecay: 0.05, isNoDecay: isNormOrBias });
  const before = tf.memory().numTensors;
  const losses: number[] = [];
  for (let k = 0; k < 3; k++) {
    const { loss } = await trainStep({
      params,
      lossFn: (i) => computeMlpLoss(params, x, y, 4 * i, 4 * i + 4),
      nMicro: 3,
      optimizer,
      maxGradNorm: 0.5,
      lr: 0.02,
    });
    losses.push(loss);
  }
  const leaked = tf.memory().numTensors - before;
  const weights = await Promise.all([...params.values()].map(readArray));
  optimizer.dispose();
  [x, y, ...params.values()].forEach((t) => t.dispose());
  return { weights, losses, leaked };
}

describe('trainStep on wasm', () => {
  it('matches the cpu backend within 1e-5 and leaks nothing', async () => {
    await tf.setBackend('cpu');
    const cpu = await trainThreeSteps();
    expect(await tf.setBackend('wasm')).toBe(true);
    expect(tf.getBackend()).toBe('wasm');
    const wasm = await trainThreeSteps();
    expect(wasm.leaked).toBe(0);
    expect(cpu.leaked).toBe(0);
    wasm.losses.forEach((loss, k) => expect(loss).toBeCloseTo(cpu.losses[k], 5));
    expect(wasm.losses[2]).toBeLessThan(wasm.losses[0]);
    const maxErr = Math.max(...wasm.weights.flatMap((w, i) => w.map((v, j) => Math.abs(v - cpu.weights[i][j]))));
    expect(maxErr).toBeLessThan(1e-5);
  });
});
