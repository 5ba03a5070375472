/**
 * The trainer: one training step of PACT's Algorithm 1 (App. E), or a recipe's variant of
 * it, the same code in Node (`pact train`) and in the trainer worker. step() reads as the
 * algorithm, one call per line into the modules of ./train/: data order (dataOrder.ts),
 * rollouts (rolloutCollection.ts), routes and rows (promptPlan.ts), π_old / π_ref
 * log-probs (logprobReads.ts), the update (policyUpdate.ts, microBatches.ts), metrics
 * (stepMetrics.ts); the weights, evaluation and state I/O live in policyWeights.ts,
 * evaluation.ts and trainerState.ts. docs/trainer.md tells the whole step.
 *
 * Simplifications: one learning rate per training step (warm-up/cosine count training
 * steps); π_old ← π_θ at every step (one rollout batch per step); metrics are read back
 * once per step.
 */
import * as tf from '../../model/qwen3/tf';
import { checkTrainingMemory } from './memoryEstimate';
import { readBackendBufferLimits } from '../../model/qwen3/graphBuffers';
import { createRng, type Rng } from '../../core/rng';
import type { RenderChat } from '../../envs/rollout';
import type { ToolExecutor } from '../../envs/sandbox/types';
import type { Task } from '../../envs/types';
import type { Qwen3Model } from '../../model/qwen3/index';
import { AdamW, computeLearningRate, isNormOrBias } from '../../model/qwen3/train/index';
import type { TextTokenizer } from '../../model/tokenizer/types';
import type { TrainConfig } from '../config';
import { getRecipe } from '../registry';
import { EpochOrder } from './dataOrder';
import { evaluateHeldOut } from './evaluation';
import { readOldAndRefLogprobs, type PlanReadInputs } from './logprobReads';
import { chunkRowsForModel } from './microBatches';
import { updatePolicy, type PolicyUpdateInputs } from './policyUpdate';
import { createPolicyWeights, disposePolicyWeights, type PolicyWeights } from './policyWeights';
import { PromptEncoder } from './promptEncoder';
import { planPrompts, routePrompts, type PlanInputs } from './promptPlan';
import { RolloutCollector } from './rolloutCollection';
import { computePromptOnlyKl, computeTraceLogprobGap, summarizeStep } from './stepMetrics';
import { exportTrainerState, importTrainerState, trainerStateBytes, type TrainerParts } from './trainerState';
import type {
  EvalMetrics,
  GroupScore,
  PolicySampler,
  PromptItem,
  PromptRoute,
  Recipe,
  RecipeContext,
  RolloutGroup,
  StepMetrics,
  StepProgress,
  TrainerState,
} from '../types';

export { broadcastTokenAdvantages, type PromptPlan } from './promptPlan';
export { buildMicroBatchLoss, chunkRowsBy, splitMicroBatches, type MicroBatch, type RowChunker } from './microBatches';
export { computePromptOnlyKl, computeTraceLogprobGap } from './stepMetrics';

export interface TrainerInit {
  config: TrainConfig;
  model: Qwen3Model;
  tokenizer: TextTokenizer;
  /** Qwen3's chat template (RolloutEnv renders prompts with it). */
  renderChat: RenderChat;
  /** Runs the tool stubs (InProcessExecutor, the sandbox worker, Pyodide…). */
  executor: ToolExecutor;
  trainPrompts: PromptItem[];
  testPrompts?: PromptItem[];
  /** Defaults to getRecipe(config.recipe). */
  recipe?: Recipe;
  /** Wraps the sampling policy (tests record every context passed to generate). */
  wrapPolicy?: (policy: PolicySampler) => PolicySampler;
  /** Where a step (or an evaluation) is while it runs: each rollout turn, each log-prob read, each mini-batch. */
  onProgress?: (p: StepProgress) => void;
}

/** Tool-use prompts from tasks (the task's expertTrace, when present, is the prompt's h*). */
export function createToolUsePrompts(tasks: readonly Task[]): PromptItem[] {
  return tasks.map((task, index) => ({ kind: 'tool-use', index, task, trace: task.expertTrace }));
}

/**
 * A rollout (prompt + every token after it) must fit the positions the model was trained
 * on: past max_position_embeddings RoPE still computes, but on positions the weights never
 * saw. The trace-conditioned rows [x; h*; τ] of PACT's L^h are longer by the trace and
 * are not checked here (they hold up to maxPromptTokens + trace + maxResponseTokens).
 */
export function checkContextWindow(
  config: Pick<TrainConfig, 'maxPromptTokens' | 'maxResponseTokens'>,
  windowTokens: number,
): void {
  const { maxPromptTokens, maxResponseTokens } = config;
  const total = maxPromptTokens + maxResponseTokens;
  if (total > windowTokens) {
    throw new Error(
      `config.maxPromptTokens + config.maxResponseTokens = ${maxPromptTokens} + ${maxResponseTokens} = ${total} ` +
        `is over the model's window of ${windowTokens} tokens (max_position_embeddings); lower one of them`,
    );
  }
}

