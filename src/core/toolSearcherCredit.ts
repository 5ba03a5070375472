/**
 * ToolSearcher's rewards and credit (§3.3–3.4, App. D; the paper's text leaves the formulas
 * out, these are this project's reading):
 * - outcome R_k = F1(selected, gold) + formatBonus·1[format ok]; A^out_k its group z-score;
 * - ESM (§3.4.1): gold tool g is credited to the turn that first returned it (D_{k,t});
 * - TCA (§3.4.2), "removing rewards for selection events associated with unfinished tool
 *   searches and rewards for search events that are mastered": search turn t gets
 *   max_{g ∈ D_{k,t}} z_{k,g}, f_{k,g} ∈ {0,1} z-scored over the group (a tool all found is
 *   mastered: 0), 0 when it found none; the selection (final) turn gets 0 after a search
 *   that missed a gold tool, else R_k z-scored over the finished searches only;
 * "Final turn" = the last assistant turn (`<tool_list>`, or the last search at the turn
 * limit). The paper's gradient coefficients (App. F) are not in our text.
 * Ablations (Table 5): docs/core.md.
 */
import { computeGroupStats } from './advantages';
import { selectionMetrics } from './metrics';

export interface ToolSelectionReward {
  /** R = F1 + formatBonus · format. */
  reward: number;
  f1: number;
  /** 1 when the episode's format was ok, else 0. */
  format: number;
}

/** ToolSearcher's outcome reward of one rollout. */
export function toolSelectionReward(
  selectedIds: readonly string[],
  goldIds: readonly string[],
  isFormatOk: boolean,
  formatBonus: number,
): ToolSelectionReward {
  if (!Number.isFinite(formatBonus) || formatBonus < 0)
    throw new Error(`toolSelectionReward: formatBonus must be a finite number ≥ 0, got ${formatBonus}`);
  const { f1 } = selectionMetrics(selectedIds, goldIds, []);
  const format = isFormatOk ? 1 : 0;
  return { reward: f1 + formatBonus * format, f1, format };
}

/**
 * D_{k,t}: per turn, the gold ids first found at that turn.
 * @param firstFoundTurns gold id → first turn that returned it, or null (SearchEpisodeSummary.firstFoundTurns)
 * @param nTurns the rollout's number of assistant turns
 */
export function groupDiscoveriesByTurn(
  firstFoundTurns: Readonly<Record<string, number | null>>,
  nTurns: number,
): string[][] {
  if (!Number.isInteger(nTurns) || nTurns < 0)
    throw new Error(`groupDiscoveriesByTurn: nTurns must be an integer ≥ 0, got ${nTurns}`);
  if (firstFoundTurns === null || typeof firstFoundTurns !== 'object')
    throw new Error('groupDiscoveriesByTurn: firstFoundTurns must be an object {goldId: turn | null}');
  const perTurn: string[][] = Array.from({ length: nTurns }, () => []);
  for (const [id, turn] of Object.entries(firstFoundTurns)) {
    if (turn === null) continue;
    if (!Number.isInteger(turn) || turn < 0 || turn >= nTurns) {
      throw new Error(
        `groupDiscoveriesByTurn: firstFoundTurns["${id}"] = ${turn} is not a turn of a ${nTurns}-turn rollout`,
      );
    }
    perTurn[turn].push(id);
  }
  return perTurn;
}

/** What the credit needs about one rollout of the group. */
export interface SearchCreditRollout {
  /** Number of assistant turns (search turns + the final turn). */
  nTurns: number;
  /** Gold id → first turn whose search returned it (null: never). Missing ids count as never. */
  firstFoundTurns: Readonly<Record<string, number | null>>;
  /** Outcome reward R_k (toolSelectionReward). */
  outcomeReward: number;
}

export interface ToolSearcherCreditOptions {
  /** Event-level search modelling (default true). */
  isEventLevelSearch?: boolean;
  /** Trajectory-aligned credit allocation (default true). */
  isTrajectoryAligned?: boolean;
  /** ε added to the std. */
  eps?: number;
}

