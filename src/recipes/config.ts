/**
 * The training configuration, validated, with defaults from PACT Table 6
 * (App. A, "Detailed training configuration") scaled down for `qwen3-nano` on a
 * laptop or a 2-core CPU. Every default beside the paper's value, with the reason for
 * each departure, is tabled in docs/trainer.md ("Defaults against the paper").
 *
 * Errors name the field: `config.pact.anchorProb: must be ≤ 1 (got 1.5)`. Every size has a
 * maximum (CONFIG_MAXIMA), and a config nested deeper than MAX_CONFIG_DEPTH or holding a
 * "__proto__" key is refused with its path before the schema reads it.
 */
import { BACKEND_ORDER } from '../model/backendNames';
import { KERNEL_VARIANTS } from '../model/engine/kernelChoice';
import { z } from 'zod';
import { findJsonHazard, limitText } from '../core/untrustedJson';
import { GSPO_CLIP } from '../core/gspo';
import { TOOLRL_RULES } from '../core/toolrlReward';
import { LOSS_AGGREGATION_NAMES } from '../core/losses';
import type { Registry } from '../core/registry';
import { REASONING_SCHEDULES, TOOL_CALL_SCHEDULES } from '../core/schedules';
import { PREFIX_REVEALS } from '../core/sftSchedule';
import type { FormatLimits } from '../envs/toolRepo/toolDoc';
import { QWEN3_PRESETS, type Qwen3PresetName } from '../model/qwen3/config';
import { LORA_TARGETS, type LoraTarget } from '../model/qwen3/train/loraNames';

/**
 * A zod enum of the names in a registry, in registration order: the config accepts exactly
 * what the registry holds, with no second list of names (z.enum needs at least one name).
 */
export function registryEnum(registry: Registry<unknown>) {
  const [first, ...rest] = registry.names();
  if (first === undefined) throw new Error(`registryEnum: no ${registry.what} is registered`);
  return z.enum([first, ...rest]);
}

export const PACT_OBJECTIVES = ['Lx', 'Lh', 'Lx+SFT', 'Lh+SFT'] as const;
/** The backends a config may name: the model's list. */
export const BACKENDS = BACKEND_ORDER;
/** The model presets, in the order of their table (QWEN3_PRESETS, src/model/qwen3/config.ts). */
export const MODEL_PRESETS = Object.keys(QWEN3_PRESETS) as readonly Qwen3PresetName[];
/** The preset of the shipped warm start (public/warm-start/warm_start.json "preset"): the only one `model.init` "warm-start" can start. */
export const WARM_START_PRESET: Qwen3PresetName = 'qwen3-nano';
/** The places a run's prompts can come from; only some are wired into training (runAssets.ts). */
export const TASK_SOURCES = ['generated', 'ftrl', 'tool-repo'] as const;

const prob = z.number().min(0).max(1);

/** 1-based line ranges of a task file: "1-150", "3, 7-9" (src/run/ftrlTaskSplit.ts reads them). */
export const LINE_RANGES_PATTERN = /^\s*\d+\s*(-\s*\d+\s*)?(,\s*\d+\s*(-\s*\d+\s*)?)*$/;
const lineRangesSchema = z
  .string()
  .max(4096)
  .regex(LINE_RANGES_PATTERN, 'must be 1-based line numbers and ranges, e.g. "1-150" or "1-20, 41-60"');

/** The tasks fields that only an FTRL source reads. */
export const FTRL_TASK_FIELDS = ['testPath', 'trainFraction', 'trainLines', 'testLines', 'toolTimeoutMs'] as const;

/**
 * The largest value of every size, far above any run this app can hold (the paper's value in
 * brackets), so a slip such as 1e9 is refused by name before anything is allocated. Whether a
 * config fits the device is a separate question (the memory estimate).
 */
