/**
 * The recipe names the run-setup select offers.
 *
 * TODO(issue 5): switch to the recipe registry (`src/recipes/registry.ts`, e.g.
 * `RECIPES.names()`) once it exists, and delete this list: STYLE.md habit 4 says
 * dropdowns are built from the registry, not from a second list. These are the
 * names issue 5 asks the registry to hold, in its order.
 */
export const RECIPE_NAMES = [
  'pact',
  'sft',
  'grpo',
  'matchtir',
  'sft_then_matchtir',
  'chord',
  'toolrl',
  'ftrl',
  'toolsearcher',
  'search_r1',
  'gspo',
  'gdpo',
] as const;
