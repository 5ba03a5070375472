/**
 * The trainer: one training step of PACT Algorithm 1 (App. E) or a recipe's variant,
 * the same code in Node (`pact train`) and in the trainer worker.
 *
 * step():
 *   1. the next `batchPrompts` prompts (seeded shuffle per epoch, position = data cursor);
 *   2. K prompt-only rollouts per prompt (rollouts.ts; h* never in the context), unless the
 *      recipe's step is pure SFT;
 *   3. rewards + advantages per group (recipe.scoreGroup; MatchTIR by default for PACT),
 *      broadcast from turns to the policy-generated tokens of each turn;
 *   4–6. routes per prompt (recipe.routePrompts: PACT's gate z_i ~ Bernoulli(q) →
 *      L^x, or L^h under c^h = [x; h*] + β_SFT·L_SFT(i; s));
 *   π_old under c^h is computed ONCE, with a snapshot of the pre-update weights, before
 *   the first mini-batch (the behaviour log-probs of generation are π_old under x);
 *   π_ref is a frozen snapshot of the initial weights (k3 KL, coefficient klCoef);
 *   7. PPO mini-batches of `miniBatchPrompts` prompts, one AdamW step each, following
 *      ∇ (1/|B|) Σ_i L_i with L_i = w_rl·(L_RL(i) + klCoef·KL(i)) + w_sft·L_SFT(i).
 * Per-prompt RL losses aggregate that prompt's K rollouts with config.lossAgg (token-mean
 * = −E_{k, n∈M_{i,k}}[…] of PACT Eq. prompt-only-rl-loss / trace-rl-loss).
 * Memory: a prompt's K rows are split into gradient micro-batches of at most
 * `microBatchRows` rows (its SFT row is one more), accumulated by `trainStep` with 'sum';
 * each chunk's loss is its share under the prompt's normalisers (AggregationTotals: Σ mask
 * over all K rows, the live-row count, K, T), so the gradient and the metrics equal the
 * unsplit per-prompt ones up to float rounding. π_old(c^h) and π_ref are read in chunks of
 * the same size: attention keeps [rows, heads, T, T] per layer, GBs for K c^h rows of ~2k tokens.
 *
 * Determinism: every random draw comes from streams split off the run seed by step index
 * (`step<s>/sample`, `step<s>/recipe`), and the data order from the epoch index, so the
 * exported TrainerState (weights, π_ref, AdamW moments, step, data cursor) resumes a run to
 * the same numbers bit for bit on the same backend.
 *
 * LoRA (config.model.lora; Hu et al. 2021 Eq. 3, model/qwen3/train/lora.ts): the trainer
 * puts adapters on the target projections, freezes the base and optimises only A and B.
 * π_ref is then the frozen base itself (B = 0 at step 0, so base = the starting policy): no
 * π_ref copy is kept, its log-probs are the base read without adapters; π_old is the base
 * with a copy of the adapters. A LoRA state's `weights` are the merged W + (α/r)·B A (the
 * trained policy, loadable as any Qwen3 folder), `referenceWeights` the base and
 * `adapterWeights` A and B, so a resume restores base and adapters exactly.
 *
 * KL to π_ref on L^h prompts (pact.klContext): 'prompt' reads it on the rollouts as sampled,
 * (x; τ), as extra micro-batches of those rows; 'trace' in the ratio's context c^h.
 *
 * Simplifications: one learning rate per training step (warm-up/cosine count training
 * steps); metrics are read back once per step.
 */
import * as tf from '../model/qwen3/tf';
import { checkTrainingMemory } from './memoryEstimate';
import { POLICY_KINDS, type TokenTag } from '../core/types';
import { createRng, rngFromState, type Rng } from '../core/rng';
import { klK3 } from '../core/losses';
import { MAX_PREFIX_LEVEL, REASONING_SCHEDULES, TOOL_CALL_SCHEDULES, toAlgorithmStep } from '../core/schedules';
import { RolloutEnv, type RenderChat } from '../envs/rollout';
import type { ToolExecutor } from '../envs/sandbox/types';
import type { Task } from '../envs/types';
import type { Qwen3Model } from '../model/qwen3';
import { computeTokenLogprobs } from '../model/qwen3/logprobs';
import { packTokenRows } from '../model/qwen3/batch';
import type { ParamMap } from '../model/qwen3/linear';
import { isEngineActive, planEngineChunks } from '../model/qwen3/engineBridge';
import { AdamW, computeLearningRate, createLora, disposeLora, isNormOrBias, mergeLora, setParamsTrainable, snapshotLora, trainStep, type LoraMap, type NamedArray } from '../model/qwen3/train';
import { assignNamedArrays, disposeSnapshot, exportTensors, snapshotParams } from '../model/qwen3/train/snapshot';
import type { TextTokenizer } from '../model/tokenizer/types';
import type { TrainConfig } from './config';
import { getRecipe } from './registry';
import { collectToolUseRollouts } from './rollouts';
import {
  buildComponentSftRow,
  buildFullSftRow,
  buildPrivilegedContext,
  buildTraceConditionedRow,
  type SftRow,
  type TaggedIds,
} from './privilegedContext';
import { computeAggregationTotals, computeKlPenaltyTerms, computePromptLossTerms, type PromptLossOptions, type PromptLossTerms, type PromptRlInputs } from './tfLosses';
import { evaluateToolUseRollout } from './toolUseScoring';
import { encodeEpisode, replayExpertEpisode } from './policyVocab';
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
} from './types';

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

