/**
 * src/recipes: one training step per recipe, registered by name, and the trainer that
 * runs them. Importing this module registers every recipe (through ./allRecipes, the one
 * list of recipe files, which the page imports too).
 */
import './allRecipes';

export * from './types';
export { registerRecipe, getRecipe, hasRecipe, listRecipes } from './registry';
export { resolveConfig, ConfigError, type TrainConfig, type TrainConfigInput } from './config';
export { Trainer, createToolUsePrompts, type TrainerInit } from './train/trainer';
export { collectToolUseRollouts, type ToolUseRolloutOptions } from './rollouts/rollouts';
