import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { clipByGlobalNorm, computeGlobalNorm } from './clip';
import { readArray, useCpuBackend } from './testBackend';

beforeAll(useCpuBackend);

describe('clipByGlobalNorm', () => {
  const makeGrads = () =>
    new Map<string, tf.Tensor>([
      ['a', tf.tensor1d([3, 4])],
      ['b', tf.tensor2d([[12]])],
    ]);

  it('scales every gradient by maxNorm / (‖g‖ + 1e-6) when ‖g‖ > maxNorm, and returns the pre-clip norm', async () => {
    const grads = makeGrads();
    // ‖g‖ = √(3² + 4² + 12²) = √169 = 13; coef = 1 / (13 + 1e-6) ≈ 1/13.
    const { grads: clipped, norm } = clipByGlobalNorm(grads, 1);
    expect(await readArray(norm)).toEqual([13]);
    const a = await readArray(clipped.get('a')!);
    const b = await readArray(clipped.get('b')!);
    expect(a[0]).toBeCloseTo(3 / 13, 6);
    expect(a[1]).toBeCloseTo(4 / 13, 6);
    expect(b[0]).toBeCloseTo(12 / 13, 6);
    expect(clipped.get('b')!.shape).toEqual([1, 1]);
    // The clipped global norm is maxNorm (up to the 1e-6 guard).
    const after = computeGlobalNorm(clipped);
    expect((await after.data())[0]).toBeCloseTo(1, 5);
    [...grads.values(), ...clipped.values(), norm, after].forEach((t) => t.dispose());
  });

  it('leaves gradients unchanged when ‖g‖ ≤ maxNorm or maxNorm is Infinity', async () => {
    for (const maxNorm of [100, Infinity]) {
      const grads = makeGrads();
      const { grads: clipped, norm } = clipByGlobalNorm(grads, maxNorm);
      // coef = min(1, 100 / 13.000001) = 1.
      expect(await readArray(norm)).toEqual([13]);
      expect(await readArray(clipped.get('a')!)).toEqual([3, 4]);
      expect(await readArray(clipped.get('b')!)).toEqual([12]);
      [...grads.values(), ...clipped.values(), norm].forEach((t) => t.dispose());
    }
  });

  it('frees its intermediates and rejects a bad maxNorm', () => {
    const grads = makeGrads();
    const before = tf.memory().numTensors;
    const { grads: clipped, norm } = clipByGlobalNorm(grads, 1);
    // New tensors: 2 clipped gradients + 1 norm.
    expect(tf.memory().numTensors).toBe(before + 3);
    [...clipped.values(), norm].forEach((t) => t.dispose());
    expect(() => clipByGlobalNorm(grads, 0)).toThrow(/maxNorm/);
    expect(() => clipByGlobalNorm(grads, Number.NaN)).toThrow(/maxNorm/);
    expect(tf.memory().numTensors).toBe(before);
    grads.forEach((t) => t.dispose());
  });
});