export const CONFIG_MAXIMA = {
  /** Prompts per step [256] and per PPO mini-batch [32]. */
  batchPrompts: 4096,
  /** Group size K [8]; GRPO variants go up to 64. */
  rolloutsPerPrompt: 256,
  microBatchRows: 4096,
  /** Train and test prompts, generated up front. */
  nTrain: 100_000,
  nTest: 10_000,
  vocabTasks: 100_000,
  /** Steps and step counts (warm-up, annealing horizon, evaluation and checkpoint intervals, SFT steps) [24]. */
  steps: 1_000_000,
  /** Tool-call turns per episode. */
  maxTurns: 100,
  /** Tokens of a prompt [7000] and of a response [23000]: Qwen3's 128k window with YaRN. */
  tokens: 131_072,
  /** LoRA rank. */
  loraRank: 1024,
  /** Characters of a search hit's text. */
  resultChars: 100_000,
  /** Characters of a run name and of a recipe name. */
  nameChars: 200,
  /** Characters of model.init / tasks.path (a folder path or URL). */
  pathChars: 4096,
  /** Learning rate. */
  lr: 1,
} as const;

/** Deepest nesting of a config (the schema's deepest field is at depth 4). */
export const MAX_CONFIG_DEPTH = 16;
const M = CONFIG_MAXIMA;

/**
 * PACT's options; each ablation of Tables 2–5 and Figure 5 is one of these. Every object of the
 * config is strict: a key it does not know (a typo, a field this version lacks) is an error that
 * names it, never dropped.
 */
export const pactOptionsSchema = z.strictObject({
  /** Table 2: which objective a trace-routed prompt uses (`Lh+SFT` is full PACT). */
  objective: z.enum(PACT_OBJECTIVES).default('Lh+SFT'),
  /** Eq. prompt-routing-gate: probability of the prompt-only anchor (Figure 5 sweeps it). */
  anchorProb: prob.default(0.4),
  /** Eq. trace-cotraining-objective: β_SFT. */
  betaSft: z.number().min(0).default(0.1),
  /** Eq. tool-call-annealing: λa start and end. */
  toolCallScaleStart: z.number().min(0).default(0.8),
  toolCallScaleEnd: z.number().min(0).default(0.2),
  /** Annealing horizon S in steps; 0 means "the whole run". */
  annealHorizon: z.number().int().min(0).max(M.steps).default(0),
  /** Table 4 / App. D: reasoning-prefix schedule (`segment` = L4→L0 by semantic segment). */
  reasoningSchedule: registryEnum(REASONING_SCHEDULES).default('segment'),
  /** Table 4 / App. D: tool-call schedule (`scale` = λa annealed, complete spans). */
  toolCallSchedule: registryEnum(TOOL_CALL_SCHEDULES).default('scale'),
  /** App. D "Full Token A": anneal reasoning + tool calls together by token count. */
  fullTokenAnneal: z.boolean().default(false),
  /**
   * Where the k3 KL to π_ref is read for L^h prompts: 'prompt' on the rollouts as sampled,
   * π(τ | x), 'trace' under c^h with the ratio (the paper does not say; docs/trainer.md's defaults table).
   */
  klContext: z.enum(['prompt', 'trace']).default('prompt'),
  /**
   * App. C's prefix levels "reveal" reasoning: 'remove' leaves unrevealed reasoning (explicit
   * call previews included) out of the SFT context; 'mask' keeps all of h* in the context and
   * masks the unrevealed reasoning out of the loss only (core/sftSchedule PREFIX_REVEALS).
   */
  prefixReveal: z.enum(PREFIX_REVEALS).default('remove'),
  /** Table 3: which components of h* enter the privileged context c^h. */
  traceComponents: z
    .strictObject({
      reasoning: z.boolean().default(true),
      toolCalls: z.boolean().default(true),
      toolResponses: z.boolean().default(true),
    })
    .default({ reasoning: true, toolCalls: true, toolResponses: true }),
});

