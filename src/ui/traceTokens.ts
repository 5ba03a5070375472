/**
 * The tokens of an expert trace h* for the Token masks panel (loaded lazily with the
 * tokenizer): `renderPrivilegedTrace(trace)` (the whole h*, every chunk, leaks
 * included) tokenised span by span with `tagTokens`, so every token carries its span's
 * TokenTag, as the trainer's SFT row does; and the token count of the prompt x.
 *
 * Simplification: the prompt x is the rollout environment's (system prompt + FTRL
 * instruction + question, tools in <tools>), rendered by Qwen3's chat template; its
 * token count is shown, its tokens are not.
 */
import { DEFAULT_SYSTEM_PROMPT, formatUserPrompt, tagTokens } from '../envs/rollout';
import type { Task } from '../envs/types';
import type { TextTokenizer } from '../model/tokenizer/types';
import { countSafeChunks } from '../traces/prefixLevels';
import { renderPrivilegedTrace } from '../traces/render';
import type { ExpertTrace } from '../traces/types';
import type { TraceTokens } from './tokenMaskView';

/** h* tokenised span by span; every token keeps its span's tag. */
export function tokenizePrivilegedTrace(trace: ExpertTrace, tokenizer: TextTokenizer): TraceTokens {
  const { spans } = renderPrivilegedTrace(trace, { level: 'full' });
  const { ids, tags } = tagTokens(
    spans.map((s) => ({ text: s.text, tag: s.tag })),
    tokenizer,
  );
  const safeCounts = trace.turns.map((t) => countSafeChunks(t.chunks));
  return {
    ids,
    tags,
    texts: ids.map((id) => tokenizer.decode([id])),
    prefixChunkCounts: trace.turns.map((t) => [...t.prefixChunkCounts]),
    isLeak: tags.map((tag) => tag.kind === 'reasoning' && (tag.segment as number) >= safeCounts[tag.turn]),
  };
}

/** The part of Qwen3Tokenizer the prompt count needs. */
export interface ChatTokenizer extends TextTokenizer {
  renderChat(
    messages: readonly { role: 'system' | 'user'; content: string }[],
    options: { tools?: readonly unknown[]; addGenerationPrompt?: boolean },
  ): string;
}

/** Token count of the prompt x the rollout environment builds for `task`. */
export function countPromptTokens(task: Task, tokenizer: ChatTokenizer): number {
  const text = tokenizer.renderChat(
    [
      { role: 'system', content: DEFAULT_SYSTEM_PROMPT },
      { role: 'user', content: formatUserPrompt(task) },
    ],
    { tools: task.tools, addGenerationPrompt: true },
  );
  return tokenizer.encode(text).length;
}
