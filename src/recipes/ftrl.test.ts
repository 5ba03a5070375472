import { describe, expect, it } from 'vitest';
import { ADVANTAGE_ESTIMATORS } from '../core/advantages';
import { ftrlReward } from '../core/ftrlReward';
import { resolveConfig } from './config';
import { getRecipe } from './registry';
import { createHandToolUseRollout, createTinyToolUseTasks, FINITE_STEP_METRICS, runOneStep } from './searchTestKit';
import { createToolUsePrompts } from './trainer';
import './index';

const ctx = { step: 0, config: resolveConfig({ recipe: 'ftrl' }), rng: undefined as never };

describe('ftrl', () => {
  it('feeds the trainer the GRPO advantage of the per-step solve reward for a hand-built group', async () => {
    const task = createTinyToolUseTasks().trainTasks[0]; // unsolved_set {get_birth_year: ['1969']}, n = 1
    expect(task.unsolvedSet).toEqual({ get_birth_year: ['1969'] });
    const call = (person: string) => `<think>a</think><tool_call>{"name": "get_birth_year", "arguments": {"person": "${person}"}}</tool_call>`;
    const rollouts = await Promise.all([
      // p = 1, q = 1 → Solve-F1 = 2·1/(1 + 1) = 1, earned at turn 0
      createHandToolUseRollout(task, [call('Fe Jora'), '<think>b</think><answer>1969</answer>']),
      // p = 2 (a failing call, then the right one), q = 1 → 2/(2 + 1) = 2/3, earned at turn 1
      createHandToolUseRollout(task, [call('Nobody Here'), call('Fe Jora'), '<think>b</think><answer>1969</answer>']),
      // p = 0 → 0
      createHandToolUseRollout(task, ['<think>c</think><answer>1970</answer>']),
    ]);
    expect(rollouts[1].callOutputs[0].output).not.toContain('1969');
    const group = { prompt: createToolUsePrompts([task])[0], rollouts };
    const score = getRecipe('ftrl').scoreGroup(group, ctx);
    expect(score.rewards[0]).toBeCloseTo(1, 12);
    expect(score.rewards[1]).toBeCloseTo(2 / 3, 12);
    expect(score.rewards[2]).toBe(0);
    expect(ftrlReward(rollouts[1].transcript!.turns.map((t) => t.outputs), task.unsolvedSet).turnRewards.map((r) => +r.toFixed(9))).toEqual([0, +(2 / 3).toFixed(9), 0]);
    // R = [1, 2/3, 0]: mean 5/9, std √(((4/9)² + (1/9)² + (5/9)²)/2) = √(42/162) = 0.509175
    const sd = Math.sqrt(42 / 162);
    const expected = [[4 / 9 / sd, 4 / 9 / sd], [1 / 9 / sd, 1 / 9 / sd, 1 / 9 / sd], [-5 / 9 / sd]];
    score.turnAdvantages.forEach((row, k) => {
      expect(row).toHaveLength(expected[k].length);
      row.forEach((a, t) => expect(a).toBeCloseTo(expected[k][t], 5));
    });
    const core = ADVANTAGE_ESTIMATORS.get('grpo')(rollouts.map((r) => ftrlReward(r.transcript!.turns.map((t) => t.outputs), task.unsolvedSet).turnRewards));
    expect(score.turnAdvantages).toEqual(core);
  });

  it('runs one training step on a tiny model with finite metrics', async () => {
    const { metrics, evaluation } = await runOneStep('ftrl');
    for (const key of FINITE_STEP_METRICS) expect(Number.isFinite(metrics[key]), key).toBe(true);
    expect(metrics.grad_norm).toBeGreaterThan(0);
    expect(Number.isFinite(evaluation['eval/solve_f1'])).toBe(true);
  }, 120_000);
});
