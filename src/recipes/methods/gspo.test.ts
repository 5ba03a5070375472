import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '../../model/qwen3/tf';
import { useCpuBackend } from '../../model/qwen3/train/testBackend';
import { groupAdvantages } from '../../core/advantages';
import { GSPO_CLIP } from '../../core/gspo';
import { resolveConfig } from '../config';
import { getRecipe } from '../registry';
import {
  createHandSearchGroup,
  createTinySearchSetup,
  FINITE_STEP_METRICS,
  runOneStep,
} from '../testing/searchTestKit';
import { computeAggregationTotals, computePromptLossTerms, type PromptLossOptions } from '../train/tfLosses';
import type { TrainConfig } from '../config';
import type { Recipe } from '../types';
import '../index';

beforeAll(useCpuBackend);

/** The loss options the trainer builds for a recipe (its policyLoss, else the config's). */
function resolveLossOptions(recipe: Recipe, config: TrainConfig): PromptLossOptions {
  return {
    clipEps: config.clipEps,
    lossAgg: config.lossAgg,
    ...recipe.policyLoss?.(config),
    klCoef: 0,
    rlWeight: 1,
    sftWeight: 0,
  };
}

/**
 * Two rollouts, log π_θ − log π_old per policy token (off-policy: a mini-batch after an
 * update): row 0 (A = +1) [0.02, 0, 0.01], row 1 (A = −1) [−0.03, 0.01, ·]. Every token
 * ratio is inside GRPO's [0.8, 1.2]; the sequence ratios are e^{0.01} = 1.010050 and
 * e^{−0.01} = 0.990050, outside GSPO's [1 − 3e-4, 1 + 4e-4].
 */
const LOG_RATIO = [
  [0.02, 0, 0.01],
  [-0.03, 0.01, 0],
];
const MASK = [
  [1, 1, 1],
  [1, 1, 0],
];
const ADVANTAGES = [
  [1, 1, 1],
  [-1, -1, -1],
];

/** The RL loss, clipped-token count and ∂loss/∂logp of the two rows under a recipe's loss options. */
function evaluate(
  recipe: Recipe,
  config: TrainConfig,
  logRatio: number[][],
): { loss: number; clipped: number; grad: number[][] } {
  return tf.tidy(() => {
    const oldLogp = tf.tensor2d([
      [-1, -2, -1.5],
      [-0.5, -1, -3],
    ]);
    const logp = tf.add(oldLogp, tf.tensor2d(logRatio)) as tf.Tensor2D;
    const o = resolveLossOptions(recipe, config);
    const terms = (x: tf.Tensor) =>
      computePromptLossTerms(
        {
          logp: x as tf.Tensor2D,
          oldLogp,
          advantages: tf.tensor2d(ADVANTAGES),
          mask: tf.tensor2d(MASK),
          level: recipe.ratioLevel ?? 'token',
          totals: computeAggregationTotals(MASK),
        },
        null,
        o,
      );
    const t = terms(logp);
    const grad = tf.grad((x: tf.Tensor) => terms(x).rlLoss)(logp);
    return { loss: t.rlLoss.dataSync()[0], clipped: t.clipSum.dataSync()[0], grad: grad.arraySync() as number[][] };
  });
}

const group = createHandSearchGroup(createTinySearchSetup().trainPrompts[0]);
const ctx = { step: 0, config: resolveConfig({ recipe: 'gspo' }), rng: undefined as never };

