/**
 * The assets of a training run, the same in Node (`pact train`) and in the trainer
 * worker: the policy (model + tokenizer), the tool executor, and the train/test prompts,
 * from a TrainConfig. What differs by platform (how files and the tokenizer are read,
 * which executor runs the tool stubs) comes in a `RunPlatform`: nodeRun.ts reads the
 * file system, workers/runPlatform.ts fetches from the app's own origin.
 *
 * The policy source is pluggable by `config.model.init` ('scratch', 'warm-start', a Qwen3 folder).
 * 'warm-start' starts only its own preset (WARM_START_PRESET); another preset is refused,
 * never silently replaced by it. FTRL task files (tasks.source 'ftrl', src/run/ftrlTaskSplit.ts):
 * the platform reads the file(s) and gives the executor that runs their Python tools
 * (Pyodide); the recipe, the split and every prompt's fit in the model's window are checked
 * before the first step, and the run's `taskSplit` says which lines trained and which evaluate.
 *
 * The policy sources and the prompts: docs/runs.md.
 */
import { generateTasks } from '../envs/generator';
import { generateToolRepo } from '../envs/toolRepo/generatedRepo';
import { createToolSearch } from '../envs/toolRepo/search';
import type { RenderChat } from '../envs/rollout';
import type { ToolExecutor } from '../envs/sandbox/types';
import { Qwen3Model, getQwen3Preset, isEngineActive } from '../model/qwen3';
import { configureEngineKernels } from '../model/engine/runtime';
import type { KernelVariant } from '../model/engine/kernelChoice';
import type { Qwen3Config } from '../model/qwen3/config';
import { PrunedTokenizer, type PrunedVocabMapping } from '../model/tokenizer/prunedVocab';
import type { Qwen3Tokenizer } from '../model/tokenizer/qwen3Tokenizer';
import type { TextTokenizer } from '../model/tokenizer/types';
import type { FolderReader } from '../model/weights/qwen3Folder';
import { loadQwen3Folder } from '../model/weights/qwen3Folder';
import { WARM_START_PRESET, resolveConfig, type TrainConfig } from '../recipes/config';
import { bindRenderChat, buildPolicyVocab, generateExpertTasks } from '../recipes/policyVocab';
import { getRecipe } from '../recipes/registry';
import { splitToolSearchPrompts } from '../recipes/rollouts/searchRollouts';
import { createToolUsePrompts, Trainer } from '../recipes/train/trainer';
import type { PolicySampler, PromptItem, StepProgress } from '../recipes/types';
import { loadWarmStart, warmStartFolderFor, type ReadWarmStartFile } from '../recipes/warmStart/index';
import { checkTrainingMemory } from '../recipes/train/memoryEstimate';
import { readBackendBufferLimits } from '../model/qwen3/graphBuffers';
import { DEFAULT_FTRL_EVAL_SETTINGS } from './ftrlEvalSettings';
import {
  checkFtrlPromptWindow,
  countPromptTokens,
  readFtrlRunSplit,
  type FtrlTaskLine,
  type FtrlTaskSplit,
} from './ftrlTaskSplit';
import * as tf from '../model/qwen3/tf';

/** What a platform provides to load a run. */
export interface RunPlatform {
  /** Qwen3's full tokenizer (pruned vocabularies map onto it). */
  loadSourceTokenizer(): Promise<Qwen3Tokenizer>;
  /**
   * A shipped warm start, by its folder under public/ (WARM_START_DIR, or WARM_START_SEARCH_DIR for
   * the search recipes): a reader of its files (config.json, model.safetensors, …) and where it is
   * read from, for messages.
   */
  openWarmStart(folder: string): { read: ReadWarmStartFile; location: string };
  /** Opens a user's Qwen3 folder named by `model.init`; absent where the platform cannot. */
  openFolder?(init: string): FolderReader;
  /** The executor for the tool stubs. */
  createExecutor(): ToolExecutor | Promise<ToolExecutor>;
  /**
   * FTRL sources: reads a task file named by config.tasks.path / testPath (undefined: the
   * platform's default FTRL file, if it has one); `name` is what the run reports. Absent where
   * the platform cannot read one.
   */
  readTaskFile?(path: string | undefined): Promise<{ name: string; text: string }>;
  /** FTRL sources: an executor for the tasks' Python tools (Pyodide), each call cut at `timeoutMs`. */
  createFtrlExecutor?(options: { timeoutMs: number }): ToolExecutor | Promise<ToolExecutor>;
}

