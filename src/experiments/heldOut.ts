/**
 * The held-out set a run was scored on, in words, for the notes under a table (`pact table` and
 * `npm run experiment` write the same line). Tool-use runs: nTest tasks of the generated test (or
 * train-split) world of testSeed. Search runs on generated repositories: nTest queries held out of
 * the tool repository generated from trainSeed (runAssets.ts createGeneratedSearchPrompts; their
 * testSeed is not read). Runs made before tasks.testSplit existed have none in config.json: the test split.
 */
import type { TrainConfig } from '../recipes/config';
import { getRecipe } from '../recipes/registry';

type HeldOutConfig = Pick<TrainConfig, 'recipe' | 'tasks' | 'evalSamples'>;

export function describeHeldOut(c: HeldOutConfig): string {
  let isSearch = false;
  try {
    isSearch = getRecipe(c.recipe).env === 'tool-search';
  } catch {
    // A recipe this build does not know: described as tool-use.
  }
  if (isSearch && (c.tasks.source ?? 'generated') === 'generated')
    return `${c.tasks.nTest} queries held out of the tool repository generated from seed ${c.tasks.trainSeed}`;
  return `${c.tasks.nTest} tasks of the ${c.tasks.testSplit === 'train' ? 'train-split' : 'test'} world of seed ${c.tasks.testSeed}`;
}

/** "Held out: <describeHeldOut>, one greedy rollout each." (or its sampled rollouts, or the train-split remark). */
export function formatHeldOutNote(c: HeldOutConfig): string {
  return (
    `Held out: ${describeHeldOut(c)}` +
    (c.tasks.testSplit === 'train' ? " (testSplit 'train': names from the training pool), " : ', ') +
    (c.evalSamples > 0 ? `${c.evalSamples} sampled rollouts each.` : 'one greedy rollout each.')
  );
}