export class Trainer {
  readonly config: TrainConfig;
  readonly recipe: Recipe;
  readonly model: Qwen3Model;
  readonly tokenizer: TextTokenizer;
  /** The latest step's rollout groups, their scores and routes (for the UI's rollout inspector). */
  lastGroups: RolloutGroup[] = [];
  lastScores: (GroupScore | null)[] = [];
  lastRoutes: PromptRoute[] = [];
  /** The last evaluate()'s rollouts, one group per test prompt. */
  lastEvalGroups: RolloutGroup[] = [];
  private readonly init: TrainerInit;
  private readonly rollouts: RolloutCollector;
  private readonly optimizer: AdamW;
  /** π_θ's trainable Variables, π_ref's weights and (LoRA) the adapters. */
  private readonly weights: PolicyWeights;
  private readonly data: EpochOrder;
  /** What each phase of a step reads besides the step's own data (fixed for the run). */
  private readonly planning: Omit<PlanInputs, 'step'>;
  private readonly logprobReads: PlanReadInputs;
  private readonly updates: Omit<PolicyUpdateInputs, 'lossOptions' | 'lr'>;
  private root: Rng;
  private stepIndex = 0;
  private dataCursor = 0;
  private isDisposed = false;

  constructor(init: TrainerInit) {
    const { config, model, tokenizer } = init;
    if (init.trainPrompts.length === 0) throw new Error('Trainer: trainPrompts is empty');
    checkContextWindow(config, model.config.max_position_embeddings);
    checkTrainingMemory(model.config, config, tf.getBackend(), readBackendBufferLimits());
    this.init = init;
    this.config = config;
    this.model = model;
    this.tokenizer = tokenizer;
    this.recipe = init.recipe ?? getRecipe(config.recipe);
    if (this.recipe.needsTraces) {
      const missing = init.trainPrompts.filter((p) => p.kind === 'tool-use' && !p.trace).length;
      if (missing === init.trainPrompts.length) {
        throw new Error(`recipe "${this.recipe.name}" needs expert traces, but no train prompt has one`);
      }
    }
    // Progress goes to whatever init.onProgress is when it is reported.
    const onProgress = (p: StepProgress) => this.init.onProgress?.(p);
    this.rollouts = new RolloutCollector({ ...init, recipe: this.recipe, onProgress });
    this.weights = createPolicyWeights(model, config);
    this.optimizer = new AdamW(this.weights.trainable, { weightDecay: config.weightDecay, isNoDecay: isNormOrBias });
    this.root = createRng(config.seed);
    this.data = new EpochOrder(init.trainPrompts);
    const { executor, renderChat } = init;
    const encoder = new PromptEncoder({ tokenizer, executor, renderChat, maxTurns: config.maxTurns });
    this.planning = { config, tokenizer, encoder, ratioLevel: this.recipe.ratioLevel ?? 'token' };
    const chunkRows = chunkRowsForModel(model, config.microBatchRows);
    this.logprobReads = { model, weights: this.weights, klCoef: config.klCoef, chunkRows, onProgress };
    const { miniBatchPrompts, maxGradNorm } = config;
    const trainable = this.weights.trainable;
    const optimizer = this.optimizer;
    this.updates = { model, trainable, optimizer, miniBatchPrompts, maxGradNorm, chunkRows, onProgress };
  }

  /** Completed training steps. */
  get completedSteps(): number {
    return this.stepIndex;
  }

  /** Position of the next prompt in the (epoch-shuffled) train order. */
  get cursor(): number {
    return this.dataCursor;
  }

