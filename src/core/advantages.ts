/**
 * Advantages (PACT App. B, "Advantage estimation", after MatchTIR and GRPO).
 *
 * - `groupAdvantages`: GRPO's within-group z-score A_k = (R_k − mean) / (std + ε) with
 *   the unbiased (n−1) std, as verl's `compute_grpo_outcome_advantage`; a group of one
 *   uses mean 0 and std 1. `scaleByStd: false` gives Dr.GRPO's R_k − mean.
 * - `turnAdvantages`: MatchTIR's dual-level advantage. Discounted return per turn
 *   R^ℓ_{k,t} = r_{k,t} + γ R^ℓ_{k,t+1}, z-scored across the rollouts that have a turn t
 *   (A^ℓ); trajectory advantage A^g = groupAdvantages(Σ_t r_{k,t}); final
 *   A_{k,t} = A^g + A^ℓ ('sum', PACT App. B as written; the default) or (A^g + A^ℓ)/2
 *   ('mean', MatchTIR's released code; the source line is in docs/core.md).
 * Estimators are registered by name in ADVANTAGE_ESTIMATORS; each maps
 * one prompt's group of rollouts, given as turn rewards [K][T_k], to one advantage
 * per turn [K][T_k].
 */
import { createRegistry } from './registry';
import { computeMean, computeSampleStd } from './stats';

export interface GroupAdvantageOptions {
  /** ε_A added to the std. */
  eps?: number;
  /** Divide by the std (GRPO) or not (Dr.GRPO). */
  scaleByStd?: boolean;
}

