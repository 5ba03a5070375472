/**
 * Leakage detection for expert reasoning (PACT App. C, "Hybrid segmentation" and the
 * "Critical rule about leakage" of the segmentation prompt): a span that previews the
 * exact tool call — literal JSON, a function name with all its argument values, or a
 * phrase that introduces the literal action — is marked `explicit_call_preview`, and
 * neither it nor anything after it is ever revealed in a prefix hint.
 *
 * The leaking span starts at the beginning of the sentence that contains the first
 * detector hit (sentence = text after the last `.`/`!`/`?` + whitespace or line break).
 *
 * Simplifications: detection is lexical (regular expressions and substring matches),
 * so a paraphrased preview without the tool name, its values or a listed phrase is not
 * caught; sentence splitting ignores abbreviations ("e.g. " ends a sentence, which only
 * makes the cut later inside that sentence, never earlier than the hit).
 */
import type { ToolCall } from '../core/types';
import type { ChunkType, ReasoningChunk } from './types';

export type LeakKind = 'json_preview' | 'call_syntax' | 'phrase_preview' | 'name_with_args';

export interface LeakDetector {
  id: string;
  kind: LeakKind;
  pattern: RegExp;
}

const IDENT = '`?[A-Za-z_][\\w.-]*`?';

/**
 * Phrases and literal forms that introduce or show the exact action. Each is tested
 * anywhere in the text; the earliest hit wins. Patterns have no `g` flag (stateless).
 */
