import * as tf from '@tensorflow/tfjs-core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdamW } from './adamw';
import { createLora, disposeLora, mergeLora } from './lora';
import { readArray, useCpuBackend } from './testBackend';
import { makeValues } from './toyModels';
import { trainStep } from './trainStep';
import type { LoraMap, ParamMap } from './types';

beforeAll(useCpuBackend);

const disposables: { dispose(): void }[] = [];
afterEach(() => {
  disposables.splice(0).forEach((d) => d.dispose());
});

/**
 * The contract of the model's `applyLinear` (src/model/qwen3/linear.ts), restated here so
 * this test does not depend on it: y = x Wᵀ + scale · (x Aᵀ) Bᵀ. x [N, in] → [N, out].
 */
function applyLinearRef(
  x: tf.Tensor2D,
  name: string,
  params: ReadonlyMap<string, tf.Tensor>,
  lora?: LoraMap,
): tf.Tensor2D {
  const y: tf.Tensor2D = tf.matMul(x, params.get(name) as tf.Tensor2D, false, true); // [N, out]
  const adapter = lora?.get(name);
  if (adapter === undefined) return y;
  const xa: tf.Tensor2D = tf.matMul(x, adapter.A as tf.Tensor2D, false, true); // [N, r]
  return tf.add(y, tf.mul(tf.matMul(xa, adapter.B as tf.Tensor2D, false, true), adapter.scale)); // [N, out]
}

function makeTinyQwenParams(): ParamMap {
  const shapes: [string, number[]][] = [
    ['model.layers.0.self_attn.q_proj.weight', [4, 6]],
    ['model.layers.0.self_attn.k_proj.weight', [2, 6]],
    ['model.layers.0.mlp.down_proj.weight', [6, 5]],
    ['model.layers.0.input_layernorm.weight', [6]],
    ['model.layers.1.self_attn.q_proj.weight', [4, 6]],
  ];
  const params: ParamMap = new Map(
    shapes.map(([name, shape], i) => [
      name,
      tf.variable(
        tf.tensor(
          makeValues(
            shape.reduce((a, b) => a * b, 1),
            100 + i,
          ),
          shape,
        ),
      ),
    ]),
  );
  disposables.push(...params.values());
  return params;
}

const Q0 = 'model.layers.0.self_attn.q_proj.weight';
const DOWN0 = 'model.layers.0.mlp.down_proj.weight';

