/**
 * `grpo`: Group Relative Policy Optimisation (Shao et al. 2024, DeepSeekMath §4.1) with the
 * outcome reward F1(answer, gold): K prompt-only rollouts per prompt, A_k = (R_k − mean) /
 * (std + ε) on every policy token, clipped surrogate (PACT Eq. prompt-only-rl-loss with
 * this advantage), k3 KL to π_ref. No expert traces.
 */
import { registerRecipe } from '../registry';
import { evaluateToolUseRollout, scoreOutcome } from './toolUseScoring';
import type { Recipe } from '../types';

export const GRPO_RECIPE: Recipe = {
  name: 'grpo',
  title: 'GRPO',
  summary: 'GRPO: outcome reward (answer F1), group-normalised advantages, prompt-only',
  objective:
    'L = −E[min(r·A_k, clip(r, 1−ε, 1+ε)·A_k)] + β·KL,  A_k = (R_k − mean R)/(std R + ε),  R_k = F1(answer, gold)',
  reference: 'Shao et al. 2024 (DeepSeekMath) §4.1',
  knobs: ['rollouts'],
  env: 'tool-use',
  needsTraces: false,
  usesMatchTirCredit: false,
  rewardName: () => 'answer-f1',
  usesRollouts: () => true,
  scoreGroup: (group) => scoreOutcome(group),
  routePrompts: (groups) =>
    groups.map(() => ({ rl: 'x' as const, rlWeight: 1, sftWeight: 0, sftMask: 'full' as const })),
  evaluateRollout: evaluateToolUseRollout,
};

registerRecipe(GRPO_RECIPE);
