/**
 * Rendering an expert trace h* (PACT §3.2, privileged context c^h = [x; h*], and
 * Eq. sft-mask) in two forms: Qwen3 chat messages (one assistant message per turn, one
 * `tool` message per observation), and the text of h* after the prompt x, cut into spans
 * that each carry a `TokenTag`, from which the trainer derives the SFT mask.
 *
 * Departures: the final answer y is never part of h* (PACT §3.1); at a prefix level the
 * unrevealed reasoning is left out of the text; JSON is written as Qwen3's template does.
 *
 * Both forms and every convention in full: docs/traces.md.
 */
import type { TokenTag, ToolCall } from '../core/types';
import { PREFIX_LEVELS, revealPrefix } from './prefixLevels';
import type { ExpertTrace, PrefixLevel, TraceTurn } from './types';

/** JSON in Python's json.dumps(ensure_ascii=False) layout: `, ` and `: ` separators. */
export function formatPythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number')
    return Number.isFinite(value) ? JSON.stringify(value) : value > 0 ? 'Infinity' : value < 0 ? '-Infinity' : 'NaN';
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => formatPythonJson(v)).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${formatPythonJson(v)}`).join(', ')}}`;
  }
  return JSON.stringify(String(value));
}

/** `{"name": "X", "arguments": {…}}` as Qwen3 writes it inside `<tool_call>`. */
export function formatToolCallJson(call: ToolCall): string {
  return `{"name": ${JSON.stringify(call.name)}, "arguments": ${formatPythonJson(call.arguments ?? {})}}`;
}

/** The complete `<tool_call>…</tool_call>` span of one call. */
export function formatToolCallBlock(call: ToolCall): string {
  return `<tool_call>\n${formatToolCallJson(call)}\n</tool_call>`;
}

export interface TraceMessage {
  role: 'assistant' | 'tool';
  content: string;
}

export type RenderLevel = PrefixLevel | 'full';

/** True for a turn of h* (it calls a tool); a turn without calls is the final-answer turn, not part of h*. */
export function isToolCallingTurn(turn: TraceTurn): boolean {
  return turn.calls.length > 0;
}

function selectReasoning(turn: TraceTurn, level: RenderLevel): string {
  if (level === 'full') return turn.reasoning;
  if (!PREFIX_LEVELS.includes(level)) throw new Error(`render: level must be 0..4 or 'full', got ${String(level)}`);
  return revealPrefix(turn, level);
}

/**
 * The trace as Qwen3 chat messages (assistant content holds `<think>` and the tool
 * calls as text; the template renders it exactly as with structured `tool_calls`).
 * includeFinalAnswer (default): the whole expert episode, the last turn carrying
 * `<answer>finalAnswer</answer>`; false: h* only, the tool-calling turns.
 */
export function renderTraceMessages(
  trace: ExpertTrace,
  options: { includeFinalAnswer?: boolean; level?: RenderLevel } = {},
): TraceMessage[] {
  const { includeFinalAnswer = true, level = 'full' } = options;
  const messages: TraceMessage[] = [];
  trace.turns.forEach((turn, t) => {
    if (!includeFinalAnswer && !isToolCallingTurn(turn)) return;
    let content = `<think>\n${selectReasoning(turn, level)}\n</think>\n\n`;
    content += turn.calls.map((c) => formatToolCallBlock(c)).join('\n');
    const isLast = t === trace.turns.length - 1;
    if (isLast && includeFinalAnswer && trace.finalAnswer !== undefined) {
      content += `${turn.calls.length > 0 ? '\n' : ''}<answer>${trace.finalAnswer}</answer>`;
    }
    messages.push({ role: 'assistant', content });
    for (const observation of turn.observations) messages.push({ role: 'tool', content: observation });
  });
  return messages;
}

export interface TaggedSpan {
  text: string;
  /** [start, end) character offsets in the rendered text. */
  start: number;
  end: number;
  tag: TokenTag;
}

