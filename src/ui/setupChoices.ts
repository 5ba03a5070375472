/**
 * What the run setup offers and what it cannot run: for each choice field (model preset,
 * starting weights, task source, engine kernels) the options that cannot train with the rest
 * of the setup or in this browser, each with its reason. The form shows them disabled with the reason, and a setup that
 * still holds one (a link, or a change elsewhere) is refused at its field before Train,
 * never replaced by something else. The trainer refuses the same things itself
 * (src/run/runAssets.ts); this is the page saying so first.
 */
import { MODEL_PRESETS, TASK_SOURCES, WARM_START_PRESET } from '../recipes/config';
import { getRecipe, hasRecipe } from '../recipes/allRecipes';
import { QWEN3_PRESETS, countQwen3Params } from '../model/qwen3/config';
import { KERNEL_VARIANTS } from '../model/engine/kernelChoice';
import { NO_RELAXED_SIMD_REASON } from './engineKernels';

/** The choice fields whose options depend on the rest of the setup. */
export type ChoiceKey = 'model' | 'init' | 'tasks' | 'kernels';

/** The choice fields, in the order the setup checks them. */
export const CHOICE_KEYS: readonly ChoiceKey[] = ['model', 'init', 'tasks', 'kernels'];

export interface ChoiceValues {
  recipe: string;
  model: string;
  init: string;
  tasks: string;
}

export interface SetupContext {
  /** A Qwen3 folder picked as the model (its name): it replaces the preset and starting weights. */
  modelFolderName?: string | null;
  /** The FTRL file loaded in the Task files panel (its name): the "loaded FTRL file" task source. */
  ftrlFileName?: string | null;
  /** Whether the page's WebAssembly validates relaxed SIMD (kernelChoice.ts hasRelaxedSimd); unknown: assumed. */
  hasRelaxedSimd?: boolean;
}

/** The starting weights the form offers (config `model.init`; a picked folder is the third way). */
export const STARTING_WEIGHTS = ['warm-start', 'scratch'] as const;

/** Training state of a float32 model: weights, gradients, two AdamW moments and π_ref, 4 bytes each. */
const TRAINING_COPIES = 5;

function reasonFor(key: ChoiceKey, option: string, values: ChoiceValues, ctx: SetupContext): string | null {
  if (key === 'kernels') return option === 'fma' && ctx.hasRelaxedSimd === false ? NO_RELAXED_SIMD_REASON : null;
  if (key === 'model') {
    if (option !== 'Qwen3-0.6B') return null;
    const gb = Math.round((countQwen3Params(QWEN3_PRESETS['Qwen3-0.6B']) * 4 * TRAINING_COPIES) / 1e9);
    return `needs its trained weights: pick a Qwen3-0.6B folder below (from random weights it would need about ${gb} GB of training state, and learn nothing)`;
  }
  if (key === 'init') {
    if (option === 'warm-start' && values.model !== WARM_START_PRESET) {
      return `the shipped warm start is a ${WARM_START_PRESET}; a ${values.model} starts from random weights or from your Qwen3 folder`;
    }
    return null;
  }
  const env = hasRecipe(values.recipe) ? getRecipe(values.recipe).env : 'tool-use';
  if (option === 'ftrl' && !ctx.ftrlFileName) {
    return "load an FTRL task file in the Task files panel first (FTRL's own test file is not shipped: it is public benchmark data you load from your disk)";
  }
  if (option === 'tool-repo' && env === 'tool-use') {
    return 'only the search recipes (ToolSearcher, Search-R1, GSPO, GDPO) train on it';
  }
  return null;
}

/** The options of a choice field, as the config lists them. */
export function listChoiceOptions(key: ChoiceKey): readonly string[] {
  if (key === 'kernels') return KERNEL_VARIANTS;
  return key === 'model' ? MODEL_PRESETS : key === 'init' ? STARTING_WEIGHTS : TASK_SOURCES;
}

/** Option → why it cannot train with the rest of the setup (options that can are absent). */
export function findUnavailableOptions(
  key: ChoiceKey,
  values: ChoiceValues,
  ctx: SetupContext = {},
): Record<string, string> {
  if (ctx.modelFolderName && (key === 'model' || key === 'init')) return {};
  const out: Record<string, string> = {};
  for (const option of listChoiceOptions(key)) {
    const reason = reasonFor(key, option, values, ctx);
    if (reason) out[option] = reason;
  }
  return out;
}

/** Why a field is not in use at all (a picked folder sets the model); null when it is. */
export function describeLockedField(key: string, ctx: SetupContext = {}): string | null {
  if (!ctx.modelFolderName || (key !== 'model' && key !== 'init')) return null;
  return `not used: your folder ${ctx.modelFolderName} is the model`;
}

/** What the setup should say about a choice that does train, but not as one might expect. */
export function describeChoiceNotes(values: ChoiceValues, ctx: SetupContext = {}): string[] {
  if (ctx.modelFolderName) return [];
  if (values.init === 'scratch') {
    return [
      `Random weights: this ${values.model} has never seen a tool call, so its reward stays near 0 for many steps (the shipped warm start took 500 GPU steps of 64 expert episodes). Nothing is pretrained.`,
    ];
  }
  return [];
}
