/**
 * src/recipes: one training step per recipe, registered by name, and the trainer that
 * runs them. Importing this module registers every recipe (one import line per recipe
 * file, in the order the UI lists them).
 */
import './sft';
import './grpo';
import './matchtir';
import './sftThenMatchtir';
import './chord';
import './toolrl';
import './ftrl';
import './pact';
import './toolsearcher';
import './searchR1';
import './gspo';
import './gdpo';

export * from './types';
export { registerRecipe, getRecipe, hasRecipe, listRecipes } from './registry';
export { resolveConfig, ConfigError, type TrainConfig, type TrainConfigInput } from './config';
export { Trainer, createToolUsePrompts, type TrainerInit } from './trainer';
export { collectToolUseRollouts, type ToolUseRolloutOptions } from './rollouts';
export { expandExperiment, mergeDeep, type Experiment, type ExperimentRun, type ExperimentFile } from './experiment';
export { buildCheckpointFiles, readCheckpointState } from './checkpoint';
