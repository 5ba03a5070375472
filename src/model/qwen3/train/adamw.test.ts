import * as tf from '@tensorflow/tfjs-core';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AdamW, isNormOrBias } from './adamw';
import { clipByGlobalNorm } from './clip';
import { readArray, useCpuBackend } from './testBackend';

beforeAll(useCpuBackend);

describe('AdamW, hand-computed', () => {
  it('matches three steps computed by hand (β1 = β2 = 0.5, ε = 0, wd = 0.5)', async () => {
    const p = tf.variable(tf.tensor1d([1, -2]));
    const opt = new AdamW(new Map([['p', p]]), { beta1: 0.5, beta2: 0.5, eps: 0, weightDecay: 0.5 });
    const step = (g: number[], lr: number) => tf.tidy(() => opt.applyGradients(new Map([['p', tf.tensor1d(g)]]), lr));

    // Step 1, lr 0.1, g = [2, −4]: decay p·(1 − 0.1·0.5) = [0.95, −1.9];
    // m = 0.5·g = [1, −2], v = 0.5·g² = [2, 8]; m̂ = m/0.5 = [2, −4], √v̂ = √(v/0.5) = [2, 4];
    // p −= 0.1·m̂/√v̂ = 0.1·[1, −1] → [0.85, −1.8].
    step([2, -4], 0.1);
    expect(await readArray(p)).toEqual([expect.closeTo(0.85, 6), expect.closeTo(-1.8, 6)]);

    // Step 2, lr 0.1, g = [0, 2]: decay ·0.95 → [0.8075, −1.71];
    // m = 0.5·[1, −2] + 0.5·[0, 2] = [0.5, 0]; v = 0.5·[2, 8] + 0.5·[0, 4] = [1, 6];
    // bc1 = bc2 = 1 − 0.25 = 0.75; m̂0/√v̂0 = (0.5/0.75)/√(1/0.75) = 0.5/√0.75 = 0.577350;
    // p0 = 0.8075 − 0.1·0.577350 = 0.749765; m1 = 0 so p1 only decays: −1.71.
    step([0, 2], 0.1);
    expect(await readArray(p)).toEqual([expect.closeTo(0.749765, 5), expect.closeTo(-1.71, 6)]);

    // Step 3, lr 0.2, g = [1, 0]: decay ·(1 − 0.2·0.5) = 0.9 → [0.6747885, −1.539];
    // m = [0.75, 0], v = 0.5·[1, 6] + 0.5·[1, 0] = [1, 3]; bc1 = bc2 = 0.875;
    // m̂0/√v̂0 = 0.75/√0.875 = 0.801784; p0 = 0.6747885 − 0.2·0.801784 = 0.514432; p1 = −1.539.
    step([1, 0], 0.2);
    expect(await readArray(p)).toEqual([expect.closeTo(0.514432, 5), expect.closeTo(-1.539, 5)]);
    expect(opt.stepOf('p')).toBe(3);
    opt.dispose();
    p.dispose();
  });

  it('does not decay a no-decay param, and skips a param without gradient', async () => {
    const w = tf.variable(tf.tensor1d([1, 1]));
    const normW = tf.variable(tf.tensor1d([1, 1]));
    const other = tf.variable(tf.tensor1d([5]));
    const params = new Map([
      ['model.layers.0.mlp.up_proj.weight', w],
      ['model.layers.0.input_layernorm.weight', normW],
      ['other', other],
    ]);
    const opt = new AdamW(params, { weightDecay: 0.5, isNoDecay: isNormOrBias });
    // A zero gradient: m = v = 0, so the Adam term is 0/(0 + ε) = 0 and only decay acts:
    // decayed: 1·(1 − 0.1·0.5) = 0.95; no-decay: stays 1. `other` has no gradient: untouched.
    tf.tidy(() =>
      opt.applyGradients(
        new Map([
          ['model.layers.0.mlp.up_proj.weight', tf.zeros([2])],
          ['model.layers.0.input_layernorm.weight', tf.zeros([2])],
        ]),
        0.1,
      ),
    );
    expect(await readArray(w)).toEqual([expect.closeTo(0.95, 6), expect.closeTo(0.95, 6)]);
    expect(await readArray(normW)).toEqual([1, 1]);
    expect(await readArray(other)).toEqual([5]);
    expect(opt.stepOf('other')).toBe(0);
    expect(opt.stepOf('model.layers.0.mlp.up_proj.weight')).toBe(1);
    opt.dispose();
    [w, normW, other].forEach((v) => v.dispose());
  });

  it('rejects gradients for unknown params or of the wrong shape, naming them', () => {
    const p = tf.variable(tf.zeros([2, 3]));
    const opt = new AdamW(new Map([['layer.weight', p]]));
    const g = tf.zeros([3, 2]);
    expect(() => opt.applyGradients(new Map([['layer.weight', g]]), 0.1)).toThrow(
      /"layer\.weight" has shape \[3,2\].*\[2,3\]/,
    );
    expect(() => opt.applyGradients(new Map([['nope', g]]), 0.1)).toThrow(/unknown param "nope"/);
    expect(() => new AdamW(new Map([['p', p]]), { beta1: 1 })).toThrow(/beta1/);
    g.dispose();
    opt.dispose();
    p.dispose();
  });
});

interface Fixture {
  betas: [number, number];
  eps: number;
  weight_decay: number;
  max_norm: number;
  shapes: { w: number[]; b: number[] };
  init: { w: number[]; b: number[] };
  steps: {
    lr: number;
    grad_w: number[];
    grad_b: number[];
    grad_norm: number;
    clipped_grad_w: number[];
    clipped_grad_b: number[];
    w: number[];
    b: number[];
  }[];
  final_state: Record<'w' | 'b', { step: number; exp_avg: number[]; exp_avg_sq: number[] }>;
}

