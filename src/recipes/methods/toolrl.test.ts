import { describe, expect, it } from 'vitest';
import { groupAdvantages } from '../../core/advantages';
import { resolveConfig } from '../config';
import { getRecipe } from '../registry';
import {
  createHandToolUseRollout,
  createTinyToolUseTasks,
  FINITE_STEP_METRICS,
  runOneStep,
} from '../testing/searchTestKit';
import { createToolUsePrompts } from '../train/trainer';
import '../index';

const ctx = { step: 0, config: resolveConfig({ recipe: 'toolrl' }), rng: undefined as never };

describe('toolrl', () => {
  it('feeds the trainer the GRPO advantage of the ToolRL reward for a hand-built group, by either rule', async () => {
    const task = createTinyToolUseTasks().trainTasks[0]; // birth year of Fe Jora: get_birth_year {person}; answer 1969
    expect(task.goldCalls).toEqual([{ name: 'get_birth_year', arguments: { person: 'Fe Jora' } }]);
    const call = (person: string) =>
      `<tool_call>{"name": "get_birth_year", "arguments": {"person": "${person}"}}</tool_call>`;
    const rollouts = await Promise.all([
      // format 1; identical calls → R_correct 3
      createHandToolUseRollout(task, [`<think>a</think>${call('Fe Jora')}`, '<think>b</think><answer>1969</answer>']),
      // last turn lacks <think> → format 0; name 1 + keys 1 + value 0 = 2 of S_max 3 → 6·2/3 − 3 = 1
      createHandToolUseRollout(task, [`<think>a</think>${call('Fe')}`, '<answer>1969</answer>']),
      // format 1; no call
      createHandToolUseRollout(task, ['<think>c</think><answer>1970</answer>']),
    ]);
    const group = { prompt: createToolUsePrompts([task])[0], rollouts };
    const check = (score: ReturnType<ReturnType<typeof getRecipe>['scoreGroup']>, a: number[]) => {
      score.turnAdvantages.forEach((row, k) => {
        expect(row).toHaveLength([2, 2, 1][k]);
        row.forEach((x) => expect(x).toBeCloseTo(a[k], 4));
      });
    };
    // ToolRL's rule: R = format + correct = [4, 1, −2]; mean 1, std √((9 + 0 + 9)/2) = 3 → A = [1, 0, −1].
    const toolrl = getRecipe('toolrl').scoreGroup(group, {
      ...ctx,
      config: resolveConfig({ recipe: 'toolrl', toolrlRule: 'toolrl' }),
    });
    expect(toolrl.rewards).toEqual([4, 1, -2]);
    // answer_f1 (logged only): 1969, 1969, 1970 against 1969.
    expect(toolrl.rewardParts).toEqual({ format: [1, 0, 1], correct: [3, 1, -3], answer_f1: [1, 1, 0] });
    check(toolrl, [1, 0, -1]);
    expect(toolrl.turnAdvantages.map((row) => row[0])).toEqual(groupAdvantages([4, 1, -2]));
    // MatchTIR's compute_toolrl (the default): no format term, 0 without a call: R = [3, 1, 0];
    // mean 4/3, sample std √((25/9 + 1/9 + 16/9)/2) = √(7/3) → A = (5/3, −1/3, −4/3)/√(7/3).
    const matchtir = getRecipe('toolrl').scoreGroup(group, ctx);
    expect(matchtir.rewards).toEqual([3, 1, 0]);
    expect(matchtir.rewardParts).toEqual({ format: [1, 0, 1], correct: [3, 1, 0], answer_f1: [1, 1, 0] });
    check(matchtir, [1.091089, -0.218218, -0.872872]);
  });

  it('runs one training step on a tiny model with finite metrics', async () => {
    const { metrics, evaluation } = await runOneStep('toolrl');
    for (const key of FINITE_STEP_METRICS) expect(Number.isFinite(metrics[key]), key).toBe(true);
    expect(metrics.grad_norm).toBeGreaterThan(0);
    expect(Number.isFinite(evaluation['eval/solve_f1'])).toBe(true);
  }, 120_000);
});
