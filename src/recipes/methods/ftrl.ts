/**
 * `ftrl`: FTRL (Ye et al. 2025, "Feedback-Driven Tool-Use Improvements in LLMs via
 * Automated Build Environments") on the tool-use environment: each assistant turn scored
 * by FTRL's released `compute_solve_f1` (core ftrlReward: 2·solved/(calls + 1) for a
 * calling turn, −0.5 empty, −0.3 malformed call, 1/(1 + unsolved) with the answer, 0.5
 * when all is solved), and GRPO per turn: turn t's reward z-scored across the group's
 * rollouts that reached turn t (core 'turn-grpo'), on that turn's policy tokens;
 * prompt-only clipped surrogate + k3 KL.
 * Departure: FTRL samples every turn of a trajectory as its own prompt and groups the
 * responses to that one context; here the K on-policy rollouts' turns t form the group
 * (same context at turn 0 only).
 */
import { ADVANTAGE_ESTIMATORS } from '../../core/advantages';
import { ftrlReward, type FtrlTurn } from '../../core/ftrlReward';
import { answerF1 } from '../../core/rewards';
import { registerRecipe } from '../registry';
import { evaluateToolUseRollout } from './toolUseScoring';
import type { GroupScore, Recipe, Rollout, RolloutGroup } from '../types';

/** A rollout's assistant turns as compute_solve_f1 reads them: text and executed calls. */
export function listFtrlTurns(rollout: Rollout): FtrlTurn[] {
  return (rollout.transcript?.turns ?? []).map((t) => ({ text: t.assistantText, calls: t.outputs }));
}

/** FTRL per-turn rewards and per-turn GRPO advantages of one tool-use group. */
export function scoreFtrl(group: RolloutGroup): GroupScore {
  if (group.prompt.kind !== 'tool-use')
    throw new Error(`ftrl: got a ${group.prompt.kind} prompt; ftrl runs on the tool-use env`);
  const { unsolvedSet, answer } = group.prompt.task;
  const results = group.rollouts.map((r) => ftrlReward(listFtrlTurns(r), unsolvedSet, answer));
  return {
    rewards: results.map((x) => x.reward),
    turnAdvantages: ADVANTAGE_ESTIMATORS.get('turn-grpo')(results.map((x) => x.turnRewards)),
    rewardParts: {
      solve_f1: results.map((x) => x.metrics.solveF1),
      solve_p: results.map((x) => x.metrics.solveP),
      solve_r: results.map((x) => x.metrics.solveR),
      // Logged only (the train answer F1 that tables pair across recipes whose rewards differ).
      answer_f1: group.rollouts.map((r) => answerF1(r.transcript?.answer ?? '', answer)),
    },
  };
}

export const FTRL_RECIPE: Recipe = {
  name: 'ftrl',
  title: 'FTRL',
  summary: "FTRL: per-turn compute_solve_f1 reward (FTRL's released code), GRPO per turn",
  objective:
    'r_t = compute_solve_f1 of turn t (2·solved/(calls+1) for a calling turn, −0.5 empty, −0.3 malformed, …);  GRPO per turn index, clipped surrogate + β·KL',
  reference: 'Ye et al. 2025 (FTRL), bytedance/FTRL Code/verl/utils/reward_score/tool.py compute_solve_f1',
  knobs: ['rollouts'],
  env: 'tool-use',
  needsTraces: false,
  usesMatchTirCredit: false,
  rewardName: () => 'ftrl-solve-f1 (per-turn sum)',
  usesRollouts: () => true,
  scoreGroup: (group) => scoreFtrl(group),
  routePrompts: (groups) => groups.map(() => ({ rl: 'x', rlWeight: 1, sftWeight: 0, sftMask: 'full' })),
  evaluateRollout: evaluateToolUseRollout,
};

registerRecipe(FTRL_RECIPE);
