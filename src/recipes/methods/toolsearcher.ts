/**
 * `toolsearcher`: ToolSearcher (RL for tool selection in a large tool repository,
 * ToolSearcher §3.3–3.4, App. D) on the tool-search environment:
 * - outcome reward R_k = set-F1(selected tools, gold tools) + formatBonus · 1[format ok]
 *   (config.toolsearcher.formatBonus; format = isSearchFormatOk);
 * - event-level search modelling + trajectory-aligned credit allocation (core
 *   `toolSearcherAdvantages`): per-turn advantages, broadcast to the turn's policy tokens;
 * - category-constrained tool discrimination for the first steps, then global search;
 * each switchable in config.toolsearcher (eventLevelSearch, trajectoryAlignedCredit,
 * categoryConstrained) for the ablation of ToolSearcher Table 5. Token-level clipped
 * surrogate + k3 KL (the trainer's), prompt-only; no expert traces.
 * Also the shared pieces of the tool-search baselines (search_r1, gspo, gdpo): the reward
 * parts of a rollout and the GRPO outcome scoring. Simplifications: see
 * core/toolSearcherCredit (the paper's gradient coefficients are not in our text); docs/trainer.md.
 */
import { groupAdvantages } from '../../core/advantages';
import { isCategoryConstrainedStep, toolSearcherAdvantages, toolSelectionReward } from '../../core/toolSearcherCredit';
import type { TrainConfig } from '../config';
import { registerRecipe } from '../registry';
import {
  collectToolSearchRollouts,
  countSearchRounds,
  evaluateSearchRollout,
  isSearchFormatOk,
  readSearchRolloutInfo,
  readToolSearchPrompt,
} from '../rollouts/searchRollouts';
import type { CollectRequest, GroupScore, PromptRoute, Recipe, Rollout, RolloutGroup } from '../types';

/** The reward parts of one tool-search rollout. */
export interface SearchRewardParts {
  /** R = f1 + formatBonus · format. */
  reward: number;
  f1: number;
  format: number;
  /** SRecall of the rollout's searches. */
  searchRecall: number;
  /** Turns with a search that reached the engine (rollouts/searchRollouts `countSearchRounds`); logged only. */
  searchRounds: number;
  nTurns: number;
  firstFoundTurns: Record<string, number | null>;
}

export function computeSearchRewardParts(
  rollout: Rollout,
  goldIds: readonly string[],
  formatBonus: number,
  where = 'rollout',
): SearchRewardParts {
  const info = readSearchRolloutInfo(rollout, where);
  const { reward, f1, format } = toolSelectionReward(
    info.summary.selectedIds,
    goldIds,
    isSearchFormatOk(info),
    formatBonus,
  );
  return {
    reward,
    f1,
    format,
    searchRecall: info.summary.searchRecall,
    searchRounds: countSearchRounds(info.turns),
    nTurns: info.turns.length,
    firstFoundTurns: info.summary.firstFoundTurns,
  };
}

/** The reward parts of every rollout of a group, with the query's gold ids. */
export function computeGroupRewardParts(
  group: RolloutGroup,
  formatBonus: number,
): { goldIds: string[]; parts: SearchRewardParts[] } {
  const { query } = readToolSearchPrompt(group.prompt, 'group.prompt');
  const parts = group.rollouts.map((r, k) =>
    computeSearchRewardParts(r, query.goldToolIds, formatBonus, `group.rollouts[${k}]`),
  );
  return { goldIds: query.goldToolIds, parts };
}

/**
 * The `rewardParts` every tool-search recipe logs (the trainer writes each as `reward/<key>`,
 * its mean over the step's rollouts): f1, format, search_recall, and search_rounds
 * (ToolSearcher Fig. 5's interaction rounds with the search engine; logged only, in no reward).
 */
export function describeSearchRewardParts(parts: readonly SearchRewardParts[]): Record<string, number[]> {
  return {
    f1: parts.map((p) => p.f1),
    format: parts.map((p) => p.format),
    search_recall: parts.map((p) => p.searchRecall),
    search_rounds: parts.map((p) => p.searchRounds),
  };
}

