/**
 * Run setup with a loaded FTRL file as the task source ("loaded FTRL file"): what the page says
 * before Train, from the layers that decide it in the run itself (src/run/ftrlTaskSplit.ts):
 *
 * - the split: splitFtrlTasks over the loaded file and the setup's `tasks` (by default
 *   trainFraction 0.8 seeded by trainSeed, as experiments/ftrl-train.json; trainLines /
 *   testLines from the config overrides instead), in words: how many lines train, how many are
 *   held out, by which rule, and that the held-out lines are never trained on;
 * - the recipes: checkFtrlRecipe over the registry (which can run, and why the others cannot);
 * - the window: how many of the run's prompts fit the model's window beside a response, from
 *   token counts made in the page with the policy's own tokenizer, and checkFtrlPromptWindow's
 *   verdict (the refusal the worker would give).
 *
 * `blockReason` is what keeps Train disabled. Pure: the token counts come in as numbers.
 */
import { QWEN3_PRESETS, type Qwen3Config } from '../model/qwen3/config';
import type { PrunedVocabMapping } from '../model/tokenizer/prunedVocab';
import { getRecipe } from '../recipes/allRecipes';
import type { TrainConfig } from '../recipes/config';
import {
  FTRL_GOLD_CALL_RECIPES,
  FTRL_TRAINABLE_RECIPES,
  checkFtrlPromptWindow,
  checkFtrlRecipe,
  formatLineRanges,
  splitFtrlTasks,
  type FtrlTaskLine,
  type FtrlTaskSplit,
} from '../run/ftrlTaskSplit';
import { RECIPE_NAMES, RECIPE_TITLES } from './recipeNames';

/** The page's split when the config names none: as experiments/ftrl-train.json, 80 % train, seeded by trainSeed. */
export const FTRL_DEFAULT_TRAIN_FRACTION = 0.8;

/** FTRL's own test file: its longest prompt in Qwen3 tokens (docs/runs.md), and the window that holds it with a response. */
export const FTRL_LONGEST_PROMPT_TOKENS = 6447;
export const FTRL_WINDOW_NEEDED_TOKENS = 7000;

const fmt = (n: number) => n.toLocaleString('en-US');
const plural = (n: number, one: string, many = `${one}s`) => `${fmt(n)} ${n === 1 ? one : many}`;

/** The `tasks` fields of the config overrides that choose the split. */
const SPLIT_FIELDS = ['trainFraction', 'trainLines', 'testLines', 'testPath'] as const;

/**
 * What a loaded file adds to the setup's config input: `path` (its name; the worker reads the
 * file the page sends under it) always, and the default split when the overrides choose none.
 */
export function buildFtrlTasksInput(
  fileName: string,
  overrides: Record<string, unknown>,
): { defaults: { tasks: Record<string, unknown> }; fixed: { tasks: { path: string } } } {
  const tasks = overrides.tasks;
  const isRuleGiven =
    tasks !== null &&
    typeof tasks === 'object' &&
    SPLIT_FIELDS.some((f) => (tasks as Record<string, unknown>)[f] !== undefined);
  return {
    defaults: { tasks: isRuleGiven ? {} : { trainFraction: FTRL_DEFAULT_TRAIN_FRACTION } },
    fixed: { tasks: { path: fileName } },
  };
}

/** The model whose window the prompts must fit. */
export interface FtrlModelWindow {
  /** In words: "qwen3-nano", 'your folder "Qwen3-0.6B"'. */
  name: string;
  /** max_position_embeddings. */
  windowTokens: number;
}

/** Which vocabulary the run's policy tokenises with (TaskFileState counts the prompts in it). */
export interface PromptVocabulary {
  /** Names the vocabulary in the cache ("full", "warm-start", "folder:<name>/<kept>"). */
  key: string;
  /** The kept ids of a pruned vocabulary; absent: Qwen3's full vocabulary. */
  mapping?: PrunedVocabMapping;
  /** The shipped warm start's pruned_vocab.json, fetched from the app. */
  isWarmStart?: boolean;
}

