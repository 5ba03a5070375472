import { describe, expect, it } from 'vitest';
import { toolSearcherAdvantages } from '../../core/toolSearcherCredit';
import { resolveConfig } from '../config';
import { getRecipe } from '../registry';
import { readToolSearchPrompt, replaySearchTeacherEpisode, type SearchRolloutInfo } from '../rollouts/searchRollouts';
import { summarizeStep } from '../train/stepMetrics';
import type { GroupScore, Rollout, RolloutGroup } from '../types';
import {
  createHandSearchGroup,
  createTinySearchSetup,
  FINITE_STEP_METRICS,
  runOneStep,
} from '../testing/searchTestKit';
import { isToolSearcherConstrained, scoreToolSearcher } from './toolsearcher';
import '../index';

const setup = createTinySearchSetup();
const prompt = setup.trainPrompts[0];
const gold = (prompt as { query: { goldToolIds: string[] } }).query.goldToolIds[0];
// rollout 0: finds the gold tool at turn 0, selects it          → F1 1, format 1 → R = 1.1
// rollout 1: finds it at turn 0, selects something else (none)   → F1 0, format 1 → R = 0.1
// rollout 2: selects nothing at once, never searched             → F1 0, format 1 → R = 0.1

const group = createHandSearchGroup(prompt);
const config = resolveConfig({ recipe: 'toolsearcher', steps: 10 });
const ctx = { step: 0, config, rng: undefined as never };

describe('toolsearcher scoring', () => {
  it('feeds the trainer the core ToolSearcher advantages of a hand-built group', () => {
    const score = getRecipe('toolsearcher').scoreGroup(group, ctx);
    // f = [1,1,0] → z = [0.57735, 0.57735, −1.15470]: search turn 0 of rollouts 0 and 1 gets 0.57735.
    // Selection (TCA): rollouts 0 and 1 finished their search, R = [1.1, 0.1] → ±1/√2;
    // rollout 2 never found the gold tool → 0 (its A_out would be −0.57735).
    const s = Math.sqrt(1 / 3);
    const expected = [[s, Math.SQRT1_2], [s, -Math.SQRT1_2], [0]];
    expect(score.rewards.map((r) => +r.toFixed(9))).toEqual([1.1, 0.1, 0.1]);
    score.turnAdvantages.forEach((row, k) => {
      expect(row).toHaveLength(expected[k].length);
      row.forEach((a, t) => expect(a).toBeCloseTo(expected[k][t], 5));
    });
    const core = toolSearcherAdvantages(
      [
        { nTurns: 2, firstFoundTurns: { [gold]: 0 }, outcomeReward: 1.1 },
        { nTurns: 2, firstFoundTurns: { [gold]: 0 }, outcomeReward: 0.1 },
        { nTurns: 1, firstFoundTurns: { [gold]: null }, outcomeReward: 0.1 },
      ],
      [gold],
    );
    expect(score.turnAdvantages).toEqual(core.turnAdvantages);
    expect(score.rewardParts).toEqual({
      f1: [1, 0, 0],
      format: [1, 1, 1],
      search_recall: [1, 1, 0],
      search_rounds: [1, 1, 0],
    });
  });

  it('follows the ablation toggles', () => {
    const noEvent = scoreToolSearcher(group, { ...config.toolsearcher, eventLevelSearch: false });
    expect(noEvent.turnAdvantages[0][0]).toBeCloseTo(2 * Math.sqrt(1 / 3), 5); // A_out on the search turn
    expect(noEvent.turnAdvantages[0][1]).toBeCloseTo(Math.SQRT1_2, 5); // TCA's selection credit
    const noAlign = scoreToolSearcher(group, { ...config.toolsearcher, trajectoryAlignedCredit: false });
    expect(noAlign.turnAdvantages[1][0]).toBe(1); // 1 of 1 gold tool discovered at turn 0
    const bonus = scoreToolSearcher(group, { ...config.toolsearcher, formatBonus: 0 });
    expect(bonus.rewards).toEqual([1, 0, 0]);
  });

  it('holds "without ESM", "without TCA", Search-R1 and ToolSearcher apart on a hand-built group', () => {
    const s = Math.sqrt(1 / 3);
    const r = Math.SQRT1_2;
    // A_out = [2s, −s, −s]; search turn 0: z = [s, s, ·], |D|/|G| = [1, 1, ·]; TCA selection = [r, −r, 0]
    const expected: Record<string, number[][]> = {
      search_r1: [[2 * s, 2 * s], [-s, -s], [-s]],
      'without ESM': [[2 * s, r], [-s, -r], [0]],
      'without TCA': [[1, 2 * s], [1, -s], [-s]],
      toolsearcher: [[s, r], [s, -r], [0]],
    };
    const scores: Record<string, number[][]> = {
      search_r1: getRecipe('search_r1').scoreGroup(group, ctx).turnAdvantages,
      'without ESM': getRecipe('toolsearcher').scoreGroup(group, {
        ...ctx,
        config: { ...config, toolsearcher: { ...config.toolsearcher, eventLevelSearch: false } },
      }).turnAdvantages,
      'without TCA': getRecipe('toolsearcher').scoreGroup(group, {
        ...ctx,
        config: { ...config, toolsearcher: { ...config.toolsearcher, trajectoryAlignedCredit: false } },
      }).turnAdvantages,
      toolsearcher: getRecipe('toolsearcher').scoreGroup(group, ctx).turnAdvantages,
    };
    for (const [name, rows] of Object.entries(scores)) {
      expect(
        rows.map((row) => row.length),
        name,
      ).toEqual(expected[name].map((row) => row.length));
      rows.forEach((row, k) =>
        row.forEach((a, t) => expect(a, `${name}, rollout ${k}, turn ${t}`).toBeCloseTo(expected[name][k][t], 5)),
      );
    }
    const names = Object.keys(scores);
    for (const a of names) for (const b of names) if (a < b) expect(scores[a], `${a} vs ${b}`).not.toEqual(scores[b]);
  });

  it('constrains search for the first 30% of steps only when enabled', () => {
    // round(0.3 · 10) = 3 → steps 0, 1, 2
    expect([0, 2, 3, 9].map((s) => isToolSearcherConstrained(config, s))).toEqual([true, true, false, false]);
    const off = resolveConfig({ steps: 10, toolsearcher: { categoryConstrained: false } });
    expect(isToolSearcherConstrained(off, 0)).toBe(false);
  });
});