/** GRPO on the outcome reward, on every turn (search_r1 and gspo). */
export function scoreSearchOutcome(group: RolloutGroup, formatBonus: number): GroupScore {
  const { parts } = computeGroupRewardParts(group, formatBonus);
  const rewards = parts.map((p) => p.reward);
  const adv = groupAdvantages(rewards);
  return {
    rewards,
    turnAdvantages: parts.map((p, k) => new Array<number>(p.nTurns).fill(adv[k])),
    rewardParts: describeSearchRewardParts(parts),
  };
}

/** The name of the tool-search outcome reward (set-F1 + formatBonus · format) that toolsearcher and its baselines log. */
export function nameSearchReward(config: Pick<TrainConfig, 'toolsearcher'>): string {
  return `search-f1 + ${config.toolsearcher.formatBonus}·format`;
}

/** ToolSearcher's per-turn credit for one group. */
export function scoreToolSearcher(
  group: RolloutGroup,
  options: Pick<TrainConfig['toolsearcher'], 'formatBonus' | 'eventLevelSearch' | 'trajectoryAlignedCredit'>,
): GroupScore {
  const { goldIds, parts } = computeGroupRewardParts(group, options.formatBonus);
  const credit = toolSearcherAdvantages(
    parts.map((p) => ({ nTurns: p.nTurns, firstFoundTurns: p.firstFoundTurns, outcomeReward: p.reward })),
    goldIds,
    { isEventLevelSearch: options.eventLevelSearch, isTrajectoryAligned: options.trajectoryAlignedCredit },
  );
  return {
    rewards: parts.map((p) => p.reward),
    turnAdvantages: credit.turnAdvantages,
    rewardParts: describeSearchRewardParts(parts),
  };
}

/** Rollouts for a tool-search recipe at request.step; `isCategoryConstrained` only applies to training (not to held-out evaluation, greedy or sampled). */
export function collectSearchRollouts(
  request: CollectRequest,
  isCategoryConstrained: boolean,
): Promise<RolloutGroup[]> {
  const c = request.config;
  return collectToolSearchRollouts({
    prompts: request.prompts,
    rolloutsPerPrompt: c.rolloutsPerPrompt,
    policy: request.policy,
    tokenizer: request.tokenizer,
    maxTurns: c.maxTurns,
    maxPromptTokens: c.maxPromptTokens,
    maxResponseTokens: c.maxResponseTokens,
    temperature: c.temperature,
    topP: c.topP,
    rng: request.rng,
    isGreedy: request.isGreedy,
    isCategoryConstrained: isCategoryConstrained && !request.isGreedy && !request.isEvaluation,
  });
}

/** Prompt-only RL for every prompt (no traces). */
export function routePromptOnly(groups: readonly RolloutGroup[]): PromptRoute[] {
  return groups.map(() => ({ rl: 'x', rlWeight: 1, sftWeight: 0, sftMask: 'full' }));
}

/** Whether ToolSearcher searches category-constrained at this step (config.toolsearcher). */
export function isToolSearcherConstrained(config: TrainConfig, step: number): boolean {
  const t = config.toolsearcher;
  return t.categoryConstrained && isCategoryConstrainedStep(step, config.steps, t.categoryConstrainedFraction);
}

export const TOOLSEARCHER_RECIPE: Recipe = {
  name: 'toolsearcher',
  title: 'ToolSearcher',
  summary:
    'ToolSearcher: selection F1 + format, event-level search credit, trajectory-aligned z-scores, category-constrained warm-up',
  objective:
    "R = F1(selected, gold) + b·1[format];  a search turn's advantage from the gold tools it found first, the last turn's from R (group z-score)",
  reference: 'ToolSearcher §3.3–3.4, App. D',
  knobs: ['rollouts'],
  env: 'tool-search',
  needsTraces: false,
  usesMatchTirCredit: false,
  rewardName: (config) => nameSearchReward(config),
  usesRollouts: () => true,
  collectRollouts: (request) => collectSearchRollouts(request, isToolSearcherConstrained(request.config, request.step)),
  scoreGroup: (group, ctx) => scoreToolSearcher(group, ctx.config.toolsearcher),
  routePrompts: routePromptOnly,
  evaluateRollout: evaluateSearchRollout,
};

registerRecipe(TOOLSEARCHER_RECIPE);