export interface ToolSearcherCredit {
  /** A_{k,t}, [K][T_k]. */
  turnAdvantages: number[][];
  /** A^out_k, [K]. */
  outcomeAdvantages: number[];
  /** TCA's selection credit: 0 for an unfinished search, else R_k z-scored over the finished ones, [K]. */
  selectionAdvantages: number[];
  /** Whether rollout k's searches found every gold tool, [K]. */
  isSearchFinished: boolean[];
  /** z_{k,g} per gold id, [K] each. */
  toolScores: Record<string, number[]>;
  /** D_{k,t}, [K][T_k][ids]. */
  discoveries: string[][][];
}

/** ToolSearcher's per-turn advantages of one prompt's group. */
export function toolSearcherAdvantages(
  group: readonly SearchCreditRollout[],
  goldIds: readonly string[],
  { isEventLevelSearch = true, isTrajectoryAligned = true, eps = 1e-6 }: ToolSearcherCreditOptions = {},
): ToolSearcherCredit {
  if (!Array.isArray(group)) throw new Error('toolSearcherAdvantages: group must be an array of rollouts');
  if (!Array.isArray(goldIds) || !goldIds.every((g) => typeof g === 'string'))
    throw new Error('toolSearcherAdvantages: goldIds must be an array of strings');
  group.forEach((r, k) => {
    if (!r || !Number.isFinite(r.outcomeReward))
      throw new Error(`toolSearcherAdvantages: group[${k}].outcomeReward is not a finite number`);
  });
  const gold = [...new Set(goldIds)];
  const discoveries = group.map((r, k) => {
    const known: Record<string, number | null> = {};
    for (const g of gold) known[g] = r.firstFoundTurns?.[g] ?? null;
    try {
      return groupDiscoveriesByTurn(known, r.nTurns);
    } catch (error) {
      throw new Error(`toolSearcherAdvantages: group[${k}]: ${(error as Error).message}`);
    }
  });
  const zScore = (rewards: readonly number[]): number[] => {
    if (rewards.length === 0) return [];
    const { mean, std } = computeGroupStats(rewards);
    return rewards.map((r) => (r - mean) / (std + eps));
  };
  const outcomeAdvantages = zScore(group.map((r) => r.outcomeReward));
  const isSearchFinished = group.map((r) => gold.every((g) => (r.firstFoundTurns?.[g] ?? null) !== null));
  const finished = group.flatMap((_, k) => (isSearchFinished[k] ? [k] : []));
  const finishedAdvantages = zScore(finished.map((k) => group[k].outcomeReward));
  const selectionAdvantages = group.map((_, k) => (isSearchFinished[k] ? finishedAdvantages[finished.indexOf(k)] : 0));
  const toolScores: Record<string, number[]> = {};
  for (const g of gold) {
    const found = group.map((r) => ((r.firstFoundTurns?.[g] ?? null) === null ? 0 : 1));
    if (found.length === 0) {
      toolScores[g] = [];
      continue;
    }
    const { mean, std } = computeGroupStats(found);
    toolScores[g] = found.map((f) => (f - mean) / (std + eps));
  }
  const turnAdvantages = group.map((r, k) =>
    discoveries[k].map((found, t) => {
      if (t === r.nTurns - 1) return isTrajectoryAligned ? selectionAdvantages[k] : outcomeAdvantages[k];
      if (!isEventLevelSearch) return outcomeAdvantages[k];
      if (found.length === 0) return 0;
      if (!isTrajectoryAligned) return found.length / gold.length;
      return Math.max(0, ...found.map((g) => toolScores[g][k]));
    }),
  );
  return { turnAdvantages, outcomeAdvantages, selectionAdvantages, isSearchFinished, toolScores, discoveries };
}

/**
 * Whether step s (0-based) of a `totalSteps` run uses category-constrained search:
 * the first round(fraction · totalSteps) steps do.
 */
export function isCategoryConstrainedStep(step: number, totalSteps: number, fraction: number): boolean {
  if (!Number.isInteger(step) || step < 0)
    throw new Error(`isCategoryConstrainedStep: step must be an integer ≥ 0, got ${step}`);
  if (!Number.isInteger(totalSteps) || totalSteps < 1)
    throw new Error(`isCategoryConstrainedStep: totalSteps must be an integer ≥ 1, got ${totalSteps}`);
  if (!(fraction >= 0 && fraction <= 1))
    throw new Error(`isCategoryConstrainedStep: fraction must be in [0, 1], got ${fraction}`);
  return step < Math.round(fraction * totalSteps);
}