export const CALL_PREVIEW_DETECTORS: readonly LeakDetector[] = [
  // Literal JSON / tag previews.
  { id: 'tool_call_tag', kind: 'json_preview', pattern: /<\/?tool_call>/i },
  { id: 'json_name_key', kind: 'json_preview', pattern: /\{\s*["']name["']\s*:/ },
  { id: 'json_arguments_key', kind: 'json_preview', pattern: /["'](?:arguments|parameters)["']\s*:\s*\{/ },
  // Function-call syntax: get_x(city="Paris") or get_x({"city": …}).
  { id: 'kwarg_call', kind: 'call_syntax', pattern: /\b[A-Za-z_][\w.]*\(\s*[A-Za-z_]\w*\s*=/ },
  { id: 'json_arg_call', kind: 'call_syntax', pattern: /\b[A-Za-z_][\w.]*\(\s*\{/ },
  // Phrases that introduce the literal action.
  {
    id: 'call_would_be',
    kind: 'phrase_preview',
    pattern:
      /\b(?:tool|function)?\s*call\s+(?:would|will|should|could|might|must)\s+(?:then\s+|therefore\s+)?(?:be|look(?:s)?\s+like)\b/i,
  },
  {
    id: 'call_is_colon',
    kind: 'phrase_preview',
    pattern:
      /\b(?:the|my)\s+(?:final\s+|exact\s+|resulting\s+|next\s+)?(?:tool\s+|function\s+)?call\s+(?:is|looks\s+like)\s*:/i,
  },
  {
    id: 'here_is_the_call',
    kind: 'phrase_preview',
    pattern: /\bhere(?:'s|\s+is)\s+(?:the|my)\s+(?:final\s+|exact\s+)?(?:tool\s+|function\s+)?call\b/i,
  },
  {
    id: 'i_will_call_x_with',
    kind: 'phrase_preview',
    pattern: new RegExp(
      String.raw`\b(?:I(?:'ll|\s+will|\s+am\s+going\s+to|'m\s+going\s+to|\s+shall|\s+should|\s+need\s+to|\s+can|\s+must)|let\s+me|let's|we(?:'ll|\s+will|\s+should|\s+can))\s+(?:now\s+|then\s+|just\s+)?(?:call|invoke|run|execute|trigger)\s+(?:the\s+)?${IDENT}\s+(?:tool\s+|function\s+|api\s+)?(?:with|using|passing)\b`,
      'i',
    ),
  },
  {
    id: 'calling_x_with',
    kind: 'phrase_preview',
    pattern: new RegExp(
      String.raw`\b(?:calling|invoking|executing|running)\s+(?:the\s+)?${IDENT}\s+(?:tool\s+|function\s+|api\s+)?(?:with|using|passing)\b`,
      'i',
    ),
  },
  {
    id: 'with_arguments_literal',
    kind: 'phrase_preview',
    pattern: /\bwith\s+(?:the\s+)?(?:arguments?|parameters?|params|args|inputs?)\s*(?:[:={(]|set\s+to\b)/i,
  },
  {
    id: 'action_label',
    kind: 'phrase_preview',
    pattern: /(?:^|\n)\s*(?:Action(?:\s+Input)?|Tool\s+call|Function\s+call|Call)\s*:/i,
  },
  {
    id: 'make_the_call',
    kind: 'phrase_preview',
    pattern:
      /\b(?:make|making|issue|issuing|emit|emitting|send|sending)\s+(?:the|this|a|my)\s+(?:following\s+)?(?:tool\s+|function\s+)?call\b/i,
  },
  {
    id: 'call_as_follows',
    kind: 'phrase_preview',
    pattern: /\b(?:call|invocation)\s+(?:as\s+follows|like\s+this|like\s+so)\b/i,
  },
];

export interface LeakHit {
  /** Start of the leaking span: the start of the sentence holding the first hit. */
  start: number;
  /** Where the detector matched. */
  matchIndex: number;
  kind: LeakKind;
  detector: string;
  matchText: string;
}

/** Index where the sentence holding position `index` starts (first non-space char). */
export function findSentenceStart(text: string, index: number): number {
  let start = 0;
  for (let i = index - 1; i >= 0; i--) {
    const ch = text[i];
    if (ch === '\n') {
      start = i + 1;
      break;
    }
    if ((ch === '.' || ch === '!' || ch === '?') && /\s/.test(text[i + 1] ?? '')) {
      start = i + 1;
      break;
    }
  }
  while (start < index && /\s/.test(text[start])) start++;
  return start;
}

/** Sentences of `text` as [start, end) ranges (line breaks and `.!?` + space split). */
export function splitSentences(text: string): Array<{ start: number; end: number }> {
  const ranges: Array<{ start: number; end: number }> = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const isBreak =
      ch === '\n' || ((ch === '.' || ch === '!' || ch === '?') && i + 1 < text.length && /\s/.test(text[i + 1]));
    if (isBreak) {
      ranges.push({ start, end: i + 1 });
      start = i + 1;
    }
  }
  if (start < text.length) ranges.push({ start, end: text.length });
  return ranges.filter((r) => text.slice(r.start, r.end).trim().length > 0);
}

/** The literal forms an argument value may take in prose (lower-cased). */
function describeValueForms(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (typeof value === 'string') return value.trim() ? [value.trim().toLowerCase()] : [];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value).toLowerCase()];
  if (Array.isArray(value)) return value.flatMap((v) => describeValueForms(v));
  if (typeof value === 'object')
    return Object.values(value as Record<string, unknown>).flatMap((v) => describeValueForms(v));
  return [];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A sentence that names the call's tool and contains every one of its argument values
 * after the name is an explicit preview ("get_weather for Paris in celsius").
 * Calls without arguments never trigger this rule (a bare name is tool selection).
 */
function findNameWithArgs(text: string, calls: readonly ToolCall[]): LeakHit | null {
  let best: LeakHit | null = null;
  for (const { start, end } of splitSentences(text)) {
    const sentence = text.slice(start, end);
    const lower = sentence.toLowerCase();
    for (const call of calls) {
      const forms = Object.values(call.arguments ?? {}).map((v) => describeValueForms(v));
      if (forms.length === 0 || forms.some((f) => f.length === 0)) continue;
      const nameMatch = new RegExp(`(?<![\\w])${escapeRegExp(call.name.toLowerCase())}(?![\\w])`).exec(lower);
      if (!nameMatch) continue;
      const after = lower.slice(nameMatch.index + nameMatch[0].length);
      if (forms.every((valueForms) => valueForms.every((form) => after.includes(form)))) {
        const hit: LeakHit = {
          start: findSentenceStart(text, start + nameMatch.index),
          matchIndex: start + nameMatch.index,
          kind: 'name_with_args',
          detector: 'name_with_all_args',
          matchText: sentence.trim(),
        };
        if (!best || hit.start < best.start) best = hit;
      }
    }
    if (best) break; // sentences are in order: the first leaking sentence wins
  }
  return best;
}

/**
 * Finds the first explicit call preview in `text`, or null.
 * `calls` are the turn's actual calls (for the name-with-all-values rule).
 */
export function findLeak(text: string, calls: readonly ToolCall[] = []): LeakHit | null {
  let best: LeakHit | null = null;
  for (const detector of CALL_PREVIEW_DETECTORS) {
    const match = detector.pattern.exec(text);
    if (!match) continue;
    // action_label may match the preceding newline: point at the label itself.
    const matchIndex = match.index + (match[0].length - match[0].trimStart().length);
    const hit: LeakHit = {
      start: findSentenceStart(text, matchIndex),
      matchIndex,
      kind: detector.kind,
      detector: detector.id,
      matchText: match[0].trim(),
    };
    if (!best || hit.start < best.start || (hit.start === best.start && hit.matchIndex < best.matchIndex)) best = hit;
  }
  const byArgs = findNameWithArgs(text, calls);
  if (byArgs && (!best || byArgs.start < best.start)) best = byArgs;
  return best;
}

/** A chunk as a [start, end) range of the turn's reasoning text, before ids are given. */
export interface ChunkSpan {
  type: ChunkType;
  start: number;
  end: number;
}

/**
 * Applies a leak to contiguous spans covering `reasoning`: the span holding
 * `leakStart` is cut there, the tail becomes `explicit_call_preview`, and every span
 * from the first preview on (including spans already typed `explicit_call_preview`)
 * gets keepForPrefix = false. Returns chunks with ids C1, C2, …
 */
export function buildChunksWithLeak(
  reasoning: string,
  spans: readonly ChunkSpan[],
  leakStart: number | null,
): ReasoningChunk[] {
  const cut: ChunkSpan[] = [];
  for (const span of spans) {
    if (leakStart !== null && leakStart > span.start && leakStart < span.end) {
      cut.push({ type: span.type, start: span.start, end: leakStart });
      cut.push({ type: 'explicit_call_preview', start: leakStart, end: span.end });
    } else if (leakStart !== null && leakStart === span.start) {
      cut.push({ type: 'explicit_call_preview', start: span.start, end: span.end });
    } else {
      cut.push({ ...span });
    }
  }
  let isLeaked = false;
  return cut
    .filter((s) => s.end > s.start)
    .map((s, i) => {
      if (s.type === 'explicit_call_preview') isLeaked = true;
      return { id: `C${i + 1}`, type: s.type, text: reasoning.slice(s.start, s.end), keepForPrefix: !isLeaked };
    });
}
