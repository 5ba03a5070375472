/**
 * `sft_then_matchtir`: the two-stage baseline of PACT §5 ("SFT → RL"): `config.sftSteps`
 * steps of full-trace SFT (recipe `sft`), then MatchTIR (recipe `matchtir`) for the rest
 * of the run, with the same optimiser state carried across the switch.
 */
import { registerRecipe } from '../registry';
import { SFT_RECIPE } from './sft';
import { MATCHTIR_RECIPE } from './matchtir';
import { nameMatchTirReward } from './toolUseScoring';
import type { Recipe, RecipeContext } from '../types';

const isSftPhase = (ctx: RecipeContext) => ctx.step < ctx.config.sftSteps;

export const SFT_THEN_MATCHTIR_RECIPE: Recipe = {
  name: 'sft_then_matchtir',
  title: 'SFT → MatchTIR',
  summary: 'SFT on expert traces for sftSteps steps, then MatchTIR',
  objective: "s < sftSteps: L_SFT on the full expert trace;  s ≥ sftSteps: MatchTIR's L^x_RL + β·KL",
  reference: 'PACT §5 baselines (SFT → RL)',
  knobs: ['rollouts', 'sftSteps'],
  env: 'tool-use',
  needsTraces: true,
  usesMatchTirCredit: true,
  rewardName: (config) => nameMatchTirReward(config),
  usesRollouts: (ctx) => !isSftPhase(ctx),
  scoreGroup: (group, ctx) => MATCHTIR_RECIPE.scoreGroup(group, ctx),
  routePrompts: (groups, ctx) => (isSftPhase(ctx) ? SFT_RECIPE : MATCHTIR_RECIPE).routePrompts(groups, ctx),
  evaluateRollout: MATCHTIR_RECIPE.evaluateRollout,
};

registerRecipe(SFT_THEN_MATCHTIR_RECIPE);
