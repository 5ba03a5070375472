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
import './methods/sft';
import './methods/grpo';
import './methods/matchtir';
import './methods/sftThenMatchtir';
import './methods/chord';
import './methods/pact';
import './methods/toolrl';
import './methods/ftrl';
import './methods/toolsearcher';
import './methods/searchR1';
import './methods/gspo';
import './methods/gdpo';

export { getRecipe, hasRecipe, listRecipes } from './registry';
