/**
 * What the VeRL export carries (docs/verl-export.md): the tool-use recipes with a VeRL mapping
 * (trainerConfig.ts maps each one; its tables are keyed by this list, so the two cannot drift)
 * on generated tasks, and on FTRL task files for the recipes `pact train` trains there
 * (run/ftrlTaskSplit.ts checkFtrlRecipe: ftrl and grpo; matchtir and toolrl when every train
 * task carries gold calls, checked once the file is read). The app's run setup reads it up
 * front to offer its export button (an FTRL run also needs the task file loaded in the page:
 * ui/verlExport.ts); besides the list it imports only the recipe registry and the FTRL recipe
 * check, which the run setup loads anyway.
 */
import { getRecipe } from '../../recipes/allRecipes';
import type { TrainConfig } from '../../recipes/config';
import { checkFtrlRecipe } from '../../run/ftrlTaskSplit';

const RECIPES = ['pact', 'matchtir', 'ftrl', 'grpo', 'toolrl'] as const;

export type ExportableRecipe = (typeof RECIPES)[number];

export const EXPORTABLE_RECIPES: readonly string[] = RECIPES;

/** The task sources the export reads: generated tasks, and FTRL task files. */
export const EXPORTABLE_SOURCES: readonly string[] = ['generated', 'ftrl'];

export function isExportableRecipe(name: string): name is ExportableRecipe {
  return EXPORTABLE_RECIPES.includes(name);
}

/**
 * Why the export refuses a config, or null when it exports it: a recipe without a VeRL
 * mapping, a task source it does not read, or a recipe that cannot train on FTRL tasks.
 * generateRunTasks and mapTrainerSettings throw the same.
 */
export function findVerlExportBlocker(config: Pick<TrainConfig, 'recipe' | 'tasks'>): string | null {
  if (!isExportableRecipe(config.recipe))
    return `recipe "${config.recipe}" has no VeRL mapping; exportable: ${EXPORTABLE_RECIPES.join(', ')}`;
  if (!EXPORTABLE_SOURCES.includes(config.tasks.source))
    return `tasks.source "${config.tasks.source}" is not exported; only ${EXPORTABLE_SOURCES.map((s) => `"${s}"`).join(' and ')}`;
  if (config.tasks.source === 'ftrl') {
    const problem = checkFtrlRecipe(getRecipe(config.recipe));
    if (problem) return problem;
  }
  return null;
}
