/**
 * MatchTIR credit through the whole scoring path (`scoreMatchTir`, the `matchtir` and
 * `pact` recipes) on rollouts played through the real environment, against numbers worked
 * out by hand: the default combines A^g + A^ℓ (PACT App. B), 'mean' halves it (MatchTIR's
 * released code).
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config';
import { getRecipe } from '../registry';
import { createHandToolUseRollout, createTinyToolUseTasks } from '../testing/searchTestKit';
import { scoreMatchTir } from './toolUseScoring';
import { createToolUsePrompts } from '../train/trainer';
import type { RolloutGroup } from '../types';
import '../index';

/**
 * Task: birth year of Fe Jora, gold get_birth_year {person: "Fe Jora"}, answer 1969. K = 3:
 *   0: the gold call (S = (1 + 1 + 1)/(2 + 1) = 1), then "1969" (F1 1)      r = [1, 1]
 *   1: person "Fe" (name and keys right, value wrong: S = (1 + 1 + 0)/3 = 2/3), then "1969"   r = [2/3, 1]
 *   2: answers "1970" at once (F1 0)                                          r = [0]
 * γ = 0.9: R^ℓ = [1.9, 1], [2/3 + 0.9 = 1.566667, 1], [0].
 *   turn 0: [1.9, 1.566667, 0], mean 1.155556, std 1.014524 → A^ℓ = [0.733786, 0.405225, −1.139011]
 *   turn 1: [1, 1] → std 0 → A^ℓ = [0, 0]
 *   R = [2, 1.666667, 0], mean 1.222222, std 1.071517 → A^g = [0.725866, 0.414780, −1.140646]
 */
const SUM = [[1.459652, 0.725866], [0.820005, 0.41478], [-2.279657]];
const MEAN = SUM.map((row) => row.map((a) => a / 2));

async function buildGroup(): Promise<RolloutGroup> {
  const task = createTinyToolUseTasks().trainTasks[0];
  expect(task.goldCalls).toEqual([{ name: 'get_birth_year', arguments: { person: 'Fe Jora' } }]);
  const call = (person: string) =>
    `<think>a</think><tool_call>{"name": "get_birth_year", "arguments": {"person": "${person}"}}</tool_call>`;
  const rollouts = await Promise.all([
    createHandToolUseRollout(task, [call('Fe Jora'), '<think>b</think><answer>1969</answer>']),
    createHandToolUseRollout(task, [call('Fe'), '<think>b</think><answer>1969</answer>']),
    createHandToolUseRollout(task, ['<think>c</think><answer>1970</answer>']),
  ]);
  return { prompt: createToolUsePrompts([task])[0], rollouts };
}

function expectAdvantages(actual: number[][], expected: number[][]): void {
  expect(actual.map((row) => row.length)).toEqual(expected.map((row) => row.length));
  actual.forEach((row, k) =>
    row.forEach((a, t) => expect(a, `rollout ${k}, turn ${t}`).toBeCloseTo(expected[k][t], 5)),
  );
}

describe('MatchTIR advantages through scoreMatchTir', () => {
  it('default: A = A^g + A^ℓ (PACT App. B) for matchtir and pact alike', async () => {
    const group = await buildGroup();
    for (const recipe of ['matchtir', 'pact']) {
      const config = resolveConfig({ recipe });
      expect(config.advantageCombine).toBe('sum');
      const score = getRecipe(recipe).scoreGroup(group, { step: 0, config, rng: undefined as never });
      expect(score.rewards.map((r) => +r.toFixed(9))).toEqual([2, +(5 / 3).toFixed(9), 0]);
      expectAdvantages(score.turnAdvantages, SUM);
    }
  });

  it("'mean': (A^g + A^ℓ)/2, MatchTIR's released code", async () => {
    const group = await buildGroup();
    const score = scoreMatchTir(group, resolveConfig({ recipe: 'matchtir', advantageCombine: 'mean' }));
    expectAdvantages(score.turnAdvantages, MEAN);
  });
});