/** One prompt's training rows, as plain arrays (columns: position n−1 holds token n). */
export interface PromptPlan {
  route: PromptRoute;
  rl?: {
    level: 'token' | 'sequence';
    ids: number[][]; // [K][N_k]
    mask: number[][]; // [K][N_k − 1] policy tokens of the response
    advantages: number[][]; // [K][N_k − 1]
    oldLogprobs: number[][]; // [K][N_k − 1]
    refLogprobs?: number[][]; // [K][N_k − 1]
    /** L^h rows only: the behaviour log-probs under x, aligned with this row's columns (trace_logprob_gap). */
    promptOnlyLogprobs?: number[][]; // [K][N_k − 1]
    /** L^h rows only: the prompt-only rollouts (x; τ) and where row column j reads rollout column j + offset. */
    promptOnlyRows?: { ids: number[]; offset: number }[]; // [K]
    /** L^h rows only, when klCoef > 0: π_ref's log-probs under x, aligned like promptOnlyLogprobs (kl_prompt_only). */
    promptOnlyRefLogprobs?: number[][]; // [K][N_k − 1]
  };
  /** L^h prompts with pact.klContext 'prompt' and klCoef > 0: the KL penalty's rows, the rollouts as sampled (x; τ). */
  kl?: {
    ids: number[][]; // [K][M_k]
    mask: number[][]; // [K][M_k − 1] policy tokens of the response
    refLogprobs?: number[][]; // [K][M_k − 1] π_ref under x
  };
  sft?: { ids: number[]; mask: number[] }; // mask [N − 1]
}

/** Per-prompt numbers a micro-batch reports (summed over a prompt's micro-batches): RL loss, SFT loss, KL·mask, entropy·mask, clip·mask, mask count. */
const N_PROMPT_STATS = 6;

/** One gradient micro-batch: RL (or KL-penalty) rows [start, end) of prompt `prompt`, or its SFT row. */
export type MicroBatch = { prompt: number; part: 'rl' | 'kl'; start: number; end: number } | { prompt: number; part: 'sft' };

/** Splits a prompt's rows into consecutive chunks [start, end). */
export type RowChunker = (rows: readonly (readonly number[])[]) => [number, number][];

/** Chunks of at most `rowsPerChunk` rows (config.microBatchRows). */
export function chunkRowsBy(rowsPerChunk: number): RowChunker {
  if (!Number.isInteger(rowsPerChunk) || rowsPerChunk < 1) throw new Error(`microBatchRows must be an integer ≥ 1, got ${rowsPerChunk}`);
  return (rows) => {
    const out: [number, number][] = [];
    for (let start = 0; start < rows.length; start += rowsPerChunk) out.push([start, Math.min(rows.length, start + rowsPerChunk)]);
    return out;
  };
}

/**
 * The micro-batches of some prompts: each prompt's RL rows, then its KL-penalty rows, in
 * chunks (≤ rowsPerMicro rows, or as `chunker` splits them), then its SFT row.
 */
export function splitMicroBatches(plans: readonly PromptPlan[], promptIndices: readonly number[], rowsPerMicro: number | RowChunker): MicroBatch[] {
  const chunk = typeof rowsPerMicro === 'number' ? chunkRowsBy(rowsPerMicro) : rowsPerMicro;
  const out: MicroBatch[] = [];
  for (const prompt of promptIndices) {
    for (const [start, end] of chunk(plans[prompt].rl?.ids ?? [])) out.push({ prompt, part: 'rl', start, end });
    for (const [start, end] of chunk(plans[prompt].kl?.ids ?? [])) out.push({ prompt, part: 'kl', start, end });
    if (plans[prompt].sft) out.push({ prompt, part: 'sft' });
  }
  return out;
}

/**
 * The loss terms of one micro-batch of a prompt (differentiable in the model's params):
 * RL rows [start, end) under the prompt's normalisers, or the SFT row. Summed over
 * splitMicroBatches(…) of the prompt, the terms equal the prompt's L_i and stats.
 */
export function buildMicroBatchLoss(model: Qwen3Model, plan: PromptPlan, mb: MicroBatch, o: Omit<PromptLossOptions, 'rlWeight' | 'sftWeight'>): PromptLossTerms {
  const options = { ...o, rlWeight: plan.route.rlWeight, sftWeight: plan.route.sftWeight };
  if (mb.part === 'sft') {
    if (!plan.sft) throw new Error(`buildMicroBatchLoss: prompt ${mb.prompt} has no SFT row`);
    const { inputIds, attentionMask } = packTokenRows([plan.sft.ids]); // [1, N]
    const out = model.computeTokenLogprobs(inputIds, attentionMask); // [1, N−1]
    return computePromptLossTerms(null, { logp: out.logprobs, mask: tf.tensor2d([plan.sft.mask], [1, plan.sft.mask.length]) }, options);
  }
  if (mb.part === 'kl') {
    const kl = plan.kl;
    if (!kl?.refLogprobs) throw new Error(`buildMicroBatchLoss: prompt ${mb.prompt} has no KL rows with π_ref log-probs`);
    const rows = kl.ids.slice(mb.start, mb.end);
    const T = Math.max(...rows.map((r) => r.length));
    const { inputIds, attentionMask } = packTokenRows(rows, { length: T }); // [B, T]
    const logp = model.computeTokenLogprobs(inputIds, attentionMask).logprobs; // [B, T−1]
    const mat = (values: number[][]) => tf.tensor2d(padRows(values.slice(mb.start, mb.end), T - 1), [rows.length, T - 1]);
    return computeKlPenaltyTerms(logp, mat(kl.refLogprobs), mat(kl.mask), options, computeAggregationTotals(kl.mask));
  }
  const rl = plan.rl;
  if (!rl) throw new Error(`buildMicroBatchLoss: prompt ${mb.prompt} has no RL rows`);
  const ids = rl.ids.slice(mb.start, mb.end);
  const B = ids.length;
  const T = Math.max(...ids.map((r) => r.length));
  const { inputIds, attentionMask } = packTokenRows(ids, { length: T }); // [B, T]
  const out = model.computeTokenLogprobs(inputIds, attentionMask, { withEntropy: true }); // [B, T−1]
  const mat = (rows: number[][]) => tf.tensor2d(padRows(rows.slice(mb.start, mb.end), T - 1), [B, T - 1]);
  const rlInputs: PromptRlInputs = {
    logp: out.logprobs,
    oldLogp: mat(rl.oldLogprobs),
    refLogp: rl.refLogprobs ? mat(rl.refLogprobs) : undefined,
    advantages: mat(rl.advantages),
    mask: mat(rl.mask),
    entropy: out.entropy,
    level: rl.level,
    totals: computeAggregationTotals(rl.mask),
  };
  return computePromptLossTerms(rlInputs, null, options);
}

