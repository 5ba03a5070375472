/**
 * Parses one assistant turn in Qwen3's tool-calling format:
 *
 *   <think> reasoning </think>
 *   <tool_call>{"name": …, "arguments": {…}}</tool_call>   (zero or more)
 *   <answer> … </answer>                                      (optional)
 *
 * The result keeps a character span for every piece, and the pieces cover the text
 * exactly once, in order, so each generated token's kind (reasoning, tool_call,
 * answer, control) is read from the spans, never re-parsed.
 *
 * Errors, schema checks and parsing conventions: docs/envs.md.
 */
import type { ParamSchema, ToolCall, ToolSchema } from './types';
import { describeJsonSyntaxError } from './jsonSyntax';

export interface Span {
  /** First character (inclusive). */
  start: number;
  /** One past the last character (exclusive). */
  end: number;
}

export type PieceKind = 'reasoning' | 'tool_call' | 'answer' | 'control';

export interface TurnPiece extends Span {
  kind: PieceKind;
}

export interface ParsedCall {
  /** Position among the turn's `<tool_call>` blocks, 0-based. */
  index: number;
  /** The whole block, tags included (to the end of the text when unclosed). */
  span: Span;
  /** The call, when the block is well-formed. */
  call?: ToolCall;
  /** What is wrong with the block, when it is not. */
  error?: string;
}

export interface ParsedTurn {
  text: string;
  /** The reasoning, the inner text of the `<think>` blocks joined by a blank line, trimmed. */
  reasoning: string;
  /** Inner spans of the `<think>` blocks. */
  reasoningSpans: Span[];
  calls: ParsedCall[];
  /** Inner text of the first `<answer>…</answer>`, trimmed. */
  answer?: string;
  /** The whole first answer block, tags included. */
  answerSpan?: Span;
  /** Every problem found, in text order (call errors included). */
  errors: string[];
  /** Ordered, non-overlapping pieces covering [0, text.length) exactly. */
  pieces: TurnPiece[];
}

const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';
const CALL_OPEN = '<tool_call>';
const CALL_CLOSE = '</tool_call>';
const ANSWER_OPEN = '<answer>';
const ANSWER_CLOSE = '</answer>';

/** Longest excerpt of the model's text quoted in an error message. */
const MAX_QUOTE_CHARS = 60;

function quote(text: string): string {
  const cut = text.length > MAX_QUOTE_CHARS ? `${text.slice(0, MAX_QUOTE_CHARS)}…` : text;
  return JSON.stringify(cut);
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** Parses the inside of one `<tool_call>` block. */
export function parseToolCallJson(inner: string): { call?: ToolCall; error?: string } {
  const trimmed = inner.trim();
  if (trimmed.length === 0) return { error: 'the <tool_call> block is empty' };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    // The position in the project's words, not the engine's SyntaxError text (jsonSyntax.ts).
    return { error: `the <tool_call> block is not valid JSON (${describeJsonSyntaxError(trimmed)})` };
  }
  if (!isPlainObject(value))
    return { error: 'the <tool_call> block must be a JSON object {"name": …, "arguments": {…}}' };
  if (!hasOwn(value, 'name')) return { error: 'the tool call has no "name"' };
  const name = value.name;
  if (typeof name !== 'string' || name.trim().length === 0) return { error: '"name" must be a non-empty string' };
  if (!hasOwn(value, 'arguments')) return { error: `the call to "${name}" has no "arguments" (use {} for none)` };
  const args = value.arguments;
  if (!isPlainObject(args))
    return {
      error: `"arguments" of the call to "${name}" must be a JSON object, got ${Array.isArray(args) ? 'array' : args === null ? 'null' : typeof args}`,
    };
  return { call: { name, arguments: args } };
}

