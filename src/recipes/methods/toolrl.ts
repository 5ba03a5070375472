/**
 * `toolrl`: ToolRL (Qian et al. 2025, "ToolRL: Reward is All Tool Learning Needs", §3.3)
 * on the tool-use environment, by default as MatchTIR's `compute_toolrl` computes it (the
 * code PACT's Table 1 comes from): R = R_correct ∈ [−3, 3] (tool-name IoU, per gold call
 * the best same-name call's parameter-name IoU and exact parameter values, scaled by S_max)
 * when the episode made a call, 0 when it made none; `toolrlRule: 'toolrl'` adds ToolRL's
 * R_format (0/1) and gives −3 with no call (core `toolrlReward`); GRPO advantages (group z-score, as ToolRL trains with GRPO) on every
 * policy token; prompt-only clipped surrogate + k3 KL. No expert traces.
 * Simplifications: all calls of the episode are scored against all gold calls of the task
 * (ToolRL scores one step against that step's gold calls); see core/toolrlReward.
 */
import { groupAdvantages } from '../../core/advantages';
import { answerF1 } from '../../core/rewards';
import { toolrlReward, type ToolrlRule } from '../../core/toolrlReward';
import { registerRecipe } from '../registry';
import { evaluateToolUseRollout } from './toolUseScoring';
import type { GroupScore, Recipe, RolloutGroup } from '../types';

/** ToolRL reward and GRPO advantages of one tool-use group. */
export function scoreToolrl(group: RolloutGroup, rule: ToolrlRule): GroupScore {
  if (group.prompt.kind !== 'tool-use')
    throw new Error(`toolrl: got a ${group.prompt.kind} prompt; toolrl runs on the tool-use env`);
  const golds = group.prompt.task.goldCalls ?? [];
  const answer = group.prompt.task.answer;
  const results = group.rollouts.map((r) => {
    const turns = r.transcript?.turns ?? [];
    return toolrlReward(
      turns.map((t) => t.assistantText),
      turns.flatMap((t) => t.calls),
      golds,
      rule,
    );
  });
  const rewards = results.map((x) => x.reward);
  const adv = groupAdvantages(rewards);
  return {
    rewards,
    turnAdvantages: group.rollouts.map((r, k) => (r.transcript?.turns ?? []).map(() => adv[k])),
    rewardParts: {
      format: results.map((x) => x.format),
      correct: results.map((x) => x.correct),
      // Logged only (the train answer F1 that tables pair across recipes whose rewards differ).
      answer_f1: group.rollouts.map((r) => answerF1(r.transcript?.answer ?? '', answer)),
    },
  };
}

export const TOOLRL_RECIPE: Recipe = {
  name: 'toolrl',
  title: 'ToolRL',
  summary: 'ToolRL: format + tool-call correctness reward (names, parameter names, values), GRPO',
  objective:
    'R = R_format + R_correct (tool names, parameter names, values);  GRPO advantages, prompt-only clipped surrogate + β·KL',
  reference: 'Qian et al. 2025 (ToolRL) §3.3',
  knobs: ['rollouts'],
  env: 'tool-use',
  needsTraces: false,
  usesMatchTirCredit: false,
  rewardName: (config) => `toolrl(${config.toolrlRule})`,
  usesRollouts: () => true,
  scoreGroup: (group, ctx) => scoreToolrl(group, ctx.config.toolrlRule),
  routePrompts: (groups) => groups.map(() => ({ rl: 'x', rlWeight: 1, sftWeight: 0, sftMask: 'full' })),
  evaluateRollout: evaluateToolUseRollout,
};

registerRecipe(TOOLRL_RECIPE);
