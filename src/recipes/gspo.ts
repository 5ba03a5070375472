/**
 * `gspo`: Group Sequence Policy Optimization (Zheng et al. 2025, arXiv 2507.18071, Eq. 5–7)
 * as ToolSearcher's baseline on the tool-search environment: the GRPO outcome advantage
 * (selection F1 + format bonus, group z-score) and a SEQUENCE-level importance ratio
 * s_i = exp(mean over policy tokens of log π_θ − log π_old), clipped per sequence
 * (`ratioLevel: 'sequence'`: the trainer's tfLosses.computeSequenceLogRatio, checked
 * against core/gspo). Simplifications: the clip range is the trainer's config.clipEps
 * (GSPO's own 3e-4 / 4e-4 is core GSPO_CLIP; set clipEps accordingly in the experiment
 * config), and the loss aggregation is config.lossAgg (GSPO's (1/G) Σ_i is
 * 'seq-mean-token-mean'); global search only.
 */
import { registerRecipe } from './registry';
import { evaluateSearchRollout } from './searchRollouts';
import { collectSearchRollouts, routePromptOnly, scoreSearchOutcome } from './toolsearcher';
import type { Recipe } from './types';

export const GSPO_RECIPE: Recipe = {
  name: 'gspo',
  title: 'GSPO',
  summary: 'GSPO: outcome reward, sequence-level clipped importance ratio, tool-search env',
  objective: 's_k = exp(mean_n log π_θ/π_old over τ_k);  L = −E[min(s_k·A_k, clip(s_k, 1−ε, 1+ε)·A_k)],  A_k = GRPO\'s',
  reference: 'Zheng et al. 2025 (GSPO) Eq. 5–7; ToolSearcher §4.2 baseline',
  knobs: ['rollouts'],
  env: 'tool-search',
  needsTraces: false,
  usesMatchTirCredit: false,
  ratioLevel: 'sequence',
  usesRollouts: () => true,
  collectRollouts: (request) => collectSearchRollouts(request, false),
  scoreGroup: (group, ctx) => scoreSearchOutcome(group, ctx.config.toolsearcher.formatBonus),
  routePrompts: routePromptOnly,
  evaluateRollout: evaluateSearchRollout,
};

registerRecipe(GSPO_RECIPE);