function expectClose(actual: ArrayLike<number>, expected: number[], tol: number, what: string): void {
  expect(actual.length, what).toBe(expected.length);
  const maxErr = Math.max(...expected.map((e, i) => Math.abs(actual[i] - e)));
  expect(maxErr, `${what}: max abs error`).toBeLessThan(tol);
}

describe('AdamW + clip_grad_norm_ against torch 1.13 (fixtures/adamw_fixture.json)', () => {
  const fixture = JSON.parse(
    readFileSync(new URL('./fixtures/adamw_fixture.json', import.meta.url), 'utf8'),
  ) as Fixture;

  it('reproduces five steps of parameters, grad norms and final state', async () => {
    const w = tf.variable(tf.tensor(fixture.init.w, fixture.shapes.w));
    const b = tf.variable(tf.tensor(fixture.init.b, fixture.shapes.b));
    const opt = new AdamW(
      new Map([
        ['w', w],
        ['b', b],
      ]),
      {
        beta1: fixture.betas[0],
        beta2: fixture.betas[1],
        eps: fixture.eps,
        weightDecay: fixture.weight_decay,
        isNoDecay: (name) => name === 'b',
      },
    );
    for (const [i, s] of fixture.steps.entries()) {
      const grads = new Map([
        ['w', tf.tensor(s.grad_w, fixture.shapes.w)],
        ['b', tf.tensor(s.grad_b, fixture.shapes.b)],
      ]);
      const clipped = clipByGlobalNorm(grads, fixture.max_norm);
      expectClose(await clipped.norm.data(), [s.grad_norm], 1e-5 * s.grad_norm, `step ${i} grad_norm`);
      expectClose(await clipped.grads.get('w')!.data(), s.clipped_grad_w, 1e-6, `step ${i} clipped grad w`);
      opt.applyGradients(clipped.grads, s.lr);
      expectClose(await w.data(), s.w, 1e-5, `step ${i} w`);
      expectClose(await b.data(), s.b, 1e-5, `step ${i} b`);
      [...grads.values(), ...clipped.grads.values(), clipped.norm].forEach((t) => t.dispose());
    }
    const state = new Map((await opt.exportState()).map((e) => [e.name, e]));
    for (const name of ['w', 'b'] as const) {
      const ref = fixture.final_state[name];
      expect(state.get(`${name}.step`)!.data[0]).toBe(ref.step);
      expectClose(state.get(`${name}.exp_avg`)!.data, ref.exp_avg, 1e-6, `${name}.exp_avg`);
      expectClose(state.get(`${name}.exp_avg_sq`)!.data, ref.exp_avg_sq, 1e-6, `${name}.exp_avg_sq`);
    }
    opt.dispose();
    w.dispose();
    b.dispose();
  });
});

describe('AdamW state export/import', () => {
  it('a restored optimiser continues exactly like the original', async () => {
    const makeParams = () =>
      new Map([
        [
          'p',
          tf.variable(
            tf.tensor2d([
              [0.3, -0.7],
              [1.1, 0.2],
            ]),
          ),
        ],
      ]);
    const gradAt = (k: number) =>
      tf.tensor2d([
        [Math.sin(k), Math.cos(k)],
        [0.5 * k, -1],
      ]);
    const paramsA = makeParams();
    const optA = new AdamW(paramsA, { weightDecay: 0.1 });
    for (let k = 1; k <= 2; k++) tf.tidy(() => optA.applyGradients(new Map([['p', gradAt(k)]]), 0.05));
    const state = await optA.exportState();
    expect(state.map((e) => e.name)).toEqual(['p.exp_avg', 'p.exp_avg_sq', 'p.step']);

    // B starts from A's weights and state, then both take step 3.
    const paramsB = new Map([['p', tf.variable(paramsA.get('p')!.clone())]]);
    const optB = new AdamW(paramsB, { weightDecay: 0.1 });
    optB.importState(state);
    expect(optB.stepOf('p')).toBe(2);
    for (const opt of [optA, optB]) tf.tidy(() => opt.applyGradients(new Map([['p', gradAt(3)]]), 0.05));
    expect(await readArray(paramsB.get('p')!)).toEqual(await readArray(paramsA.get('p')!));

    // A state with a missing entry or a wrong shape is refused before anything changes.
    expect(() => optB.importState(state.filter((e) => e.name !== 'p.exp_avg_sq'))).toThrow(
      /missing entry "p\.exp_avg_sq"/,
    );
    const badShape = state.map((e) => (e.name === 'p.exp_avg' ? { ...e, shape: [4] } : e));
    expect(() => optB.importState(badShape)).toThrow(/"p\.exp_avg" has shape \[4\], expected \[2,2\]/);
    expect(() => optB.importState([...state, { name: 'q.step', shape: [], data: Float32Array.of(1) }])).toThrow(
      /unknown entry "q\.step"/,
    );
    expect(optB.stepOf('p')).toBe(3);
    for (const opt of [optA, optB]) opt.dispose();
    for (const p of [...paramsA.values(), ...paramsB.values()]) p.dispose();
  });
});

describe('AdamW memory', () => {
  it('construction and dispose leave tf.memory().numTensors where it was (2 moment Variables per parameter, no temporaries)', async () => {
    await useCpuBackend();
    const p = tf.variable(tf.tensor1d([1, 2, 3]));
    const before = tf.memory().numTensors;
    const opt = new AdamW(new Map([['w', p]]), {});
    expect(tf.memory().numTensors - before).toBe(2); // m and v only
    opt.dispose();
    expect(tf.memory().numTensors).toBe(before);
    p.dispose();
  });
});
