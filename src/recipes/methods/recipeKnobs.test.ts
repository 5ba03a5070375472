import { describe, expect, it } from 'vitest';
import { resolveConfig, type TrainConfigInput } from '../config';
import { getRecipe, listRecipes } from '../allRecipes';
import type { PromptRoute, RecipeContext, RolloutGroup } from '../types';
import { createRng } from '../../core/rng';
import type { Task } from '../../envs/types';
import type { ExpertTrace } from '../../traces/types';

/** Four tool-use prompts that carry an expert trace (routing reads only whether one is there). */
const GROUPS: RolloutGroup[] = Array.from({ length: 4 }, (_, index) => ({
  prompt: { kind: 'tool-use', index, task: {} as Task, trace: {} as ExpertTrace },
  rollouts: [],
}));

function routeAt(
  name: string,
  step: number,
  config: TrainConfigInput,
): { routes: PromptRoute[]; usesRollouts: boolean } {
  const ctx: RecipeContext = { step, config: resolveConfig({ recipe: name, steps: 24, ...config }), rng: createRng(1) };
  const recipe = getRecipe(name);
  return { routes: recipe.routePrompts(GROUPS, ctx), usesRollouts: recipe.usesRollouts(ctx) };
}

/** Whether changing `a` to `b` changes what the recipe does at any of a few steps. */
function isReadBy(name: string, a: TrainConfigInput, b: TrainConfigInput): boolean {
  return [0, 3, 10, 20].some((s) => JSON.stringify(routeAt(name, s, a)) !== JSON.stringify(routeAt(name, s, b)));
}

describe('recipe knobs', () => {
  it('every registered recipe has a readable title, not its registry id', () => {
    const titles = listRecipes().map((name) => getRecipe(name).title);
    expect(titles.filter((t) => /_/.test(t))).toEqual([]);
    expect(new Set(titles).size).toBe(titles.length);
  });

  // The knobs the setup shows are exactly the ones that change what the recipe does.
  it.each(listRecipes())('%s lists the knobs it reads and no other', (name) => {
    const knobs = getRecipe(name).knobs;
    const usesRollouts = [0, 3, 10, 20].some((s) => routeAt(name, s, {}).usesRollouts);
    expect(knobs.includes('rollouts'), 'rollouts').toBe(usesRollouts);
    const readsPact =
      isReadBy(name, { pact: { anchorProb: 0 } }, { pact: { anchorProb: 1 } }) ||
      routeAt(name, 0, { pact: { anchorProb: 0 } }).routes.some((r) => r.sftMask === 'component' && r.sftWeight > 0);
    expect(knobs.includes('pact'), 'pact').toBe(readsPact);
    expect(knobs.includes('chordMu'), 'chordMu').toBe(isReadBy(name, { chordMu: 0.1 }, { chordMu: 0.7 }));
    expect(knobs.includes('sftSteps'), 'sftSteps').toBe(isReadBy(name, { sftSteps: 0 }, { sftSteps: 8 }));
  });
});
