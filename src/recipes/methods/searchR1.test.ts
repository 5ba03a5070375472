import { describe, expect, it } from 'vitest';
import { groupAdvantages } from '../../core/advantages';
import { resolveConfig } from '../config';
import { getRecipe } from '../registry';
import {
  createHandSearchGroup,
  createTinySearchSetup,
  FINITE_STEP_METRICS,
  runOneStep,
} from '../testing/searchTestKit';
import '../index';

const group = createHandSearchGroup(createTinySearchSetup().trainPrompts[0]);
const ctx = { step: 0, config: resolveConfig({ recipe: 'search_r1' }), rng: undefined as never };

describe('search_r1', () => {
  it('feeds the trainer the GRPO outcome advantage on every turn of a hand-built group', () => {
    const score = getRecipe('search_r1').scoreGroup(group, ctx);
    // R = [1.1, 0.1, 0.1] (F1 + 0.1 format): mean 0.4333, std 0.57735 → A = [1.15470, −0.57735, −0.57735]
    const s = Math.sqrt(1 / 3);
    const expected = [[2 * s, 2 * s], [-s, -s], [-s]];
    score.turnAdvantages.forEach((row, k) => {
      expect(row).toHaveLength(expected[k].length);
      row.forEach((a, t) => expect(a).toBeCloseTo(expected[k][t], 5));
    });
    const core = groupAdvantages(score.rewards);
    expect(score.turnAdvantages.map((row) => row[0])).toEqual(core);
  });

  it('runs one training step on a tiny model with finite metrics and global search', async () => {
    const { metrics, evaluation, trainer } = await runOneStep('search_r1');
    for (const key of FINITE_STEP_METRICS) expect(Number.isFinite(metrics[key]), key).toBe(true);
    expect(metrics.grad_norm).toBeGreaterThan(0);
    for (const g of trainer.lastGroups)
      for (const r of g.rollouts)
        expect((r.meta?.search as { isCategoryConstrained: boolean }).isCategoryConstrained).toBe(false);
    expect(Number.isFinite(evaluation['eval/f1'])).toBe(true);
  }, 120_000);
});