describe('toolsearcher training step', () => {
  it('runs one step on a tiny model with finite metrics and category-constrained rollouts', async () => {
    // Seed 3 draws a one-gold-tool query first: the scripted search finds it, so TCA keeps the
    // selection's reward (with two gold tools both rollouts' searches stay unfinished and
    // every advantage is 0: no gradient).
    const { metrics, evaluation, trainer } = await runOneStep('toolsearcher', { seed: 3 });
    for (const key of FINITE_STEP_METRICS) expect(Number.isFinite(metrics[key]), key).toBe(true);
    expect(metrics.grad_norm).toBeGreaterThan(0);
    for (const g of trainer.lastGroups)
      for (const r of g.rollouts) expect((r.meta?.search as SearchRolloutInfo).isCategoryConstrained).toBe(true);
    for (const key of ['eval/f1', 'eval/recall', 'eval/precision', 'eval/match', 'eval/search_recall']) {
      expect(evaluation[key], key).toBeGreaterThanOrEqual(0);
      expect(evaluation[key], key).toBeLessThanOrEqual(1);
    }
    // the script searches once (turn 0), then selects: one search round per rollout, train and held out
    expect(metrics['reward/search_rounds']).toBe(1);
    expect(evaluation['eval/search_rounds']).toBe(1);
    trainer.dispose?.();
  }, 60_000);

  it('a sampled held-out evaluation (evalSamples 2) is not category-constrained, even at a constrained step', async () => {
    const { trainer } = await runOneStep('toolsearcher', { evalSamples: 2, steps: 10 });
    expect(isToolSearcherConstrained(trainer.config, trainer.completedSteps)).toBe(true);
    const rollouts = trainer.lastEvalGroups.flatMap((g) => g.rollouts);
    expect(rollouts.length).toBe(2);
    for (const r of rollouts) expect((r.meta?.search as SearchRolloutInfo).isCategoryConstrained).toBe(false);
    trainer.dispose?.();
  }, 120_000);
});