export interface Policy {
  model: Qwen3Model;
  tokenizer: TextTokenizer;
  /** The pruned vocabulary, saved with checkpoints (absent: full Qwen3 vocabulary). */
  mapping?: PrunedVocabMapping;
  /** Where it came from, for logs. */
  source: string;
}

export interface PolicySourceContext {
  source: Qwen3Tokenizer;
  executor: ToolExecutor;
  platform: RunPlatform;
  log: (line: string) => void;
}

export type PolicySource = (config: TrainConfig, ctx: PolicySourceContext) => Promise<Policy>;

const POLICY_SOURCES = new Map<string, PolicySource>();

/** Registers a policy source under a `model.init` value. */
export function registerPolicySource(init: string, source: PolicySource): void {
  POLICY_SOURCES.set(init, source);
}

const vocabCache = new Map<string, Promise<{ tokenizer: PrunedTokenizer; mapping: PrunedVocabMapping }>>();

registerPolicySource('scratch', async (config, ctx) => {
  const preset = getQwen3Preset(config.model.preset);
  const key = `${config.tasks.trainSeed}/${config.model.vocabTasks}/${preset.vocab_size}`;
  let vocab = vocabCache.get(key);
  if (!vocab) {
    ctx.log(`building the pruned vocabulary from ${config.model.vocabTasks} generated tasks…`);
    vocab = buildPolicyVocab(
      { seed: config.tasks.trainSeed, nTasks: config.model.vocabTasks, maxVocabSize: preset.vocab_size },
      ctx.source,
      ctx.executor,
    );
    vocabCache.set(key, vocab);
  }
  const { tokenizer, mapping } = await vocab;
  const model = Qwen3Model.fromConfig({ ...preset, vocab_size: tokenizer.vocabSize }, config.seed);
  return {
    model,
    tokenizer,
    mapping,
    source: `scratch (${config.model.preset}, ${tokenizer.vocabSize} tokens, seed ${config.seed})`,
  };
});

registerPolicySource('warm-start', async (config, ctx) => {
  // The search recipes start from the warm start that has seen search episodes (files.ts).
  const { read, location: dir } = ctx.platform.openWarmStart(warmStartFolderFor(getRecipe(config.recipe).env));
  if (config.model.preset !== WARM_START_PRESET) {
    throw new Error(
      `config.model.preset "${config.model.preset}": the shipped warm start is a ${WARM_START_PRESET}; start a ${config.model.preset} from random weights (model.init "scratch") or from a Qwen3 folder`,
    );
  }
  let warm;
  try {
    warm = await loadWarmStart(read);
  } catch (e) {
    throw new Error(
      `config.model.init "warm-start": ${(e as Error).message} — run \`npm run pretrain\` to build ${dir}, or set model.init to "scratch"`,
    );
  }
  return {
    model: Qwen3Model.fromTensors(warm.config, warm.tensors),
    tokenizer: new PrunedTokenizer(ctx.source, warm.mapping),
    mapping: warm.mapping,
    source: `warm start (${dir})`,
  };
});

/** A Hugging Face Qwen3 folder (config.model.init = its path). */
async function loadFolderPolicy(dir: string, ctx: PolicySourceContext, trainConfig?: TrainConfig): Promise<Policy> {
  if (!ctx.platform.openFolder) {
    throw new Error(
      `config.model.init: "${dir}" is not "scratch" or "warm-start", and this platform cannot open a folder by name`,
    );
  }
  const reader = ctx.platform.openFolder(dir);
  let folder;
  try {
    folder = await loadQwen3Folder(reader);
  } catch (e) {
    throw new Error(`Qwen3 folder "${dir}": ${(e as Error).message}`);
  }
  // A run that cannot fit its backend is refused before the weights are uploaded.
  if (trainConfig) checkTrainingMemory(folder.config, trainConfig, tf.getBackend(), readBackendBufferLimits());
  if (!folder.prunedVocab && folder.config.vocab_size < ctx.source.vocabSize) {
    throw new Error(
      `Qwen3 folder "${dir}": config.json field "vocab_size" is ${folder.config.vocab_size}, fewer than the ${ctx.source.vocabSize} tokens of Qwen3's tokenizer; a smaller vocabulary needs its pruned_vocab.json`,
    );
  }
  const tensors = new Map([...folder.tensors].map(([name, t]) => [name, { shape: t.shape, data: t.data }]));
  const tokenizer = folder.prunedVocab ? new PrunedTokenizer(ctx.source, folder.prunedVocab) : ctx.source;
  return {
    model: Qwen3Model.fromTensors(folder.config, tensors),
    tokenizer,
    mapping: folder.prunedVocab,
    source: `folder ${dir}`,
  };
}

