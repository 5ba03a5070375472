/**
 * Prompt-only anchoring gates, PACT Eq. (prompt-routing-gate): z_i ~ Bernoulli(q) per
 * prompt; z_i = 1 routes prompt i to the prompt-only RL loss, z_i = 0 to trace
 * co-training (Eq. overall-objective). The paper uses q = 0.4.
 */
import { createRng, type Rng } from './rng';

/** One gate z_i ∈ {0, 1} per prompt, z_i = 1 with probability q (one rng.next() per prompt). */
export function sampleAnchorGates(rng: Rng, nPrompts: number, q = 0.4): (0 | 1)[] {
  if (!rng || typeof rng.next !== 'function') throw new Error('sampleAnchorGates: rng must be an Rng (see createRng)');
  if (!Number.isInteger(nPrompts) || nPrompts < 0)
    throw new Error(`sampleAnchorGates: nPrompts must be an integer ≥ 0, got ${nPrompts}`);
  if (!(q >= 0 && q <= 1)) throw new Error(`sampleAnchorGates: q must be in [0, 1], got ${q}`);
  const gates: (0 | 1)[] = [];
  for (let i = 0; i < nPrompts; i++) gates.push(rng.next() < q ? 1 : 0);
  return gates;
}

/**
 * The gates' random stream for step s of a run (shared by the trainer and the UI
 * preview, so the preview shows exactly the run's gates): the stream key is
 * `${seed}/gates/step${s}`, one `rng.next()` per prompt in batch order. A stream per
 * step means a run resumed at step s redraws the same gates without saved generator
 * state. Steps are numbered s = 1…T as in PACT Algorithm 1.
 */
export const GATE_STREAM = 'gates';

export function createStepGateRng(seed: number | string, step: number): Rng {
  if (!Number.isInteger(step) || step < 1)
    throw new Error(`createStepGateRng: step must be an integer ≥ 1 (s = 1…T), got ${step}`);
  return createRng(seed).split(GATE_STREAM).split(`step${step}`);
}

/** z_i for the `nPrompts` prompts of step s: 1 = prompt-only anchor, 0 = trace co-training. */
export function sampleStepGates(seed: number | string, step: number, nPrompts: number, q: number): (0 | 1)[] {
  return sampleAnchorGates(createStepGateRng(seed, step), nPrompts, q);
}