/**
 * What one search call returns to the policy, by default. ToolSearcher retrieves the top 5
 * documents and caps retrieved content at 768 tokens per turn for a Qwen3-4B/8B context;
 * full documents of 5 hits are ~670 tokens (Qwen3 tokenizer), a third of qwen3-nano's 2,048
 * positions per search. Here 3 hits, descriptions cut at 96 characters, inputs by name and
 * type only and no outputs line: ~230 tokens per search (203–263 over 60 queries), so the
 * search teacher's median episode (671 tokens, 90th percentile 1,000) fits experiments/
 * toolsearcher.json's 1,536 response tokens (at 768, 38% of the search warm start's held-out
 * episodes were cut before their answer).
 * The search warm start (`npm run pretrain -- --search-tasks N`) is built with the same
 * presentation.
 */
export interface SearchPresentation {
  topK: number;
  resultLimits: FormatLimits;
}

export const SEARCH_PRESENTATION: Readonly<SearchPresentation> = Object.freeze({
  topK: 3,
  resultLimits: Object.freeze({ maxDescriptionChars: 96, maxParamDescriptionChars: 0, maxOutputChars: 0 }),
});

/** ToolSearcher's three components, each switchable for its ablation. */
export const toolSearcherOptionsSchema = z.strictObject({
  eventLevelSearch: z.boolean().default(true),
  trajectoryAlignedCredit: z.boolean().default(true),
  categoryConstrained: z.boolean().default(true),
  /** Fraction of steps with category-constrained search before switching to global. */
  categoryConstrainedFraction: prob.default(0.3),
  formatBonus: z.number().min(0).default(0.1),
  /** Search hits per search call (ToolSearcher: top 5; here 3, see docs/trainer.md's defaults table). */
  topK: z.number().int().min(1).max(20).default(SEARCH_PRESENTATION.topK),
  /** How much of each hit the policy reads (characters; 0 leaves parameter descriptions or outputs out). */
  resultLimits: z
    .object({
      maxDescriptionChars: z
        .number()
        .int()
        .min(1)
        .max(M.resultChars)
        .default(SEARCH_PRESENTATION.resultLimits.maxDescriptionChars),
      maxParamDescriptionChars: z
        .number()
        .int()
        .min(0)
        .max(M.resultChars)
        .default(SEARCH_PRESENTATION.resultLimits.maxParamDescriptionChars),
      maxOutputChars: z
        .number()
        .int()
        .min(0)
        .max(M.resultChars)
        .default(SEARCH_PRESENTATION.resultLimits.maxOutputChars),
    })
    .strict()
    .default({ ...SEARCH_PRESENTATION.resultLimits }),
});

