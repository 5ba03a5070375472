import { describe, expect, it } from 'vitest';
import { RECIPE_NAMES } from './recipeNames';

describe('recipe dropdown', () => {
  it('offers exactly the recipes the full recipes index registers', async () => {
    // The page imports the recipe files without the trainer (it keeps tfjs out of the page
    // bundle); this checks that list has not drifted from src/recipes/index.ts.
    const { listRecipes } = await import('../recipes');
    expect([...RECIPE_NAMES].sort()).toEqual([...listRecipes()].sort());
    expect(RECIPE_NAMES).toContain('pact');
  });
});
