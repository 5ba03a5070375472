/**
 * `pact`: Privileged trAce Co-Training (PACT Algorithm 1, §3–4).
 *   - rollouts prompt-only (the trainer never puts h* in a generation context);
 *   - rewards/advantages: MatchTIR hard credit assignment (App. B);
 *   - per prompt a gate z_i ~ Bernoulli(q) (Eq. prompt-routing-gate, q = pact.anchorProb):
 *     z_i = 1 → L^x_RL (prompt-only ratios, Eq. prompt-only-rl-loss);
 *     z_i = 0 → the configured objective (Table 2): 'Lh+SFT' (full PACT, Eq.
 *     trace-cotraining-objective: L^h_RL under c^h = [x; h*] + β_SFT·L_SFT(i; s)), 'Lh',
 *     'Lx+SFT' or 'Lx';
 *   - L_SFT(i; s) with the component-aware mask m(s) (Eq. sft-mask) from
 *     pact.reasoningSchedule / toolCallSchedule / fullTokenAnneal (App. D), over the
 *     components of h* chosen by pact.traceComponents (Table 3) for c^h.
 * Simplification: a prompt without an expert trace is always anchored (z_i = 1).
 */
import { sampleStepGates } from '../../core/gates';
import { toAlgorithmStep } from '../../core/schedules';
import { registerRecipe } from '../registry';
import { evaluateToolUseRollout, nameMatchTirReward, scoreMatchTir } from './toolUseScoring';
import type { PromptRoute, Recipe } from '../types';

export const PACT_RECIPE: Recipe = {
  name: 'pact',
  title: 'PACT',
  summary: 'PACT: prompt-only rollouts, trace-conditioned RL + component-aware SFT, prompt-only anchoring',
  objective: 'L_i = (1 − z_i)·(L^h_RL(i) + β_SFT·L_SFT(i; s)) + z_i·L^x_RL(i),  z_i ~ Bernoulli(q)',
  reference: 'PACT Algorithm 1, Eqs. trace-rl-loss, sft-loss, overall-objective',
  knobs: ['rollouts', 'pact'],
  env: 'tool-use',
  needsTraces: true,
  usesMatchTirCredit: true,
  rewardName: (config) => nameMatchTirReward(config),
  usesRollouts: () => true,
  scoreGroup: (group, ctx) => scoreMatchTir(group, ctx.config),
  routePrompts: (groups, ctx) => {
    const p = ctx.config.pact;
    // The gate stream of step s = 1…T (Algorithm 1's numbering, as the SFT schedules read
    // it): the same draws the UI's anchoring-gates panel previews for this seed and q.
    const gates = sampleStepGates(ctx.config.seed, toAlgorithmStep(ctx.step), groups.length, p.anchorProb);
    return groups.map((g, i): PromptRoute => {
      const hasTrace = g.prompt.kind === 'tool-use' && g.prompt.trace !== undefined;
      const z = hasTrace ? gates[i] : 1;
      if (z === 1) return { rl: 'x', rlWeight: 1, sftWeight: 0, sftMask: 'component', gate: 1 };
      const isTraceRatio = p.objective === 'Lh' || p.objective === 'Lh+SFT';
      const hasSft = p.objective === 'Lx+SFT' || p.objective === 'Lh+SFT';
      return {
        rl: isTraceRatio ? 'h' : 'x',
        rlWeight: 1,
        sftWeight: hasSft ? p.betaSft : 0,
        sftMask: 'component',
        gate: 0,
      };
    });
  },
  evaluateRollout: evaluateToolUseRollout,
};

registerRecipe(PACT_RECIPE);