describe('search rounds (ToolSearcher Fig. 5): logged, never rewarded', () => {
  const SEARCH_RECIPES = ['toolsearcher', 'search_r1', 'gspo', 'gdpo'];
  const scoreWith = (recipe: string, g: RolloutGroup): GroupScore =>
    getRecipe(recipe).scoreGroup(g, { ...ctx, config: resolveConfig({ recipe, steps: 10 }) });

  it('every tool-search recipe logs search_rounds: turns with a search, the selection turn not', () => {
    // hand group: rollouts 0 and 1 search at turn 0 then select; rollout 2 selects at once
    for (const recipe of SEARCH_RECIPES)
      expect(scoreWith(recipe, group).rewardParts?.search_rounds, recipe).toEqual([1, 1, 0]);
  });

  it('changes no reward, advantage or other part: only search_rounds moves', () => {
    // Rollout 0's search turn without its event: 0 rounds. Rewards read the episode summary
    // (selection, SRecall, first-found turns), the calls (format) and the number of turns, none
    // of which changed.
    const [r0, ...rest] = group.rollouts;
    const info = r0.meta!.search as SearchRolloutInfo;
    const noRound: Rollout = {
      ...r0,
      meta: { search: { ...info, turns: info.turns.map((t, i) => (i === 0 ? { ...t, events: [] } : t)) } },
    };
    const altered: RolloutGroup = { prompt: group.prompt, rollouts: [noRound, ...rest] };
    for (const recipe of SEARCH_RECIPES) {
      const before = scoreWith(recipe, group);
      const after = scoreWith(recipe, altered);
      expect(after.rewards, recipe).toEqual(before.rewards);
      expect(after.turnAdvantages, recipe).toEqual(before.turnAdvantages);
      expect(after.rewardParts?.search_rounds, recipe).toEqual([0, 1, 0]);
      expect({ ...after.rewardParts, search_rounds: [] }, recipe).toEqual({ ...before.rewardParts, search_rounds: [] });
    }
  });

  it("the step metric reward/search_rounds is the mean over all the step's rollouts", async () => {
    const { query, handle } = readToolSearchPrompt(prompt);
    const search = (q: string) =>
      `<tool_call>{"name": "search", "arguments": {"query": ${JSON.stringify(q)}}}</tool_call>`;
    const malformed = '<tool_call>{"name": "search", "arguments": {}}</tool_call>';
    const select = `<tool_list>${JSON.stringify([gold])}</tool_list>`;
    const play = (assistantTexts: string[]) =>
      replaySearchTeacherEpisode(
        { queryId: query.id, maxTurns: 8, isCategoryConstrained: false, assistantTexts },
        query,
        handle,
        setup.tokenizer,
      );
    const groups: RolloutGroup[] = [
      {
        prompt,
        rollouts: [
          await play([search('weather'), search('currency'), search('music'), select]), // 3
          await play([search('weather'), malformed, search('music'), select]), // 2: the malformed turn is no round
          await play([search('weather'), select]), // 1
        ],
      },
      {
        prompt,
        rollouts: [
          await play([search('weather'), search('currency'), search('music'), select]), // 3
          await play([select]), // 0
        ],
      },
    ];
    const recipe = getRecipe('toolsearcher');
    const scores = groups.map((g) => recipe.scoreGroup(g, ctx));
    expect(scores.map((sc) => sc.rewardParts?.search_rounds)).toEqual([
      [3, 2, 1],
      [3, 0],
    ]);
    const metrics = summarizeStep({
      s: 0,
      config,
      recipe,
      groups,
      scores,
      plans: [],
      values: [],
      losses: [],
      gradNorms: [],
      lambdaA: [],
      prefixLevel: [],
      traceLogprobGap: Number.NaN,
      klPromptOnly: Number.NaN,
      lr: 0,
      started: performance.now(),
      phases: { rollouts: 0, plan: 0, update: 0 },
    });
    // (3 + 2 + 1 + 3 + 0) / 5 rollouts = 1.8, not the mean of the group means (2 + 1.5) / 2 = 1.75
    expect(metrics['reward/search_rounds']).toBeCloseTo(1.8, 12);
  });
});
