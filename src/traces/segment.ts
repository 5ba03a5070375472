/**
 * Hybrid segmentation of unlabeled expert turns (PACT App. C, "Hybrid segmentation of
 * expert traces" and "LLM segmentation prompt"):
 *   1. normalise role noise and whitespace, split the reasoning into paragraphs;
 *   2. deterministic rules: each paragraph (up to the first leak) is typed by keyword
 *      rules; when every such paragraph matches, the turn is "structurally simple";
 *   3. otherwise an optional LLM annotator returns the paper's JSON schema, validated
 *      with zod and checked (contiguous chunks in order, exact cut anchors);
 *   4. on any failure, a conservative fallback: one `other` chunk per paragraph.
 *
 * Simplifications: the rules are English keyword patterns tuned to teacher-style
 * reasoning (the earliest matching phrase in a paragraph decides its type; ties go to
 * the rule listed first); `cleaning_actions`, `summary`, `hint_strength` and
 * `quality_flags` are validated but not used. Leak cuts and prefix levels: docs/traces.md.
 */
import { z } from 'zod';
import type { ToolCall } from '../core/types';
import { buildChunksWithLeak, findLeak, type ChunkSpan } from './leakage';
import {
  computePrefixChunkCounts,
  countSafeChunks,
  describePrefixCountsError,
  type PrefixChunkCounts,
} from './prefixLevels';
import { CHUNK_TYPES, type ChunkType, type ExpertTrace, type TraceTurn } from './types';

/** A turn as imported: reasoning text without chunk labels. */
export interface RawTurn {
  reasoning: string;
  calls: ToolCall[];
  observations: string[];
}

export interface RawTrace {
  taskId: string;
  turns: RawTurn[];
  finalAnswer?: string;
}

// ---------------------------------------------------------------------------
// Normalisation and paragraphs

/**
 * Removes role noise (`<|im_start|>assistant`, `<|im_end|>`, `<think>` tags, a leading
 * `assistant:` marker), unifies line breaks, strips trailing spaces on each line,
 * collapses runs of blank lines to one, and trims.
 */
export function normalizeReasoning(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/<\|im_start\|>\s*(?:assistant|user|system|tool)?/gi, '')
    .replace(/<\|im_end\|>|<\|endoftext\|>/gi, '')
    .replace(/<\/?think>/gi, '')
    .replace(/^\s*(?:assistant|Assistant|ASSISTANT)\s*:\s*/, '')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export interface Paragraph {
  id: number;
  /** [start, end) in the normalised reasoning; end includes the trailing separator. */
  start: number;
  end: number;
  /** The paragraph text without its trailing separator. */
  text: string;
}

/** Splits normalised reasoning on blank lines; spans cover the text exactly. */
export function splitParagraphs(reasoning: string): Paragraph[] {
  if (reasoning.length === 0) return [];
  const paragraphs: Paragraph[] = [];
  const separator = /\n[ \t]*\n\s*/g;
  let start = 0;
  let match: RegExpExecArray | null;
  while ((match = separator.exec(reasoning)) !== null) {
    const end = match.index + match[0].length;
    paragraphs.push({ id: paragraphs.length, start, end, text: reasoning.slice(start, match.index) });
    start = end;
  }
  if (start < reasoning.length)
    paragraphs.push({ id: paragraphs.length, start, end: reasoning.length, text: reasoning.slice(start) });
  return paragraphs;
}

// ---------------------------------------------------------------------------
// Deterministic rules

export interface SegmentRule {
  type: Exclude<ChunkType, 'explicit_call_preview' | 'other'>;
  patterns: RegExp[];
}

