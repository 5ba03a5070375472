/**
 * `chord`: CHORD (Zhang et al. 2025, "On-Policy RL Meets Off-Policy Experts", Eq. 4):
 * L = (1 − μ)·L_GRPO + μ·L_SFT with a GLOBAL coefficient μ = config.chordMu on every
 * prompt. L_GRPO: outcome reward F1(answer, gold), group-normalised, prompt-only rollouts;
 * L_SFT: NLL of the full expert episode (as recipe `sft`).
 * Simplifications: μ is constant (CHORD-μ decays it; set chordMu per run instead) and the
 * token-wise weighting φ of CHORD-φ is not implemented.
 */
import { registerRecipe } from '../registry';
import { evaluateToolUseRollout, scoreOutcome } from './toolUseScoring';
import type { Recipe } from '../types';

export const CHORD_RECIPE: Recipe = {
  name: 'chord',
  title: 'CHORD',
  summary: 'CHORD: (1 − μ)·GRPO + μ·SFT with a global μ (config.chordMu)',
  objective: 'L = (1 − μ)·L_GRPO + μ·L_SFT  (one global μ for every prompt)',
  reference: 'Zhang et al. 2025 (CHORD) Eq. 4',
  knobs: ['rollouts', 'chordMu'],
  env: 'tool-use',
  needsTraces: true,
  usesMatchTirCredit: false,
  rewardName: () => 'answer-f1',
  usesRollouts: () => true,
  scoreGroup: (group) => scoreOutcome(group),
  routePrompts: (groups, ctx) =>
    groups.map((g) => {
      const hasTrace = g.prompt.kind === 'tool-use' && g.prompt.trace !== undefined;
      const mu = ctx.config.chordMu;
      return { rl: 'x' as const, rlWeight: 1 - mu, sftWeight: hasTrace ? mu : 0, sftMask: 'full' as const };
    }),
  evaluateRollout: evaluateToolUseRollout,
};

registerRecipe(CHORD_RECIPE);
