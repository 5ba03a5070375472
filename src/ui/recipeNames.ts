/**
 * The recipes the run-setup select offers, read from the recipe registry (dropdowns are
 * built from the registry, not from a second list): their names in
 * registration order, and each one's readable title, one-line summary and objective as the
 * recipe module states them.
 *
 * The page imports `src/recipes/allRecipes.ts` (every recipe file, registered; no tensors)
 * rather than `src/recipes/index.ts`, which also exports the Trainer and would pull tfjs
 * and the model into the page bundle (+~170 kB); the trainer lives in the worker.
 */
import { getRecipe, hasRecipe, listRecipes } from '../recipes/allRecipes';
import type { Lesson } from './lessons';

export const RECIPE_NAMES: readonly string[] = listRecipes();

/** Registry name → readable title ("sft_then_matchtir" → "SFT → MatchTIR"). */
export const RECIPE_TITLES: Readonly<Record<string, string>> = Object.fromEntries(
  RECIPE_NAMES.map((n) => [n, getRecipe(n).title]),
);

/**
 * The "what this run optimises" note of a recipe: its objective and the paper it cites,
 * with the recipe's one-line summary as the text. `pactLesson` (the method's own, longer
 * text in lessons.ts) replaces the summary for PACT itself.
 */
export function describeRecipeObjective(name: string, pactLesson?: Lesson): Lesson | null {
  if (!hasRecipe(name)) return null;
  const r = getRecipe(name);
  const title = `What a ${r.title} run optimises`;
  if (name === 'pact' && pactLesson) return { ...pactLesson, title };
  return { id: `recipe-${name}`, title, equation: r.objective, equationRef: r.reference, body: `${r.summary}.` };
}
