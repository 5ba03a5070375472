import { describe, expect, it } from 'vitest';
import { ADVANTAGE_ESTIMATORS } from '../../core/advantages';
import { ftrlReward } from '../../core/ftrlReward';
import { resolveConfig } from '../config';
import { listFtrlTurns } from './ftrl';
import { getRecipe } from '../registry';
import {
  createHandToolUseRollout,
  createTinyToolUseTasks,
  FINITE_STEP_METRICS,
  runOneStep,
} from '../testing/searchTestKit';
import { createToolUsePrompts } from '../train/trainer';
import '../index';

const ctx = { step: 0, config: resolveConfig({ recipe: 'ftrl' }), rng: undefined as never };

describe('ftrl', () => {
  it("feeds the trainer FTRL's compute_solve_f1 per turn and per-turn GRPO advantages for a hand-built group", async () => {
    const task = createTinyToolUseTasks().trainTasks[0]; // unsolved_set {get_birth_year: ['1969']}, answer 1969
    expect(task.unsolvedSet).toEqual({ get_birth_year: ['1969'] });
    expect(task.answer).toBe('1969');
    const call = (person: string) =>
      `<think>a</think><tool_call>{"name": "get_birth_year", "arguments": {"person": "${person}"}}</tool_call>`;
    const rollouts = await Promise.all([
      // turn 0 solves 1969 with its 1 call: 2·1/(1 + 1) = 1; turn 1 answers with nothing unsolved: 1/(1 + 0) = 1
      createHandToolUseRollout(task, [call('Fe Jora'), '<think>b</think><answer>1969</answer>']),
      // a call that solves nothing: 2·0/2 = 0; then the solving call: 1; then the answer: 1
      createHandToolUseRollout(task, [call('Nobody Here'), call('Fe Jora'), '<think>b</think><answer>1969</answer>']),
      // a malformed call (no call parses, the text holds <tool_call>): −0.3; a wrong answer, 1969 unsolved: 0
      createHandToolUseRollout(task, [
        '<think>c</think><tool_call>{"name": "get_birth_year", "arguments": ',
        '<think>c</think><answer>1970</answer>',
      ]),
    ]);
    expect(rollouts[1].callOutputs[0].output).not.toContain('1969');
    expect(rollouts[2].transcript!.turns[0].calls).toEqual([]);
    const group = { prompt: createToolUsePrompts([task])[0], rollouts };
    const score = getRecipe('ftrl').scoreGroup(group, ctx);
    const turnRewards = rollouts.map((r) => ftrlReward(listFtrlTurns(r), task.unsolvedSet, task.answer).turnRewards);
    expect(turnRewards).toEqual([
      [1, 1],
      [0, 1, 1],
      [-0.3, 0],
    ]);
    expect(score.rewards.map((r) => +r.toFixed(12))).toEqual([2, 2, -0.3]);
    // Per turn across the rollouts that reached it:
    //   turn 0: [1, 0, −0.3], mean 0.233333, std 0.680686 → [1.126313, −0.342791, −0.783522]
    //   turn 1: [1, 1, 0], mean 2/3, std √(1/3) → [0.577350, 0.577350, −1.154700]
    //   turn 2: [1] alone: mean 0, std 1 → 1
    const expected = [
      [1.126313, 0.57735],
      [-0.342791, 0.57735, 1],
      [-0.783522, -1.1547],
    ];
    score.turnAdvantages.forEach((row, k) => {
      expect(row).toHaveLength(expected[k].length);
      row.forEach((a, t) => expect(a, `rollout ${k}, turn ${t}`).toBeCloseTo(expected[k][t], 5));
    });
    expect(score.turnAdvantages).toEqual(ADVANTAGE_ESTIMATORS.get('turn-grpo')(turnRewards));
    expect(score.rewardParts?.solve_f1).toEqual([1, 2 / 3, 0]); // Solve-F1 = 2q/(p + n): 2/2, 2/3, 0/1
    expect(score.rewardParts?.answer_f1).toEqual([1, 1, 0]); // logged only: 1969, 1969, 1970 against 1969
  });

  it('runs one training step on a tiny model with finite metrics', async () => {
    const { metrics, evaluation } = await runOneStep('ftrl');
    for (const key of FINITE_STEP_METRICS) expect(Number.isFinite(metrics[key]), key).toBe(true);
    expect(metrics.grad_norm).toBeGreaterThan(0);
    expect(Number.isFinite(evaluation['eval/solve_f1'])).toBe(true);
  }, 120_000);
});