/** The run's policy as far as its prompts go: its window, its vocabulary, and whether the counts are exact. */
export interface FtrlPolicyShape {
  model: FtrlModelWindow;
  vocab: PromptVocabulary;
  /** Random weights: the worker builds their vocabulary, so full-vocabulary counts are a lower bound. */
  isLowerBound: boolean;
}

/**
 * The policy a setup trains: a picked Qwen3 folder (its window and vocabulary), else the preset
 * with the shipped warm start (its pruned vocabulary) or random weights; null for an unknown preset.
 */
export function describeFtrlPolicy(setup: {
  folder: {
    name: string;
    config: Pick<Qwen3Config, 'max_position_embeddings'>;
    prunedVocab?: PrunedVocabMapping;
  } | null;
  preset: string;
  init: string;
}): FtrlPolicyShape | null {
  const { folder } = setup;
  if (folder) {
    const vocab: PromptVocabulary = folder.prunedVocab
      ? { key: `folder:${folder.name}/${folder.prunedVocab.keptIds.length}`, mapping: folder.prunedVocab }
      : { key: 'full' };
    return {
      model: { name: `your folder "${folder.name}"`, windowTokens: folder.config.max_position_embeddings },
      vocab,
      isLowerBound: false,
    };
  }
  const presets = QWEN3_PRESETS as Readonly<Record<string, Qwen3Config>>;
  const preset = Object.hasOwn(presets, setup.preset) ? presets[setup.preset] : undefined;
  if (!preset) return null;
  const model = { name: setup.preset, windowTokens: preset.max_position_embeddings };
  return setup.init === 'warm-start'
    ? { model, vocab: { key: 'warm-start', isWarmStart: true }, isLowerBound: false }
    : { model, vocab: { key: 'full' }, isLowerBound: true };
}

export interface FtrlPlanInput {
  file: { name: string; text: string };
  /** The setup's resolved config (tasks, recipe, maxPromptTokens, maxResponseTokens). */
  config: Pick<TrainConfig, 'tasks' | 'recipe' | 'maxPromptTokens' | 'maxResponseTokens'>;
  model: FtrlModelWindow;
  /** Prompt tokens of the file's task lines (1-based line → tokens) in the policy's vocabulary; null while counted. */
  promptTokens: ReadonlyMap<number, number> | null;
  /** The counts are a lower bound: random weights get a vocabulary built in the worker. */
  isLowerBound?: boolean;
}

/** How the run's prompts sit in the model's window. */
export interface FtrlFit {
  /** Prompts of the run: train and held out, after the nTrain / nTest caps. */
  total: number;
  /** Of them, those whose tokens fit the window beside a response (window − maxResponseTokens). */
  nFit: number;
  train: { fit: number; of: number };
  heldOut: { fit: number; of: number };
  shortest: number;
  longest: number;
  /** window − maxResponseTokens. */
  promptBudget: number;
  /** The run's own verdict (checkFtrlPromptWindow): null when it would start. */
  problem: string | null;
}

export interface FtrlPlan {
  split: FtrlTaskSplit | null;
  /** The split in words, or why the file cannot be split so. */
  splitText: string;
  /** Which recipes train on this file, and why the others do not. */
  recipesText: string;
  /** Why the chosen recipe cannot (null when it can). */
  recipeProblem: string | null;
  fit: FtrlFit | null;
  /** How many prompts fit, in words. */
  fitText: string;
  /** What training on this file needs, when its prompts do not all fit. */
  needText: string | null;
  /** A maxPromptTokens that makes the run fit by itself (every prompt fits the window, only the field is off). */
  suggestedMaxPromptTokens: number | null;
  /** Why Train is disabled; null when the run can start. */
  blockReason: string | null;
}

/** The split's rule in words. */
function describeRule(config: FtrlPlanInput['config'], split: FtrlTaskSplit): string {
  const t = config.tasks;
  if (t.trainFraction !== undefined) {
    const n = split.trainChosen + split.heldOut;
    return (
      `Split by a permutation of the file's ${plural(n, 'task line')} seeded by trainSeed ${t.trainSeed} ` +
      `(trainFraction ${t.trainFraction}: ${fmt(split.trainChosen)} train, ${fmt(split.heldOut)} held out)`
    );
  }
  return `Split by the line ranges of the config overrides: trainLines "${t.trainLines}", testLines "${t.testLines}"`;
}