/**
 * A trained policy named by `init` without a training run (evaluation: the trainer worker's
 * `eval-ftrl` request): "warm-start" or a Qwen3 folder the platform opens. "scratch" is
 * refused: a random policy has nothing to evaluate.
 */
export async function loadNamedPolicy(
  platform: RunPlatform,
  init: string,
  ctx: Omit<PolicySourceContext, 'platform'>,
): Promise<Policy> {
  if (init === 'scratch')
    throw new Error(
      'a policy to evaluate must be trained: "warm-start", a saved run\'s checkpoint, or a Qwen3 folder, not "scratch"',
    );
  const full: PolicySourceContext = { ...ctx, platform };
  const load = POLICY_SOURCES.get(init);
  return load ? load(resolveConfig({}), full) : loadFolderPolicy(init, full);
}

/**
 * Tool-search prompts over a generated tool repository (seed tasks.trainSeed): enough
 * queries for nTrain + nTest, the first nTest of a seeded permutation held out. Searches
 * return config.toolsearcher.topK hits shown within its resultLimits.
 */
export function createGeneratedSearchPrompts(
  config: TrainConfig,
  renderChat: RenderChat,
): { trainPrompts: PromptItem[]; testPrompts: PromptItem[] } {
  const { nTrain, nTest, trainSeed } = config.tasks;
  const repo = generateToolRepo({
    seed: trainSeed,
    minTools: 1000,
    queriesPerLevel: Math.ceil((nTrain + nTest) / 3) + 1,
  });
  const { topK, resultLimits } = config.toolsearcher;
  const engine = createToolSearch(repo, { topK, formatLimits: resultLimits });
  const split = splitToolSearchPrompts(repo.queries, { engine, renderChat }, { nTest, seed: trainSeed });
  return { trainPrompts: split.trainPrompts.slice(0, nTrain), testPrompts: split.testPrompts };
}

export interface RunAssets {
  policy: Policy;
  renderChat: RenderChat;
  executor: ToolExecutor;
  trainPrompts: PromptItem[];
  testPrompts: PromptItem[];
  /** FTRL sources: which lines of which file train and which evaluate (pact train writes it to task-split.json). */
  taskSplit?: FtrlTaskSplit;
  /**
   * The kernels the CPU engine runs this run's model with (prepareRunAssetsWith); absent where
   * the engine does not serve it (WebGPU, a model too large for it: the tfjs graph runs).
   */
  engineKernels?: KernelVariant;
  /** Why the engine runs other kernels than config.engineKernels asked for (relaxed SIMD missing), to say once. */
  engineKernelsWarning?: string;
}

/** Default time limit of one Python tool call of an FTRL task (FTRL evaluation's). */
export const FTRL_TOOL_TIMEOUT_MS = DEFAULT_FTRL_EVAL_SETTINGS.toolTimeoutMs;

/** FTRL sources: the split of the task file(s), after the cheap refusals (recipe, file, lines). */
async function loadFtrlTasks(
  platform: RunPlatform,
  config: TrainConfig,
): Promise<{ train: FtrlTaskLine[]; test: FtrlTaskLine[]; split: FtrlTaskSplit }> {
  // A recipe that cannot train on FTRL tasks is refused first (readFtrlRunSplit), then a platform that cannot read the file.
  const unreadable = (): never => {
    throw new Error(
      'config.tasks.source "ftrl": this platform cannot read a task file (load it in the Task files panel)',
    );
  };
  return readFtrlRunSplit(getRecipe(config.recipe), config, (path) =>
    platform.readTaskFile ? platform.readTaskFile(path) : unreadable(),
  );
}

const taskCache = new Map<string, Promise<{ train: PromptItem[]; test: PromptItem[] }>>();

/** The model shape and vocabulary a checkpoint carries (the policy a resumed run rebuilds). */
export interface CheckpointPolicy {
  modelConfig: Qwen3Config;
  mapping?: PrunedVocabMapping;
}

