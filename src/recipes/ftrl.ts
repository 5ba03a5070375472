/**
 * `ftrl`: FTRL (Ye et al. 2025, "Feedback-Driven Tool-Use Improvements in LLMs via
 * Automated Build Environments") on the tool-use environment: the per-step solve reward of
 * core `ftrlReward` — a call earns 2/(p + n) when it solves a remaining sub-question of the
 * task's unsolved_set (answer_verify on its output), so a rollout's turn rewards add up to
 * its Solve-F1 — with GRPO advantages of that total on every policy token (FTRL trains with
 * outcome-level policy-gradient algorithms); prompt-only clipped surrogate + k3 KL.
 * Simplifications: see core/ftrlReward (the reward's F1 form is from the FTRL paper as
 * recalled; our texts give only its Solve metrics).
 */
import { ADVANTAGE_ESTIMATORS } from '../core/advantages';
import { ftrlReward } from '../core/ftrlReward';
import { registerRecipe } from './registry';
import { evaluateToolUseRollout } from './toolUseScoring';
import type { GroupScore, Recipe, RolloutGroup } from './types';

/** FTRL per-step solve rewards and GRPO advantages of one tool-use group. */
export function scoreFtrl(group: RolloutGroup): GroupScore {
  if (group.prompt.kind !== 'tool-use') throw new Error(`ftrl: got a ${group.prompt.kind} prompt; ftrl runs on the tool-use env`);
  const { unsolvedSet } = group.prompt.task;
  const results = group.rollouts.map((r) => ftrlReward((r.transcript?.turns ?? []).map((t) => t.outputs), unsolvedSet));
  // A rollout with no turn still needs a trajectory reward for the group statistics: one turn holding it.
  const turnRewards = results.map((x) => (x.turnRewards.length === 0 ? [x.reward] : x.turnRewards));
  const advantages = ADVANTAGE_ESTIMATORS.get('grpo')(turnRewards);
  return {
    rewards: results.map((x) => x.reward),
    turnAdvantages: advantages.map((row, k) => row.slice(0, results[k].turnRewards.length)),
    rewardParts: { solve_p: results.map((x) => x.metrics.solveP), solve_r: results.map((x) => x.metrics.solveR) },
  };
}

export const FTRL_RECIPE: Recipe = {
  name: 'ftrl',
  title: 'FTRL',
  summary: 'FTRL: per-step solve reward (sub-questions solved by tool calls, sums to Solve-F1), GRPO',
  objective: 'R = Σ_t r_t,  r_t = 2/(p + n) per sub-question a call solves (so R = Solve-F1);  GRPO advantages, clipped surrogate + β·KL',
  reference: 'Ye et al. 2025 (FTRL); PACT App. A metrics',
  knobs: ['rollouts'],
  env: 'tool-use',
  needsTraces: false,
  usesMatchTirCredit: false,
  usesRollouts: () => true,
  scoreGroup: (group) => scoreFtrl(group),
  routePrompts: (groups) => groups.map(() => ({ rl: 'x', rlWeight: 1, sftWeight: 0, sftMask: 'full' })),
  evaluateRollout: evaluateToolUseRollout,
};

registerRecipe(FTRL_RECIPE);