/** "line 2", "lines 1, 3-5" */
const namedLines = (lines: readonly number[]) =>
  `${lines.length === 1 ? 'line' : 'lines'} ${formatLineRanges(lines, 80)}`;

/** The split in words: lines, counts, rule, and the promise that held-out lines are never trained on. */
export function describeFtrlSplit(config: FtrlPlanInput['config'], split: FtrlTaskSplit): string {
  const train = split.trainLines.length;
  const test = split.testLines.length;
  const trainPart =
    train < split.trainChosen
      ? `The first ${fmt(train)} of ${fmt(split.trainChosen)} train lines of ${split.trainFile} train (nTrain ${fmt(config.tasks.nTrain)}; ${namedLines(split.trainLines)})`
      : `${plural(train, 'line')} of ${split.trainFile} train (${namedLines(split.trainLines)})`;
  const testPart =
    test < split.heldOut
      ? `the first ${fmt(test)} of ${fmt(split.heldOut)} held-out lines are evaluated (nTest ${fmt(config.tasks.nTest)}; ${namedLines(split.testLines)})`
      : `${fmt(test)} ${test === 1 ? 'is' : 'are'} held out and evaluated (${namedLines(split.testLines)})`;
  const nSkipped = split.lineErrors.length;
  const skipped =
    nSkipped > 0 ? ` ${plural(nSkipped, 'line')} of the file hold${nSkipped === 1 ? 's' : ''} no task (skipped).` : '';
  return (
    `${trainPart}; ${testPart}. ${describeRule(config, split)}. ` +
    `The held-out lines are never trained on: the run refuses a split whose parts share a line or a task, ` +
    `and reports scores on the held-out lines only.${skipped}`
  );
}

/** The registry's recipes on these train tasks: which run, and the others grouped by why not. */
export function describeFtrlRecipes(trainTasks: FtrlTaskLine['task'][]): string {
  const title = (name: string) => RECIPE_TITLES[name] ?? name;
  const runs: string[] = [];
  const traces: string[] = [];
  const gold: string[] = [];
  const search: string[] = [];
  const other: string[] = [];
  for (const name of RECIPE_NAMES) {
    const recipe = getRecipe(name);
    if (checkFtrlRecipe(recipe, trainTasks) === null) {
      const reward = FTRL_TRAINABLE_RECIPES[name] ?? FTRL_GOLD_CALL_RECIPES[name];
      runs.push(`${title(name)} (${reward ?? 'its own reward'})`);
    } else if (recipe.env !== 'tool-use') search.push(title(name));
    else if (recipe.needsTraces) traces.push(title(name));
    else if (Object.hasOwn(FTRL_GOLD_CALL_RECIPES, name)) gold.push(title(name));
    else other.push(title(name));
  }
  const withGold = trainTasks.filter((t) => t.goldCalls && t.goldCalls.length > 0).length;
  const not = [
    traces.length > 0 ? `${traces.join(', ')} need expert traces h*, which an FTRL file does not carry` : '',
    gold.length > 0
      ? `${gold.join(', ')} need gold calls on every train task (${fmt(withGold)} of ${fmt(trainTasks.length)} carry them)`
      : '',
    search.length > 0 ? `${search.join(', ')} run on the tool-search environment` : '',
    other.length > 0 ? `${other.join(', ')}: rewards not checked against FTRL's fields` : '',
  ].filter(Boolean);
  return `Recipes that train on this file: ${runs.length > 0 ? runs.join('; ') : 'none'}.${not.length > 0 ? ` Not: ${not.join('; ')}.` : ''}`;
}

