/**
 * Rewards and advantages of tool-use rollout groups, shared by the tool-use recipes:
 *
 * - `scoreMatchTir`: MatchTIR hard credit assignment (PACT App. B): all calls of a
 *   rollout matched at once against the gold calls (Hungarian or greedy), turn reward =
 *   mean r(p) of its calls or the answer F1 on the answer turn (core `turnRewards`),
 *   dual-level advantages (core `turnAdvantages`: discounted turn returns z-scored per
 *   turn + the group-normalised trajectory reward Σ_t r_t). The `reward` of a rollout is
 *   Σ_t r_t (what A^g normalises).
 * - `scoreOutcome`: GRPO on the outcome reward F1(answer, gold) (0 without an answer),
 *   group-normalised and broadcast to every turn.
 * - `evaluateToolUseRollout`: FTRL Solve-R/P/F1 over the executed calls and ToolHop answer
 *   correctness (core ftrlSolveMetrics, toolHopCorrect).
 * Simplification: a rollout whose episode produced no turn gets reward 0 and no tokens.
 */
import { answerF1, turnRewards, type RolloutTurn } from '../../core/rewards';
import { ADVANTAGE_ESTIMATORS, groupAdvantages, nameMatchTirEstimator } from '../../core/advantages';
import { ftrlSolveMetrics, toolHopCorrect } from '../../core/metrics';
import type { TrainConfig } from '../config';
import type { GroupScore, PromptItem, Rollout, RolloutGroup } from '../types';

function requireToolUse(group: RolloutGroup): Extract<PromptItem, { kind: 'tool-use' }> {
  if (group.prompt.kind !== 'tool-use') throw new Error(`tool-use scoring got a ${group.prompt.kind} prompt`);
  return group.prompt;
}

/** The policy turns of a rollout as the reward functions read them. */
export function listRolloutTurns(rollout: Rollout): RolloutTurn[] {
  const turns = rollout.transcript?.turns ?? [];
  return turns.map((t) => ({ calls: t.calls, answer: t.parsed.answer ?? undefined }));
}

/** MatchTIR turn rewards and dual-level advantages of one group. */
export function scoreMatchTir(
  group: RolloutGroup,
  config: Pick<TrainConfig, 'gamma' | 'advantageCombine' | 'matching' | 'unmatchedPenalty'>,
): GroupScore {
  const { task } = requireToolUse(group);
  const gold = task.goldCalls ?? [];
  const perRollout = group.rollouts.map((r) => {
    const turns = listRolloutTurns(r);
    return turns.length === 0
      ? []
      : turnRewards(turns, gold, task.answer, { method: config.matching, unmatchedPenalty: config.unmatchedPenalty })
          .turnRewards;
  });
  // A rollout with no turn still needs a trajectory reward for A^g: give it one 0-reward turn.
  const padded = perRollout.map((r) => (r.length === 0 ? [0] : r));
  // The estimator by the config's name (core ADVANTAGE_ESTIMATORS: matchtir-sum or matchtir-mean).
  const advantages = ADVANTAGE_ESTIMATORS.get(nameMatchTirEstimator(config.advantageCombine))(padded, {
    gamma: config.gamma,
  });
  return {
    rewards: padded.map((r) => r.reduce((s, x) => s + x, 0)),
    turnAdvantages: advantages,
    rewardParts: { answer_f1: group.rollouts.map((r) => answerF1(r.transcript?.answer ?? '', task.answer)) },
  };
}

/**
 * The name of scoreMatchTir's trajectory reward Σ_t r_t as a function of the config: the
 * matching (Hungarian or greedy) and the penalty of an unmatched call change r_t; γ and the
 * advantage combination change only the advantages.
 */
export function nameMatchTirReward(config: Pick<TrainConfig, 'matching' | 'unmatchedPenalty'>): string {
  return `matchtir(${config.matching}, unmatched ${config.unmatchedPenalty})`;
}

/** GRPO outcome reward F1(answer, gold), group-normalised, on every turn. */
export function scoreOutcome(group: RolloutGroup): GroupScore {
  const { task } = requireToolUse(group);
  const rewards = group.rollouts.map((r) => answerF1(r.transcript?.answer ?? '', task.answer));
  const adv = groupAdvantages(rewards);
  return {
    rewards,
    turnAdvantages: group.rollouts.map((r, k) => listRolloutTurns(r).map(() => adv[k])),
    rewardParts: { answer_f1: rewards },
  };
}

/** Held-out metrics of a tool-use rollout: Solve-R/P/F1 and answer correctness. */
export function evaluateToolUseRollout(rollout: Rollout, prompt: PromptItem): Record<string, number> {
  if (prompt.kind !== 'tool-use') throw new Error(`evaluateToolUseRollout got a ${prompt.kind} prompt`);
  const solve = ftrlSolveMetrics(rollout.callOutputs, prompt.task.unsolvedSet);
  const answer = rollout.transcript?.answer ?? '';
  return {
    solve_r: solve.solveR,
    solve_p: solve.solveP,
    solve_f1: solve.solveF1,
    answer_correct: answer === '' ? 0 : toolHopCorrect(answer, prompt.task.answer),
    reward: answerF1(answer, prompt.task.answer),
  };
}
