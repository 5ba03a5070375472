/**
 * Algorithm 1 line 3 of PACT (App. E): K prompt-only rollouts τ_{i,k} ~ π_old(·|x_i) per
 * prompt (rollouts.ts, or the recipe's own collectRollouts; h* never enters a context),
 * also used for held-out evaluation. The sampling policy is the model's `generate`, wrapped
 * to report progress: each generate call is one turn of the episodes still running, so the
 * rollouts not in it have ended.
 */
import type { RenderChat } from '../../envs/rollout';
import type { ToolExecutor } from '../../envs/sandbox/types';
import type { Qwen3Model } from '../../model/qwen3';
import type { TextTokenizer } from '../../model/tokenizer/types';
import type { Rng } from '../../core/rng';
import type { TrainConfig } from '../config';
import { collectToolUseRollouts } from '../rollouts/rollouts';
import type { PolicySampler, PromptItem, Recipe, RolloutGroup, StepProgress } from '../types';

export interface RolloutCollectorInit {
  config: TrainConfig;
  model: Qwen3Model;
  tokenizer: TextTokenizer;
  recipe: Recipe;
  renderChat: RenderChat;
  executor: ToolExecutor;
  wrapPolicy?: (policy: PolicySampler) => PolicySampler;
  onProgress?: (p: StepProgress) => void;
}

/** One collection: prompts × K rollouts at step `step`, sampled from `rng` (greedy: argmax). */
export interface CollectionRequest {
  prompts: PromptItem[];
  rng: Rng;
  isGreedy: boolean;
  K: number;
  step: number;
  isEvaluation?: boolean;
}

export class RolloutCollector {
  private readonly policy: PolicySampler;
  /** The rollout collection under way (for onProgress), null between collections. */
  private progress: { phase: 'rollouts' | 'eval'; total: number; turn: number; tokens: number } | null = null;

  constructor(private readonly init: RolloutCollectorInit) {
    const model = init.model;
    const sampler: PolicySampler = {
      // Only ids the tokenizer can decode: a user's Qwen3 folder may have padding rows past its vocabulary.
      generate: (prompts, opts) =>
        model.generate(prompts, { ...opts, padTokenId: 0, vocabLimit: init.tokenizer.vocabSize }),
    };
    const wrapped = init.wrapPolicy ? init.wrapPolicy(sampler) : sampler;
    this.policy = {
      generate: async (contexts, opts) => {
        const r = this.progress;
        if (r) {
          r.turn += 1;
          const done = Math.max(0, r.total - contexts.length);
          this.init.onProgress?.({ phase: r.phase, done, total: r.total, turn: r.turn, tokens: r.tokens });
        }
        const rows = await wrapped.generate(contexts, opts);
        if (r) for (const row of rows) r.tokens += row.tokens.length;
        return rows;
      },
    };
  }

  /** The groups of a collection, one per prompt, reporting progress as it runs. */
  async collect(request: CollectionRequest): Promise<RolloutGroup[]> {
    const total = request.prompts.length * request.K;
    const r = { phase: request.isEvaluation ? ('eval' as const) : ('rollouts' as const), total, turn: 0, tokens: 0 };
    this.progress = r;
    this.init.onProgress?.({ phase: r.phase, done: 0, total, turn: 0, tokens: 0 });
    try {
      const groups = await this.collectGroups(request);
      this.init.onProgress?.({ phase: r.phase, done: total, total, turn: r.turn, tokens: r.tokens });
      return groups;
    } finally {
      this.progress = null;
    }
  }

  private async collectGroups(request: CollectionRequest): Promise<RolloutGroup[]> {
    const { prompts, rng, isGreedy, K, step, isEvaluation = false } = request;
    const { config: c, recipe, tokenizer } = this.init;
    if (recipe.collectRollouts) {
      return recipe.collectRollouts({
        prompts,
        policy: this.policy,
        tokenizer,
        config: { ...c, rolloutsPerPrompt: K },
        step,
        rng,
        isGreedy,
        isEvaluation,
      });
    }
    return collectToolUseRollouts({
      prompts,
      rolloutsPerPrompt: K,
      policy: this.policy,
      tokenizer,
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
}
