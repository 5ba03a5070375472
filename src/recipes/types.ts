/**
 * The shared vocabulary of the trainer: what a rollout is, what a recipe
 * decides, what a step reports, and what a checkpoint of the trainer holds.
 *
 * A step of PACT Algorithm 1 (App. E), by the algorithm's line numbers (docs/trainer.md):
 *   2–3. the trainer samples prompts (with expert traces h*) and collects K prompt-only
 *      rollouts each (rollouts.ts, or the recipe's own `collectRollouts`),
 *   4. the recipe scores each group: rewards and advantages (`scoreGroup`),
 *   5–17. the recipe routes each prompt (`routePrompts`): prompt-only RL (L^x), trace-conditioned
 *      RL under c^h = [x; h*] (L^h), an SFT term on h*, or a mix — PACT's gate
 *      z_i ~ Bernoulli(q) lives in the `pact` recipe; the trainer builds the losses (tfLosses.ts),
 *   18–19. the trainer adds the k3 KL to π_ref, runs PPO mini-batches (one AdamW step each)
 *      and sets π_old ← π_θ. So recipes are small: reward/advantage math and routing, no tensors.
 */
import type { TokenTag } from '../core/types';
import type { AggregationMode } from '../core/losses';
import type { Rng, RngState } from '../core/rng';
import type { Task } from '../envs/types';
import type { CallOutput, Transcript } from '../envs/rollout';
import type { ExpertTrace } from '../traces/types';
import type { GeneratedRow } from '../model/qwen3/generate';
import type { NamedArray } from '../model/qwen3/train/types';
import type { TextTokenizer } from '../model/tokenizer/types';
import type { TrainConfig } from './config';

/** Which environment a recipe's rollouts come from. */
export type RolloutEnvKind = 'tool-use' | 'tool-search';

/**
 * One prompt of a batch. Tool-use prompts are `Task`s of src/envs (generated or FTRL);
 * tool-search prompts are repository queries (src/envs/toolRepo), typed loosely here so
 * this file does not depend on the search engine (searchRollouts.ts narrows it).
 */
export type PromptItem =
  | { kind: 'tool-use'; /** Position in the train set (data cursor). */ index: number; task: Task; trace?: ExpertTrace }
  | {
      kind: 'tool-search';
      index: number;
      query: { id: string; text: string; goldToolIds: string[] } & Record<string, unknown>;
    };

/** One prompt-only rollout τ_{i,k} (PACT Eq. prompt-only-rollout). */
export interface Rollout {
  /** Prompt x then every turn (generated tokens and environment observations), in order. */
  ids: number[];
  /** One tag per id: prompt / reasoning / tool_call / answer / control / observation + turn. */
  tags: TokenTag[];
  /**
   * One per id: log π_behaviour(ids[n] | ids[<n]) at temperature 1 (the model's own
   * log-prob, `GeneratedRow.logprobs`) for policy-generated tokens, 0 elsewhere.
   */
  behaviourLogprobs: number[];
  /** Number of prompt tokens at the start of `ids`. */
  promptLength: number;
  /** Number of policy-generated tokens (the `completions/mean_length` metric). */
  generatedLength: number;
  /** Tool-use rollouts: the environment's transcript (turns, calls, outputs, answer). */
  transcript?: Transcript;
  /** Every executed call in order, FTRL style (ftrlSolveMetrics input). */
  callOutputs: CallOutput[];
  /** Whether the episode ended on its own (answer / no call) rather than at a length limit. */
  isFinished: boolean;
  /** Recipe-specific extras (e.g. the search episode summary of ToolSearcher). */
  meta?: Record<string, unknown>;
}

/** The K rollouts of one prompt. */
export interface RolloutGroup {
  prompt: PromptItem;
  rollouts: Rollout[];
}

/** Rewards and advantages of one group (PACT Alg. 1 line 3). */
export interface GroupScore {
  /** Outcome reward per rollout [K] (the `reward` metric). */
  rewards: number[];
  /**
   * Advantage per assistant turn of each rollout [K][T_k]; the trainer broadcasts turn t's
   * value to that turn's policy-generated tokens (observations and prompt get none).
   */
  turnAdvantages: number[][];
  /** Optional per-token advantages [K][N_k] aligned with `rollout.ids`; overrides turnAdvantages. */
  tokenAdvantages?: number[][];
  /** Optional named reward parts per rollout [K], logged as `reward/<name>`. */
  rewardParts?: Record<string, number[]>;
}

