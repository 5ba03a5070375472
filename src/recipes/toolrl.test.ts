import { describe, expect, it } from 'vitest';
import { groupAdvantages } from '../core/advantages';
import { resolveConfig } from './config';
import { getRecipe } from './registry';
import {
  createHandToolUseRollout,
  createTinyToolUseTasks,
  FINITE_STEP_METRICS,
  runOneStep,
} from './testing/searchTestKit';
import { createToolUsePrompts } from './trainer';
import './index';

const ctx = { step: 0, config: resolveConfig({ recipe: 'toolrl' }), rng: undefined as never };

describe('toolrl', () => {
  it('feeds the trainer the GRPO advantage of the ToolRL reward for a hand-built group', async () => {
    const task = createTinyToolUseTasks().trainTasks[0]; // birth year of Fe Jora: get_birth_year {person}; answer 1969
    expect(task.goldCalls).toEqual([{ name: 'get_birth_year', arguments: { person: 'Fe Jora' } }]);
    const call = (person: string) =>
      `<tool_call>{"name": "get_birth_year", "arguments": {"person": "${person}"}}</tool_call>`;
    const rollouts = await Promise.all([
      // format 1; identical calls → R_correct 3 → R = 4
      createHandToolUseRollout(task, [`<think>a</think>${call('Fe Jora')}`, '<think>b</think><answer>1969</answer>']),
      // last turn lacks <think> → format 0; name 1 + keys 1 + value 0 = 2 of S_max 3 → 6·2/3 − 3 = 1 → R = 1
      createHandToolUseRollout(task, [`<think>a</think>${call('Fe')}`, '<answer>1969</answer>']),
      // format 1; no call → R_correct −3 → R = −2
      createHandToolUseRollout(task, ['<think>c</think><answer>1970</answer>']),
    ]);
    const group = { prompt: createToolUsePrompts([task])[0], rollouts };
    const score = getRecipe('toolrl').scoreGroup(group, ctx);
    expect(score.rewards).toEqual([4, 1, -2]);
    expect(score.rewardParts).toEqual({ format: [1, 0, 1], correct: [3, 1, -3] });
    // mean 1, std √((9 + 0 + 9)/2) = 3 → A = [1, 0, −1] on every turn
    const expected = [[1, 1], [0, 0], [-1]];
    score.turnAdvantages.forEach((row, k) => {
      expect(row).toHaveLength(expected[k].length);
      row.forEach((a, t) => expect(a).toBeCloseTo(expected[k][t], 5));
    });
    expect(score.turnAdvantages.map((row) => row[0])).toEqual(groupAdvantages([4, 1, -2]));
  });

  it('runs one training step on a tiny model with finite metrics', async () => {
    const { metrics, evaluation } = await runOneStep('toolrl');
    for (const key of FINITE_STEP_METRICS) expect(Number.isFinite(metrics[key]), key).toBe(true);
    expect(metrics.grad_norm).toBeGreaterThan(0);
    expect(Number.isFinite(evaluation['eval/solve_f1'])).toBe(true);
  }, 120_000);
});