function checkFiniteArray(values: readonly number[], where: string): void {
  if (!Array.isArray(values)) throw new Error(`${where} must be an array of numbers`);
  values.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${where}[${i}] is not a finite number`);
  });
}

/** Mean and unbiased std of a group; a group of one gets mean 0 and std 1 (verl). */
export function computeGroupStats(values: readonly number[]): { mean: number; std: number } {
  const n = values.length;
  if (n === 0) throw new Error('computeGroupStats: empty group');
  if (n === 1) return { mean: 0, std: 1 };
  const mean = computeMean(values);
  return { mean, std: computeSampleStd(values, mean) };
}

/** GRPO group-normalised advantages, one per rollout. */
export function groupAdvantages(
  rewards: readonly number[],
  { eps = 1e-6, scaleByStd = true }: GroupAdvantageOptions = {},
): number[] {
  checkFiniteArray(rewards, 'groupAdvantages: rewards');
  if (rewards.length === 0) return [];
  const { mean, std } = computeGroupStats(rewards);
  return rewards.map((r) => (scaleByStd ? (r - mean) / (std + eps) : r - mean));
}

/** R^ℓ_t = r_t + γ R^ℓ_{t+1} for one rollout. */
export function discountedReturns(rewards: readonly number[], gamma: number): number[] {
  const returns = new Array<number>(rewards.length);
  let next = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    next = rewards[t] + gamma * next;
    returns[t] = next;
  }
  return returns;
}

/**
 * Per turn index t, values[k][t] z-scored across the rollouts that have a turn t (a group
 * of one: mean 0, std 1): [K][T_k] → [K][T_k].
 */
export function zScoreByTurn(values: readonly (readonly number[])[], eps = 1e-6): number[][] {
  const maxTurns = Math.max(0, ...values.map((r) => r.length));
  const out = values.map((r) => new Array<number>(r.length));
  for (let t = 0; t < maxTurns; t++) {
    const rollouts = values.flatMap((r, k) => (t < r.length ? [k] : []));
    const { mean, std } = computeGroupStats(rollouts.map((k) => values[k][t]));
    for (const k of rollouts) out[k][t] = (values[k][t] - mean) / (std + eps);
  }
  return out;
}

/** How MatchTIR's A^g and A^ℓ combine; each has its registered estimator `matchtir-<combine>`. */
export const ADVANTAGE_COMBINES = ['mean', 'sum'] as const;
export type AdvantageCombine = (typeof ADVANTAGE_COMBINES)[number];

export interface TurnAdvantageOptions {
  /** γ for the discounted turn return. */
  gamma?: number;
  /** 'sum' (default): A^g + A^ℓ (PACT App. B); 'mean': (A^g + A^ℓ)/2 (MatchTIR code). */
  combine?: AdvantageCombine;
  eps?: number;
}

/** MatchTIR dual-level advantages for one prompt's group: [K][T_k] rewards → [K][T_k]. */
export function turnAdvantages(
  turnRewardsPerRollout: readonly (readonly number[])[],
  { gamma = 0.9, combine = 'sum', eps = 1e-6 }: TurnAdvantageOptions = {},
): number[][] {
  if (!Array.isArray(turnRewardsPerRollout))
    throw new Error('turnAdvantages: turnRewardsPerRollout must be an array of arrays');
  turnRewardsPerRollout.forEach((r, k) => checkFiniteArray(r, `turnAdvantages: turnRewardsPerRollout[${k}]`));
  if (combine !== 'mean' && combine !== 'sum')
    throw new Error(`turnAdvantages: unknown combine "${combine}"; valid: mean, sum`);
  if (!Number.isFinite(gamma)) throw new Error('turnAdvantages: gamma must be a finite number');

  const returns = turnRewardsPerRollout.map((r) => discountedReturns(r, gamma)); // [K][T_k]
  const globalAdv = groupAdvantages(
    turnRewardsPerRollout.map((r) => r.reduce((s: number, x: number) => s + x, 0)),
    { eps },
  ); // [K]
  const turnAdv = zScoreByTurn(returns, eps); // [K][T_k]
  const weight = combine === 'mean' ? 0.5 : 1;
  return turnAdv.map((row, k) => row.map((a) => weight * (globalAdv[k] + a)));
}

export interface AdvantageEstimatorOptions {
  gamma?: number;
  eps?: number;
}

/** One prompt's group, turn rewards [K][T_k] → advantage per turn [K][T_k]. */
export type AdvantageEstimator = (
  turnRewardsPerRollout: readonly (readonly number[])[],
  options?: AdvantageEstimatorOptions,
) => number[][];

function broadcastOutcome(scaleByStd: boolean): AdvantageEstimator {
  return (group, options = {}) => {
    const adv = groupAdvantages(
      group.map((r) => r.reduce((s, x) => s + x, 0)),
      { eps: options.eps, scaleByStd },
    );
    return group.map((r, k) => r.map(() => adv[k]));
  };
}

export const ADVANTAGE_ESTIMATORS = createRegistry<AdvantageEstimator>('advantage estimator');
/** GRPO: the z-scored trajectory reward Σ_t r_t on every turn. */
ADVANTAGE_ESTIMATORS.register('grpo', broadcastOutcome(true));
/** Dr.GRPO: the trajectory reward minus the group mean, no std scaling. */
ADVANTAGE_ESTIMATORS.register('drgrpo', broadcastOutcome(false));
/**
 * Per-turn GRPO: r_{k,t} z-scored across the rollouts that have a turn t (a group of one:
 * mean 0, std 1), no trajectory term; FTRL's per-turn samples (ftrl recipe).
 */
ADVANTAGE_ESTIMATORS.register('turn-grpo', (group, options = {}) => {
  group.forEach((r, k) => checkFiniteArray(r, `turn-grpo: turnRewardsPerRollout[${k}]`));
  return zScoreByTurn(group, options.eps);
});
/** MatchTIR's dual-level credit: 'sum' = A^g + A^ℓ (PACT App. B), 'mean' = (A^g + A^ℓ)/2 (MatchTIR's released code). */
export function nameMatchTirEstimator(combine: AdvantageCombine): string {
  return `matchtir-${combine}`;
}
for (const combine of ADVANTAGE_COMBINES)
  ADVANTAGE_ESTIMATORS.register(nameMatchTirEstimator(combine), (group, o = {}) =>
    turnAdvantages(group, { ...o, combine }),
  );