export const trainConfigSchema = z
  .object({
    name: z.string().min(1).max(M.nameChars).default('run'),
    recipe: z.string().min(1).max(M.nameChars).default('pact'),
    seed: z.number().int().min(0).default(1),
    backend: z.enum(BACKENDS).optional(),
    /**
     * The CPU engine's kernels (wasm and cpu; WebGPU runs the tfjs graph): 'simd', the plain
     * build every run had before the field existed, or 'fma', relaxed SIMD's fused multiply-add,
     * faster and other bits in the last digits (docs/engine.md). Where relaxed SIMD is missing
     * a new run takes 'simd' and records it; a resumed run keeps the kernels it trained on.
     */
    engineKernels: z.enum(KERNEL_VARIANTS).default('simd'),
    model: z
      .strictObject({
        preset: z.enum(MODEL_PRESETS as [Qwen3PresetName, ...Qwen3PresetName[]]).default('qwen3-nano'),
        /** Start from a checkpoint folder/URL instead of the shipped warm start; `scratch` for random init. */
        init: z.string().max(M.pathChars).default('warm-start'),
        /** `scratch` init: generated train tasks (+ expert traces) whose text builds the pruned vocabulary. */
        vocabTasks: z.number().int().min(1).max(M.vocabTasks).default(400),
        lora: z
          .strictObject({
            rank: z.number().int().min(1).max(M.loraRank),
            alpha: z.number().positive(),
            targets: z
              .array(z.enum(LORA_TARGETS as readonly LoraTarget[] as [LoraTarget, ...LoraTarget[]]))
              .min(1)
              .max(LORA_TARGETS.length),
          })
          .optional(),
      })
      .default({ preset: 'qwen3-nano', init: 'warm-start', vocabTasks: 400 }),
    tasks: z
      .strictObject({
        source: z.enum(TASK_SOURCES).default('generated'),
        /**
         * 'ftrl': the FTRL task file (JSONL) the run trains on (and, without testPath, evaluates on
         * its held-out lines). Node: default $PACT_FTRL_TASKS, else ../shared/data/ftrl/test.jsonl.
         */
        path: z.string().max(M.pathChars).optional(),
        /** 'ftrl': evaluate on another FTRL file (every task of it, or its testLines); the whole `path` file (or its trainLines) trains. */
        testPath: z.string().max(M.pathChars).optional(),
        /**
         * 'ftrl', one file: this fraction of its tasks trains, the rest is held out, by a seeded
         * permutation (seed trainSeed) of the file's task lines; nTrain / nTest cap each part.
         */
        trainFraction: z.number().gt(0).lt(1).optional(),
        /** 'ftrl': the 1-based lines of `path` that train, e.g. "1-150" or "1-20, 41-60". */
        trainLines: lineRangesSchema.optional(),
        /** 'ftrl': the 1-based lines that evaluate (of `testPath` when given, else of `path`; disjoint from trainLines). */
        testLines: lineRangesSchema.optional(),
        /** 'ftrl': time limit of one Python tool call, ms (FTRL evaluation's default: 5,000). */
        toolTimeoutMs: z.number().int().min(100).max(600_000).optional(),
        trainSeed: z.number().int().default(1),
        testSeed: z.number().int().default(2),
        /**
         * Generated tasks only: the name pool of the held-out world (absent: 'test', so a config
         * without it resolves to the JSON it always did). 'test': the
         * test split's names, which no generated training data (warm start included) uses;
         * 'train': a train-split world of testSeed (≠ trainSeed), whose entities are new but
         * whose names come from the pool the warm start was trained on — a diagnostic that
         * separates "new world" from "new names" (docs/results.md, Table 1).
         */
        testSplit: z.enum(['test', 'train']).optional(),
        /** Train prompts (generated with expert traces; unverified traces are dropped). */
        nTrain: z.number().int().min(1).max(M.nTrain).default(256),
        nTest: z.number().int().min(1).max(M.nTest).default(32),
        /**
         * Generated tasks only: the categories to draw from (the generator cycles through them),
         * train and test alike. Default: all four. A short run on 2 cores uses single-hop
         * tasks, whose episodes fit a few hundred response tokens.
         */
        categories: z
          .array(z.enum(['single_hop', 'multi_hop', 'parallel_single_hop', 'parallel_multi_hop']))
          .min(1)
          .max(16)
          .optional(),
      })
      .default({ source: 'generated', trainSeed: 1, testSeed: 2, nTrain: 256, nTest: 32 }),
    /** Optimiser steps; 0 = no training, only the held-out evaluation of the starting policy (a table's Vanilla row). */
    steps: z.number().int().min(0).max(M.steps).default(24),
    batchPrompts: z.number().int().min(1).max(M.batchPrompts).default(8),
    miniBatchPrompts: z.number().int().min(1).max(M.batchPrompts).default(4),
    rolloutsPerPrompt: z.number().int().min(1).max(M.rolloutsPerPrompt).default(8),
    /**
     * Rollout rows per gradient micro-batch (memory, not maths: a prompt's K rows are split
     * into micro-batches of at most this many, its SFT row is one more, and the loss is
     * normalised over the whole prompt, so the update is the same for any value). Attention
     * keeps [rows, heads, T, T] per layer for the backward, so c^h rows of ~2k tokens need 1.
     * Read by the tfjs graph (WebGPU); the CPU engine (wasm, cpu) keeps no T×T matrix and
     * chunks a prompt's rows by activation memory instead, so that they share the prompt.
     */
    microBatchRows: z.number().int().min(1).max(M.microBatchRows).default(1),
    temperature: z.number().positive().default(1.0),
    topP: z.number().gt(0).max(1).default(1.0),
    maxTurns: z.number().int().min(1).max(M.maxTurns).default(10),
    maxPromptTokens: z.number().int().min(16).max(M.tokens).default(1024),
    maxResponseTokens: z.number().int().min(8).max(M.tokens).default(1024),
    /**
     * AdamW's learning rate, at most CONFIG_MAXIMA.lr (experiments/ use 1e-12 to 1e-4). A
     * refinement, not `.max()`, so Run setup's range text stays "> 0" (src/ui/runSetup.test.ts).
     */
    lr: z
      .number()
      .positive()
      .refine((lr) => lr <= M.lr, { message: `must be ≤ ${M.lr}` })
      .default(1e-4),
    lrWarmupSteps: z.number().int().min(0).max(M.steps).default(0),
    lrSchedule: z.enum(['constant', 'cosine']).default('constant'),
    weightDecay: z.number().min(0).default(0.0),
    maxGradNorm: z.number().positive().default(1.0),
    clipEps: z.number().positive().max(1).default(0.2),
    klCoef: z.number().min(0).default(0.001),
    /**
     * verl's agg_loss, any mode of LOSS_AGGREGATION_NAMES (core/losses.ts); the trainer's
     * aggregateLossTf runs each ('seq-mean-token-sum-norm' divides by the prompt's padded length T).
     */
    lossAgg: z.enum(LOSS_AGGREGATION_NAMES).default('token-mean'),
    /**
     * MatchTIR credit (pact, matchtir, sft_then_matchtir): discount of turn returns, and how
     * A^g and A^ℓ combine: 'sum' = A^g + A^ℓ (PACT App. B), 'mean' = (A^g + A^ℓ)/2 (MatchTIR's
     * released code, compute_grpo_outcome_advantage in Code/verl/trainer/ppo/core_algos.py).
     */
    gamma: z.number().min(0).max(1).default(0.9),
    advantageCombine: z.enum(['mean', 'sum']).default('sum'),
    matching: z.enum(['hungarian', 'greedy']).default('hungarian'),
    unmatchedPenalty: z.number().min(0).default(0),
    evalEvery: z.number().int().min(0).max(M.steps).default(4),
    /** Also evaluate the starting policy before the first step (the curve's step-0 point). */
    evalAtStart: z.boolean().default(false),
    /**
     * Held-out rollouts per test task: 0 (default) = one greedy rollout; N ≥ 1 = N rollouts
     * sampled at the run's temperature and topP (the training rollouts' distribution), with
     * every eval metric the mean over the N × nTest rollouts.
     */
    evalSamples: z.number().int().min(0).max(64).default(0),
    checkpointEvery: z.number().int().min(0).max(M.steps).default(4),
    pact: pactOptionsSchema.default(pactOptionsSchema.parse({})),
    toolsearcher: toolSearcherOptionsSchema.default(toolSearcherOptionsSchema.parse({})),
    /** GSPO (Zheng et al. 2025 §5.1): clip range of the length-normalised sequence ratio, [1 − clipLow, 1 + clipHigh]. */
    gspo: z
      .object({
        clipLow: z.number().positive().max(1).default(GSPO_CLIP.clipLow),
        clipHigh: z.number().positive().max(1).default(GSPO_CLIP.clipHigh),
      })
      .strict()
      .default({ clipLow: GSPO_CLIP.clipLow, clipHigh: GSPO_CLIP.clipHigh }),
    /** CHORD: global weight μ of the SFT term mixed with on-policy RL. */
    chordMu: prob.default(0.1),
    /** `toolrl`'s reward: MatchTIR's compute_toolrl (no format term, 0 without a call) or ToolRL's own (core/toolrlReward). */
    toolrlRule: z.enum(TOOLRL_RULES).default('matchtir'),
    /** SFT→MatchTIR: steps of SFT before switching to MatchTIR. */
    sftSteps: z.number().int().min(0).max(M.steps).default(8),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.miniBatchPrompts > c.batchPrompts) {
      ctx.addIssue({
        code: 'custom',
        path: ['miniBatchPrompts'],
        message: `must be ≤ batchPrompts (${c.batchPrompts}), got ${c.miniBatchPrompts}`,
      });
    } else if (c.batchPrompts % c.miniBatchPrompts !== 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['miniBatchPrompts'],
        message: `must divide batchPrompts (${c.batchPrompts}), got ${c.miniBatchPrompts}`,
      });
    }
    if (c.tasks.source !== 'ftrl') {
      for (const field of FTRL_TASK_FIELDS) {
        if (c.tasks[field] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['tasks', field],
            message: `is read only with tasks.source "ftrl" (this config's source is "${c.tasks.source}")`,
          });
      }
    } else {
      const t = c.tasks;
      if (t.categories !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['tasks', 'categories'],
          message: 'is for generated tasks; an FTRL source takes its lines by trainLines / testLines',
        });
      if (t.trainFraction !== undefined && (t.trainLines !== undefined || t.testLines !== undefined))
        ctx.addIssue({
          code: 'custom',
          path: ['tasks', 'trainFraction'],
          message: 'give either trainFraction (a seeded split) or trainLines and testLines, not both',
        });
      else if (t.trainFraction !== undefined && t.testPath !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['tasks', 'trainFraction'],
          message:
            'with testPath the held-out tasks come from that file; drop trainFraction (trainLines may pick lines of path)',
        });
      else if (
        t.testPath === undefined &&
        t.trainFraction === undefined &&
        (t.trainLines === undefined || t.testLines === undefined)
      )
        ctx.addIssue({
          code: 'custom',
          path: ['tasks'],
          message:
            'an FTRL source must say which tasks train and which evaluate: trainFraction (a split seeded by trainSeed), trainLines and testLines (of one file), or testPath (evaluate on another file)',
        });
    }
    if (c.tasks.testSplit === 'train' && c.tasks.testSeed === c.tasks.trainSeed)
      ctx.addIssue({
        code: 'custom',
        path: ['tasks', 'testSeed'],
        message: `with testSplit 'train' the held-out world must differ from the training one: testSeed ≠ trainSeed (${c.tasks.trainSeed})`,
      });
    if (c.pact.toolCallScaleEnd > c.pact.toolCallScaleStart) {
      ctx.addIssue({
        code: 'custom',
        path: ['pact', 'toolCallScaleEnd'],
        message: `must be ≤ toolCallScaleStart (${c.pact.toolCallScaleStart})`,
      });
    }
  });

export type TrainConfig = z.output<typeof trainConfigSchema>;
export type TrainConfigInput = z.input<typeof trainConfigSchema>;

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid training config:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** `config.a.b[0]`-style path of a problem. */
const formatConfigPath = (path: readonly PropertyKey[]) =>
  ['config', ...path.map((k) => limitText(String(k), 60))].join('.');

/** Validates and fills defaults; every problem is listed as `config.<path>: <reason>`. */
export function resolveConfig(input: unknown): TrainConfig {
  const hazard = findJsonHazard(input, MAX_CONFIG_DEPTH);
  if (hazard) throw new ConfigError([`${formatConfigPath(hazard.path)}: ${hazard.message}`]);
  const r = trainConfigSchema.safeParse(input ?? {});
  if (r.success) {
    const c = r.data;
    return c.pact.annealHorizon === 0 ? { ...c, pact: { ...c.pact, annealHorizon: c.steps } } : c;
  }
  throw new ConfigError(r.error.issues.map((i) => `${formatConfigPath(i.path)}: ${limitText(i.message, 200)}`));
}