/** How one prompt of the batch is trained this step (PACT Alg. 1 lines 5–16, Eq. overall-objective). */
export interface PromptRoute {
  /** RL surrogate: 'x' prompt-only ratio, 'h' trace-conditioned ratio under c^h, null no RL term. */
  rl: 'x' | 'h' | null;
  /** Weight of the RL term (1; CHORD: 1 − μ). */
  rlWeight: number;
  /** Weight of the SFT term on the expert trace (PACT: β_SFT; CHORD: μ; SFT: 1); 0 = none. */
  sftWeight: number;
  /** 'component': PACT's annealed m(s) (Eq. sft-mask); 'full': every reasoning/tool-call/answer token of h*. */
  sftMask: 'component' | 'full';
  /** The prompt-level gate z_i when one was sampled (1 = prompt-only anchor). */
  gate?: 0 | 1;
}

/** What a recipe sees at step s. */
export interface RecipeContext {
  /** 0-based step index s. */
  step: number;
  config: TrainConfig;
  /** The recipe's own random stream for this step (split from the run seed; deterministic). */
  rng: Rng;
}

/** A policy that samples continuations: the model's `generate`, wrapped (tests record every prompt). */
export interface PolicySampler {
  generate(
    prompts: number[][],
    opts: { maxNewTokens: number; temperature: number; topP: number; random?: () => number; stopTokenIds?: number[][] },
  ): Promise<GeneratedRow[]>;
}

/** What a custom rollout collector gets (ToolSearcher's search env). */
export interface CollectRequest {
  prompts: PromptItem[];
  policy: PolicySampler;
  tokenizer: TextTokenizer;
  config: TrainConfig;
  step: number;
  /** Sampling randomness of this step. */
  rng: Rng;
  /** Greedy decoding (evaluation). */
  isGreedy?: boolean;
  /** Held-out evaluation (greedy or sampled): no training-only constraints on the rollouts. */
  isEvaluation?: boolean;
}

/**
 * The setup knobs a recipe reads beyond every run's own (steps, batch, learning rate, …):
 * 'rollouts' K rollouts per prompt; 'pact' PACT's q, β_SFT, λa and schedules; 'chordMu'
 * CHORD's μ; 'sftSteps' the SFT stage of SFT → MatchTIR. The run setup shows only these.
 */
export type RecipeKnob = 'rollouts' | 'pact' | 'chordMu' | 'sftSteps';

export interface Recipe {
  /** Registry name (`pact`, `grpo`, …). */
  name: string;
  /** Its readable name for the UI ("SFT → MatchTIR"). */
  title: string;
  /** One line for the UI dropdown and `pact train --help`. */
  summary: string;
  /** What a run of it minimises, as plain text in the paper's notation (`reference` cites it). */
  objective: string;
  /** Which paper / equation it implements. */
  reference: string;
  /** The setup knobs it reads (RecipeKnob); the UI hides the others. */
  knobs: readonly RecipeKnob[];
  env: RolloutEnvKind;
  /** True when the recipe uses expert traces (SFT terms or the privileged context c^h). */
  needsTraces: boolean;
  /**
   * True when its rewards and advantages are MatchTIR's hard credit assignment (matched turn
   * rewards, dual-level advantages): matchtir, pact ("follow MatchTIR") and sft_then_matchtir
   * after its SFT steps. The rollout inspector's MatchTIR lesson reads it.
   */
  usesMatchTirCredit: boolean;
  /**
   * The reward function its logged train `reward` measures, as a name that is equal for two
   * configs exactly when their rewards are the same function of a rollout (e.g.
   * `matchtir(hungarian, unmatched 0)`, `answer-f1`): tables pair two rows' train rewards only
   * when these agree (a GRPO answer F1 minus a MatchTIR turn-reward sum means nothing).
   */
  rewardName(config: TrainConfig): string;
  /** Whether step s collects rollouts (false: a pure SFT step, e.g. `sft`, or the SFT phase of `sft_then_matchtir`). */
  usesRollouts(ctx: RecipeContext): boolean;
  /** Rewards and advantages of one group. Called only when usesRollouts. */
  scoreGroup(group: RolloutGroup, ctx: RecipeContext): GroupScore;
  /** One route per prompt of the batch (same order as `groups`). */
  routePrompts(groups: readonly RolloutGroup[], ctx: RecipeContext): PromptRoute[];
  /** Policy-ratio level: 'token' (PPO/GRPO, default) or 'sequence' (GSPO). */
  ratioLevel?: 'token' | 'sequence';
  /**
   * The recipe's own clip range and loss aggregation (GSPO: ε 3e-4 / 4e-4 on the sequence
   * ratio, aggregated per sequence); default config.clipEps on both sides and config.lossAgg.
   */
  policyLoss?(config: TrainConfig): { clipEps: number; clipEpsHigh: number; lossAgg: AggregationMode };
  /** Own rollout collection; default: prompt-only tool-use rollouts (rollouts.ts). */
  collectRollouts?(request: CollectRequest): Promise<RolloutGroup[]>;
  /**
   * Held-out metrics of one rollout (named `eval/<key>`, averaged over tasks); default for
   * tool-use: Solve-R/P/F1 and answer correctness. Tool-search recipes give F1/recall/….
   */
  evaluateRollout?(rollout: Rollout, prompt: PromptItem): Record<string, number>;
  /**
   * Train or test prompts for recipes whose env is not 'tool-use' (tool-search queries);
   * the CLI / worker call it instead of generating tool-use tasks.
   */
  loadPrompts?(config: TrainConfig, split: 'train' | 'test'): Promise<PromptItem[]>;
}

