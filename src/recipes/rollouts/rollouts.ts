/**
 * Prompt-only rollout collection for the tool-use environment (PACT Eq.
 * prompt-only-rollout, Alg. 1 line 3): τ_{i,k} ~ π_old(· | x_i), K per prompt, the expert
 * trace h* NEVER in the context (the only text the policy sees is what RolloutEnv
 * renders: system prompt, user prompt with tools, its own turns, tool responses).
 *
 * Budget: `maxResponseTokens` counts every token after the prompt (generated and
 * observation), as verl's response length does; a turn is cut when it would pass the
 * budget and the episode then ends (`isFinished` false). Simplifications: one
 * `maxNewTokens` per batched call (the largest remaining budget; rows over their own
 * budget are cut afterwards); prompts longer than `maxPromptTokens` are an error naming
 * the task (generated tasks are short).
 *
 * How the batch advances turn by turn: docs/trainer.md.
 */
import type { Rng } from '../../core/rng';
import { RolloutEnv, listCallOutputs, tagGeneratedTokens, type RenderChat } from '../../envs/rollout';
import { runEpisodeTurns, startEpisodeTokens, type EpisodeTokens } from './episodeLoop';
import type { ToolExecutor } from '../../envs/sandbox/types';
import type { Task } from '../../envs/types';
import type { TextTokenizer } from '../../model/tokenizer/types';
import type { PolicySampler, PromptItem, Rollout, RolloutGroup } from '../types';

export interface ToolUseRolloutOptions {
  prompts: readonly PromptItem[];
  /** Rollouts per prompt K. */
  rolloutsPerPrompt: number;
  policy: PolicySampler;
  tokenizer: TextTokenizer;
  executor: ToolExecutor;
  renderChat: RenderChat;
  maxTurns: number;
  maxPromptTokens: number;
  /** Tokens after the prompt, all turns together (generated + observations). */
  maxResponseTokens: number;
  temperature: number;
  topP: number;
  /** Sampling randomness (ignored when greedy). */
  rng: Rng;
  /** Greedy decoding (evaluation). */
  isGreedy?: boolean;
}

/** One running episode: its environment and its tokens. */
interface Episode extends EpisodeTokens {
  env: RolloutEnv;
  task: Task;
}

function startEpisode(task: Task, options: ToolUseRolloutOptions): Episode {
  const env = new RolloutEnv({
    executor: options.executor,
    renderChat: options.renderChat,
    maxTurns: options.maxTurns,
  });
  const { promptText } = env.reset(task);
  const promptIds = options.tokenizer.encode(promptText);
  if (promptIds.length > options.maxPromptTokens) {
    throw new Error(
      `rollouts: the prompt of task ${task.id} has ${promptIds.length} tokens, over maxPromptTokens ${options.maxPromptTokens}`,
    );
  }
  return { env, task, ...startEpisodeTokens(promptIds) };
}

/**
 * Collects K prompt-only rollouts for each tool-use prompt. Groups come back in prompt
 * order, rollouts in k order; the result is deterministic given `rng`'s state.
 */
export async function collectToolUseRollouts(options: ToolUseRolloutOptions): Promise<RolloutGroup[]> {
  const { prompts, rolloutsPerPrompt: K, tokenizer } = options;
  if (!Number.isInteger(K) || K < 1)
    throw new Error(`rollouts: rolloutsPerPrompt must be a positive integer, got ${K}`);
  const episodes: Episode[] = [];
  for (const [i, prompt] of prompts.entries()) {
    if (prompt.kind !== 'tool-use')
      throw new Error(
        `rollouts: prompts[${i}] is a ${prompt.kind} prompt; collectToolUseRollouts takes tool-use tasks`,
      );
    for (let k = 0; k < K; k++) episodes.push(startEpisode(prompt.task, options));
  }
  const decode = (ids: number[]) => tokenizer.decode(ids);
  await runEpisodeTurns(episodes, { ...options, where: 'rollouts' }, async (ep, text, tokens, turn) => {
    const result = await ep.env.step(text);
    return {
      tags: tagGeneratedTokens(tokens, decode, result.turn.parsed, turn),
      isDone: result.done,
      isSuccess: result.done,
      envText: result.envText,
    };
  });

  const groups: RolloutGroup[] = prompts.map((prompt) => ({ prompt, rollouts: [] }));
  episodes.forEach((ep, e) => {
    const transcript = ep.env.transcript;
    const rollout: Rollout = {
      ids: ep.ids,
      tags: ep.tags,
      behaviourLogprobs: ep.behaviourLogprobs,
      promptLength: ep.promptLength,
      generatedLength: ep.generatedLength,
      transcript,
      callOutputs: transcript.turns.flatMap((t) => t.outputs),
      isFinished: ep.isFinished,
    };
    groups[Math.floor(e / K)].rollouts.push(rollout);
  });
  return groups;
}

/** The final answer text of a tool-use rollout ('' when it never answered). */
export function readRolloutAnswer(rollout: Rollout): string {
  return rollout.transcript?.answer ?? '';
}

export { listCallOutputs };