/**
 * `trace_logprob_gap`: over the policy tokens of every L^h row, the mean of
 * log π_old(τ_n | c^h, τ_<n) − log π_old(τ_n | x, τ_<n), in nats per token: the
 * denominator of PACT Eq. (trace-conditioned-ratio) against the prompt-only one of Eq.
 * (prompt-only-rl-loss), both with the pre-update weights (the behaviour log-probs are
 * temperature-1 ones of the same weights). Positive: reading h* makes the policy's own
 * rollout more likely; strongly negative: the rollout is foreign to c^h, and L^h's
 * gradients act on tokens the trace-conditioned policy finds unlikely. NaN without L^h rows.
 * Call after π_old(c^h) has been read into `oldLogprobs`.
 */
export function computeTraceLogprobGap(plans: readonly PromptPlan[]): number {
  return meanOverPolicyTokens(plans, (plan, rl) => {
    const promptOnly = rl.promptOnlyLogprobs;
    return plan.route.rl === 'h' && promptOnly ? (k, n) => rl.oldLogprobs[k][n] - promptOnly[k][n] : null;
  });
}

/**
 * Mean over the policy tokens (mask > 0) of the RL rows of the plans that `perPlan`
 * reads (it returns the value at row k, column n, or null to leave the plan out); NaN
 * when no token is read.
 */
function meanOverPolicyTokens(
  plans: readonly PromptPlan[],
  perPlan: (plan: PromptPlan, rl: NonNullable<PromptPlan['rl']>) => ((k: number, n: number) => number) | null,
): number {
  let sum = 0;
  let count = 0;
  for (const plan of plans) {
    if (!plan.rl) continue;
    const valueAt = perPlan(plan, plan.rl);
    if (!valueAt) continue;
    plan.rl.mask.forEach((row, k) =>
      row.forEach((m, n) => {
        if (m <= 0) return;
        sum += valueAt(k, n);
        count++;
      }),
    );
  }
  return count > 0 ? sum / count : Number.NaN;
}

/**
 * `kl_prompt_only`: the k3 KL(π_old ‖ π_ref) (core `klK3`, clamped as verl's low_var_kl)
 * averaged over the policy tokens of every RL row, all read under the prompt-only context
 * x: how far the pre-update policy has moved from the reference on its own rollouts, as
 * they were sampled. The per-step `kl` is the penalty's own reading, which PACT Eq.
 * (trace-conditioned-ratio) takes under c^h for L^h rows; this one is comparable across
 * routes and recipes. π_old under x is the behaviour log-probs (the same weights at
 * temperature 1). NaN when no row has π_ref (klCoef = 0) or there are no RL rows.
 */
export function computePromptOnlyKl(plans: readonly PromptPlan[]): number {
  return meanOverPolicyTokens(plans, (plan, rl) => {
    const isTraceRow = plan.route.rl === 'h';
    const old = isTraceRow ? rl.promptOnlyLogprobs : rl.oldLogprobs;
    const ref = isTraceRow ? rl.promptOnlyRefLogprobs : rl.refLogprobs;
    return old && ref ? (k, n) => klK3(old[k][n], ref[k][n]) : null;
  });
}

function shiftToColumns(values: readonly number[]): number[] {
  return values.slice(1);
}

function padRows(rows: readonly (readonly number[])[], length: number): number[][] {
  return rows.map((r) => [...r, ...new Array<number>(Math.max(0, length - r.length)).fill(0)]);
}

/** Fisher–Yates permutation of 0..n−1 from `rng`. */
function permute(n: number, rng: Rng): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

function computeMean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((s, x) => s + x, 0) / values.length;
}

function computeStd(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const m = computeMean(values);
  return Math.sqrt(values.reduce((s, x) => s + (x - m) ** 2, 0) / (values.length - 1));
}

/**
 * A_{k,n} for every token of rollout k: the score's per-token advantages when given, else
 * turn t's advantage broadcast to the policy-generated tokens of turn t (PACT App. B; the
 * prompt and observations get 0).
 */
export function broadcastTokenAdvantages(score: GroupScore, k: number, tags: readonly TokenTag[]): number[] {
  const given = score.tokenAdvantages?.[k];
  if (given) {
    if (given.length !== tags.length) throw new Error(`scoreGroup: tokenAdvantages[${k}] has ${given.length} values for ${tags.length} tokens`);
    return given;
  }
  const perTurn = score.turnAdvantages[k] ?? [];
  return tags.map((t) => (POLICY_KINDS.has(t.kind) && t.turn >= 0 && t.turn < perTurn.length ? perTurn[t.turn] : 0));
}

/**
 * A rollout (prompt + every token after it) must fit the positions the model was trained
 * on: past max_position_embeddings RoPE still computes, but on positions the weights never
 * saw. The trace-conditioned rows [x; h*; τ] of PACT's L^h are longer by the trace and
 * are not checked here (they hold up to maxPromptTokens + trace + maxResponseTokens).
 */
