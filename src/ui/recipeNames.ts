/**
 * The recipe names the run-setup select offers, read from the recipe registry
 * (STYLE.md habit 4: dropdowns are built from the registry, not from a second list).
 *
 * Recipe modules register themselves on import. The page imports the recipe files
 * (reward/advantage math and routing, no tensors) rather than `src/recipes/index.ts`,
 * which also exports the Trainer and would pull tfjs and the model into the page
 * bundle (+~170 kB); the trainer lives in the worker. `recipeNames.test.ts` checks this
 * list of imports registers exactly what the index registers. Order: the index's.
 */
import '../recipes/sft';
import '../recipes/grpo';
import '../recipes/matchtir';
import '../recipes/sftThenMatchtir';
import '../recipes/chord';
import '../recipes/pact';
import '../recipes/toolrl';
import '../recipes/ftrl';
import '../recipes/toolsearcher';
import '../recipes/searchR1';
import '../recipes/gspo';
import '../recipes/gdpo';
import { listRecipes } from '../recipes/registry';

export const RECIPE_NAMES: readonly string[] = listRecipes();