/** How the run's prompts fit, from their token counts (null when a line has no count yet). */
export function measureFtrlFit(
  split: FtrlTaskSplit,
  promptTokens: ReadonlyMap<number, number>,
  config: FtrlPlanInput['config'],
  model: FtrlModelWindow,
): FtrlFit | null {
  const read = (lines: number[]) => lines.map((line) => ({ line, tokens: promptTokens.get(line) }));
  const train = read(split.trainLines);
  const test = read(split.testLines);
  if ([...train, ...test].some((t) => t.tokens === undefined)) return null;
  const known = (xs: typeof train) => xs as { line: number; tokens: number }[];
  const promptBudget = model.windowTokens - config.maxResponseTokens;
  const fits = (t: { tokens: number }) => t.tokens <= promptBudget;
  const all = [...known(train), ...known(test)];
  return {
    total: all.length,
    nFit: all.filter(fits).length,
    train: { fit: known(train).filter(fits).length, of: train.length },
    heldOut: { fit: known(test).filter(fits).length, of: test.length },
    shortest: Math.min(...all.map((t) => t.tokens)),
    longest: Math.max(...all.map((t) => t.tokens)),
    promptBudget,
    problem: checkFtrlPromptWindow({
      train: known(train),
      test: known(test),
      maxPromptTokens: config.maxPromptTokens,
      maxResponseTokens: config.maxResponseTokens,
      windowTokens: model.windowTokens,
      model: model.name,
    }),
  };
}

/** What training on a file whose prompts do not fit needs, in words. */
export function describeFtrlNeed(fit: FtrlFit, responseTokens: number, model: FtrlModelWindow): string {
  return (
    `Training on this file needs a Qwen3 folder whose window holds its longest prompt and a response: at least ` +
    `${fmt(fit.longest + responseTokens)} tokens, counted in ${model.name}'s vocabulary. In Qwen3's full vocabulary, ` +
    `which a real Qwen3 folder has, FTRL's own test prompts run to ${fmt(FTRL_LONGEST_PROMPT_TOKENS)} tokens, so a ` +
    `window of about ${fmt(FTRL_WINDOW_NEEDED_TOKENS)} (Qwen3-0.6B's is 40,960): pick such a folder under "Your Qwen3 ` +
    `folder". At real sizes it needs WebGPU: on a CPU (wasm) the memory check refuses rows that long.`
  );
}

