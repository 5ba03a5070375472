/**
 * `matchtir`: MatchTIR hard credit assignment (Qu et al. 2026; PACT App. B), prompt-only:
 * turn rewards from a bipartite matching of all predicted calls against the gold calls
 * (answer F1 on the answer turn), dual-level advantages (discounted turn returns z-scored
 * per turn + group-normalised trajectory reward, combined by config.advantageCombine:
 * A^g + A^ℓ by default, as PACT App. B; 'mean' halves it as MatchTIR's code does),
 * broadcast to the policy tokens of each turn; clipped surrogate L^x_RL (PACT Eq.
 * prompt-only-rl-loss) + k3 KL. This is PACT with q = 1 (every prompt anchored).
 */
import { registerRecipe } from '../registry';
import { evaluateToolUseRollout, nameMatchTirReward, scoreMatchTir } from './toolUseScoring';
import type { Recipe } from '../types';

export const MATCHTIR_RECIPE: Recipe = {
  name: 'matchtir',
  title: 'MatchTIR',
  summary: 'MatchTIR: matched turn rewards, dual-level advantages, prompt-only RL',
  objective:
    'L^x_RL = −E[min(r^x·A, clip(r^x, 1−ε, 1+ε)·A)] + β·KL,  A_{k,n} = A^g_k + A^ℓ_{k,t}  (matched turn rewards)',
  reference: 'Qu et al. 2026 (MatchTIR); PACT App. B',
  knobs: ['rollouts'],
  env: 'tool-use',
  needsTraces: false,
  usesMatchTirCredit: true,
  rewardName: (config) => nameMatchTirReward(config),
  usesRollouts: () => true,
  scoreGroup: (group, ctx) => scoreMatchTir(group, ctx.config),
  routePrompts: (groups) =>
    groups.map(() => ({ rl: 'x' as const, rlWeight: 1, sftWeight: 0, sftMask: 'full' as const })),
  evaluateRollout: evaluateToolUseRollout,
};

registerRecipe(MATCHTIR_RECIPE);
