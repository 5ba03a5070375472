/**
 * `search_r1`: Search-R1 (Jin et al. 2025, arXiv 2503.09516) as ToolSearcher's baseline
 * on the tool-search environment: multi-turn search with an outcome reward only, GRPO
 * advantages (group z-score) on every policy token, retrieved text masked out of the loss
 * (observations carry no advantage, as Search-R1's "retrieved token masking").
 * Simplifications: the outcome reward is ToolSearcher's (selection F1 + format bonus)
 * rather than Search-R1's exact match, so every tool-search recipe optimises the same
 * reward; global search only (category-constrained search is ToolSearcher's component).
 */
import { registerRecipe } from '../registry';
import { evaluateSearchRollout } from '../rollouts/searchRollouts';
import { collectSearchRollouts, nameSearchReward, routePromptOnly, scoreSearchOutcome } from './toolsearcher';
import type { Recipe } from '../types';

export const SEARCH_R1_RECIPE: Recipe = {
  name: 'search_r1',
  title: 'Search-R1',
  summary: 'Search-R1: outcome reward (selection F1 + format), GRPO advantages, tool-search env',
  objective: 'R = F1(selected, gold) + b·1[format];  GRPO advantages, retrieved text masked out of the loss',
  reference: 'Jin et al. 2025 (Search-R1); ToolSearcher §4.2 baseline',
  knobs: ['rollouts'],
  env: 'tool-search',
  needsTraces: false,
  usesMatchTirCredit: false,
  rewardName: (config) => nameSearchReward(config),
  usesRollouts: () => true,
  collectRollouts: (request) => collectSearchRollouts(request, false),
  scoreGroup: (group, ctx) => scoreSearchOutcome(group, ctx.config.toolsearcher.formatBonus),
  routePrompts: routePromptOnly,
  evaluateRollout: evaluateSearchRollout,
};

registerRecipe(SEARCH_R1_RECIPE);
