import { describe, expect, it } from 'vitest';
import { gdpoAdvantages } from '../../core/gdpo';
import { resolveConfig } from '../config';
import { assignGdpoAdvantages, GDPO_ADVANTAGE_KEY } from './gdpo';
import { getRecipe } from '../registry';
import {
  createHandSearchGroup,
  createTinySearchSetup,
  FINITE_STEP_METRICS,
  runOneStep,
} from '../testing/searchTestKit';
import '../index';

const prompt = createTinySearchSetup().trainPrompts[0];
const ctx = { step: 0, config: resolveConfig({ recipe: 'gdpo' }), rng: undefined as never };

describe('gdpo', () => {
  // components [F1, format, SRecall]: r0 [1,1,1], r1 [0,1,1], r2 [0,1,0]
  // z_F1 = [1.1547, −0.57735, −0.57735]; z_format = 0 (no spread); z_SRecall = [0.57735, 0.57735, −1.1547]
  // sum = [√3, 0, −√3]; over the batch (this group): mean 0, std √((3 + 0 + 3)/2) = √3 → [1, 0, −1]
  it('feeds the trainer the core GDPO advantages of a hand-built group', () => {
    const group = createHandSearchGroup(prompt);
    const score = getRecipe('gdpo').scoreGroup(group, ctx);
    const expected = [[1, 1], [0, 0], [-1]];
    score.turnAdvantages.forEach((row, k) => {
      expect(row).toHaveLength(expected[k].length);
      row.forEach((a, t) => expect(a).toBeCloseTo(expected[k][t], 5));
    });
    const core = gdpoAdvantages([
      [
        [1, 1, 1],
        [0, 1, 1],
        [0, 1, 0],
      ],
    ]);
    expect(score.turnAdvantages.map((row) => row[0])).toEqual(core[0]);
    expect(score.rewards.map((r) => +r.toFixed(9))).toEqual([1.1, 0.1, 0.1]);
    // its own components, plus the logged-only search rounds (rollouts 0 and 1 searched once)
    expect(score.rewardParts).toEqual({
      f1: [1, 0, 0],
      format: [1, 1, 1],
      search_recall: [1, 1, 0],
      search_rounds: [1, 1, 0],
    });
  });

  it('normalises over the whole batch when collection stored the batch advantages', () => {
    const groups = [createHandSearchGroup(prompt), createHandSearchGroup(prompt)];
    assignGdpoAdvantages(groups, 0.1);
    // sums [√3, 0, −√3] twice: std over 6 = √(12/5) → √3 / √(12/5) = 1.11803
    expect(groups[0].rollouts[0].meta?.[GDPO_ADVANTAGE_KEY]).toBeCloseTo(Math.sqrt(3) / Math.sqrt(12 / 5), 5);
    const score = getRecipe('gdpo').scoreGroup(groups[1], ctx);
    expect(score.turnAdvantages[2][0]).toBeCloseTo(-Math.sqrt(3) / Math.sqrt(12 / 5), 5);
  });

  it('runs one training step on a tiny model with finite metrics', async () => {
    const { metrics, evaluation } = await runOneStep('gdpo');
    for (const key of FINITE_STEP_METRICS) expect(Number.isFinite(metrics[key]), key).toBe(true);
    expect(metrics.grad_norm).toBeGreaterThan(0);
    // the script searches once, then selects
    expect(metrics['reward/search_rounds']).toBe(1);
    expect(evaluation['eval/search_rounds']).toBe(1);
  }, 120_000);
});
