/**
 * What the VeRL export carries (docs/verl-export.md): the tool-use recipes with a VeRL mapping
 * (trainerConfig.ts maps each one; its tables are keyed by this list, so the two cannot drift)
 * on generated tasks. The app's run setup reads it up front to offer its export button; it
 * imports nothing, so it adds a few lines to the page's first download and no more.
 */
import type { TrainConfig } from '../../recipes/config';

const RECIPES = ['pact', 'matchtir', 'ftrl', 'grpo', 'toolrl'] as const;

export type ExportableRecipe = (typeof RECIPES)[number];

export const EXPORTABLE_RECIPES: readonly string[] = RECIPES;

export function isExportableRecipe(name: string): name is ExportableRecipe {
  return EXPORTABLE_RECIPES.includes(name);
}

/**
 * Why the export refuses a config, or null when it exports it: a recipe without a VeRL
 * mapping, or tasks that are not generated ones (mapTrainerSettings and generateRunTasks
 * throw the same).
 */
export function findVerlExportBlocker(config: Pick<TrainConfig, 'recipe' | 'tasks'>): string | null {
  if (!isExportableRecipe(config.recipe))
    return `recipe "${config.recipe}" has no VeRL mapping; exportable: ${EXPORTABLE_RECIPES.join(', ')}`;
  if (config.tasks.source !== 'generated')
    return `tasks.source "${config.tasks.source}" is not exported yet; only "generated"`;
  return null;
}