/** The fit in words, what is needed, the maxPromptTokens that would do, and why Train is blocked. */
export function describeFtrlFit(
  fit: FtrlFit,
  config: FtrlPlanInput['config'],
  model: FtrlModelWindow,
  isLowerBound = false,
): Pick<FtrlPlan, 'fitText' | 'needText' | 'suggestedMaxPromptTokens' | 'blockReason'> {
  const R = config.maxResponseTokens;
  const X = config.maxPromptTokens;
  const W = model.windowTokens;
  const range =
    fit.shortest === fit.longest ? `${fmt(fit.longest)} tokens` : `${fmt(fit.shortest)}–${fmt(fit.longest)} tokens`;
  const budget = `its window of ${fmt(W)} positions leaves ${fmt(Math.max(0, fit.promptBudget))} prompt tokens beside ${fmt(R)} response tokens`;
  const lower = isLowerBound
    ? " Counted with Qwen3's full vocabulary, a lower bound: random weights get a vocabulary built in the worker from generated tasks, in which these prompts take more tokens; the run checks the exact counts before its first step."
    : '';
  if (fit.nFit === 0) {
    return {
      fitText: `No prompt of this file fits ${model.name}: ${budget}, and the run's ${plural(fit.total, 'prompt')} ${fit.total === 1 ? 'is' : 'are'} ${range}.${lower}`,
      needText: describeFtrlNeed(fit, R, model),
      suggestedMaxPromptTokens: null,
      blockReason: `No FTRL prompt fits ${model.name}'s window (${fmt(W)} positions; these prompts are ${range}): pick a Qwen3 folder with a window of at least ${fmt(fit.longest + R)} tokens.`,
    };
  }
  if (fit.nFit < fit.total) {
    return {
      fitText:
        `${fmt(fit.nFit)} of the run's ${fmt(fit.total)} prompts fit ${model.name} (train ${fmt(fit.train.fit)} of ${fmt(fit.train.of)}, ` +
        `held out ${fmt(fit.heldOut.fit)} of ${fmt(fit.heldOut.of)}): ${budget}, and the prompts are ${range}. A run needs every one of them to fit.${lower}`,
      needText: describeFtrlNeed(fit, R, model),
      suggestedMaxPromptTokens: null,
      blockReason: `${fmt(fit.total - fit.nFit)} of the run's ${fmt(fit.total)} prompts do not fit ${model.name}'s window: choose lines that fit (tasks.trainLines and tasks.testLines in the config overrides) or a Qwen3 folder with a window of at least ${fmt(fit.longest + R)} tokens.`,
    };
  }
  const all = `All ${fmt(fit.total)} of the run's prompts fit ${model.name}: the longest is ${fmt(fit.longest)} tokens, and ${fmt(fit.longest)} + ${fmt(R)} response tokens ≤ its window of ${fmt(W)}.`;
  if (fit.problem === null)
    return {
      fitText: `${all} maxPromptTokens ${fmt(X)} holds every prompt.${lower}`,
      needText: null,
      suggestedMaxPromptTokens: null,
      blockReason: null,
    };
  const why =
    X < fit.longest
      ? `maxPromptTokens ${fmt(X)} is below the longest prompt (${fmt(fit.longest)} tokens)`
      : `maxPromptTokens ${fmt(X)} + ${fmt(R)} response tokens is past the window of ${fmt(W)}`;
  return {
    fitText: `${all} But ${why}: set it to ${fmt(fit.longest)}.${lower}`,
    needText: null,
    suggestedMaxPromptTokens: fit.longest,
    blockReason: `${why}: set maxPromptTokens to ${fmt(fit.longest)}.`,
  };
}

/** Everything Run setup shows for an FTRL source, and what keeps Train disabled. */
export function planFtrlSetup(input: FtrlPlanInput): FtrlPlan {
  const { config, model } = input;
  const plan: FtrlPlan = {
    split: null,
    splitText: '',
    recipesText: '',
    recipeProblem: null,
    fit: null,
    fitText: '',
    needText: null,
    suggestedMaxPromptTokens: null,
    blockReason: null,
  };
  if (config.tasks.testPath !== undefined) {
    plan.splitText = `tasks.testPath "${config.tasks.testPath}": a run in the page trains and evaluates on the one loaded file; choose its held-out lines with tasks.trainLines and tasks.testLines instead.`;
    plan.blockReason = plan.splitText;
    return plan;
  }
  let result: ReturnType<typeof splitFtrlTasks>;
  try {
    result = splitFtrlTasks({ train: input.file, tasks: config.tasks });
  } catch (e) {
    plan.splitText = e instanceof Error ? e.message : String(e);
    plan.blockReason = plan.splitText;
    return plan;
  }
  plan.split = result.split;
  plan.splitText = describeFtrlSplit(config, result.split);
  const trainTasks = result.train.map((t) => t.task);
  plan.recipesText = describeFtrlRecipes(trainTasks);
  plan.recipeProblem = checkFtrlRecipe(getRecipe(config.recipe), trainTasks);
  if (!input.promptTokens) {
    plan.fitText = `Counting the prompts' tokens in ${model.name}'s vocabulary…`;
    plan.blockReason = plan.recipeProblem ?? "counting the prompts' tokens first";
    return plan;
  }
  const fit = measureFtrlFit(result.split, input.promptTokens, config, model);
  if (!fit) {
    plan.fitText = `Counting the prompts' tokens in ${model.name}'s vocabulary…`;
    plan.blockReason = plan.recipeProblem ?? "counting the prompts' tokens first";
    return plan;
  }
  plan.fit = fit;
  Object.assign(plan, describeFtrlFit(fit, config, model, input.isLowerBound));
  // The recipe comes first: no window makes a refused recipe run.
  if (plan.recipeProblem) plan.blockReason = plan.recipeProblem;
  return plan;
}
