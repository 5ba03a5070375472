/**
 * `gdpo`: Group reward-Decoupled normalization Policy Optimization (Liu et al. 2026, arXiv
 * 2601.05242) as ToolSearcher's baseline on the tool-search environment: the reward
 * components are z-scored separately within each group, summed, and the sum normalised
 * over the whole batch (core `gdpoAdvantages`); one advantage per rollout on every turn.
 * Components here: selection F1, format (0/1), search recall (SRecall), equal weights.
 *
 * Simplifications: the choice of components (the paper's text here does not list GDPO's
 * components for tool selection; these are the parts of ToolSearcher's reward plus its
 * search signal); the logged `reward` is the shared outcome F1 + formatBonus·format so all
 * tool-search recipes report the same number; global search only.
 *
 * How batch normalisation meets group-by-group scoring: docs/trainer.md.
 */
import { gdpoAdvantages } from '../../core/gdpo';
import { registerRecipe } from '../registry';
import { evaluateSearchRollout } from '../rollouts/searchRollouts';
import {
  collectSearchRollouts,
  computeGroupRewardParts,
  describeSearchRewardParts,
  nameSearchReward,
  routePromptOnly,
  type SearchRewardParts,
} from './toolsearcher';
import type { GroupScore, Recipe, RolloutGroup } from '../types';

/** GDPO's reward components of a rollout: [F1, format, search recall]. */
export function listGdpoComponents(parts: SearchRewardParts): number[] {
  return [parts.f1, parts.format, parts.searchRecall];
}

export const GDPO_ADVANTAGE_KEY = 'gdpoAdvantage';

/** GDPO advantages of a batch of groups, stored in each rollout's meta. */
export function assignGdpoAdvantages(groups: readonly RolloutGroup[], formatBonus: number): void {
  const components = groups.map((g) => computeGroupRewardParts(g, formatBonus).parts.map(listGdpoComponents)); // [G][K][3]
  const advantages = gdpoAdvantages(components); // [G][K]
  groups.forEach((g, i) =>
    g.rollouts.forEach((r, k) => {
      r.meta = { ...r.meta, [GDPO_ADVANTAGE_KEY]: advantages[i][k] };
    }),
  );
}

/** One group's score: the stored batch-normalised advantages, else the group taken as the batch. */
export function scoreGdpo(group: RolloutGroup, formatBonus: number): GroupScore {
  const { parts } = computeGroupRewardParts(group, formatBonus);
  const stored = group.rollouts.map((r) => r.meta?.[GDPO_ADVANTAGE_KEY]);
  const advantages = stored.every((a) => typeof a === 'number')
    ? (stored as number[])
    : (gdpoAdvantages([parts.map(listGdpoComponents)])[0] ?? []);
  return {
    rewards: parts.map((p) => p.reward),
    turnAdvantages: parts.map((p, k) => new Array<number>(p.nTurns).fill(advantages[k])),
    rewardParts: describeSearchRewardParts(parts), // search_rounds included: logged, not a GDPO component
  };
}

export const GDPO_RECIPE: Recipe = {
  name: 'gdpo',
  title: 'GDPO',
  summary:
    'GDPO: F1, format and search recall normalised separately per group, summed, batch-normalised; tool-search env',
  objective: 'A_k = BN_batch(Σ_j z-score_group(R_j,k)),  R_j ∈ {F1, format, search recall}',
  reference: 'Liu et al. 2026 (GDPO); ToolSearcher §4.2 baseline',
  knobs: ['rollouts'],
  env: 'tool-search',
  needsTraces: false,
  usesMatchTirCredit: false,
  rewardName: (config) => nameSearchReward(config),
  usesRollouts: () => true,
  collectRollouts: async (request) => {
    const groups = await collectSearchRollouts(request, false);
    assignGdpoAdvantages(groups, request.config.toolsearcher.formatBonus);
    return groups;
  },
  scoreGroup: (group, ctx) => scoreGdpo(group, ctx.config.toolsearcher.formatBonus),
  routePrompts: routePromptOnly,
  evaluateRollout: evaluateSearchRollout,
};

registerRecipe(GDPO_RECIPE);