/** Options of prepareRunAssetsWith. */
export interface PrepareRunOptions {
  log?: (line: string) => void;
  /**
   * Resuming from a checkpoint that carries its model shape and vocabulary: the policy is
   * built from those (its weights then come from Trainer.importState), so a run that
   * started from a user's folder or an imported checkpoint resumes without the folder.
   */
  checkpointPolicy?: CheckpointPolicy;
}

/**
 * Loads the policy and the prompts of one run, the engine set to the kernels its config asks
 * for first: config.engineKernels, or 'simd' with a warning where 'fma' needs relaxed SIMD this
 * runtime lacks (a resumed fma run is refused before: checkpoint.ts checkResumableState).
 * `engineKernels` says which kernels serve the model, where the engine does.
 */
export async function prepareRunAssetsWith(
  platform: RunPlatform,
  config: TrainConfig,
  options: PrepareRunOptions = {},
): Promise<RunAssets> {
  const kernels = await configureEngineKernels(config.engineKernels);
  const assets = await loadRunAssets(platform, config, options);
  if (!isEngineActive(assets.policy.model.params, assets.policy.model.config)) return assets;
  return {
    ...assets,
    engineKernels: kernels.kernels,
    ...(kernels.warning ? { engineKernelsWarning: kernels.warning } : {}),
  };
}

/** The policy and the prompts of one run. */
async function loadRunAssets(
  platform: RunPlatform,
  config: TrainConfig,
  options: PrepareRunOptions,
): Promise<RunAssets> {
  const log = options.log ?? (() => {});
  const recipe = getRecipe(config.recipe);
  // Tool-use recipes train on generated tasks or FTRL files; tool-search recipes on the generated tool repository ("tool-repo").
  const sources = recipe.env === 'tool-use' ? ['generated', 'ftrl'] : ['generated', 'tool-repo'];
  if (!sources.includes(config.tasks.source)) {
    throw new Error(
      `config.tasks.source: "${config.tasks.source}" is not wired into pact train yet for ${recipe.env} recipes; use ${sources.map((x) => `"${x}"`).join(' or ')}`,
    );
  }
  const ftrl = config.tasks.source === 'ftrl' ? await loadFtrlTasks(platform, config) : undefined;
  if (ftrl) {
    log(ftrl.split.statement);
    for (const e of ftrl.split.lineErrors.slice(0, 5)) log(`skipped ${e}`);
  }
  const source = await platform.loadSourceTokenizer();
  const executor = await platform.createExecutor();
  const ctx: PolicySourceContext = { source, executor, platform, log };
  const fromCheckpoint = options.checkpointPolicy;
  const load = POLICY_SOURCES.get(config.model.init);
  // The shape is known before any weight is made (a folder's, once its config.json is read, below).
  const knownShape = fromCheckpoint?.modelConfig ?? (load ? getQwen3Preset(config.model.preset) : undefined);
  if (knownShape) checkTrainingMemory(knownShape, config, tf.getBackend(), readBackendBufferLimits());
  const policy: Policy = fromCheckpoint
    ? {
        model: Qwen3Model.fromConfig(fromCheckpoint.modelConfig, config.seed),
        tokenizer: fromCheckpoint.mapping ? new PrunedTokenizer(source, fromCheckpoint.mapping) : source,
        mapping: fromCheckpoint.mapping,
        source: `checkpoint (model.init was ${config.model.init})`,
      }
    : load
      ? await load(config, ctx)
      : await loadFolderPolicy(config.model.init, ctx, config);
  let trainPrompts: PromptItem[];
  let testPrompts: PromptItem[];
  if (ftrl) {
    return finishFtrlAssets(platform, config, { policy, executor, source, ftrl, log });
  } else if (recipe.env === 'tool-use') {
    const categories = config.tasks.categories;
    const t = config.tasks;
    const key = `${t.trainSeed}/${t.nTrain}/${t.testSeed}/${t.testSplit ?? 'test'}/${t.nTest}/${categories?.join(',') ?? 'all'}`;
    let tasks = taskCache.get(key);
    if (!tasks) {
      log(`generating ${config.tasks.nTrain} train tasks with expert traces…`);
      tasks = (async () => {
        const generator = categories ? { categories } : {};
        const train = await generateExpertTasks(
          { seed: config.tasks.trainSeed, n: config.tasks.nTrain, generator },
          executor,
        );
        const test = generateTasks({
          ...generator,
          seed: config.tasks.testSeed,
          split: config.tasks.testSplit ?? 'test',
          n: config.tasks.nTest,
        });
        return { train: createToolUsePrompts(train), test: createToolUsePrompts(test) };
      })();
      taskCache.set(key, tasks);
    }
    ({ train: trainPrompts, test: testPrompts } = await tasks);
  } else if (recipe.loadPrompts) {
    trainPrompts = await recipe.loadPrompts(config, 'train');
    testPrompts = await recipe.loadPrompts(config, 'test');
  } else if (recipe.env === 'tool-search') {
    ({ trainPrompts, testPrompts } = createGeneratedSearchPrompts(config, bindRenderChat(source)));
  } else {
    throw new Error(`recipe "${recipe.name}" runs on the ${recipe.env} environment but has no loadPrompts()`);
  }
  return { policy, renderChat: bindRenderChat(source), executor, trainPrompts, testPrompts };
}

