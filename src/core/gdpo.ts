/**
 * GDPO, Group reward-Decoupled normalization Policy Optimization (Liu et al. 2026,
 * arXiv 2601.05242; ToolSearcher's baseline, §2.2 and App. F): with several reward
 * components, GRPO normalising their sum collapses distinct reward combinations onto the
 * same advantage; GDPO z-scores each component separately within the group, sums them,
 * then normalises the sum over the whole batch:
 *
 *   A^c_{i,k} = (r^c_{i,k} − mean_k r^c_{i,·}) / (std_k r^c_{i,·} + ε)     per group i, component c
 *   A^sum_{i,k} = Σ_c w_c A^c_{i,k}
 *   A_{i,k} = (A^sum_{i,k} − mean_batch A^sum) / (std_batch A^sum + ε)    (batch-wise normalisation)
 * Stds are unbiased (n − 1), a group of one gets mean 0 and std 1, as groupAdvantages.
 * Source: the GDPO paper as recalled (its Eq. for the decoupled advantage and the
 * batch-wise normalisation that keeps the scale independent of the number of rewards);
 * ToolSearcher's text names GDPO but does not give its formula. Weights w_c default to 1.
 */
import { computeGroupStats } from './advantages';

export interface GdpoOptions {
  /** w_c per component; default all 1. */
  weights?: readonly number[];
  eps?: number;
  /** Normalise the summed advantage over the batch (default true, as GDPO). */
  isBatchNormalized?: boolean;
}

function zScore(values: readonly number[], eps: number): number[] {
  const { mean, std } = computeGroupStats(values);
  return values.map((v) => (v - mean) / (std + eps));
}

/**
 * GDPO advantages of a batch.
 * @param rewardParts [G][K][C]: per group, per rollout, the C reward components
 * @returns [G][K] one advantage per rollout
 */
export function gdpoAdvantages(
  rewardParts: readonly (readonly (readonly number[])[])[],
  { weights, eps = 1e-6, isBatchNormalized = true }: GdpoOptions = {},
): number[][] {
  if (!Array.isArray(rewardParts))
    throw new Error('gdpoAdvantages: rewardParts must be [groups][rollouts][components]');
  let nComponents = -1;
  rewardParts.forEach((group, i) => {
    if (!Array.isArray(group)) throw new Error(`gdpoAdvantages: rewardParts[${i}] must be an array of rollouts`);
    group.forEach((parts, k) => {
      if (!Array.isArray(parts))
        throw new Error(`gdpoAdvantages: rewardParts[${i}][${k}] must be an array of component rewards`);
      if (nComponents < 0) nComponents = parts.length;
      if (parts.length !== nComponents) {
        throw new Error(
          `gdpoAdvantages: rewardParts[${i}][${k}] has ${parts.length} components, expected ${nComponents}`,
        );
      }
      parts.forEach((r, c) => {
        if (!Number.isFinite(r)) throw new Error(`gdpoAdvantages: rewardParts[${i}][${k}][${c}] = ${r} is not finite`);
      });
    });
  });
  const nC = Math.max(0, nComponents);
  const w = weights ?? new Array<number>(nC).fill(1);
  if (w.length !== nC || !w.every((x) => Number.isFinite(x))) {
    throw new Error(`gdpoAdvantages: weights must be ${nC} finite numbers, got [${w.join(', ')}]`);
  }
  const summed: number[][] = rewardParts.map((group: readonly (readonly number[])[]) => {
    if (group.length === 0) return [];
    const perComponent = Array.from({ length: nC }, (_, c) =>
      zScore(
        group.map((parts) => parts[c]),
        eps,
      ),
    ); // [C][K]
    return group.map((_: readonly number[], k: number) => perComponent.reduce((s, z, c) => s + w[c] * z[k], 0));
  }); // [G][K]
  if (!isBatchNormalized) return summed;
  const flat = summed.flat();
  if (flat.length === 0) return summed;
  const { mean, std } = computeGroupStats(flat);
  return summed.map((row) => row.map((a: number) => (a - mean) / (std + eps)));
}
