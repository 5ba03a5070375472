/**
 * `--smoke`: the same experiment, shrunk so each run takes seconds to a minute on wasm.
 * The experiment's own runs, recipes and method knobs are kept; only the size changes:
 * 2 steps (so SFT→MatchTIR still does one SFT step and one MatchTIR step; an evaluate-only
 * run keeps steps 0), K = 2, one prompt per batch, 8 train / 2 test tasks, one held-out
 * evaluation at the end, no checkpoints, and only the first seed. A tool-use run keeps at most
 * the Quick size's 4 turns and 576 response tokens, where the warm start's single- and
 * multi-hop episodes finish (at 32 tokens every episode was cut before its first call and every
 * cell read 0); a search run keeps its file's turns and tokens (its episodes need hundreds).
 * The fixed sizes are merged into every run last (expandExperiment's `overrides`), so they win
 * over a run's own values; steps, turns and tokens go into each run instead.
 */
import '../recipes/allRecipes';
import { getRecipe, hasRecipe } from '../recipes/registry';
import { trainConfigSchema } from '../recipes/config';
import type { ExperimentFile } from '../run/experimentFile';

const CONFIG_DEFAULTS = trainConfigSchema.parse({});

export const SMOKE_OVERRIDES: Readonly<Record<string, unknown>> = Object.freeze({
  steps: 2,
  rolloutsPerPrompt: 2,
  batchPrompts: 1,
  miniBatchPrompts: 1,
  // At most these (a run with fewer keeps its own; a search run keeps its own).
  maxTurns: 4,
  maxResponseTokens: 576,
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
  const own = (r: Record<string, unknown>, key: 'maxTurns' | 'maxResponseTokens') => {
    const value = r[key] ?? file.base?.[key] ?? CONFIG_DEFAULTS[key];
    return typeof value === 'number' ? value : CONFIG_DEFAULTS[key];
  };
  const runs = (file.runs ?? [{}]).map((r) => ({
    ...r,
    steps: (r.steps ?? file.base?.steps) === 0 ? 0 : steps,
    ...(isSearch(r.recipe ?? file.base?.recipe)
      ? {}
      : {
          maxTurns: Math.min(own(r, 'maxTurns'), maxTurns as number),
          maxResponseTokens: Math.min(own(r, 'maxResponseTokens'), maxResponseTokens as number),
        }),
  }));
  return { file: { ...file, seeds: [firstSeed], runs }, overrides: structuredClone(rest) as Record<string, unknown> };
}
