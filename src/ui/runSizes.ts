/**
 * Run sizes: how much work one training step does, chosen in Run setup with one click.
 * "Quick" is the app's default: its first step must finish in about half a minute on a
 * CPU-only laptop (wasm). "Paper-scaled" is the config's own defaults, PACT Table 6
 * scaled down to qwen3-nano (src/recipes/config.ts), which needs a GPU to keep a step
 * short. A size sets some form fields and, under the config overrides, a few fields the
 * form does not show (so an override still wins, and a link from the experiment runner,
 * which carries every field as an override, is unchanged by the size).
 *
 * To resize the default once a step's speed is measured, edit QUICK below: the numbers in
 * the Run setup's text are computed from it.
 */
import { trainConfigSchema } from '../recipes/config';
import type { RolloutEnvKind } from '../recipes/types';
import type { FieldKey } from './setupFields';

export type RunSizeId = 'quick' | 'paper';

export interface RunSize {
  id: RunSizeId;
  title: string;
  /** What the machine needs for it, in words. */
  needs: string;
  /** Form fields it sets (text, as typed). */
  fields: Partial<Record<FieldKey, string>>;
  /** Config fields the form does not carry, merged under the overrides. */
  base: SizeBase;
  /**
   * For the tool-search recipes, over `base`: a search episode's observations count as response
   * tokens, so it needs the budget experiments/toolsearcher.json gives (512 prompt + 1,536
   * response tokens: at 768, 38% of the search warm start's held-out episodes were cut before
   * their answer); task kinds do not apply (the prompts are repository queries).
   */
  searchBase: SizeBase;
  /** `needs` for the tool-search recipes, where it differs. */
  searchNeeds?: string;
}

export interface SizeBase {
  maxTurns?: number;
  maxPromptTokens?: number;
  maxResponseTokens?: number;
  tasks?: { nTest?: number; categories?: string[] };
}

/** The response budget a search episode of the search warm start needs (experiments/toolsearcher.json). */
export const SEARCH_EPISODE_TOKENS = 1536;
/** The prompt budget beside it (a search prompt is about 300 tokens; the window is 2,048). */
export const SEARCH_PROMPT_TOKENS = 512;
const SEARCH_BUDGET = { maxPromptTokens: SEARCH_PROMPT_TOKENS, maxResponseTokens: SEARCH_EPISODE_TOKENS };

const CONFIG_DEFAULTS = trainConfigSchema.parse({});

/**
 * The quick size: 2 prompts × K 4 rollouts, one PPO mini-batch per prompt, at most 4 turns
 * and 576 response tokens (the expert's single-hop, multi-hop and parallel single-hop episodes
 * take 150–630 tokens with the warm start's vocabulary; parallel multi-hop ones, 650–990, are
 * left out so no episode is cut), 8 held-out tasks.
 */
const QUICK: RunSize = {
  id: 'quick',
  title: 'Quick: fits a laptop CPU',
  needs: 'any machine (wasm on the CPU is enough)',
  fields: { batch: '2', miniBatch: '1', K: '4' },
  base: {
    maxTurns: 4,
    maxResponseTokens: 576,
    tasks: { nTest: 8, categories: ['single_hop', 'multi_hop', 'parallel_single_hop'] },
  },
  searchBase: { ...SEARCH_BUDGET, tasks: { nTest: 8 } },
};

/** The config's defaults (PACT Table 6 scaled to qwen3-nano): the same fields, at their default values. */
const PAPER: RunSize = {
  id: 'paper',
  title: 'Paper-scaled: needs a GPU',
  needs:
    'a hardware WebGPU adapter (a GPU); on a CPU one step took 1 min on 2 cores, where a quick step takes about 5 s',
  fields: {
    batch: String(CONFIG_DEFAULTS.batchPrompts),
    miniBatch: String(CONFIG_DEFAULTS.miniBatchPrompts),
    K: String(CONFIG_DEFAULTS.rolloutsPerPrompt),
  },
  base: {},
  searchBase: SEARCH_BUDGET,
  searchNeeds: 'a hardware WebGPU adapter (a GPU)',
};

export const RUN_SIZES: Readonly<Record<RunSizeId, RunSize>> = { quick: QUICK, paper: PAPER };
export const DEFAULT_RUN_SIZE: RunSizeId = 'quick';

/** The query key that carries the size in a link. */
export const SIZE_KEY = 'size';

export function isRunSizeId(text: string): text is RunSizeId {
  return text === 'quick' || text === 'paper';
}

/** The config fields a size sets for a recipe that runs on `env` (the form's fields aside). */
export function sizeBaseFor(size: RunSize, env: RolloutEnvKind = 'tool-use'): SizeBase {
  if (env !== 'tool-search') return structuredClone(size.base);
  const base = { ...structuredClone(size.base), ...structuredClone(size.searchBase) };
  if (base.tasks) delete base.tasks.categories;
  return base;
}

/** The numbers of a size, with the config's defaults for what it leaves alone. */
export function readRunSizeNumbers(
  size: RunSize,
  env: RolloutEnvKind = 'tool-use',
): {
  batchPrompts: number;
  rolloutsPerPrompt: number;
  maxTurns: number;
  maxResponseTokens: number;
  nTest: number;
  categories: string[] | null;
} {
  const base = sizeBaseFor(size, env);
  return {
    batchPrompts: Number(size.fields.batch ?? CONFIG_DEFAULTS.batchPrompts),
    rolloutsPerPrompt: Number(size.fields.K ?? CONFIG_DEFAULTS.rolloutsPerPrompt),
    maxTurns: base.maxTurns ?? CONFIG_DEFAULTS.maxTurns,
    maxResponseTokens: base.maxResponseTokens ?? CONFIG_DEFAULTS.maxResponseTokens,
    nTest: base.tasks?.nTest ?? CONFIG_DEFAULTS.tasks.nTest,
    categories: base.tasks?.categories ?? null,
  };
}

/** Rollout tokens a step may generate at most: prompts × K × response tokens. */
export function countStepTokens(size: RunSize, env: RolloutEnvKind = 'tool-use'): number {
  const n = readRunSizeNumbers(size, env);
  return n.batchPrompts * n.rolloutsPerPrompt * n.maxResponseTokens;
}

/** One line per size and kind of recipe: what a step does, and how much more than a quick step of the same kind. */
export function describeRunSize(size: RunSize, env: RolloutEnvKind = 'tool-use'): string {
  const n = readRunSizeNumbers(size, env);
  const ratio = countStepTokens(size, env) / countStepTokens(QUICK, env);
  const work = size.id === 'quick' ? '' : ` About ${Math.round(ratio)}× the rollout tokens of a quick step.`;
  const rollouts = `${n.batchPrompts} prompts × K ${n.rolloutsPerPrompt} rollouts a step, up to ${n.maxTurns} turns and ${n.maxResponseTokens.toLocaleString('en-US')} response tokens each`;
  if (env === 'tool-search')
    return `${rollouts} (search results count as response tokens), ${n.nTest} held-out queries.${work} Needs ${size.searchNeeds ?? size.needs}.`;
  const tasks = n.categories ? `${n.categories.length} of the 4 task kinds` : 'all 4 task kinds';
  return `${rollouts}, ${tasks}, ${n.nTest} held-out tasks.${work} Needs ${size.needs}.`;
}
