/**
 * The tfjs losses against the plain-array references of src/core on the same numbers,
 * and a PACT per-prompt loss on hand-built numbers against the same
 * composition written with src/core.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '../../model/qwen3/tf';
import { useCpuBackend } from '../../model/qwen3/train/testBackend';
import {
  aggregateLoss,
  clipFraction,
  clippedSurrogateMatrix,
  componentSftLoss,
  klK3,
  LOSS_AGGREGATIONS,
  LOSS_AGGREGATION_NAMES,
  type AggregationMode,
} from '../../core/losses';
import {
  aggregateLossTf,
  computeClipIndicator,
  computeClippedSurrogate,
  computeAggregationTotals,
  computeComponentSftLoss,
  computeKlK3,
  computeMaskedSftLoss,
  computePromptLossTerms,
  computeSequenceLogRatio,
  TF_LOSS_AGGREGATIONS,
} from './tfLosses';

beforeAll(useCpuBackend);

// Two rollouts of four positions: new / old log-probs, advantages and a policy mask.
const LOGP_NEW = [
  [-1.0, -0.5, -2.0, -0.1],
  [-0.3, -1.2, -0.7, -3.0],
];
const LOGP_OLD = [
  [-1.3, -0.5, -1.5, -0.1],
  [-0.3, -0.9, -0.9, -1.0],
];
const ADV = [
  [1.5, 1.5, -0.5, 0.0],
  [-1.0, 2.0, 2.0, 0.7],
];
const MASK = [
  [1, 1, 1, 0],
  [0, 1, 1, 1],
];

const t2 = (rows: number[][]) => tf.tensor2d(rows);
async function read(t: tf.Tensor): Promise<number[]> {
  return Array.from(await t.data());
}

describe('tfjs losses agree with src/core', () => {
  it('clipped surrogate per token', async () => {
    const expected = clippedSurrogateMatrix(LOGP_NEW, LOGP_OLD, ADV, { clipLow: 0.2 }).flat();
    const got = await read(computeClippedSurrogate(t2(LOGP_NEW), t2(LOGP_OLD), t2(ADV), 0.2));
    got.forEach((g, i) => expect(g).toBeCloseTo(expected[i], 5));
    // One by hand: token [0][0], r = e^{0.3} = 1.34986, A = 1.5 > 0 → clipped at 1.2: −1.2·1.5 = −1.8.
    expect(got[0]).toBeCloseTo(-1.8, 5);
  });

  it('clip fraction', async () => {
    const lossMask = t2(MASK);
    const ind = computeClipIndicator(tf.sub(t2(LOGP_NEW), t2(LOGP_OLD)) as tf.Tensor2D, t2(ADV), 0.2);
    const got = (await read(tf.div(tf.sum(tf.mul(ind, lossMask)), tf.sum(lossMask))))[0];
    expect(got).toBeCloseTo(clipFraction(LOGP_NEW, LOGP_OLD, ADV, MASK, { clipLow: 0.2 }), 6);
  });

  it('has a tfjs reduction for every registered aggregation mode, and no other', () => {
    expect(Object.keys(TF_LOSS_AGGREGATIONS).sort()).toEqual(LOSS_AGGREGATIONS.names().sort());
    expect(() => aggregateLossTf(t2([[1]]), t2([[1]]), 'toString' as AggregationMode)).toThrow(
      `aggregateLossTf: unknown mode "toString"; valid: ${LOSS_AGGREGATIONS.names().join(', ')}`,
    );
  });

  for (const mode of LOSS_AGGREGATION_NAMES) {
    it(`aggregation ${mode}`, async () => {
      const loss = [
        [0.5, 2.0, -1.0, Number.NaN], // the NaN is masked out and must not leak
        [3.0, 1.0, 0.25, 4.0],
      ];
      const mask = [
        [1, 0.5, 1, 0],
        [0, 0, 0, 0], // a dead row: left out of the seq-mean modes
      ];
      const got = (await read(aggregateLossTf(t2(loss), t2(mask), mode)))[0];
      expect(got).toBeCloseTo(aggregateLoss(loss, mask, mode), 6);
      // With a token normaliser (read by 'seq-mean-token-sum-norm' only).
      const normed = (await read(aggregateLossTf(t2(loss), t2(mask), mode, 3)))[0];
      expect(normed).toBeCloseTo(aggregateLoss(loss, mask, mode, { tokenNormalizer: 3 }), 6);
    });
  }
  it('seq-mean-token-sum-norm by hand: (0.5·1 + 2·0.5 − 1·1 + 0) / (2 rows · 3) = 0.083333', async () => {
    const loss = [
      [0.5, 2.0, -1.0, Number.NaN],
      [3.0, 1.0, 0.25, 4.0],
    ];
    const mask = [
      [1, 0.5, 1, 0],
      [0, 0, 0, 0],
    ];
    expect((await read(aggregateLossTf(t2(loss), t2(mask), 'seq-mean-token-sum-norm', 3)))[0]).toBeCloseTo(0.5 / 6, 6);
  });
  for (const mode of LOSS_AGGREGATION_NAMES) {
    it(`aggregation ${mode} over row chunks with the whole batch's totals adds up to the whole`, async () => {
      const loss = [
        [0.5, 2.0, -1.0, 7.0],
        [3.0, 1.0, 0.25, 4.0],
        [-2.0, 0.5, 1.5, 1.0],
      ];
      const mask = [
        [1, 0.5, 1, 0],
        [0, 0, 0, 0], // dead: not a live row of the seq-mean modes
        [0, 1, 1, 1],
      ];
      const totals = computeAggregationTotals(mask);
      expect(totals).toEqual({ maskSum: 5.5, liveRows: 2, rows: 3, columns: 4 });
      // Chunks {row 0} and {rows 1, 2}; row 0 alone is 3 columns long (a chunk pads only to its own longest row).
      const first = (
        await read(aggregateLossTf(t2([loss[0].slice(0, 3)]), t2([mask[0].slice(0, 3)]), mode, undefined, totals))
      )[0];
      const rest = (await read(aggregateLossTf(t2(loss.slice(1)), t2(mask.slice(1)), mode, undefined, totals)))[0];
      expect(first + rest).toBeCloseTo(aggregateLoss(loss, mask, mode), 6);
    });
  }
  it('token-mean by hand: (0.5·1 + 2·0.5 − 1·1) / 2.5 = 0.2', async () => {
    const got = (await read(aggregateLossTf(t2([[0.5, 2, -1]]), t2([[1, 0.5, 1]]), 'token-mean')))[0];
    expect(got).toBeCloseTo(0.2, 6);
  });

  it('k3 KL per token', async () => {
    const got = await read(computeKlK3(t2(LOGP_NEW), t2(LOGP_OLD)));
    const expected = LOGP_NEW.flatMap((row, i) => row.map((p, t) => klK3(p, LOGP_OLD[i][t])));
    got.forEach((g, i) => expect(g).toBeCloseTo(expected[i], 5));
  });

  it("k3 KL is clamped as verl's low_var_kl, with zero gradient where clamped", async () => {
    // (p, q): (−3, −1) q − p = 2 → e² − 3 = 4.389056; (−9, −1) e⁸ − 9 → 10; (0, −30) → 10.
    const logp = t2([[-3, -9, 0]]);
    const logpRef = t2([[-1, -1, -30]]);
    const got = await read(computeKlK3(logp, logpRef));
    [-3, -9, 0].forEach((p, t) => expect(got[t]).toBeCloseTo(klK3(p, [-1, -1, -30][t]), 5));
    expect(got[0]).toBeCloseTo(Math.exp(2) - 3, 5);
    expect(got.slice(1)).toEqual([10, 10]);
    // d k3 / dp = 1 − e^{q−p}: 1 − e² = −6.389056 at the first token, 0 at the clamped two.
    const grad = tf.grad((x: tf.Tensor) => tf.sum(computeKlK3(x as tf.Tensor2D, logpRef)))(logp);
    const g = await read(grad as tf.Tensor2D);
    expect(g[0]).toBeCloseTo(1 - Math.exp(2), 4);
    expect(Math.abs(g[1])).toBe(0);
    expect(Math.abs(g[2])).toBe(0);
  });

  it('component SFT loss per row, Z = 0 gives 0', async () => {
    const logps = [
      [-0.5, -1.0, -2.0],
      [-0.1, -0.2, -0.3],
    ];
    const mask = [
      [1, 0.8, 0],
      [0, 0, 0],
    ];
    const { loss, z } = computeComponentSftLoss(t2(logps), t2(mask));
    const losses = await read(loss);
    // Row 0 by hand: −(−0.5 − 0.8) / 1.8 = 0.72222.
    expect(losses[0]).toBeCloseTo(componentSftLoss(logps[0], mask[0])!.loss, 6);
    expect(losses[0]).toBeCloseTo(1.3 / 1.8, 6);
    expect(componentSftLoss(logps[1], mask[1])).toBeNull();
    expect(Math.abs(losses[1])).toBe(0);
    expect(await read(z)).toEqual([expect.closeTo(1.8, 6), 0]);
  });

  it("batch-token-mean SFT loss: one division of all rows' Σ m·logp by Σ m, = core token-mean of −logp", async () => {
    const logps = [
      [-0.5, -1.0, -2.0],
      [-0.1, -0.2, Number.NEGATIVE_INFINITY], // masked: must not leak
    ];
    const mask = [
      [1, 0.8, 0],
      [0, 1, 0],
    ];
    const { loss, z } = computeMaskedSftLoss(t2(logps), t2(mask), 'batch-token-mean');
    expect(loss.shape).toEqual([]);
    // −(−0.5 − 0.8 − 0.2) / 2.8 = 0.535714 (the per-row mean would average 0.7222 and 0.2).
    expect((await read(loss))[0]).toBeCloseTo(1.5 / 2.8, 6);
    expect((await read(loss))[0]).toBeCloseTo(
      aggregateLoss(
        logps.map((r) => r.map((v) => -v)),
        mask,
        'token-mean',
      ),
      6,
    );
    expect((await read(z))[0]).toBeCloseTo(2.8, 6);
  });

  it('batch-token-mean is −Σ m·logp / max(Σ m, 1) bit for bit (the gradient up to the sign of its zeros)', async () => {
    const logps = t2([
      [-0.53, -1.07, -2.9, -0.011],
      [-0.13, -3.3, -0.77, -1.9],
    ]);
    const mask = t2([
      [0, 1, 1, 0],
      [1, 1, 0, 1],
    ]);
    const written = (x: tf.Tensor) => x.mul(mask).sum().neg().div(mask.sum().maximum(1)) as tf.Scalar;
    const shared = (x: tf.Tensor) => computeMaskedSftLoss(x as tf.Tensor2D, mask, 'batch-token-mean').loss;
    // Float32 bit patterns; +0 for the zero gradient of masked tokens, which the product with m writes as −0.
    const bits = async (t: tf.Tensor) =>
      Array.from(new Uint32Array(Float32Array.from(await t.data(), (v) => v + 0).buffer));
    expect(await bits(shared(logps))).toEqual(await bits(written(logps)));
    expect(await bits(tf.grad(shared)(logps))).toEqual(await bits(tf.grad(written)(logps)));
  });

  it('GSPO sequence log ratio = masked row mean of logpNew − logpOld', async () => {
    const got = await read(computeSequenceLogRatio(t2(LOGP_NEW), t2(LOGP_OLD), t2(MASK)));
    // Row 0: (0.3 + 0 − 0.5) / 3 = −0.066667; row 1: (−0.3 + 0.2 − 2.0) / 3 = −0.7.
    expect(got.slice(0, 4).every((v) => Math.abs(v - -0.2 / 3) < 1e-6)).toBe(true);
    expect(got.slice(4).every((v) => Math.abs(v - -0.7) < 1e-6)).toBe(true);
  });
});

describe('one PACT prompt loss vs a plain-array computation with src/core', () => {
  // A trace-routed prompt (z = 0, objective Lh+SFT): RL under c^h on two rollouts, k3 KL to
  // π_ref, plus β_SFT·L_SFT over the expert trace with m(s) = [1, 1, 0, λa = 0.5, 0.5].
  const REF = [
    [-1.1, -0.6, -1.9, -0.2],
    [-0.4, -1.0, -0.8, -2.5],
  ];
  const SFT_LOGP = [[-0.2, -1.4, -3.0, -0.6, -0.9]];
  const SFT_MASK = [[1, 1, 0, 0.5, 0.5]];
  const KL_COEF = 0.001;
  const BETA = 0.1;

  function computeReference(mode: AggregationMode, rlWeight: number, sftWeight: number): number {
    const rl = aggregateLoss(clippedSurrogateMatrix(LOGP_NEW, LOGP_OLD, ADV, { clipLow: 0.2 }), MASK, mode);
    const kl = aggregateLoss(
      LOGP_NEW.map((row, i) => row.map((p, t) => klK3(p, REF[i][t]))),
      MASK,
      'token-mean',
    );
    const sft = componentSftLoss(SFT_LOGP[0], SFT_MASK[0])!.loss;
    return rlWeight * (rl + KL_COEF * kl) + sftWeight * sft;
  }

  for (const mode of ['token-mean', 'seq-mean-token-mean'] as const) {
    it(`L_i = L^h + klCoef·KL + β·L_SFT (${mode})`, async () => {
      const terms = computePromptLossTerms(
        {
          logp: t2(LOGP_NEW),
          oldLogp: t2(LOGP_OLD),
          refLogp: t2(REF),
          advantages: t2(ADV),
          mask: t2(MASK),
          level: 'token',
        },
        { logp: t2(SFT_LOGP), mask: t2(SFT_MASK) },
        { clipEps: 0.2, lossAgg: mode, klCoef: KL_COEF, rlWeight: 1, sftWeight: BETA },
      );
      expect((await read(terms.total))[0]).toBeCloseTo(computeReference(mode, 1, BETA), 5);
      // L_SFT by hand: −(−0.2 − 1.4 + 0.5·(−0.6) + 0.5·(−0.9)) / 3 = 2.35 / 3.
      expect((await read(terms.sftLoss))[0]).toBeCloseTo(2.35 / 3, 5);
      expect((await read(terms.tokenCount))[0]).toBe(6);
    });
  }

  it('asymmetric clip ranges [1 − ε_low, 1 + ε_high] match the core reference, loss and clip count', async () => {
    for (const [low, high] of [
      [0.1, 0.3],
      [0.3, 0.05],
    ] as const) {
      const terms = computePromptLossTerms(
        { logp: t2(LOGP_NEW), oldLogp: t2(LOGP_OLD), advantages: t2(ADV), mask: t2(MASK), level: 'token' },
        null,
        { clipEps: low, clipEpsHigh: high, lossAgg: 'token-mean', klCoef: 0, rlWeight: 1, sftWeight: 0 },
      );
      const options = { clipLow: low, clipHigh: high };
      expect((await read(terms.rlLoss))[0]).toBeCloseTo(
        aggregateLoss(clippedSurrogateMatrix(LOGP_NEW, LOGP_OLD, ADV, options), MASK, 'token-mean'),
        5,
      );
      expect((await read(terms.clipSum))[0]).toBeCloseTo(6 * clipFraction(LOGP_NEW, LOGP_OLD, ADV, MASK, options), 5);
    }
  });

  it('an anchored prompt (z = 1, L^x only) has no SFT term', async () => {
    const terms = computePromptLossTerms(
      {
        logp: t2(LOGP_NEW),
        oldLogp: t2(LOGP_OLD),
        refLogp: t2(REF),
        advantages: t2(ADV),
        mask: t2(MASK),
        level: 'token',
      },
      null,
      { clipEps: 0.2, lossAgg: 'token-mean', klCoef: KL_COEF, rlWeight: 1, sftWeight: 0 },
    );
    expect((await read(terms.total))[0]).toBeCloseTo(computeReference('token-mean', 1, 0), 5);
  });

  it('the gradient of L_SFT reaches only the masked log-probs, with weight m/Z', async () => {
    const logp = t2(SFT_LOGP);
    const grad = tf.grad(
      (x: tf.Tensor) =>
        computePromptLossTerms(
          null,
          { logp: x as tf.Tensor2D, mask: t2(SFT_MASK) },
          { clipEps: 0.2, lossAgg: 'token-mean', klCoef: 0, rlWeight: 0, sftWeight: 1 },
        ).total,
    )(logp);
    // ∂/∂logp_n = −m_n / Z, Z = 3.
    const expected = SFT_MASK[0].map((m) => -m / 3);
    (await read(grad)).forEach((g, i) => expect(g).toBeCloseTo(expected[i], 6));
  });
});
