import { describe, expect, it } from 'vitest';
import { groupAdvantages } from '../core/advantages';
import { resolveConfig } from './config';
import { getRecipe } from './registry';
import { createHandSearchGroup, createTinySearchSetup, FINITE_STEP_METRICS, runOneStep } from './searchTestKit';
import './index';

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

  it('runs one training step on a tiny model with finite metrics', async () => {
    const { metrics } = await runOneStep('gspo');
    for (const key of FINITE_STEP_METRICS) expect(Number.isFinite(metrics[key]), key).toBe(true);
    expect(metrics.grad_norm).toBeGreaterThan(0);
  }, 120_000);
});