describe('createLora', () => {
  it('adapts the target modules with A [r, in] in ±1/√in, B = 0, scale = alpha / rank, PEFT names', async () => {
    const params = makeTinyQwenParams();
    const { lora, trainable } = createLora(params, { rank: 2, alpha: 4, targetModules: ['q', 'down'], seed: 1 });
    disposables.push({ dispose: () => disposeLora(lora) });
    expect([...lora.keys()]).toEqual([Q0, DOWN0, 'model.layers.1.self_attn.q_proj.weight']);
    expect([...trainable.keys()]).toEqual([
      'model.layers.0.self_attn.q_proj.lora_A.weight',
      'model.layers.0.self_attn.q_proj.lora_B.weight',
      'model.layers.0.mlp.down_proj.lora_A.weight',
      'model.layers.0.mlp.down_proj.lora_B.weight',
      'model.layers.1.self_attn.q_proj.lora_A.weight',
      'model.layers.1.self_attn.q_proj.lora_B.weight',
    ]);
    const down = lora.get(DOWN0)!;
    expect(down.scale).toBe(2); // 4 / 2
    expect(down.A.shape).toEqual([2, 5]); // [r, in]
    expect(down.B.shape).toEqual([6, 2]); // [out, r]
    expect(await readArray(down.B)).toEqual(new Array(12).fill(0));
    const a = await readArray(down.A);
    expect(Math.max(...a.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(5));
    expect(new Set(a).size).toBe(10); // random, not constant
    expect(trainable.get('model.layers.0.mlp.down_proj.lora_A.weight')).toBe(down.A);

    // Same seed → same A for the same weight, whatever the other targets; another seed → another A.
    const again = createLora(params, { rank: 2, alpha: 4, targetModules: ['down'], seed: 1 });
    const other = createLora(params, { rank: 2, alpha: 4, targetModules: ['down'], seed: 2 });
    disposables.push({ dispose: () => disposeLora(again.lora) }, { dispose: () => disposeLora(other.lora) });
    expect(await readArray(again.lora.get(DOWN0)!.A)).toEqual(a);
    expect(await readArray(other.lora.get(DOWN0)!.A)).not.toEqual(a);
  });

  it('leaves the output unchanged at init (B = 0)', async () => {
    const params = makeTinyQwenParams();
    const { lora } = createLora(params, { rank: 3, alpha: 16, targetModules: ['q'], seed: 5 });
    disposables.push({ dispose: () => disposeLora(lora) });
    const x = tf.tensor2d(makeValues(3 * 6, 9), [3, 6]);
    const base = applyLinearRef(x, Q0, params);
    const adapted = applyLinearRef(x, Q0, params, lora);
    expect(await readArray(adapted)).toEqual(await readArray(base));
    disposables.push(x, base, adapted);
  });

  it('names what is wrong in a bad config', () => {
    const params = makeTinyQwenParams();
    expect(() => createLora(params, { rank: 2, alpha: 4, targetModules: ['qq' as 'q'], seed: 0 })).toThrow(
      /targetModules\[0\] = "qq".*valid: q, k, v, o, gate, up, down/,
    );
    expect(() => createLora(params, { rank: 2, alpha: 4, targetModules: ['gate'], seed: 0 })).toThrow(
      /no weight matches the target modules gate/,
    );
    expect(() => createLora(params, { rank: 3, alpha: 4, targetModules: ['k'], seed: 0 })).toThrow(
      /rank 3 exceeds min\(out, in\) of "model\.layers\.0\.self_attn\.k_proj\.weight"/,
    );
    expect(() => createLora(params, { rank: 0, alpha: 4, targetModules: ['q'], seed: 0 })).toThrow(/rank/);
  });
});

describe('training LoRA and merging it', () => {
  it('trains only A and B (base bit-identical), and the merged weights reproduce base + LoRA', async () => {
    const params = makeTinyQwenParams();
    const baseBefore = new Map(await Promise.all([...params].map(async ([n, p]) => [n, await readArray(p)] as const)));
    const { lora, trainable } = createLora(params, { rank: 2, alpha: 4, targetModules: ['q', 'down'], seed: 3 });
    disposables.push({ dispose: () => disposeLora(lora) });
    const x = tf.tensor2d(makeValues(8 * 6, 21), [8, 6]);
    const z = tf.tensor2d(makeValues(8 * 5, 22), [8, 5]);
    const targetQ = tf.tensor2d(makeValues(8 * 4, 23), [8, 4]);
    const targetDown = tf.tensor2d(makeValues(8 * 6, 24), [8, 6]);
    disposables.push(x, z, targetQ, targetDown);
    const lossFn = (): tf.Scalar =>
      tf.add(
        tf.mean(tf.square(tf.sub(applyLinearRef(x, Q0, params, lora), targetQ))),
        tf.mean(tf.square(tf.sub(applyLinearRef(z, DOWN0, params, lora), targetDown))),
      );
    const optimizer = new AdamW(trainable, { weightDecay: 0.01 });
    disposables.push(optimizer);
    const losses: number[] = [];
    for (let k = 0; k < 30; k++) {
      losses.push(
        (await trainStep({ params: trainable, lossFn, nMicro: 1, optimizer, maxGradNorm: 1, lr: 0.05 })).loss,
      );
    }
    expect(losses[29]).toBeLessThan(0.9 * losses[0]);
    for (const [name, p] of params) expect(await readArray(p), name).toEqual(baseBefore.get(name));
    expect(Math.max(...(await readArray(lora.get(Q0)!.B)).map(Math.abs))).toBeGreaterThan(0);

    const merged = mergeLora(params, lora);
    disposables.push({ dispose: () => merged.forEach((t) => t.dispose()) });
    expect([...merged.keys()]).toEqual([...params.keys()]);
    for (const [name, input] of [
      [Q0, x],
      [DOWN0, z],
    ] as const) {
      const viaMerged = await readArray(tf.tidy(() => applyLinearRef(input, name, merged)));
      const viaLora = await readArray(tf.tidy(() => applyLinearRef(input, name, params, lora)));
      const maxErr = Math.max(...viaLora.map((v, i) => Math.abs(v - viaMerged[i])));
      expect(maxErr, name).toBeLessThan(1e-5);
    }
    // Un-adapted weights are copied exactly.
    const k0 = 'model.layers.0.self_attn.k_proj.weight';
    expect(await readArray(merged.get(k0)!)).toEqual(baseBefore.get(k0));
  });

  it('merges W + scale·B·A by hand', async () => {
    const w = tf.variable(
      tf.tensor2d([
        [1, 2],
        [3, 4],
      ]),
    );
    const A = tf.variable(tf.tensor2d([[1, -1]])); // [r = 1, in = 2]
    const B = tf.variable(tf.tensor2d([[2], [0.5]])); // [out = 2, r = 1]
    disposables.push(w, A, B);
    // B·A = [[2, −2], [0.5, −0.5]]; W + 3·B·A = [[1 + 6, 2 − 6], [3 + 1.5, 4 − 1.5]] = [[7, −4], [4.5, 2.5]].
    const merged = mergeLora(new Map([['w', w]]), new Map([['w', { A, B, scale: 3 }]]));
    expect(await readArray(merged.get('w')!)).toEqual([7, -4, 4.5, 2.5]);
    merged.get('w')!.dispose();
    expect(() => mergeLora(new Map([['w', w]]), new Map([['w', { A: B, B: A, scale: 3 }]]))).toThrow(
      /adapter for "w" has A \[2,1\] and B \[1,2\], incompatible with the weight \[2,2\]/,
    );
    expect(() => mergeLora(new Map([['w', w]]), new Map([['nope', { A, B, scale: 3 }]]))).toThrow(/"nope"/);
  });
});
