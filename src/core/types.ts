/**
 * Shared vocabulary of the core: what each token of a conversation is.
 *
 * Masks travel with the tokens: every token of a rollout or of
 * an expert trace carries a `TokenTag`, and every loss mask is derived from these
 * tags, never by re-parsing text.
 */

/**
 * - `prompt`: system/user text and chat-template scaffolding the policy did not write.
 * - `reasoning`: text inside `<think>…</think>` written by the policy (or the expert).
 * - `tool_call`: a complete `<tool_call>…</tool_call>` span, tags included.
 * - `answer`: a complete `<answer>…</answer>` span, tags included.
 * - `control`: other policy-generated tokens (`<think>` tags, `<|im_end|>`, stray text).
 * - `observation`: tool responses and their template wrapping; produced by the environment.
 */
export type TokenKind = 'prompt' | 'reasoning' | 'tool_call' | 'answer' | 'control' | 'observation';

export const TOKEN_KINDS: readonly TokenKind[] = [
  'prompt',
  'reasoning',
  'tool_call',
  'answer',
  'control',
  'observation',
] as const;

/** Kinds written by the policy: these and only these carry RL advantages. */
export const POLICY_KINDS: ReadonlySet<TokenKind> = new Set(['reasoning', 'tool_call', 'answer', 'control']);

export interface TokenTag {
  kind: TokenKind;
  /** 0-based assistant turn index; prompt tokens use -1. */
  turn: number;
  /** For `reasoning`: index of the semantic chunk (segment) within the turn's reasoning. */
  segment?: number;
}

/** A tool call as parsed from `<tool_call>{"name": …, "arguments": {…}}</tool_call>`. */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}
