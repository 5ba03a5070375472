/**
 * Prompt-only anchoring gates, PACT Eq. (prompt-routing-gate): z_i ~ Bernoulli(q) per
 * prompt; z_i = 1 routes prompt i to the prompt-only RL loss, z_i = 0 to trace
 * co-training (Eq. overall-objective). The paper uses q = 0.4.
 */
import type { Rng } from './rng';

/** One gate z_i ∈ {0, 1} per prompt, z_i = 1 with probability q (one rng.next() per prompt). */
export function sampleAnchorGates(rng: Rng, nPrompts: number, q = 0.4): (0 | 1)[] {
  if (!rng || typeof rng.next !== 'function') throw new Error('sampleAnchorGates: rng must be an Rng (see createRng)');
  if (!Number.isInteger(nPrompts) || nPrompts < 0) throw new Error(`sampleAnchorGates: nPrompts must be an integer ≥ 0, got ${nPrompts}`);
  if (!(q >= 0 && q <= 1)) throw new Error(`sampleAnchorGates: q must be in [0, 1], got ${q}`);
  const gates: (0 | 1)[] = [];
  for (let i = 0; i < nPrompts; i++) gates.push(rng.next() < q ? 1 : 0);
  return gates;
}