export function checkContextWindow(config: Pick<TrainConfig, 'maxPromptTokens' | 'maxResponseTokens'>, windowTokens: number): void {
  const total = config.maxPromptTokens + config.maxResponseTokens;
  if (total > windowTokens) {
    throw new Error(
      `config.maxPromptTokens + config.maxResponseTokens = ${config.maxPromptTokens} + ${config.maxResponseTokens} = ${total} is over the model's window of ${windowTokens} tokens (max_position_embeddings); lower one of them`,
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
  private readonly policy: PolicySampler;
  /** The rollout collection under way (for onProgress), null between collections. */
  private rolloutProgress: { phase: 'rollouts' | 'eval'; total: number; turn: number; tokens: number } | null = null;
  private readonly optimizer: AdamW;
  /** π_ref's weights: a frozen copy of the starting policy, or (LoRA) the frozen base itself. */
  private readonly refParams: ParamMap;
  /** The Variables the optimiser updates: every weight, or (LoRA) the adapters' A and B. */
  private readonly trainable: ParamMap;
  /** The LoRA adapters this trainer put on the model (config.model.lora), else undefined. */
  private readonly lora?: LoraMap;
  private root: Rng;
  private stepIndex = 0;
  private dataCursor = 0;
  private readonly orders = new Map<number, number[]>();
  private readonly episodeCache = new Map<number, TaggedIds>();
  private isDisposed = false;

  constructor(init: TrainerInit) {
    const { config } = init;
    if (init.trainPrompts.length === 0) throw new Error('Trainer: trainPrompts is empty');
    checkContextWindow(config, init.model.config.max_position_embeddings);
    checkTrainingMemory(init.model.config, config, tf.getBackend());
    this.init = init;
    this.config = config;
    this.model = init.model;
    this.tokenizer = init.tokenizer;
    this.recipe = init.recipe ?? getRecipe(config.recipe);
    if (this.recipe.needsTraces) {
      const missing = init.trainPrompts.filter((p) => p.kind === 'tool-use' && !p.trace).length;
      if (missing === init.trainPrompts.length) throw new Error(`recipe "${this.recipe.name}" needs expert traces, but no train prompt has one`);
    }
    const model = init.model;
    const sampler: PolicySampler = {
      generate: (prompts, opts) => model.generate(prompts, { ...opts, padTokenId: 0 }),
    };
    const wrapped = init.wrapPolicy ? init.wrapPolicy(sampler) : sampler;
    // Rollout progress: every generate call is one turn of the episodes still running (rollouts.ts),
    // so the rollouts not in it have ended.
    this.policy = {
      generate: async (contexts, opts) => {
        const r = this.rolloutProgress;
        if (r) {
          r.turn += 1;
          this.init.onProgress?.({ phase: r.phase, done: Math.max(0, r.total - contexts.length), total: r.total, turn: r.turn, tokens: r.tokens });
        }
        const rows = await wrapped.generate(contexts, opts);
        if (r) for (const row of rows) r.tokens += row.tokens.length;
        return rows;
      },
    };
    const loraConfig = config.model.lora;
    if (loraConfig) {
      if (model.lora) throw new Error('config.model.lora: the model already carries LoRA adapters; give the trainer a model without them');
      const created = createLora(model.params, { rank: loraConfig.rank, alpha: loraConfig.alpha, targetModules: loraConfig.targets, seed: config.seed });
      model.lora = created.lora;
      setParamsTrainable(model.params, false); // the base is frozen: no weight gradients are built for it
      this.lora = created.lora;
      this.trainable = created.trainable;
      this.refParams = model.params; // π_ref = the frozen base, read without adapters
    } else {
      this.trainable = model.params;
      this.refParams = snapshotParams(model.params);
    }
    this.optimizer = new AdamW(this.trainable, { weightDecay: config.weightDecay, isNoDecay: isNormOrBias });
    this.root = createRng(config.seed);
  }

  /** Completed training steps. */
  get completedSteps(): number {
    return this.stepIndex;
  }

  /** Position of the next prompt in the (epoch-shuffled) train order. */
  get cursor(): number {
    return this.dataCursor;
  }

  private orderOfEpoch(epoch: number): number[] {
    let order = this.orders.get(epoch);
    if (!order) {
      order = permute(this.init.trainPrompts.length, this.root.split(`data/epoch${epoch}`));
      this.orders.set(epoch, order);
    }
    return order;
  }

  /** The next n prompts; advances the data cursor. */
  private takePrompts(n: number): PromptItem[] {
    const total = this.init.trainPrompts.length;
    const out: PromptItem[] = [];
    for (let j = 0; j < n; j++, this.dataCursor++) {
      const epoch = Math.floor(this.dataCursor / total);
      out.push(this.init.trainPrompts[this.orderOfEpoch(epoch)[this.dataCursor % total]]);
    }
    return out;
  }

  private async collect(prompts: PromptItem[], rng: Rng, isGreedy: boolean, K: number, isEvaluation = false): Promise<RolloutGroup[]> {
    const total = prompts.length * K;
    const r = { phase: isEvaluation ? ('eval' as const) : ('rollouts' as const), total, turn: 0, tokens: 0 };
    this.rolloutProgress = r;
    this.init.onProgress?.({ phase: r.phase, done: 0, total, turn: 0, tokens: 0 });
    try {
      const groups = await this.collectGroups(prompts, rng, isGreedy, K, isEvaluation);
      this.init.onProgress?.({ phase: r.phase, done: total, total, turn: r.turn, tokens: r.tokens });
      return groups;
    } finally {
      this.rolloutProgress = null;
    }
  }

  private async collectGroups(prompts: PromptItem[], rng: Rng, isGreedy: boolean, K: number, isEvaluation: boolean): Promise<RolloutGroup[]> {
    const c = this.config;
    if (this.recipe.collectRollouts) {
      return this.recipe.collectRollouts({
        prompts,
        policy: this.policy,
        tokenizer: this.tokenizer,
        config: { ...c, rolloutsPerPrompt: K },
        step: this.stepIndex,
        rng,
        isGreedy,
        isEvaluation,
      });
    }
    return collectToolUseRollouts({
      prompts,
      rolloutsPerPrompt: K,
      policy: this.policy,
      tokenizer: this.tokenizer,
      executor: this.init.executor,
      renderChat: this.init.renderChat,
      maxTurns: c.maxTurns,
      maxPromptTokens: c.maxPromptTokens,
      maxResponseTokens: c.maxResponseTokens,
      temperature: c.temperature,
      topP: c.topP,
      rng,
      isGreedy,
    });
  }

  /** The prompt x as tagged ids: the rollouts' common prefix, or encoded afresh for SFT-only steps. */
  private encodePrompt(group: RolloutGroup): TaggedIds {
    const r = group.rollouts[0];
    if (r) return { ids: r.ids.slice(0, r.promptLength), tags: r.tags.slice(0, r.promptLength) };
    if (group.prompt.kind !== 'tool-use') throw new Error('Trainer: SFT steps need tool-use prompts');
    const env = new RolloutEnv({ executor: this.init.executor, renderChat: this.init.renderChat, maxTurns: this.config.maxTurns });
    const ids = this.tokenizer.encode(env.reset(group.prompt.task).promptText);
    return { ids, tags: ids.map((): TokenTag => ({ kind: 'prompt', turn: -1 })) };
  }

  /** A whole expert episode (prompt + trace turns + tool responses + final answer), cached per prompt. */
  private async encodeExpertEpisode(prompt: PromptItem): Promise<TaggedIds | null> {
    if (prompt.kind !== 'tool-use' || !prompt.trace) return null;
    const cached = this.episodeCache.get(prompt.index);
    if (cached) return cached;
    const env = new RolloutEnv({ executor: this.init.executor, renderChat: this.init.renderChat, maxTurns: this.config.maxTurns + prompt.trace.turns.length });
    const transcript = await replayExpertEpisode({ ...prompt.task, expertTrace: prompt.trace }, env);
    const { ids, tags } = encodeEpisode(transcript, this.tokenizer);
    this.episodeCache.set(prompt.index, { ids, tags });
    return { ids, tags };
  }

  /** Per-token advantages of rollout k from a group score, aligned with its ids. */
  /** Builds the rows of every prompt (everything but the π_old(c^h) / π_ref log-probs). */
  private async planPrompts(groups: RolloutGroup[], scores: (GroupScore | null)[], routes: PromptRoute[]): Promise<{ plans: PromptPlan[]; lambdaA: number[]; prefixLevel: number[] }> {
    const c = this.config;
    const lambdaA: number[] = [];
    const prefixLevel: number[] = [];
    const plans: PromptPlan[] = [];
    for (const [i, group] of groups.entries()) {
      const route = routes[i];
      const plan: PromptPlan = { route };
      const trace = group.prompt.kind === 'tool-use' ? group.prompt.trace : undefined;
      if (route.rl !== null && route.rlWeight > 0 && group.rollouts.length > 0) {
        const score = scores[i];
        if (!score) throw new Error(`Trainer: prompt ${i} is routed to RL but was not scored`);
        const prompt = this.encodePrompt(group);
        const context = route.rl === 'h' ? (trace ? buildPrivilegedContext(prompt, trace, this.tokenizer, c.pact.traceComponents) : null) : null;
        if (route.rl === 'h' && !context) throw new Error(`Trainer: prompt ${i} is routed to L^h but has no expert trace`);
        const rl: NonNullable<PromptPlan['rl']> = { level: this.recipe.ratioLevel ?? 'token', ids: [], mask: [], advantages: [], oldLogprobs: [] };
        group.rollouts.forEach((rollout, k) => {
          const adv = broadcastTokenAdvantages(score, k, rollout.tags);
          let ids = rollout.ids;
          let tags = rollout.tags;
          let start = rollout.promptLength;
          if (context) {
            const row = buildTraceConditionedRow(rollout, context);
            ids = row.ids;
            tags = row.tags;
            start = row.responseStart;
          }
          const offset = rollout.promptLength - start; // token n of this row is rollout token n + offset
          const mask = tags.map((t, n) => (n >= start && POLICY_KINDS.has(t.kind) ? 1 : 0));
          rl.ids.push(ids);
          rl.mask.push(shiftToColumns(mask));
          rl.advantages.push(shiftToColumns(ids.map((_, n) => (n >= start ? adv[n + offset] : 0))));
          const behaviour = shiftToColumns(ids.map((_, n) => (n >= start ? rollout.behaviourLogprobs[n + offset] : 0)));
          if (context) {
            (rl.promptOnlyLogprobs ??= []).push(behaviour);
            (rl.promptOnlyRows ??= []).push({ ids: rollout.ids, offset });
            if (c.klCoef > 0 && c.pact.klContext === 'prompt') {
              plan.kl ??= { ids: [], mask: [] };
              plan.kl.ids.push(rollout.ids);
              plan.kl.mask.push(shiftToColumns(rollout.tags.map((t, n) => (n >= rollout.promptLength && POLICY_KINDS.has(t.kind) ? 1 : 0))));
            }
          }
          rl.oldLogprobs.push(context ? behaviour.map(() => 0) : behaviour); // L^h: read under c^h in step()
        });
        plan.rl = rl;
      }
      if (route.sftWeight > 0) {
        let row: SftRow | null = null;
        if (route.sftMask === 'component' && trace) {
          const built = buildComponentSftRow(this.encodePrompt(group), trace, this.tokenizer, toAlgorithmStep(this.stepIndex), c.pact);
          lambdaA.push(built.lambdaA);
          prefixLevel.push(built.prefixLevel);
          row = built;
        } else if (route.sftMask === 'full') {
          const episode = await this.encodeExpertEpisode(group.prompt);
          row = episode ? buildFullSftRow(episode) : null;
        }
        const mask = row ? shiftToColumns(row.mask) : [];
        if (row && mask.some((m) => m > 0)) plan.sft = { ids: row.ids, mask };
      }
      plans.push(plan);
    }
    return { plans, lambdaA, prefixLevel };
  }

  /**
   * How a prompt's rows are chunked for the model: on the CPU engine as many rows as fit its
   * activation budget (rows sharing the prompt compute it once), else microBatchRows rows.
   * The gradient and the metrics are sums over chunks either way (up to float rounding).
   */
  private chunkRows(rows: readonly (readonly number[])[]): [number, number][] {
    if (isEngineActive(this.model.params, this.model.config)) return planEngineChunks(this.model.config, rows);
    return chunkRowsBy(this.config.microBatchRows)(rows);
  }

  /** Log-probs [K][N_k − 1] of rows under `params` (+ `lora`), no gradient; one read-back per chunk (chunkRows). */
  private async readLogprobs(params: ParamMap, rows: number[][], lora: LoraMap | undefined): Promise<number[][]> {
    const result: number[][] = [];
    for (const [start, end] of this.chunkRows(rows)) {
      const chunk = rows.slice(start, end);
      const T = Math.max(...chunk.map((r) => r.length));
      const out = tf.tidy(() => {
        const { inputIds, attentionMask } = packTokenRows(chunk, { length: T }); // [B, T]
        return computeTokenLogprobs(params, this.model.config, inputIds, attentionMask, { lora }).logprobs; // [B, T−1]
      });
      const data = await out.data();
      out.dispose();
      chunk.forEach((r, k) => result.push(Array.from(data.subarray(k * (T - 1), k * (T - 1) + r.length - 1))));
    }
    return result;
  }

  /** One training step; resolves with its metrics. */
  async step(): Promise<StepMetrics> {
    if (this.isDisposed) throw new Error('Trainer.step: the trainer is disposed');
    const started = performance.now();
    const c = this.config;
    const s = this.stepIndex;
    const stepRng = this.root.split(`step${s}`);
    const ctx: RecipeContext = { step: s, config: c, rng: stepRng.split('recipe') };
    const prompts = this.takePrompts(c.batchPrompts);

    // Alg. 1 lines 2–3: prompt-only rollouts, rewards, advantages.
    const usesRollouts = this.recipe.usesRollouts(ctx);
    const groups = usesRollouts ? await this.collect(prompts, stepRng.split('sample'), false, c.rolloutsPerPrompt) : prompts.map((prompt) => ({ prompt, rollouts: [] }));
    const scores = usesRollouts ? groups.map((g) => this.recipe.scoreGroup(g, ctx)) : groups.map(() => null);
    this.lastGroups = groups;
    this.lastScores = scores;
    const rolloutsDone = performance.now();

    // Lines 4–16: routes, rows, then π_old(c^h) and π_ref once with the pre-update weights.
    const routes = this.recipe.routePrompts(groups, ctx);
    if (routes.length !== groups.length) throw new Error(`recipe "${this.recipe.name}": routePrompts returned ${routes.length} routes for ${groups.length} prompts`);
    this.lastRoutes = routes;
    const { plans, lambdaA, prefixLevel } = await this.planPrompts(groups, scores, routes);
    // π_old = the pre-update weights: a copy of every weight, or (LoRA) of the adapters on the frozen base.
    const old = this.lora ? { params: this.model.params, lora: snapshotLora(this.lora) } : { params: snapshotParams(this.model.params), lora: undefined };
    try {
      const nReads = plans.filter((p) => p.rl).length;
      let nRead = 0;
      for (const plan of plans) {
        if (!plan.rl) continue;
        this.init.onProgress?.({ phase: 'logprobs', done: nRead++, total: nReads });
        if (plan.route.rl === 'h') plan.rl.oldLogprobs = await this.readLogprobs(old.params, plan.rl.ids, old.lora);
        // π_ref where the KL penalty reads it: the RL rows, or (L^h, klContext 'prompt') the rollouts under x.
        if (c.klCoef > 0 && !plan.kl) plan.rl.refLogprobs = await this.readLogprobs(this.refParams, plan.rl.ids, undefined);
        const promptOnlyRows = plan.rl.promptOnlyRows;
        if (c.klCoef > 0 && promptOnlyRows) {
          // kl_prompt_only: π_ref under x as well, read on the rollouts as they were sampled.
          const refX = await this.readLogprobs(this.refParams, promptOnlyRows.map((r) => r.ids), undefined);
          plan.rl.promptOnlyRefLogprobs = plan.rl.mask.map((row, k) => row.map((_, j) => refX[k][j + promptOnlyRows[k].offset] ?? 0));
          if (plan.kl) plan.kl.refLogprobs = refX;
        }
      }
    } finally {
      if (old.lora) disposeLora(old.lora);
      else disposeSnapshot(old.params);
    }

    const traceLogprobGap = computeTraceLogprobGap(plans);
    const klPromptOnly = computePromptOnlyKl(plans);
    const plannedDone = performance.now();

    // Line 17: PPO mini-batches, one optimiser step each.
    const lr = computeLearningRate(s, { kind: c.lrSchedule, lrPeak: c.lr, warmupSteps: c.lrWarmupSteps, totalSteps: c.steps });
    const lossOptions = { clipEps: c.clipEps, lossAgg: c.lossAgg, ...this.recipe.policyLoss?.(c), klCoef: c.klCoef };
    const stats: { prompt: number; values: tf.Tensor }[] = []; // one kept [N_PROMPT_STATS] per micro-batch
    const losses: number[] = [];
    const gradNorms: number[] = [];
    const nMiniBatches = Math.ceil(plans.length / c.miniBatchPrompts);
    for (let start = 0; start < plans.length; start += c.miniBatchPrompts) {
      this.init.onProgress?.({ phase: 'update', done: start / c.miniBatchPrompts, total: nMiniBatches });
      const size = Math.min(c.miniBatchPrompts, plans.length - start);
      // Prompts with no loss term (no rollouts, Z = 0) add 0 to (1/|B|) Σ_i L_i: leave them out.
      const live = Array.from({ length: size }, (_, j) => start + j).filter((i) => plans[i].rl || plans[i].sft);
      if (live.length === 0) continue;
      const micro = splitMicroBatches(plans, live, (rows) => this.chunkRows(rows));
      const result = await trainStep({
        params: this.trainable,
        lossFn: (j) => {
          const mb = micro[j];
          const t = buildMicroBatchLoss(this.model, plans[mb.prompt], mb, lossOptions);
          stats.push({ prompt: mb.prompt, values: tf.keep(tf.stack([t.rlLoss, t.sftLoss, t.klSum, t.entropySum, t.clipSum, t.tokenCount])) });
          return tf.div(t.total, size) as tf.Scalar;
        },
        nMicro: micro.length,
        microReduction: 'sum',
        optimizer: this.optimizer,
        maxGradNorm: c.maxGradNorm,
        lr,
      });
      losses.push(result.loss);
      gradNorms.push(result.gradNorm);
    }
    // Per prompt: the sum of its micro-batches' stats (NaN for a prompt without any).
    const values: number[][] = plans.map(() => new Array<number>(N_PROMPT_STATS).fill(Number.NaN));
    if (stats.length > 0) {
      const packed = tf.stack(stats.map((x) => x.values));
      const data = await packed.data(); // [nMicro, N_PROMPT_STATS]
      packed.dispose();
      const isSeen = new Set<number>();
      stats.forEach(({ prompt }, row) => {
        if (!isSeen.has(prompt)) values[prompt].fill(0);
        isSeen.add(prompt);
        for (let j = 0; j < N_PROMPT_STATS; j++) values[prompt][j] += data[row * N_PROMPT_STATS + j];
      });
    }
    for (const x of stats) x.values.dispose();
    this.stepIndex++;
    const phases = { rollouts: rolloutsDone - started, plan: plannedDone - rolloutsDone, update: performance.now() - plannedDone };
    return this.summarize({ s, groups, scores, plans, values, losses, gradNorms, lambdaA, prefixLevel, traceLogprobGap, klPromptOnly, lr, started, phases, ctx });
  }

  private summarize(a: {
    s: number;
    groups: RolloutGroup[];
    scores: (GroupScore | null)[];
    plans: PromptPlan[];
    values: number[][];
    losses: number[];
    gradNorms: number[];
    lambdaA: number[];
    prefixLevel: number[];
    traceLogprobGap: number;
    klPromptOnly: number;
    lr: number;
    started: number;
    /** Milliseconds per phase: rollouts + rewards, plans + π_old(c^h)/π_ref log-probs, PPO updates. */
    phases: { rollouts: number; plan: number; update: number };
    ctx: RecipeContext;
  }): StepMetrics {
    const c = this.config;
    const stat = (i: number, j: number) => a.values[i][j];
    const rewards = a.scores.flatMap((sc) => sc?.rewards ?? []);
    const scored = a.scores.filter((sc): sc is GroupScore => sc !== null);
    const generated = a.groups.flatMap((g) => g.rollouts.map((r) => r.generatedLength));
    const pick = (isIncluded: (p: PromptPlan) => boolean, j: number) => computeMean(a.plans.flatMap((p, i) => (isIncluded(p) ? [stat(i, j)] : [])));
    let tokens = 0;
    let klSum = 0;
    let entSum = 0;
    let clipSum = 0;
    a.plans.forEach((p, i) => {
      if (!p.rl) return;
      klSum += stat(i, 2);
      entSum += stat(i, 3);
      clipSum += stat(i, 4);
      tokens += stat(i, 5);
    });
    const gates = a.plans.flatMap((p) => (p.route.gate === undefined ? [] : [p.route.gate]));
    const seconds = (performance.now() - a.started) / 1000;
    const schedule = this.describeSchedule(toAlgorithmStep(a.s));
    const metrics: StepMetrics = {
      step: a.s + 1,
      recipe: this.recipe.name,
      reward: computeMean(rewards),
      reward_std: computeStd(rewards),
      frac_reward_zero_std: scored.length === 0 ? Number.NaN : scored.filter((sc) => computeStd(sc.rewards) === 0).length / scored.length,
      'completions/mean_length': computeMean(generated),
      kl: c.klCoef > 0 && tokens > 0 ? klSum / tokens : Number.NaN,
      entropy: tokens > 0 ? entSum / tokens : Number.NaN,
      clip_ratio: tokens > 0 ? clipSum / tokens : Number.NaN,
      grad_norm: computeMean(a.gradNorms),
      loss: computeMean(a.losses),
      'loss/Lx': pick((p) => p.rl !== undefined && p.route.rl === 'x', 0),
      'loss/Lh': pick((p) => p.rl !== undefined && p.route.rl === 'h', 0),
      'loss/SFT': pick((p) => p.sft !== undefined, 1),
      lambda_a: a.lambdaA.length > 0 ? computeMean(a.lambdaA) : schedule.lambdaA,
      prefix_level: a.prefixLevel.length > 0 ? computeMean(a.prefixLevel) : schedule.prefixLevel,
      gate_fraction: gates.length === 0 ? Number.NaN : gates.filter((z) => z === 1).length / gates.length,
      trace_logprob_gap: a.traceLogprobGap,
      kl_prompt_only: a.klPromptOnly,
      lr: a.lr,
      'tokens/s': seconds > 0 ? generated.reduce((x, y) => x + y, 0) / seconds : 0,
      seconds,
      // Where the step's time went (wall clock; a profile, not a benchmark).
      'time/rollouts_s': a.phases.rollouts / 1000,
      'time/logprobs_s': a.phases.plan / 1000,
      'time/update_s': a.phases.update / 1000,
    };
    for (const sc of scored) {
      for (const [name, parts] of Object.entries(sc.rewardParts ?? {})) {
        const key = `reward/${name}`;
        metrics[key] = ((metrics[key] as number | undefined) ?? 0) + parts.reduce((x, y) => x + y, 0) / Math.max(1, rewards.length);
      }
    }
    return metrics;
  }

  /** λa(s) and the prefix level of PACT's schedules at step s = 1…T (NaN for recipes without traces). */
  private describeSchedule(step: number): { lambdaA: number; prefixLevel: number } {
    if (!this.recipe.needsTraces) return { lambdaA: Number.NaN, prefixLevel: Number.NaN };
    const p = this.config.pact;
    const o = { horizon: Math.max(1, p.annealHorizon), toolCallStart: p.toolCallScaleStart, toolCallEnd: p.toolCallScaleEnd };
    const tc = TOOL_CALL_SCHEDULES.get(p.toolCallSchedule)(step, o);
    const re = REASONING_SCHEDULES.get(p.reasoningSchedule)(step, o);
    return {
      lambdaA: tc.kind === 'scale' ? tc.scale : tc.fraction,
      prefixLevel: re.kind === 'prefix-level' ? re.level : MAX_PREFIX_LEVEL * re.fraction,
    };
  }

  /**
   * Held-out evaluation: per test prompt, one greedy rollout (config.evalSamples 0, the
   * default) or evalSamples rollouts at the config's temperature and topP, from a stream
   * seeded by the step; each `eval/<key>` is the mean over all of them. The rollouts are
   * kept in lastEvalGroups.
   */
  async evaluate(options: { nTasks?: number; samples?: number } = {}): Promise<EvalMetrics> {
    const test = this.init.testPrompts ?? [];
    if (test.length === 0) throw new Error('Trainer.evaluate: no testPrompts were given');
    const n = Math.min(options.nTasks ?? this.config.tasks.nTest, test.length);
    const prompts = test.slice(0, n);
    const samples = options.samples ?? this.config.evalSamples;
    if (!Number.isInteger(samples) || samples < 0) throw new Error(`Trainer.evaluate: samples must be an integer ≥ 0, got ${samples}`);
    const K = Math.max(1, samples);
    const rng = this.root.split(`eval/step${this.stepIndex}`);
    // About as many rollouts per generation batch as a training step's (batchPrompts × rolloutsPerPrompt).
    const chunk = Math.max(1, Math.floor((this.config.batchPrompts * this.config.rolloutsPerPrompt) / K));
    const sums: Record<string, number> = {};
    this.lastEvalGroups = [];
    for (let start = 0; start < prompts.length; start += chunk) {
      const groups = await this.collect(prompts.slice(start, start + chunk), rng, samples === 0, K, true);
      for (const g of groups) {
        for (const r of g.rollouts) {
          const values = this.recipe.evaluateRollout ? this.recipe.evaluateRollout(r, g.prompt) : evaluateToolUseRollout(r, g.prompt);
          for (const [k, v] of Object.entries(values)) sums[k] = (sums[k] ?? 0) + v;
        }
      }
      this.lastEvalGroups.push(...groups);
    }
    const metrics: EvalMetrics = {
      step: this.stepIndex,
      nTasks: n,
      nRollouts: n * K,
      'eval/solve_r': Number.NaN,
      'eval/solve_p': Number.NaN,
      'eval/solve_f1': Number.NaN,
      'eval/answer_correct': Number.NaN,
      'eval/reward': Number.NaN,
    };
    for (const [k, v] of Object.entries(sums)) metrics[`eval/${k}`] = v / (n * K);
    return metrics;
  }

  /**
   * Everything needed to continue bit for bit (weights, π_ref, AdamW, step, data cursor, rng).
   * LoRA: `weights` are the merged policy, `referenceWeights` the frozen base (= π_ref) and
   * `adapterWeights` the adapters (what AdamW's state is keyed by).
   */
  async exportState(): Promise<TrainerState> {
    let weights: NamedArray[];
    if (this.lora) {
      const merged = mergeLora(this.model.params, this.lora);
      try {
        weights = await exportTensors(merged);
      } finally {
        disposeSnapshot(merged);
      }
    } else {
      weights = await exportTensors(this.model.params);
    }
    return {
      version: 1,
      step: this.stepIndex,
      dataCursor: this.dataCursor,
      rngStates: { root: this.root.state() },
      weights,
      optimizer: await this.optimizer.exportState(),
      referenceWeights: await exportTensors(this.refParams),
      ...(this.lora ? { adapterWeights: await exportTensors(this.trainable) } : {}),
      config: this.config,
      recipe: this.recipe.name,
    };
  }

  /** Restores a state from exportState (same config, same model shape). Validates before writing. */
  importState(state: TrainerState): void {
    if (!state || state.version !== 1) throw new Error(`Trainer.importState: unsupported state version ${String(state?.version)}`);
    if (state.recipe !== this.recipe.name) throw new Error(`Trainer.importState: the state is of recipe "${state.recipe}", this trainer runs "${this.recipe.name}"`);
    for (const field of ['step', 'dataCursor'] as const) {
      if (!Number.isInteger(state[field]) || state[field] < 0) throw new Error(`Trainer.importState: ${field} must be an integer ≥ 0, got ${state[field]}`);
    }
    if (!state.rngStates?.root) throw new Error('Trainer.importState: rngStates.root is missing');
    if (this.lora && (!state.adapterWeights || !state.referenceWeights)) {
      throw new Error('Trainer.importState: this run trains LoRA adapters (config.model.lora) but the state has no adapterWeights and referenceWeights (base); it is not a LoRA checkpoint');
    }
    if (!this.lora && state.adapterWeights) {
      throw new Error('Trainer.importState: the state holds LoRA adapterWeights but this run has no config.model.lora');
    }
    const root = rngFromState(state.rngStates.root);
    if (this.lora) {
      // The base (= π_ref) and the adapters; the merged `weights` are for loading elsewhere.
      assignNamedArrays(this.model.params, state.referenceWeights!);
      assignNamedArrays(this.trainable, state.adapterWeights!);
    } else {
      assignNamedArrays(this.model.params, state.weights);
      if (state.referenceWeights) assignNamedArrays(this.refParams, state.referenceWeights);
    }
    this.optimizer.importState(state.optimizer);
    this.root = root;
    this.stepIndex = state.step;
    this.dataCursor = state.dataCursor;
  }

  /**
   * Frees π_ref and the optimiser state (the model belongs to the caller); a LoRA run also
   * takes its adapters off the model and unfreezes the base.
   */
  dispose(): void {
    if (this.isDisposed) return;
    if (this.lora) {
      if (this.model.lora === this.lora) this.model.lora = undefined;
      disposeLora(this.lora);
      setParamsTrainable(this.model.params, true);
    } else {
      disposeSnapshot(this.refParams);
    }
    this.optimizer.dispose();
    this.isDisposed = true;
  }
}
