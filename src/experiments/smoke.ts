/**
 * `--smoke`: the same experiment, shrunk so each run takes about a minute on wasm.
 * The experiment's own runs, recipes and method knobs are kept; only the size changes:
 * 2 steps (so SFT→MatchTIR still does one SFT step and one MatchTIR step; an evaluate-only
 * run keeps steps 0), K = 2,
 * one prompt per batch, at most 2 turns and 32 response tokens (a search recipe keeps its
 * file's turns and tokens: a search episode needs hundreds, and cut at 32 it scores 0),
 * 8 train / 2 test tasks, one held-out evaluation at the end, no checkpoints, and only the first seed.
 * The sizes are merged into every run last (expandExperiment's `overrides`), so they win
 * over a run's own values; steps, turns and tokens go into each run instead.
 */
import '../recipes/allRecipes';
import { getRecipe, hasRecipe } from '../recipes/registry';
import type { ExperimentFile } from '../run/experimentFile';

export const SMOKE_OVERRIDES: Readonly<Record<string, unknown>> = Object.freeze({
  steps: 2,
  rolloutsPerPrompt: 2,
  batchPrompts: 1,
  miniBatchPrompts: 1,
  maxTurns: 2,
  maxResponseTokens: 32,
  tasks: { nTrain: 8, nTest: 2 },
  evalEvery: 2,
  checkpointEvery: 0,
  sftSteps: 1,
});

/**
 * The smoke version of an experiment file: the first seed only (base.seed, else 1, when
 * the file lists none), and the overrides to pass to expandExperiment.
 */
export function shrinkForSmoke(file: ExperimentFile): { file: ExperimentFile; overrides: Record<string, unknown> } {
  const firstSeed = file.seeds?.[0] ?? (typeof file.base?.seed === 'number' ? file.base.seed : 1);
  // `steps` goes into each run rather than the overrides: an evaluate-only run (steps 0, a
  // table's Vanilla row) stays evaluate-only.
  const { steps, maxTurns, maxResponseTokens, ...rest } = SMOKE_OVERRIDES;
  const isSearch = (recipe: unknown) =>
    typeof recipe === 'string' && hasRecipe(recipe) && getRecipe(recipe).env === 'tool-search';
  const runs = (file.runs ?? [{}]).map((r) => ({
    ...r,
    steps: (r.steps ?? file.base?.steps) === 0 ? 0 : steps,
    ...(isSearch(r.recipe ?? file.base?.recipe) ? {} : { maxTurns, maxResponseTokens }),
  }));
  return { file: { ...file, seeds: [firstSeed], runs }, overrides: structuredClone(rest) as Record<string, unknown> };
}
