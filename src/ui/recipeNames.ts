/**
 * The recipe names the run-setup select offers, read from the recipe registry
 * (STYLE.md habit 4: dropdowns are built from the registry, not from a second list).
 *
 * The page imports `src/recipes/allRecipes.ts` (every recipe file, registered; no tensors)
 * rather than `src/recipes/index.ts`, which also exports the Trainer and would pull tfjs
 * and the model into the page bundle (+~170 kB); the trainer lives in the worker.
 * Order: registration order, the same for the page, the CLI and the worker.
 */
import { listRecipes } from '../recipes/allRecipes';

export const RECIPE_NAMES: readonly string[] = listRecipes();