/** Keyword rules, in tie-break priority order. */
export const SEGMENT_RULES: readonly SegmentRule[] = [
  {
    type: 'failure_reflection',
    patterns: [
      /\b(?:failed|did not work|didn't work|did not give|returned an error|went wrong|was rejected|unsuccessful)\b/i,
      /\bthat (?:call )?(?:did not|didn't) (?:succeed|work)\b/i,
    ],
  },
  {
    type: 'fallback_plan',
    patterns: [
      /\b(?:instead|plan b|try again|retry|fall\s?back|as an alternative|another approach|correct the call)\b/i,
    ],
  },
  {
    type: 'final_answer_grounding',
    patterns: [
      /\b(?:the (?:final )?answer is|based on the (?:results|observations?|responses?)|putting the observations together|that answers the question|(?:this|that) is the final answer|I now have (?:everything|all)[^.]* to answer)\b/i,
    ],
  },
  {
    type: 'irrelevant_tool_rejection',
    patterns: [
      /\b(?:not relevant|irrelevant|rule out|do(?:es)? not fit|do(?:es)? not help|set (?:it|them) aside|not needed here|can (?:be )?ignored?)\b/i,
    ],
  },
  {
    type: 'tool_scan',
    patterns: [
      /\b(?:available tools|tools I have|tool list|the tools (?:are|provided)|I have access to|the following tools)\b/i,
    ],
  },
  {
    type: 'tool_selection',
    patterns: [
      /\b(?:right tools? for|should use|best fit|I(?:'ll| will) use|the (?:appropriate|suitable|correct|relevant) tool|I (?:choose|pick|select))\b/i,
    ],
  },
  {
    type: 'optional_arg_analysis',
    patterns: [/\b(?:optional (?:arguments?|parameters?|inputs?)|(?:is|are) optional|its default|the default)\b/i],
  },
  {
    type: 'required_arg_grounding',
    patterns: [
      /\b(?:required (?:arguments?|parameters?|inputs?)|grounding|the question gives|needs? (?:the|an?) (?:argument|parameter))\b/i,
    ],
  },
  {
    type: 'decision_summary',
    patterns: [/(?:^|\b)(?:in summary|to sum up|summing up|decision:|so the plan is|the plan is)/i],
  },
  {
    type: 'task_restate',
    patterns: [
      /\b(?:the question asks|restate|the user wants|back to the task|progress check|the task is|I need to (?:find|determine|figure out|work out)|the goal is|we need to find)\b/i,
    ],
  },
];

/** The chunk type the rules give a paragraph, or null when no rule matches. */
export function classifyParagraph(text: string): ChunkType | null {
  let bestType: ChunkType | null = null;
  let bestIndex = Infinity;
  for (const rule of SEGMENT_RULES) {
    for (const pattern of rule.patterns) {
      const match = pattern.exec(text);
      // Strictly earlier wins; on a tie the rule listed first (already held) stays.
      if (match && match.index < bestIndex) {
        bestType = rule.type;
        bestIndex = match.index;
      }
    }
  }
  return bestType;
}

// ---------------------------------------------------------------------------
// Turn assembly

export type SegmentMethod = 'rules' | 'llm' | 'fallback';

export interface TurnSegmentation {
  turn: TraceTurn;
  method: SegmentMethod;
  turnPattern?: TurnPattern;
  /** Why the fallback was used (only for method 'fallback'). */
  fallbackReason?: string;
  /** Non-fatal remarks (e.g. annotator levels replaced by the default rule). */
  notes: string[];
}

function assembleTurn(reasoning: string, spans: ChunkSpan[], raw: RawTurn, counts?: PrefixChunkCounts): TraceTurn {
  const leak = findLeak(reasoning, raw.calls);
  const chunks = buildChunksWithLeak(reasoning, spans, leak ? leak.start : null);
  const prefixChunkCounts = counts ?? computePrefixChunkCounts(countSafeChunks(chunks));
  return { reasoning, chunks, calls: raw.calls, observations: raw.observations, prefixChunkCounts };
}

/** Rule segmentation, or the index of the first paragraph (before any leak) no rule types. */
export function segmentTurnByRules(raw: RawTurn): { turn: TraceTurn } | { unmatchedParagraph: number } {
  const reasoning = normalizeReasoning(raw.reasoning);
  const paragraphs = splitParagraphs(reasoning);
  const leak = findLeak(reasoning, raw.calls);
  const leakStart = leak ? leak.start : Infinity;
  const spans: ChunkSpan[] = [];
  for (const p of paragraphs) {
    if (p.start >= leakStart) {
      // After the leak nothing is revealed: type it if we can, never required.
      spans.push({ type: classifyParagraph(p.text) ?? 'other', start: p.start, end: p.end });
      continue;
    }
    const visibleText = reasoning.slice(p.start, Math.min(p.end, leakStart));
    const type = classifyParagraph(visibleText);
    if (type === null) return { unmatchedParagraph: p.id };
    spans.push({ type, start: p.start, end: p.end });
  }
  return { turn: assembleTurn(reasoning, spans, raw) };
}

/** Conservative fallback: one `other` chunk per paragraph, leakage still cut. */
export function segmentTurnFallback(raw: RawTurn): TraceTurn {
  const reasoning = normalizeReasoning(raw.reasoning);
  const spans = splitParagraphs(reasoning).map((p): ChunkSpan => ({ type: 'other', start: p.start, end: p.end }));
  return assembleTurn(reasoning, spans, raw);
}

// ---------------------------------------------------------------------------
// LLM annotator (the paper's JSON schema)

export const TURN_PATTERNS = [
  'initial_attempt',
  'compare_then_call',
  'retry_after_failed_call',
  'post_observation_followup',
  'final_answer_turn',
  'other',
] as const;
export type TurnPattern = (typeof TURN_PATTERNS)[number];

const chunkTypeSchema = z.enum(CHUNK_TYPES as unknown as [ChunkType, ...ChunkType[]]);

/** zod schema of the annotator's answer (PACT App. C, "Return JSON following this schema"). */
export const annotationSchema = z.object({
  turn_pattern: z.enum(TURN_PATTERNS),
  cleaning_actions: z.array(z.object({ type: z.string(), detail: z.string().optional() })).optional(),
  chunks: z
    .array(
      z.object({
        chunk_id: z.string().min(1),
        chunk_type: chunkTypeSchema,
        paragraph_ids: z.array(z.number().int().nonnegative()).min(1),
        split_paragraph_id: z.number().int().nonnegative().nullable().optional(),
        cut_before_text: z.string().nullable().optional(),
        summary: z.string().optional(),
        keep_for_prefix: z.boolean().optional(),
        hint_strength: z.enum(['weak', 'medium', 'strong']).optional(),
      }),
    )
    .min(1),
  dangerous_spans: z
    .array(
      z.object({ type: z.string(), paragraph_id: z.number().int().nonnegative(), cut_before_text: z.string().min(1) }),
    )
    .optional(),
  recommended_prefix_levels: z
    .array(z.object({ level: z.enum(['L0', 'L1', 'L2', 'L3', 'L4']), visible_chunks: z.array(z.string()) }))
    .optional(),
  quality_flags: z.array(z.string()).optional(),
});
export type TurnAnnotation = z.infer<typeof annotationSchema>;

/** What the annotator sees: one turn, its paragraphs by id, and its calls. */
export interface AnnotatorInput {
  turnIndex: number;
  reasoning: string;
  paragraphs: Array<{ id: number; text: string }>;
  calls: ToolCall[];
}

/** Returns the annotator's answer: a JSON string or an already parsed object. */
export type LlmAnnotator = (turn: AnnotatorInput) => Promise<unknown>;

type AnnotationResult =
  { ok: true; turn: TraceTurn; turnPattern: TurnPattern; notes: string[] } | { ok: false; reason: string };

/**
 * Converts an annotator answer into a turn, or says why it is invalid.
 * A chunk with `split_paragraph_id` p starts inside paragraph p at the exact text
 * `cut_before_text` (the previous chunk ends just before it), so p must be both the
 * previous chunk's last paragraph and this chunk's first.
 */
export function applyAnnotation(raw: RawTurn, answer: unknown): AnnotationResult {
  let parsed: unknown = answer;
  if (typeof answer === 'string') {
    try {
      parsed = JSON.parse(answer);
    } catch (err) {
      return { ok: false, reason: `bad JSON: ${(err as Error).message}` };
    }
  }
  const result = annotationSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    return { ok: false, reason: `schema: ${issue.path.join('.') || '(root)'}: ${issue.message}` };
  }
  const annotation = result.data;
  const reasoning = normalizeReasoning(raw.reasoning);
  const paragraphs = splitParagraphs(reasoning);
  const paragraphCount = paragraphs.length;
  if (paragraphCount === 0) return { ok: false, reason: 'turn has no reasoning paragraphs to annotate' };

  const seenIds = new Set<string>();
  const starts: number[] = [];
  for (let k = 0; k < annotation.chunks.length; k++) {
    const chunk = annotation.chunks[k];
    const where = `chunks.${k} (${chunk.chunk_id})`;
    if (seenIds.has(chunk.chunk_id)) return { ok: false, reason: `${where}: duplicate chunk_id` };
    seenIds.add(chunk.chunk_id);
    const ids = chunk.paragraph_ids;
    for (let j = 0; j < ids.length; j++) {
      if (ids[j] >= paragraphCount)
        return { ok: false, reason: `${where}: paragraph id ${ids[j]} out of range (0..${paragraphCount - 1})` };
      if (j > 0 && ids[j] !== ids[j - 1] + 1)
        return { ok: false, reason: `${where}: paragraph_ids ${JSON.stringify(ids)} are not contiguous` };
    }
    const split = chunk.split_paragraph_id ?? null;
    const cutText = chunk.cut_before_text ?? null;
    if ((split === null) !== (cutText === null || cutText === '')) {
      return { ok: false, reason: `${where}: split_paragraph_id and cut_before_text must be given together` };
    }
    if (split === null) {
      const expectedFirst = k === 0 ? 0 : annotation.chunks[k - 1].paragraph_ids.at(-1)! + 1;
      if (ids[0] !== expectedFirst) {
        return {
          ok: false,
          reason: `${where}: chunks are not contiguous (starts at paragraph ${ids[0]}, expected ${expectedFirst})`,
        };
      }
      starts.push(paragraphs[ids[0]].start);
    } else {
      const previousLast = k === 0 ? 0 : annotation.chunks[k - 1].paragraph_ids.at(-1)!;
      if (split !== ids[0] || split !== previousLast) {
        return {
          ok: false,
          reason: `${where}: split_paragraph_id ${split} must be this chunk's first paragraph and the previous chunk's last`,
        };
      }
      const paragraph = paragraphs[split];
      const from = k > 0 && starts[k - 1] > paragraph.start ? starts[k - 1] - paragraph.start + 1 : 0;
      const offset = paragraph.text.indexOf(cutText!, from);
      if (offset === -1)
        return {
          ok: false,
          reason: `${where}: cut_before_text ${JSON.stringify(cutText)} not found in paragraph ${split}`,
        };
      if (k === 0 && offset !== 0)
        return { ok: false, reason: `${where}: the first chunk cannot start inside paragraph ${split}` };
      starts.push(paragraph.start + offset);
    }
    if (k > 0 && starts[k] <= starts[k - 1]) return { ok: false, reason: `${where}: chunk starts are not in order` };
  }
  const lastParagraph = annotation.chunks.at(-1)!.paragraph_ids.at(-1)!;
  if (lastParagraph !== paragraphCount - 1) {
    return {
      ok: false,
      reason: `chunks end at paragraph ${lastParagraph} but the turn has ${paragraphCount} paragraphs`,
    };
  }

  // Dangerous spans and chunks the annotator keeps out of the prefix are leaks too.
  const leakStarts: number[] = [];
  for (const [i, span] of (annotation.dangerous_spans ?? []).entries()) {
    const paragraph = paragraphs[span.paragraph_id];
    if (!paragraph) return { ok: false, reason: `dangerous_spans.${i}: paragraph ${span.paragraph_id} out of range` };
    const offset = paragraph.text.indexOf(span.cut_before_text);
    if (offset === -1)
      return { ok: false, reason: `dangerous_spans.${i}: cut_before_text not found in paragraph ${span.paragraph_id}` };
    leakStarts.push(paragraph.start + offset);
  }
  annotation.chunks.forEach((chunk, k) => {
    if (chunk.chunk_type === 'explicit_call_preview' || chunk.keep_for_prefix === false) leakStarts.push(starts[k]);
  });
  const detected = findLeak(reasoning, raw.calls);
  if (detected) leakStarts.push(detected.start);
  const leakStart = leakStarts.length > 0 ? Math.min(...leakStarts) : null;

  const spans: ChunkSpan[] = annotation.chunks.map((chunk, k) => ({
    type: chunk.chunk_type,
    start: starts[k],
    end: k + 1 < starts.length ? starts[k + 1] : reasoning.length,
  }));
  const chunks = buildChunksWithLeak(reasoning, spans, leakStart);

  // Recommended levels: valid only as left prefixes (in the annotator's chunk order)
  // within the safe chunks; otherwise the default rule.
  const notes: string[] = [];
  let counts = computePrefixChunkCounts(countSafeChunks(chunks));
  if (annotation.recommended_prefix_levels) {
    const order = annotation.chunks.map((c) => c.chunk_id);
    const recommended = [0, 0, 0, 0, 0];
    let problem: string | null = null;
    const seenLevels = new Set<string>();
    for (const { level, visible_chunks } of annotation.recommended_prefix_levels) {
      seenLevels.add(level);
      const isPrefix = visible_chunks.every((id, j) => order[j] === id);
      if (!isPrefix)
        problem = `${level} visible_chunks ${JSON.stringify(visible_chunks)} is not a left prefix of the chunks`;
      recommended[Number(level.slice(1))] = visible_chunks.length;
    }
    if (seenLevels.size !== 5) problem ??= 'recommended_prefix_levels must list L0..L4';
    problem ??= describePrefixCountsError(recommended, chunks);
    if (problem) notes.push(`annotator levels ignored: ${problem}`);
    else counts = recommended as PrefixChunkCounts;
  }
  return {
    ok: true,
    turn: { reasoning, chunks, calls: raw.calls, observations: raw.observations, prefixChunkCounts: counts },
    turnPattern: annotation.turn_pattern,
    notes,
  };
}

export interface SegmentOptions {
  annotator?: LlmAnnotator;
  /** Index of the turn in its trace (passed to the annotator). */
  turnIndex?: number;
}

/** Rules → annotator → fallback, for one turn. Never throws on bad annotator output. */
export async function segmentTurn(raw: RawTurn, options: SegmentOptions = {}): Promise<TurnSegmentation> {
  const byRules = segmentTurnByRules(raw);
  if ('turn' in byRules) return { turn: byRules.turn, method: 'rules', notes: [] };
  const ruleMiss = `paragraph ${byRules.unmatchedParagraph} matched no rule`;
  if (!options.annotator) {
    return {
      turn: segmentTurnFallback(raw),
      method: 'fallback',
      fallbackReason: `${ruleMiss}; no annotator`,
      notes: [],
    };
  }
  const reasoning = normalizeReasoning(raw.reasoning);
  const input: AnnotatorInput = {
    turnIndex: options.turnIndex ?? 0,
    reasoning,
    paragraphs: splitParagraphs(reasoning).map((p) => ({ id: p.id, text: p.text })),
    calls: raw.calls,
  };
  let answer: unknown;
  try {
    answer = await options.annotator(input);
  } catch (err) {
    return {
      turn: segmentTurnFallback(raw),
      method: 'fallback',
      fallbackReason: `annotator threw: ${(err as Error)?.message ?? String(err)}`,
      notes: [],
    };
  }
  const applied = applyAnnotation(raw, answer);
  if (!applied.ok) {
    return {
      turn: segmentTurnFallback(raw),
      method: 'fallback',
      fallbackReason: `annotator answer invalid: ${applied.reason}`,
      notes: [],
    };
  }
  return { turn: applied.turn, method: 'llm', turnPattern: applied.turnPattern, notes: applied.notes };
}

/** Segments every turn of an imported trace. The result is unverified (see verify.ts). */
export async function segmentTrace(
  raw: RawTrace,
  options: Omit<SegmentOptions, 'turnIndex'> = {},
): Promise<{ trace: ExpertTrace; reports: TurnSegmentation[] }> {
  const reports: TurnSegmentation[] = [];
  for (let t = 0; t < raw.turns.length; t++)
    reports.push(await segmentTurn(raw.turns[t], { ...options, turnIndex: t }));
  const trace: ExpertTrace = {
    taskId: raw.taskId,
    turns: reports.map((r) => r.turn),
    source: 'imported',
    verified: false,
  };
  if (raw.finalAnswer !== undefined) trace.finalAnswer = raw.finalAnswer;
  return { trace, reports };
}