  /** One training step, Algorithm 1 lines 2–19 at step s; resolves with its metrics. */
  async step(): Promise<StepMetrics> {
    if (this.isDisposed) throw new Error('Trainer.step: the trainer is disposed');
    const started = performance.now();
    const c = this.config;
    const s = this.stepIndex;
    const stepRng = this.root.split(`step${s}`);
    const ctx: RecipeContext = { step: s, config: c, rng: stepRng.split('recipe') };

    // Line 2: a batch of prompts {x_i} with their expert traces {h*_i}, in the epoch's seeded order.
    const prompts = this.data.promptsAt(this.dataCursor, c.batchPrompts, this.root);
    this.dataCursor += c.batchPrompts;

    // Lines 3–4: K prompt-only rollouts τ_{i,k} ~ π_old(·|x_i), then rewards and advantages A_{i,k,n}.
    const usesRollouts = this.recipe.usesRollouts(ctx);
    const K = c.rolloutsPerPrompt;
    const groups = usesRollouts
      ? await this.rollouts.collect({ prompts, rng: stepRng.split('sample'), isGreedy: false, K, step: s })
      : prompts.map((prompt) => ({ prompt, rollouts: [] }));
    const scores = usesRollouts ? groups.map((g) => this.recipe.scoreGroup(g, ctx)) : groups.map(() => null);
    this.lastGroups = groups;
    this.lastScores = scores;
    const rolloutsDone = performance.now();

    // Lines 5–17: per prompt its gate z_i (the recipe's route) and the rows of its loss L_i:
    // L^x_RL(i) under x, or L^h_RL(i) under c^h_i = [x_i; h*_i] and L_SFT(i; s) under m_{i,n}(s).
    const routes = routePrompts(this.recipe, groups, ctx);
    this.lastRoutes = routes;
    const { plans, lambdaA, prefixLevel } = await planPrompts(groups, scores, routes, { ...this.planning, step: s });
    // The ratios' π_old(c^h) and the KL penalty's π_ref, read once with the pre-update weights.
    await readOldAndRefLogprobs(plans, this.logprobReads);
    const traceLogprobGap = computeTraceLogprobGap(plans);
    const klPromptOnly = computePromptOnlyKl(plans);
    const plannedDone = performance.now();

    // Line 18: θ ← θ − η ∇_θ (1/|B|) Σ_i L_i, one AdamW step per PPO mini-batch of prompts.
    const lrSchedule = { kind: c.lrSchedule, lrPeak: c.lr, warmupSteps: c.lrWarmupSteps, totalSteps: c.steps };
    const lr = computeLearningRate(s, lrSchedule);
    const lossOptions = { clipEps: c.clipEps, lossAgg: c.lossAgg, ...this.recipe.policyLoss?.(c), klCoef: c.klCoef };
    const update = await updatePolicy(plans, { ...this.updates, lossOptions, lr });
    // Line 19: π_old ← π_θ: the next step samples with, and snapshots, the updated weights.
    this.stepIndex++;
    const updateDone = performance.now();
    const phases = {
      rollouts: rolloutsDone - started,
      plan: plannedDone - rolloutsDone,
      update: updateDone - plannedDone,
    };
    const record = { s, config: c, recipe: this.recipe, groups, scores, plans, lambdaA, prefixLevel, ...update };
    return summarizeStep({ ...record, traceLogprobGap, klPromptOnly, lr, started, phases });
  }

  /**
   * Held-out evaluation (evaluation.ts): per test prompt, one greedy rollout or `samples`
   * sampled ones (config.evalSamples by default), from a stream seeded by the step. The
   * rollouts are kept in lastEvalGroups.
   */
  async evaluate(options: { nTasks?: number; samples?: number } = {}): Promise<EvalMetrics> {
    const test = this.init.testPrompts ?? [];
    if (test.length === 0) throw new Error('Trainer.evaluate: no testPrompts were given');
    const nTasks = Math.min(options.nTasks ?? this.config.tasks.nTest, test.length);
    const samples = options.samples ?? this.config.evalSamples;
    if (!Number.isInteger(samples) || samples < 0) {
      throw new Error(`Trainer.evaluate: samples must be an integer ≥ 0, got ${samples}`);
    }
    const rng = this.root.split(`eval/step${this.stepIndex}`);
    this.lastEvalGroups = [];
    return evaluateHeldOut({
      config: this.config,
      recipe: this.recipe,
      prompts: test,
      nTasks,
      samples,
      step: this.stepIndex,
      rng,
      collect: (request) => this.rollouts.collect(request),
      onGroups: (groups) => this.lastEvalGroups.push(...groups),
    });
  }

  /**
   * Everything needed to continue bit for bit (weights, π_ref, AdamW, step, data cursor, rng).
   * LoRA: `weights` are the merged policy, `referenceWeights` the frozen base (= π_ref) and
   * `adapterWeights` the adapters (what AdamW's state is keyed by).
   */
  async exportState(): Promise<TrainerState> {
    const position = { step: this.stepIndex, dataCursor: this.dataCursor, root: this.root };
    return exportTrainerState(this.stateParts(), position);
  }

  /** Bytes of exportState's arrays (what a checkpoint of this run stores), without exporting them. */
  get stateBytes(): number {
    return trainerStateBytes(this.stateParts());
  }

  /** Restores a state from exportState (same config, same model shape). Validates before writing. */
  importState(state: TrainerState): void {
    const position = importTrainerState(this.stateParts(), state);
    this.root = position.root;
    this.stepIndex = position.step;
    this.dataCursor = position.dataCursor;
  }

  private stateParts(): TrainerParts {
    const { config, model, weights, optimizer } = this;
    return { config, recipeName: this.recipe.name, model, weights, optimizer };
  }

  /**
   * Frees π_ref and the optimiser state (the model belongs to the caller); a LoRA run also
   * takes its adapters off the model and unfreezes the base.
   */
  dispose(): void {
    if (this.isDisposed) return;
    disposePolicyWeights(this.model, this.weights);
    this.optimizer.dispose();
    this.isDisposed = true;
  }
}