/**
 * An FTRL run's assets: every train and held-out prompt must fit maxPromptTokens and the
 * model's window (refused before training otherwise, the model and executors freed), then
 * the Python executor replaces the stubs' one.
 */
async function finishFtrlAssets(
  platform: RunPlatform,
  config: TrainConfig,
  parts: {
    policy: Policy;
    executor: ToolExecutor;
    source: Qwen3Tokenizer;
    ftrl: { train: FtrlTaskLine[]; test: FtrlTaskLine[]; split: FtrlTaskSplit };
    log: (line: string) => void;
  },
): Promise<RunAssets> {
  const { policy, ftrl, log } = parts;
  const renderChat = bindRenderChat(parts.source);
  const measure = (items: FtrlTaskLine[]) =>
    items.map(({ task, line }) => ({ line, tokens: countPromptTokens(task, policy.tokenizer, renderChat) }));
  const trainTokens = measure(ftrl.train);
  const testTokens = measure(ftrl.test);
  const problem = checkFtrlPromptWindow({
    train: trainTokens,
    test: testTokens,
    maxPromptTokens: config.maxPromptTokens,
    maxResponseTokens: config.maxResponseTokens,
    windowTokens: policy.model.config.max_position_embeddings,
    model: policy.source,
  });
  if (problem) {
    policy.model.dispose();
    parts.executor.dispose();
    throw new Error(`config.tasks: ${problem}`);
  }
  if (!platform.createFtrlExecutor) {
    policy.model.dispose();
    parts.executor.dispose();
    throw new Error('config.tasks.source "ftrl": this platform has no executor for FTRL\'s Python tools');
  }
  // The stubs' executor served the policy source (the scratch vocabulary); FTRL's tools are Python.
  parts.executor.dispose();
  const timeoutMs = config.tasks.toolTimeoutMs ?? FTRL_TOOL_TIMEOUT_MS;
  const executor = await platform.createFtrlExecutor({ timeoutMs });
  const longest = Math.max(...trainTokens.map((t) => t.tokens), ...testTokens.map((t) => t.tokens));
  log(
    `FTRL prompts: the longest is ${longest} tokens (maxPromptTokens ${config.maxPromptTokens}); Python tools in Pyodide, ${timeoutMs} ms per call`,
  );
  return {
    policy,
    renderChat,
    executor,
    trainPrompts: createToolUsePrompts(ftrl.train.map((t) => t.task)),
    testPrompts: createToolUsePrompts(ftrl.test.map((t) => t.task)),
    taskSplit: ftrl.split,
  };
}

/** Hooks a run's driver passes to its Trainer (the worker forwards `onProgress` to the page). */
export interface RunTrainerHooks {
  onProgress?: (p: StepProgress) => void;
  /** Wraps the sampling policy (the worker reads memory around each generation). */
  wrapPolicy?: (policy: PolicySampler) => PolicySampler;
}

/**
 * The Trainer of a run over its loaded assets (pact train, the worker and record-demo share it).
 * Its config is the run's as it runs: engineKernels the kernels the engine got ('simd' where
 * 'fma' fell back), so the saved config and checkpoints say which bits the run has.
 */
export function createRunTrainer(config: TrainConfig, assets: RunAssets, hooks: RunTrainerHooks = {}): Trainer {
  const kernels = assets.engineKernels ?? config.engineKernels;
  return new Trainer({
    ...hooks,
    config: kernels === config.engineKernels ? config : { ...config, engineKernels: kernels },
    model: assets.policy.model,
    tokenizer: assets.policy.tokenizer,
    renderChat: assets.renderChat,
    executor: assets.executor,
    trainPrompts: assets.trainPrompts,
    testPrompts: assets.testPrompts,
  });
}
