/**
 * `sft`: full-trace imitation (PACT §3.1, Eq. sft-objective: −log π(h* | x) over the
 * expert's own tokens). No rollouts: each step takes a batch of prompts with verified
 * expert traces and minimises the token-mean NLL of every policy-written token of the
 * replayed expert episode (reasoning, tool calls, control tokens and the final answer;
 * prompt and tool responses are context only).
 * Simplification: the loss is normalised per trace (Eq. sft-loss with m = 1), then
 * averaged over prompts, rather than over all tokens of the batch.
 */
import { registerRecipe } from '../registry';
import type { Recipe } from '../types';

export const SFT_RECIPE: Recipe = {
  name: 'sft',
  title: 'SFT',
  summary: 'Supervised fine-tuning on full expert traces (no rollouts)',
  objective: 'L_SFT = −(1/|h*|)·Σ_n log π_θ(h*_n | x, h*_<n)  (every policy-written token of the expert trace)',
  reference: 'PACT §3.1, Eq. sft-objective',
  knobs: [],
  env: 'tool-use',
  needsTraces: true,
  usesMatchTirCredit: false,
  rewardName: () => 'none (no rollouts)',
  usesRollouts: () => false,
  scoreGroup: () => {
    throw new Error('recipe "sft" collects no rollouts and scores none');
  },
  routePrompts: (groups) => groups.map(() => ({ rl: null, rlWeight: 0, sftWeight: 1, sftMask: 'full' as const })),
};

registerRecipe(SFT_RECIPE);
