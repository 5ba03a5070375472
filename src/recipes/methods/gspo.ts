/**
 * `gspo`: Group Sequence Policy Optimization (Zheng et al. 2025, arXiv 2507.18071, Eq. 5–7)
 * as ToolSearcher's baseline on the tool-search environment: the GRPO outcome advantage
 * (selection F1 + format bonus, group z-score) and a SEQUENCE-level importance ratio
 * s_i = exp(mean over policy tokens of log π_θ − log π_old) (`ratioLevel: 'sequence'`:
 * the trainer's tfLosses.computeSequenceLogRatio, checked against core/gspo), clipped to
 * GSPO's own asymmetric range [1 − 3e-4, 1 + 4e-4] (§5.1; config.gspo) and aggregated per
 * sequence, (1/G) Σ_i ('seq-mean-token-mean'), whatever config.clipEps and lossAgg say.
 * Simplification: global search only.
 */
import { registerRecipe } from '../registry';
import { evaluateSearchRollout } from '../rollouts/searchRollouts';
import { collectSearchRollouts, nameSearchReward, routePromptOnly, scoreSearchOutcome } from './toolsearcher';
import type { Recipe } from '../types';

export const GSPO_RECIPE: Recipe = {
  name: 'gspo',
  title: 'GSPO',
  summary:
    'GSPO: outcome reward, sequence-level importance ratio clipped to 3e-4 / 4e-4, per-sequence loss, tool-search env',
  objective:
    "s_k = exp(mean_n log π_θ/π_old over τ_k);  L = −mean_k min(s_k·A_k, clip(s_k, 1−3e-4, 1+4e-4)·A_k),  A_k = GRPO's",
  reference: 'Zheng et al. 2025 (GSPO) Eq. 5–7, §5.1; ToolSearcher §4.2 baseline',
  knobs: ['rollouts'],
  env: 'tool-search',
  needsTraces: false,
  usesMatchTirCredit: false,
  rewardName: (config) => nameSearchReward(config),
  ratioLevel: 'sequence',
  policyLoss: (config) => ({
    clipEps: config.gspo.clipLow,
    clipEpsHigh: config.gspo.clipHigh,
    lossAgg: 'seq-mean-token-mean',
  }),
  usesRollouts: () => true,
  collectRollouts: (request) => collectSearchRollouts(request, false),
  scoreGroup: (group, ctx) => scoreSearchOutcome(group, ctx.config.toolsearcher.formatBonus),
  routePrompts: routePromptOnly,
  evaluateRollout: evaluateSearchRollout,
};

registerRecipe(GSPO_RECIPE);
