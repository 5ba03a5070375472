/**
 * Prompt-only anchoring gates as a run draws them, PACT Eq. (prompt-routing-gate):
 * z_i ~ Bernoulli(q) for each prompt i of each step; z = 1 routes the prompt to the
 * prompt-only RL loss L^x_RL, z = 0 to trace co-training L^h_RL + β_SFT·L_SFT
 * (Eq. overall-objective, Algorithm 1 line "Sample a prompt-level gate").
 *
 * Random stream: step s draws from `createRng(seed).split('gates').split('step' + s)`,
 * i.e. the stream key `${seed}/gates/step${s}`, one `rng.next()` per prompt in batch
 * order (`sampleAnchorGates`). A stream per step means a run resumed from a checkpoint
 * at step s draws the same gates without saving any generator state, and nothing else
 * the trainer samples can shift them. Steps are numbered s = 1…T as in Algorithm 1.
 *
 * The stream helpers live in src/core/gates.ts so that the trainer draws exactly these gates.
 */
import { GATE_STREAM, createStepGateRng, sampleStepGates } from '../core';

export { GATE_STREAM, createStepGateRng, sampleStepGates };

export interface GateGrid {
  /** gates[s − 1][i]: the gate of prompt i at step s. [nSteps][nPrompts] */
  gates: (0 | 1)[][];
  /** Anchored prompts per step. [nSteps] */
  anchorsPerStep: number[];
  /** Anchored share of all gates drawn up to and including step s. [nSteps] */
  runningFraction: number[];
  nAnchors: number;
  nGates: number;
}

/** The gates of steps 1…nSteps, with counts and the running anchored fraction. */
export function buildGateGrid(seed: number, nSteps: number, nPrompts: number, q: number): GateGrid {
  if (!Number.isInteger(nSteps) || nSteps < 0)
    throw new Error(`buildGateGrid: nSteps must be an integer ≥ 0, got ${nSteps}`);
  const gates: (0 | 1)[][] = [];
  const anchorsPerStep: number[] = [];
  const runningFraction: number[] = [];
  let nAnchors = 0;
  for (let s = 1; s <= nSteps; s++) {
    const z = sampleStepGates(seed, s, nPrompts, q);
    const count = z.reduce<number>((sum, g) => sum + g, 0);
    gates.push(z);
    anchorsPerStep.push(count);
    nAnchors += count;
    runningFraction.push(nPrompts === 0 ? 0 : nAnchors / (s * nPrompts));
  }
  return { gates, anchorsPerStep, runningFraction, nAnchors, nGates: nSteps * nPrompts };
}
