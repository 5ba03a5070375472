// Building blocks with hand-computed numbers: RMSNorm, rotate-half RoPE, the embedding
// gradient (on cpu and wasm: wasm lacks UnsortedSegmentSum), LoRA in applyLinear, and
// the frozen-weight branch of the chunked log-prob op.
import { describe, expect, it } from 'vitest';
import * as tf from './tf';
import { selectBackend, type BackendName } from '../backend';
import { getNodeWasmPaths } from './node';
import { applyRmsNorm, embedTokens, scatterAddRows } from './layers';
import { applyRope, computeRopeTables, computeRopeTablesForHostPositions, rotateHalf } from './rope';
import { applyLinear, type LoraMap } from './linear';
import { computeChunkedTargetLogprobs } from './logprobs';
import { applyBatchMatMul, applyMatMulWeightT } from './matmul';

const close = (got: ArrayLike<number>, want: number[], tol = 1e-5) => {
  expect(got.length).toBe(want.length);
  want.forEach((w, i) => expect(Math.abs(got[i] - w), `index ${i}: ${got[i]} vs ${w}`).toBeLessThan(tol));
};

for (const backend of ['cpu', 'wasm'] as BackendName[]) {
  describe(`layers on ${backend}`, () => {
    it('selects the backend', async () => {
      expect((await selectBackend(backend, { wasmPaths: getNodeWasmPaths() })).backend).toBe(backend);
    });

    it('RMSNorm: [3, 4]·g with g = [1, 2]', async () => {
      // mean(x²) = (9 + 16) / 2 = 12.5; 1/√12.5 = 0.282843 → [0.848528, 2.262742]
      const y = applyRmsNorm(tf.tensor1d([3, 4]), tf.tensor1d([1, 2]), 0);
      close(await y.data(), [3 * 0.2828427, 4 * 0.2828427 * 2]);
    });

    it('rotate_half and RoPE', async () => {
      close(await rotateHalf(tf.tensor1d([1, 2, 3, 4])).data(), [-3, -4, 1, 2]);
      // D = 4, theta = 100: inv_freq = [1, 100^(−1/2) = 0.1]; position 1 → angles [1, 0.1, 1, 0.1].
      const rope = computeRopeTables(tf.tensor2d([[1]]), 4, 100, 2);
      const x = tf.tensor4d([1, 0, 0, 0], [1, 1, 1, 4]);
      // x·cos + rotate_half(x)·sin = [cos 1, 0, 0, 0] + [0, 0, 1·sin 1, 0]
      close(await applyRope(x, rope).data(), [Math.cos(1), 0, Math.sin(1), 0]);
      // The host-position path gives the same table: position 1, angles [1, 0.1].
      const hostRope = computeRopeTablesForHostPositions([1], 4, 100);
      close(await hostRope.cos.data(), [Math.cos(1), Math.cos(0.1), Math.cos(1), Math.cos(0.1)]);
      close(await hostRope.sin.data(), [Math.sin(1), Math.sin(0.1), Math.sin(1), Math.sin(0.1)]);
    });

    it('embedding gradient scatters rows (ids [2, 0, 2])', async () => {
      const table = tf.variable(
        tf.tensor2d([
          [1, 2],
          [3, 4],
          [5, 6],
        ]),
      );
      const ids = tf.tensor2d([[2, 0, 2]], [1, 3], 'int32');
      const c = tf.tensor3d([
        [
          [1, 2],
          [3, 4],
          [5, 6],
        ],
      ]);
      const { value, grads } = tf.variableGrads(() => embedTokens(ids, table).mul(c).sum() as tf.Scalar, [table]);
      // value = (5·1 + 6·2) + (1·3 + 2·4) + (5·5 + 6·6) = 17 + 11 + 61 = 89
      expect((await value.data())[0]).toBeCloseTo(89, 4);
      // row 0 ← c₁ = [3, 4]; row 1 ← 0; row 2 ← c₀ + c₂ = [6, 8]
      close(await grads[table.name].data(), [3, 4, 0, 0, 6, 8]);
      // In chunks of one position, the same.
      close(
        await scatterAddRows(tf.tensor1d([2, 0, 2], 'int32'), c.reshape([3, 2]) as tf.Tensor2D, 3, 3).data(),
        [3, 4, 0, 0, 6, 8],
      );
      // Vocabulary cut into row ranges (V = 5 > N = 3, budget 6 → ranges of ⌊6/3⌋ = 2 rows):
      // ids [4, 1, 4], dy rows [1,2], [3,4], [5,6] → row 1 = [3, 4], row 4 = [1+5, 2+6] = [6, 8].
      close(
        await scatterAddRows(tf.tensor1d([4, 1, 4], 'int32'), c.reshape([3, 2]) as tf.Tensor2D, 5, 6).data(),
        [0, 0, 3, 4, 0, 0, 0, 0, 6, 8],
      );
      table.trainable = false;
      close(await embedTokens(ids, table).data(), [5, 6, 1, 2, 5, 6]);
      table.dispose();
    });

    it('applyLinear adds scale·(x Aᵀ) Bᵀ', async () => {
      // x = [1, 2]; W = [[1, 0], [0, 1], [1, 1]] → x Wᵀ = [1, 2, 3]
      // A = [[1, 1]] → x Aᵀ = 3; B = [[1], [2], [3]] → [3, 6, 9]; scale 0.5 → [1.5, 3, 4.5]
      const params = new Map([
        [
          'w',
          tf.variable(
            tf.tensor2d([
              [1, 0],
              [0, 1],
              [1, 1],
            ]),
          ),
        ],
      ]);
      const lora: LoraMap = new Map([
        ['w', { A: tf.variable(tf.tensor2d([[1, 1]])), B: tf.variable(tf.tensor2d([[1], [2], [3]])), scale: 0.5 }],
      ]);
      const x = tf.tensor2d([[1, 2]]);
      close(await applyLinear(x, 'w', params).data(), [1, 2, 3]);
      close(await applyLinear(x, 'w', params, lora).data(), [2.5, 5, 7.5]);
      expect(() => applyLinear(x, 'missing', params)).toThrow(/missing parameter 'missing'/);
      params.get('w')!.dispose();
      lora.get('w')!.A.dispose();
      lora.get('w')!.B.dispose();
    });

    it('transpose-free matmuls: values and gradients equal tf.matMul and its built-in gradient', async () => {
      const x = tf.variable(
        tf.tensor2d([
          [1, 2, 3],
          [4, 5, 6],
        ]),
      ); // [2, 3]
      const w = tf.variable(
        tf.tensor2d([
          [1, 0, -1],
          [2, 1, 0],
          [0, 3, 1],
          [1, 1, 1],
        ]),
      ); // [4, 3]
      const c = tf.tensor2d([
        [1, 2, 3, 4],
        [5, 6, 7, 8],
      ]);
      const ours = tf.variableGrads(() => applyMatMulWeightT(x, w).mul(c).sum() as tf.Scalar, [x, w]);
      const theirs = tf.variableGrads(() => tf.matMul(x, w, false, true).mul(c).sum() as tf.Scalar, [x, w]);
      expect((await ours.value.data())[0]).toBeCloseTo((await theirs.value.data())[0], 4);
      for (const v of [x, w])
        close(await ours.grads[v.name].data(), Array.from(await theirs.grads[v.name].data()), 1e-4);
      // Hand check of ∂x row 0: Σ_m c[0, m] · w[m] = 1·[1,0,−1] + 2·[2,1,0] + 3·[0,3,1] + 4·[1,1,1] = [9, 15, 6]
      close((await ours.grads[x.name].data()).slice(0, 3), [9, 15, 6]);
      // Frozen weight: ∂x unchanged.
      w.trainable = false;
      const frozen = tf.variableGrads(() => applyMatMulWeightT(x, w).mul(c).sum() as tf.Scalar, [x]);
      close(await frozen.grads[x.name].data(), Array.from(await theirs.grads[x.name].data()), 1e-4);
      // Batched, both layouts.
      const a = tf.variable(
        tf.tensor4d(
          Array.from({ length: 12 }, (_, i) => i / 4),
          [1, 2, 2, 3],
        ),
      );
      const b = tf.variable(
        tf.tensor4d(
          Array.from({ length: 18 }, (_, i) => 1 - i / 9),
          [1, 2, 3, 3],
        ),
      );
      for (const isT of [false, true]) {
        const o = tf.variableGrads(() => applyBatchMatMul(a, b, isT).square().sum() as tf.Scalar, [a, b]);
        const t = tf.variableGrads(() => tf.matMul(a, b, false, isT).square().sum() as tf.Scalar, [a, b]);
        expect((await o.value.data())[0]).toBeCloseTo((await t.value.data())[0], 4);
        for (const v of [a, b]) close(await o.grads[v.name].data(), Array.from(await t.grads[v.name].data()), 1e-4);
      }
      tf.dispose([x, w, c, a, b]);
    });

    it('chunked log-probs: log-softmax values, and ∂h equal with a frozen or trainable head', async () => {
      // h = [[1, 0]], W = [[1, 0], [0, 1], [−1, 0]] → z = [1, 0, −1];
      // lse = log(e + 1 + e⁻¹) = 1.4076059; target 1 → logp = −1.4076059
      const h = tf.variable(
        tf.tensor2d([
          [1, 0],
          [0, 2],
        ]),
      );
      const wData = tf.tensor2d([
        [1, 0],
        [0, 1],
        [-1, 0],
      ]);
      const targets = tf.tensor1d([1, 0], 'int32');
      const w = tf.variable(wData);
      const lp = computeChunkedTargetLogprobs(h, w, targets, false, 3); // one position per chunk
      // row 2: h = [0, 2] → z = [0, 2, 0], target 0 → −log(2 + e²) = −2.2395447
      close(await lp.data(), [-1.4076059, -2.2395447]);
      const gradH = async () => {
        const { grads } = tf.variableGrads(
          () => computeChunkedTargetLogprobs(h, w, targets, true, 3).sum() as tf.Scalar,
          [h],
        );
        return grads[h.name].data();
      };
      const trainableGrad = await gradH();
      w.trainable = false;
      close(await gradH(), Array.from(trainableGrad));
      // ∂logp/∂h for row 1: W[target] − Σ p W; numerically via the same op at ±ε below.
      const eps = 1e-2;
      const f = (d: number) =>
        tf.tidy(
          () =>
            computeChunkedTargetLogprobs(tf.tensor2d([[1 + d, 0]]), w, tf.tensor1d([1], 'int32'), true, 3)
              .sum()
              .dataSync()[0],
        );
      expect(Math.abs((f(eps) - f(-eps)) / (2 * eps) - trainableGrad[0])).toBeLessThan(2e-3);
      tf.dispose([h, w, wData, targets, lp]);
    });
  });
}