describe('gspo', () => {
  it('asks the trainer for a sequence-level ratio', () => {
    expect(getRecipe('gspo').ratioLevel).toBe('sequence');
  });

  it('feeds the trainer one GRPO advantage per sequence for a hand-built group', () => {
    const score = getRecipe('gspo').scoreGroup(group, ctx);
    // R = [1.1, 0.1, 0.1]: A = [1.15470, −0.57735, −0.57735], the same on every turn of a rollout
    const s = Math.sqrt(1 / 3);
    [2 * s, -s, -s].forEach((a, k) => score.turnAdvantages[k].forEach((x) => expect(x).toBeCloseTo(a, 5)));
    expect(score.turnAdvantages.map((row) => row[0])).toEqual(groupAdvantages(score.rewards));
  });

  it("uses GSPO's own asymmetric clip range and per-sequence aggregation, not config.clipEps / lossAgg", () => {
    const config = resolveConfig({ recipe: 'gspo', clipEps: 0.2, lossAgg: 'token-mean' });
    expect(getRecipe('gspo').policyLoss!(config)).toEqual({
      clipEps: GSPO_CLIP.clipLow,
      clipEpsHigh: GSPO_CLIP.clipHigh,
      lossAgg: 'seq-mean-token-mean',
    });
    expect([config.gspo.clipLow, config.gspo.clipHigh]).toEqual([3e-4, 4e-4]);
    expect(getRecipe('search_r1').policyLoss).toBeUndefined();
  });

  it('off-policy, clips whole sequences where GRPO clips nothing, and their gradient vanishes', () => {
    const config = resolveConfig({ recipe: 'gspo' });
    const gspo = evaluate(getRecipe('gspo'), config, LOG_RATIO);
    const grpo = evaluate(getRecipe('search_r1'), { ...config, recipe: 'search_r1' }, LOG_RATIO);
    // GSPO: row 0 min(1.010050·1, 1.0004·1) = 1.0004 → −1.0004; row 1 min(−0.990050, −0.9997) → +0.9997;
    // (1/G) Σ_i = (−1.0004 + 0.9997)/2 = −0.00035. Both rows take the clipped branch: 5 tokens, no gradient.
    expect(gspo.loss).toBeCloseTo(-0.00035, 6);
    expect(gspo.clipped).toBe(5);
    gspo.grad.flat().forEach((g) => expect(g).toBeCloseTo(0, 9));
    // GRPO (token ratios, ε 0.2, token-mean): −(e^0.02 + 1 + e^0.01 − e^−0.03 − e^0.01)/5 = −0.209951, nothing clipped.
    expect(grpo.loss).toBeCloseTo(-(Math.exp(0.02) + 1 + Math.exp(0.01) - Math.exp(-0.03) - Math.exp(0.01)) / 5, 6);
    expect(grpo.clipped).toBe(0);
    expect(Math.abs(grpo.grad[0][0])).toBeGreaterThan(0.1);
  });

  it('on-policy, weighs each sequence 1/G whatever its length (GRPO token-mean weighs tokens 1/Σ|y|)', () => {
    const config = resolveConfig({ recipe: 'gspo' });
    const zero = LOG_RATIO.map((row) => row.map(() => 0));
    // ∂/∂logp_t of −A_i·s_i/G with s_i = exp(mean_t Δ_t): −A_i/(G·|y_i|): row 0 −1/6, row 1 +1/4.
    const gspo = evaluate(getRecipe('gspo'), config, zero);
    [-1 / 6, -1 / 6, -1 / 6].forEach((g, t) => expect(gspo.grad[0][t]).toBeCloseTo(g, 6));
    [1 / 4, 1 / 4, 0].forEach((g, t) => expect(gspo.grad[1][t]).toBeCloseTo(g, 6));
    // GRPO token-mean: −A_i/5 on each of the 5 tokens.
    const grpo = evaluate(getRecipe('search_r1'), { ...config, recipe: 'search_r1' }, zero);
    [-0.2, -0.2, -0.2].forEach((g, t) => expect(grpo.grad[0][t]).toBeCloseTo(g, 6));
    [0.2, 0.2, 0].forEach((g, t) => expect(grpo.grad[1][t]).toBeCloseTo(g, 6));
  });

  it('runs one training step on a tiny model with finite metrics; its second mini-batch (off-policy) clips', async () => {
    // Two prompts, one per mini-batch: the second is read after the first's update, and its
    // sequence ratios leave GSPO's [1 − 3e-4, 1 + 4e-4] (Search-R1's ε 0.2 clips none here).
    const { metrics } = await runOneStep('gspo', { batchPrompts: 2, miniBatchPrompts: 1, seed: 3, lr: 1e-3 });
    for (const key of FINITE_STEP_METRICS) expect(Number.isFinite(metrics[key]), key).toBe(true);
    expect(metrics.grad_norm).toBeGreaterThan(0);
    expect(metrics.clip_ratio).toBeGreaterThan(0);
  }, 120_000);
});
