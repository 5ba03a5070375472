import * as tf from '@tensorflow/tfjs-core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdamW } from './adamw';
import {
  assignNamedArrays,
  disposeSnapshot,
  exportTensors,
  importTensors,
  restoreParams,
  snapshotParams,
} from './snapshot';
import { readArray, useCpuBackend } from './testBackend';
import { computeMlpLoss, createMlp, makeValues } from './toyModels';
import { trainStep } from './trainStep';
import type { ParamMap } from './types';

beforeAll(useCpuBackend);

const disposables: { dispose(): void }[] = [];
afterEach(() => {
  disposables.splice(0).forEach((d) => d.dispose());
});

function makeSetup(seed: number) {
  const params = createMlp(3, 5, seed);
  const x = tf.tensor2d(makeValues(8 * 3, 31), [8, 3]);
  const y = tf.tidy(() => tf.cos(tf.sum(x, 1, true)) as tf.Tensor2D); // [8, 1]
  disposables.push(x, y, ...params.values());
  const lossOf = (p: ParamMap) => (i: number) => computeMlpLoss(p, x, y, 4 * i, 4 * i + 4);
  return { params, lossOf };
}

async function readAll(params: ReadonlyMap<string, tf.Tensor>): Promise<Map<string, number[]>> {
  return new Map(await Promise.all([...params].map(async ([n, p]) => [n, await readArray(p)] as const)));
}

async function readLoss(lossFn: (i: number) => tf.Scalar): Promise<number> {
  const loss = tf.tidy(() => lossFn(0));
  const value = (await loss.data())[0];
  loss.dispose();
  return value;
}

describe('weight snapshots (π_ref / π_old)', () => {
  it('stay frozen while the live params train, restore exactly, and free their tensors', async () => {
    const { params, lossOf } = makeSetup(1);
    const optimizer = new AdamW(params);
    disposables.push(optimizer);
    const original = await readAll(params);
    const beforeSnapshot = tf.memory().numTensors;
    const snapshot = snapshotParams(params);
    expect([...snapshot.values()].every((v) => !v.trainable)).toBe(true);
    const lossBefore = await readLoss(lossOf(params));

    for (let k = 0; k < 2; k++)
      await trainStep({ params, lossFn: lossOf(params), nMicro: 2, optimizer, maxGradNorm: 1, lr: 0.05 });
    const trained = await readAll(params);
    expect(trained.get('fc1.weight')).not.toEqual(original.get('fc1.weight'));
    // The snapshot still holds the pre-update weights, and scores like the old policy.
    expect(await readAll(snapshot)).toEqual(original);
    expect(await readLoss(lossOf(snapshot))).toEqual(lossBefore);

    restoreParams(params, snapshot);
    expect(await readAll(params)).toEqual(original);
    disposeSnapshot(snapshot);
    expect(tf.memory().numTensors).toBe(beforeSnapshot);
    // The live params survive the snapshot's disposal.
    expect(await readAll(params)).toEqual(original);
  });

  it('restoreParams refuses a snapshot of another shape or with other names, changing nothing', async () => {
    const { params } = makeSetup(2);
    const original = await readAll(params);
    const other = createMlp(3, 4, 9); // hidden 4 instead of 5
    disposables.push(...other.values());
    expect(() => restoreParams(params, other)).toThrow(
      /"fc1\.weight" is float32 \[4,3\] in the snapshot but float32 \[5,3\] in params/,
    );
    const partial = new Map([...params].filter(([n]) => n !== 'fc2.bias'));
    expect(() => restoreParams(params, partial)).toThrow(/snapshot has no tensor "fc2\.bias"/);
    expect(await readAll(params)).toEqual(original);
  });
});

describe('checkpoint records', () => {
  it('export → import round-trips params, copies the data, and restores into Variables', async () => {
    const { params } = makeSetup(3);
    const records = await exportTensors(params);
    expect(records.map((r) => [r.name, r.shape])).toEqual([
      ['fc1.weight', [5, 3]],
      ['fc1.bias', [5]],
      ['fc2.weight', [1, 5]],
      ['fc2.bias', [1]],
    ]);
    const original = await readAll(params);
    const saved = records[0].data[0];
    records[0].data[0] = 100; // a copy: the live weight does not change
    expect(await readAll(params)).toEqual(original);
    records[0].data[0] = saved;

    const imported = importTensors(records);
    disposables.push({ dispose: () => disposeSnapshot(imported) });
    expect(await readAll(imported)).toEqual(original);

    const fresh = createMlp(3, 5, 77);
    disposables.push(...fresh.values());
    assignNamedArrays(fresh, records);
    expect(await readAll(fresh)).toEqual(original);
  });

  it('assignNamedArrays names the bad record and writes nothing', async () => {
    const { params } = makeSetup(4);
    const original = await readAll(params);
    const records = await exportTensors(params);
    const bad = records.map((r) => (r.name === 'fc2.weight' ? { ...r, shape: [5, 1] } : r));
    expect(() => assignNamedArrays(params, bad)).toThrow(/"fc2\.weight" has shape \[5,1\] but the param has \[1,5\]/);
    expect(() => assignNamedArrays(params, records.slice(1))).toThrow(/no record for param "fc1\.weight"/);
    expect(() =>
      assignNamedArrays(params, [...records, { name: 'extra', shape: [1], data: Float32Array.of(1) }]),
    ).toThrow(/record "extra" has no param/);
    const short = records.map((r) => (r.name === 'fc1.bias' ? { ...r, data: new Float32Array(2) } : r));
    expect(() => assignNamedArrays(params, short)).toThrow(/"fc1\.bias"\): shape \[5\] needs 5 values, data has 2/);
    expect(await readAll(params)).toEqual(original);
    // A partial restore writes only what it is given.
    assignNamedArrays(params, [{ name: 'fc2.bias', shape: [1], data: Float32Array.of(0.25) }], true);
    expect(await readArray(params.get('fc2.bias')!)).toEqual([0.25]);
  });

  it('resuming from params + optimiser records continues to the same numbers as no interruption', async () => {
    // Run A: 4 steps straight. Run B: 2 steps, checkpoint, fresh model + optimiser, restore, 2 steps.
    const a = makeSetup(5);
    const optA = new AdamW(a.params, { weightDecay: 0.1 });
    disposables.push(optA);
    const stepOf = (p: ParamMap, opt: AdamW, k: number) =>
      trainStep({ params: p, lossFn: a.lossOf(p), nMicro: 2, optimizer: opt, maxGradNorm: 0.5, lr: 0.01 * (k + 1) });
    for (let k = 0; k < 2; k++) await stepOf(a.params, optA, k);
    const checkpoint = [...(await exportTensors(a.params)), ...(await optA.exportState())];
    for (let k = 2; k < 4; k++) await stepOf(a.params, optA, k);

    const b = createMlp(3, 5, 99);
    disposables.push(...b.values());
    const optB = new AdamW(b, { weightDecay: 0.1 });
    disposables.push(optB);
    assignNamedArrays(
      b,
      checkpoint.filter((r) => b.has(r.name)),
    );
    optB.importState(checkpoint.filter((r) => !b.has(r.name)));
    for (let k = 2; k < 4; k++) await stepOf(b, optB, k);
    expect(await readAll(b)).toEqual(await readAll(a.params));
  });
});
