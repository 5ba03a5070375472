/**
 * The first prompt of a BFCL entry, counted before an evaluation (the app's Task files panel
 * says how many entries fit the policy's window): the first turn's messages and the entry's
 * initial function docs, rendered as runBfclEntry (bfclEval.ts) renders its first step.
 * An entry fits when its first prompt leaves at least one token of room (runBfclEntry:
 * `room <= 0` is `prompt_too_long`).
 */
import { buildEntryTools, type BfclFuncDoc, type BfclPair } from '../envs/bfcl/data';
import type { TextTokenizer } from '../model/tokenizer/types';
import type { BfclChatMessage, BfclRenderChat } from './bfclEval';

/** Tokens of the entry's first prompt (before any step). */
export function countBfclFirstPromptTokens(
  pair: BfclPair,
  docsByClass: ReadonlyMap<string, readonly BfclFuncDoc[]>,
  tokenizer: Pick<TextTokenizer, 'encode'>,
  renderChat: BfclRenderChat,
): number {
  const { initial } = buildEntryTools(pair.entry, docsByClass);
  const messages: BfclChatMessage[] = (pair.entry.question[0] ?? []).map((m) => ({
    role: m.role as BfclChatMessage['role'],
    content: m.content,
  }));
  return tokenizer.encode(renderChat(messages, { tools: initial, addGenerationPrompt: true })).length;
}

export interface BfclPromptFit {
  entries: number;
  /** First prompts shorter than the window. */
  fit: number;
  minTokens: number;
  medianTokens: number;
  maxTokens: number;
}

/** How many first prompts fit a window of `contextTokens`, and their spread (median: the lower middle). */
export function summariseBfclPromptFit(tokens: readonly number[], contextTokens: number): BfclPromptFit {
  const sorted = [...tokens].sort((a, b) => a - b);
  return {
    entries: sorted.length,
    fit: sorted.filter((t) => t < contextTokens).length,
    minTokens: sorted[0] ?? 0,
    medianTokens: sorted.length === 0 ? 0 : sorted[Math.floor((sorted.length - 1) / 2)],
    maxTokens: sorted[sorted.length - 1] ?? 0,
  };
}
