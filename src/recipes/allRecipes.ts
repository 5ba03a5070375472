/**
 * Every recipe, registered: the one list of recipe modules (each registers itself when
 * imported), in the order the UI's dropdown and "recipe": "*" list them. Imported by
 * `src/recipes/index.ts` (CLI, worker) and by the page (`src/ui/recipeNames.ts`).
 *
 * tfjs-free on purpose: the recipe files hold reward/advantage math and prompt routing,
 * no tensors, so the page can read the registry without pulling tfjs and the model into
 * its bundle (the Trainer, which does, is exported by index.ts only).
 * `src/ui/recipeNames.test.ts` checks that this module's imports reach no tfjs.
 */
import './sft';
import './grpo';
import './matchtir';
import './sftThenMatchtir';
import './chord';
import './pact';
import './toolrl';
import './ftrl';
import './toolsearcher';
import './searchR1';
import './gspo';
import './gdpo';

export { getRecipe, hasRecipe, listRecipes } from './registry';