/** Parses one assistant turn. Never throws; linear in `text.length`. */
export function parseAssistantTurn(text: string): ParsedTurn {
  const s = typeof text === 'string' ? text : String(text);
  const pieces: TurnPiece[] = [];
  const errors: string[] = [];
  const calls: ParsedCall[] = [];
  const reasoningSpans: Span[] = [];
  let answer: string | undefined;
  let answerSpan: Span | undefined;
  const push = (kind: PieceKind, start: number, end: number) => {
    if (end <= start) return;
    const last = pieces[pieces.length - 1];
    if (last && last.kind === kind && last.end === start) last.end = end;
    else pieces.push({ kind, start, end });
  };

  let pos = 0;
  // Reasoning whose <think> was written by the template: "…</think>" before any tag.
  const firstClose = s.indexOf(THINK_CLOSE);
  if (firstClose >= 0) {
    const head = s.slice(0, firstClose);
    if (!head.includes(THINK_OPEN) && !head.includes(CALL_OPEN) && !head.includes(ANSWER_OPEN)) {
      push('reasoning', 0, firstClose);
      reasoningSpans.push({ start: 0, end: firstClose });
      push('control', firstClose, firstClose + THINK_CLOSE.length);
      pos = firstClose + THINK_CLOSE.length;
    }
  }

  // Next index of each tag (recomputed only once passed; -1 stays -1), so the whole
  // parse scans the text a bounded number of times per tag: linear time.
  const nextIndex: Record<string, number> = {};
  const findNext = (tag: string): number => findNextFrom(s, tag, pos, nextIndex);

  while (pos < s.length) {
    let tag = '';
    let at = -1;
    for (const candidate of [THINK_OPEN, CALL_OPEN, ANSWER_OPEN]) {
      const i = findNext(candidate);
      if (i >= 0 && (at < 0 || i < at)) {
        at = i;
        tag = candidate;
      }
    }
    if (at < 0) {
      push('control', pos, s.length);
      break;
    }
    push('control', pos, at);
    const inner = at + tag.length;
    if (tag === THINK_OPEN) {
      const close = findNextFrom(s, THINK_CLOSE, inner, nextIndex);
      push('control', at, inner);
      if (close < 0) {
        errors.push('unclosed <think>: the reasoning has no </think>');
        push('reasoning', inner, s.length);
        reasoningSpans.push({ start: inner, end: s.length });
        pos = s.length;
      } else {
        push('reasoning', inner, close);
        reasoningSpans.push({ start: inner, end: close });
        push('control', close, close + THINK_CLOSE.length);
        pos = close + THINK_CLOSE.length;
      }
    } else if (tag === CALL_OPEN) {
      const index = calls.length;
      const close = findNextFrom(s, CALL_CLOSE, inner, nextIndex);
      const reopen = findNextFrom(s, CALL_OPEN, inner, nextIndex);
      if (close < 0 || (reopen >= 0 && reopen < close)) {
        const end = reopen >= 0 && (close < 0 || reopen < close) ? reopen : s.length;
        const error = `unclosed <tool_call> #${index + 1}: no </tool_call> before ${end === s.length ? 'the end of the turn' : 'the next <tool_call>'}`;
        errors.push(error);
        calls.push({ index, span: { start: at, end }, error });
        push('control', at, end);
        pos = end;
      } else {
        const end = close + CALL_CLOSE.length;
        const parsed = parseToolCallJson(s.slice(inner, close));
        if (parsed.error) {
          const error = `<tool_call> #${index + 1}: ${parsed.error}`;
          errors.push(error);
          calls.push({ index, span: { start: at, end }, error });
        } else {
          calls.push({ index, span: { start: at, end }, call: parsed.call });
        }
        push('tool_call', at, end);
        pos = end;
      }
    } else {
      const close = findNextFrom(s, ANSWER_CLOSE, inner, nextIndex);
      if (close < 0) {
        errors.push('unclosed <answer>: no </answer>');
        push('control', at, s.length);
        pos = s.length;
      } else {
        const end = close + ANSWER_CLOSE.length;
        if (answer === undefined) {
          answer = s.slice(inner, close).trim();
          answerSpan = { start: at, end };
        }
        push('answer', at, end);
        pos = end;
      }
    }
  }

  const reasoning = reasoningSpans
    .map((r) => s.slice(r.start, r.end).trim())
    .filter((r) => r.length > 0)
    .join('\n\n');
  return { text: s, reasoning, reasoningSpans, calls, answer, answerSpan, errors, pieces };
}

/**
 * indexOf(tag, from) through a cache: valid because `from` never decreases within
 * one parse, so a cached hit at or after `from` is still the next one, and a cached
 * miss (-1) stays a miss.
 */
function findNextFrom(s: string, tag: string, from: number, cache: Record<string, number>): number {
  const cached = cache[tag];
  if (cached !== undefined && (cached === -1 || cached >= from)) return cached;
  const i = s.indexOf(tag, from);
  cache[tag] = i;
  return i;
}

// ---------------------------------------------------------------------------------
// Argument checking against the task's schemas.

function describeValue(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'array';
  if (typeof x === 'string') return `string ${quote(x)}`;
  if (typeof x === 'number') return Number.isFinite(x) ? `number ${x}` : 'a number out of range';
  if (typeof x === 'object') return 'object';
  return `${typeof x} ${String(x)}`;
}

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    case 'null':
      return value === null;
    default:
      return true; // a type we do not know: not checked
  }
}

/** Checks one value against a parameter schema; returns the first problem or null. */
export function checkParamValue(value: unknown, schema: ParamSchema, path: string, where = ''): string | null {
  const declared = (schema as { type?: unknown }).type;
  const types = Array.isArray(declared)
    ? declared.filter((t): t is string => typeof t === 'string')
    : typeof declared === 'string'
      ? [declared]
      : [];
  if (types.length > 0 && !types.some((t) => matchesType(value, t))) {
    return `argument ${path}${where} must be ${types.join(' or ')}, got ${describeValue(value)}`;
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && !schema.enum.some((e) => e === value)) {
    const allowed = schema.enum.map((e) => JSON.stringify(e)).join(', ');
    return `argument ${path}${where} must be one of ${allowed}; got ${describeValue(value)}`;
  }
  if (Array.isArray(value) && schema.items && typeof schema.items === 'object') {
    for (let i = 0; i < value.length; i++) {
      const problem = checkParamValue(value[i], schema.items, `${path}[${i}]`, where);
      if (problem) return problem;
    }
  }
  return null;
}

/**
 * Checks a parsed call against the task's tools. Returns null when the call is valid,
 * else the problem, naming the tool and the argument.
 */
export function checkToolCall(call: ToolCall, tools: readonly ToolSchema[]): string | null {
  const tool = tools.find((t) => t.function.name === call.name);
  if (!tool) {
    return `unknown tool ${quote(call.name)}; available tools: ${tools.map((t) => t.function.name).join(', ')}`;
  }
  const { properties, required = [] } = tool.function.parameters;
  for (const key of required) {
    if (!hasOwn(call.arguments, key)) return `missing required argument "${key}" of ${call.name}`;
  }
  for (const key of Object.keys(call.arguments)) {
    if (!hasOwn(properties, key)) {
      const valid = Object.keys(properties);
      return `unknown argument ${quote(key)} of ${call.name}; valid arguments: ${valid.length ? valid.join(', ') : '(none)'}`;
    }
    const problem = checkParamValue(call.arguments[key], properties[key], `"${key}"`, ` of ${call.name}`);
    if (problem) return problem;
  }
  return null;
}
