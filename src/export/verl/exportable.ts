/**
 * What the VeRL export carries (docs/verl-export.md): the tool-use recipes with a VeRL mapping
 * (trainerConfig.ts maps each one; its tables are keyed by this list, so the two cannot drift)
 * on generated tasks, and on FTRL task files for the recipes `pact train` trains there
 * (run/ftrlTaskSplit.ts checkFtrlRecipe: ftrl and grpo; matchtir and toolrl when every train
 * task carries gold calls, checked once the file is read). The app's run setup reads it up
 * front to offer its export button; besides the list it imports only the recipe registry and
 * the FTRL recipe check, which the run setup loads anyway.
 */
import { getRecipe } from '../../recipes/allRecipes';
import type { TrainConfig } from '../../recipes/config';
import { checkFtrlRecipe } from '../../run/ftrlTaskSplit';

const RECIPES = ['pact', 'matchtir', 'ftrl', 'grpo', 'toolrl'] as const;

export type ExportableRecipe = (typeof RECIPES)[number];

export const EXPORTABLE_RECIPES: readonly string[] = RECIPES;

/** The task sources the export reads: generated tasks, and FTRL task files (`pact export verl` only). */
export const EXPORTABLE_SOURCES: readonly string[] = ['generated', 'ftrl'];

export function isExportableRecipe(name: string): name is ExportableRecipe {
  return EXPORTABLE_RECIPES.includes(name);
}

/** Where an export is built: `pact export verl` (cli) or the run setup's button (app). */
export type VerlExportSite = 'cli' | 'app';

/**
 * Why the page's export refuses an FTRL run: it has no task file to read (the one loaded in the
 * Task files panel goes to the trainer, not to the run setup), so the Python tools cannot travel.
 */
export const APP_FTRL_EXPORT_BLOCKER =
  "FTRL runs are exported by `pact export verl --config FILE` only: the page's export does not read the task file (the one in the Task files panel), so the tools' Python sources cannot go into its .tar";

/**
 * Why the export refuses a config, or null when it exports it: a recipe without a VeRL
 * mapping, a task source it does not read, a recipe that cannot train on FTRL tasks, or (from
 * the app) an FTRL run. generateRunTasks and mapTrainerSettings throw the same.
 */
export function findVerlExportBlocker(
  config: Pick<TrainConfig, 'recipe' | 'tasks'>,
  site: VerlExportSite = 'cli',
): string | null {
  if (!isExportableRecipe(config.recipe))
    return `recipe "${config.recipe}" has no VeRL mapping; exportable: ${EXPORTABLE_RECIPES.join(', ')}`;
  if (!EXPORTABLE_SOURCES.includes(config.tasks.source))
    return `tasks.source "${config.tasks.source}" is not exported; only ${EXPORTABLE_SOURCES.map((s) => `"${s}"`).join(' and ')}`;
  if (config.tasks.source === 'ftrl') {
    const problem = checkFtrlRecipe(getRecipe(config.recipe));
    if (problem) return problem;
    if (site === 'app') return APP_FTRL_EXPORT_BLOCKER;
  }
  return null;
}
