/**
 * Recipes registered by name: each module of ./methods/ registers one (its name is the only
 * list of it). The UI builds its recipe dropdown from `listRecipes()`; an unknown name fails
 * listing the valid ones.
 *
 * Recipe modules register themselves when imported; `./allRecipes` imports them all
 * (tfjs-free, for the page; `src/recipes/index.ts` imports it too), so read the registry
 * through one of those.
 */
import { createRegistry } from '../core/registry';
import type { Recipe } from './types';

const RECIPES = createRegistry<Recipe>('recipe');

/** Registers a recipe under `recipe.name`; a second registration of a name is an error. */
export function registerRecipe(recipe: Recipe): void {
  if (!recipe || typeof recipe.name !== 'string') throw new Error('registerRecipe: recipe must have a name');
  for (const field of ['scoreGroup', 'routePrompts', 'usesRollouts', 'rewardName'] as const) {
    if (typeof recipe[field] !== 'function')
      throw new Error(`registerRecipe: recipe "${recipe.name}" has no ${field}()`);
  }
  for (const field of ['needsTraces', 'usesMatchTirCredit'] as const) {
    if (typeof recipe[field] !== 'boolean')
      throw new Error(`registerRecipe: recipe "${recipe.name}" has no boolean ${field}`);
  }
  for (const field of ['title', 'summary', 'objective', 'reference'] as const) {
    if (typeof recipe[field] !== 'string' || recipe[field] === '')
      throw new Error(`registerRecipe: recipe "${recipe.name}" has no ${field} text`);
  }
  if (!Array.isArray(recipe.knobs)) throw new Error(`registerRecipe: recipe "${recipe.name}" has no knobs list`);
  RECIPES.register(recipe.name, recipe);
}

/** The recipe named `name`; throws `unknown recipe "x"; valid: …` otherwise. */
export function getRecipe(name: string): Recipe {
  return RECIPES.get(name);
}

export function hasRecipe(name: string): boolean {
  return RECIPES.has(name);
}

/** Registered recipe names, in registration order. */
export function listRecipes(): string[] {
  return RECIPES.names();
}