/** Metrics of one training step; NaN where a term was absent. */
export interface StepMetrics {
  step: number;
  recipe: string;
  reward: number;
  reward_std: number;
  /** Fraction of groups whose rewards all equal (no GRPO signal). */
  frac_reward_zero_std: number;
  'completions/mean_length': number;
  /** k3 KL(π_θ‖π_ref) over policy tokens, mean over mini-batches. */
  kl: number;
  entropy: number;
  clip_ratio: number;
  grad_norm: number;
  /** Total loss, mean over mini-batches. */
  loss: number;
  'loss/Lx': number;
  'loss/Lh': number;
  'loss/SFT': number;
  lambda_a: number;
  prefix_level: number;
  /** Fraction of prompts routed to the prompt-only anchor (z_i = 1). */
  gate_fraction: number;
  /** Mean log π_old(τ_n | c^h) − log π_old(τ_n | x) over L^h tokens (trainer computeTraceLogprobGap); NaN without L^h. */
  trace_logprob_gap: number;
  /** k3 KL(π_old ‖ π_ref) over every RL row's policy tokens, all read under x (trainer computePromptOnlyKl); NaN when klCoef = 0. */
  kl_prompt_only: number;
  lr: number;
  /** Policy-generated tokens per second of the whole step. */
  'tokens/s': number;
  seconds: number;
  /** Extra named values (reward parts, recipe-specific numbers). */
  [key: string]: number | string;
}

/**
 * Metrics that measure the machine, not the method (wall clock, throughput, memory): they
 * differ between two runs of the same config and seed, so bit-for-bit comparisons and
 * tables over seeds leave them out.
 */
export function isMachineMetric(key: string): boolean {
  return key === 'seconds' || key === 'tokens/s' || key.startsWith('time/') || key.startsWith('memory/');
}

/**
 * Where a training step is while it runs (`TrainerInit.onProgress`): the phase of Algorithm 1
 * (rollouts, the π_old/π_ref log-prob reads, the PPO update, the held-out evaluation), how many
 * of its units are done out of `total`, and for rollouts the tokens generated so far and the turn.
 */
export interface StepProgress {
  phase: 'rollouts' | 'logprobs' | 'update' | 'eval';
  done: number;
  total: number;
  tokens?: number;
  turn?: number;
}

/** Held-out evaluation: tool-use Solve-R/P/F1 and answer correctness. */
export interface EvalMetrics {
  step: number;
  nTasks: number;
  /** Rollouts scored: nTasks × max(1, evalSamples). */
  nRollouts: number;
  'eval/solve_r': number;
  'eval/solve_p': number;
  'eval/solve_f1': number;
  /** Mean toolHopCorrect of the final answers. */
  'eval/answer_correct': number;
  'eval/reward': number;
  [key: string]: number;
}

/**
 * Everything needed to continue a run bit for bit (stored in CheckpointRecord and
 * `trainer_state.json`). Weights and optimiser moments are plain float32 records.
 */
export interface TrainerState {
  version: 1;
  /** Completed steps. */
  step: number;
  /** Position of the next prompt in the shuffled train order (epoch * nTrain + offset). */
  dataCursor: number;
  /** Named random streams (run seed splits) at their current state. */
  rngStates: Record<string, RngState>;
  weights: NamedArray[];
  /** AdamW moments + step counters (AdamW.exportState). */
  optimizer: NamedArray[];
  /** π_ref weights when they differ from a fresh load (always saved: KL reference); for LoRA, the frozen base. */
  referenceWeights?: NamedArray[];
  /** LoRA runs (config.model.lora) only: the adapters' A and B, PEFT-style names (`….q_proj.lora_A.weight`). */
  adapterWeights?: NamedArray[];
  config: TrainConfig;
  recipe: string;
}