export interface PrivilegedRendering {
  /** The text of h* that follows the prompt x (x ends with `<|im_start|>assistant\n`). */
  text: string;
  spans: TaggedSpan[];
}

/**
 * h* as tagged text, ready to append to the prompt x: the tool-calling turns only (no
 * answer turn), each span tagged with its index in trace.turns. Reasoning chunks become
 * one span each (segment = chunk index); at a prefix level only the revealed chunks appear.
 */
export function renderPrivilegedTrace(trace: ExpertTrace, options: { level?: RenderLevel } = {}): PrivilegedRendering {
  const { level = 'full' } = options;
  const spans: TaggedSpan[] = [];
  let text = '';
  const push = (piece: string, tag: TokenTag) => {
    if (piece.length === 0) return;
    const last = spans.at(-1);
    const isSameTag =
      last && last.tag.kind === tag.kind && last.tag.turn === tag.turn && last.tag.segment === tag.segment;
    if (isSameTag && tag.kind !== 'tool_call') {
      last.text += piece;
      last.end += piece.length;
    } else {
      spans.push({ text: piece, start: text.length, end: text.length + piece.length, tag });
    }
    text += piece;
  };
  let isFirst = true;
  trace.turns.forEach((turn, t) => {
    if (!isToolCallingTurn(turn)) return;
    if (!isFirst) push('<|im_start|>assistant\n', { kind: 'prompt', turn: t });
    isFirst = false;
    push('<think>\n', { kind: 'control', turn: t });
    const revealed = selectReasoning(turn, level);
    // Walk the chunks over the revealed text so each span keeps its chunk index.
    let offset = 0;
    for (let i = 0; i < turn.chunks.length && offset < revealed.length; i++) {
      const piece = revealed.slice(offset, offset + turn.chunks[i].text.length);
      push(piece, { kind: 'reasoning', turn: t, segment: i });
      offset += piece.length;
    }
    push('\n</think>\n\n', { kind: 'control', turn: t });
    turn.calls.forEach((call, c) => {
      if (c > 0) push('\n', { kind: 'control', turn: t });
      push(formatToolCallBlock(call), { kind: 'tool_call', turn: t });
    });
    push('<|im_end|>\n', { kind: 'control', turn: t });
    if (turn.observations.length > 0) {
      let wrapped = '<|im_start|>user';
      for (const observation of turn.observations) wrapped += `\n<tool_response>\n${observation}\n</tool_response>`;
      push(`${wrapped}<|im_end|>\n`, { kind: 'observation', turn: t });
    }
  });
  return { text, spans };
}

/**
 * A plain-text view of a trace for the console (`pact tasks`): per turn the chunks with
 * their types (hidden ones marked), the prefix levels, the calls and the observations.
 */
export function formatTraceForConsole(trace: ExpertTrace, options: { maxChunkChars?: number } = {}): string {
  const maxChars = options.maxChunkChars ?? 100;
  const clip = (text: string) => {
    const flat = text.replace(/\s+/g, ' ').trim();
    return flat.length > maxChars ? `${flat.slice(0, maxChars - 3)}...` : flat;
  };
  const lines = [`trace ${trace.taskId} (${trace.source}, ${trace.verified ? 'verified' : 'unverified'})`];
  trace.turns.forEach((turn, t) => {
    lines.push(`  turn ${t}  L0..L4 = [${turn.prefixChunkCounts.join(', ')}]`);
    if (!isToolCallingTurn(turn)) lines.push('    (the answer turn: not part of h*)');
    for (const chunk of turn.chunks)
      lines.push(`    ${chunk.id} ${chunk.type}${chunk.keepForPrefix ? '' : ' [hidden]'}: ${clip(chunk.text)}`);
    turn.calls.forEach((call, c) => {
      lines.push(`    call ${formatToolCallJson(call)}`);
      lines.push(`    obs  ${clip(turn.observations[c] ?? '')}`);
    });
  });
  if (trace.finalAnswer !== undefined) lines.push(`  answer (not in h*): ${trace.finalAnswer}`);
  return lines.join('\n');
}
