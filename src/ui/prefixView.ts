/**
 * The Prefix levels panel's view of one turn at a prefix level (PACT App. C
 * "Prefix-reasoning construction"): every chunk with its type, whether level L reveals
 * it (the first prefixChunkCounts[L] chunks, `revealPrefix`), and whether it is hidden
 * from every level (leakage: `explicit_call_preview`, keepForPrefix false, and any
 * chunk after it); plus the trace picker's words. Light on purpose: the generator and
 * the teacher (traceExamples.ts) load lazily.
 */
import type { Task, TaskCategory } from '../envs/types';
import { PREFIX_LEVELS, countSafeChunks, revealPrefix } from '../traces/prefixLevels';
import type { ChunkType, ExpertTrace, PrefixLevel, TraceTurn } from '../traces/types';

/** How many tasks the picker offers (3 of each of the four categories). */
export const EXAMPLE_TASK_COUNT = 12;

/** Parses the seed box: a whole number ≥ 0, or an error in words. */
export function parseSeedText(text: string): { seed: number } | { error: string } {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return { error: `Seed must be a whole number ≥ 0 (got "${text}")` };
  const seed = Number(trimmed);
  if (!Number.isSafeInteger(seed)) return { error: `Seed is too large (got ${trimmed})` };
  return { seed };
}

/** Short words per category for the picker. */
export const CATEGORY_LABELS: Readonly<Record<TaskCategory, string>> = {
  single_hop: 'single hop',
  multi_hop: 'multi hop',
  parallel_single_hop: 'parallel single hop',
  parallel_multi_hop: 'parallel multi hop',
};

/** "#3 parallel multi hop — What is …" (question clipped to `maxChars`). */
export function describeTaskOption(task: Task, index: number, maxChars = 70): string {
  const q = task.question.replace(/\s+/g, ' ').trim();
  const clipped = q.length > maxChars ? `${q.slice(0, maxChars - 1)}…` : q;
  return `#${index} ${CATEGORY_LABELS[task.category]} — ${clipped}`;
}

/** How a chunk stands at a level. */
export type ChunkStatus = 'revealed' | 'hidden-at-level' | 'leak' | 'after-leak';

export interface ChunkView {
  index: number;
  id: string;
  type: ChunkType;
  /** The chunk type in words ("required arg grounding"). */
  typeLabel: string;
  text: string;
  status: ChunkStatus;
  /** The label shown beside the chunk: what the level does with it. */
  statusLabel: string;
}

export interface TurnLevelView {
  turn: number;
  chunks: ChunkView[];
  /** prefixChunkCounts of the turn (L0..L4). */
  counts: readonly number[];
  /** Chunks the level reveals = counts[level]. */
  revealedCount: number;
  /** Chunks before the first leak (= counts[4] by construction). */
  safeCount: number;
  /** Exactly revealPrefix(turn, level). */
  revealedText: string;
}

/** "required_arg_grounding" → "required arg grounding". */
export function formatChunkType(type: ChunkType): string {
  return type.replace(/_/g, ' ');
}

/**
 * One turn at prefix level L: each chunk's status and label, and the exact revealed
 * text. Throws (from revealPrefix) when the turn's counts are corrupt, so a leak is
 * never shown as revealed.
 */
export function viewTurnAtLevel(turn: TraceTurn, turnIndex: number, level: PrefixLevel): TurnLevelView {
  if (!PREFIX_LEVELS.includes(level)) throw new Error(`level must be one of 0..4, got ${String(level)}`);
  const revealedText = revealPrefix(turn, level);
  const revealedCount = turn.prefixChunkCounts[level];
  const safeCount = countSafeChunks(turn.chunks);
  const chunks = turn.chunks.map((c, i): ChunkView => {
    let status: ChunkStatus;
    if (i < revealedCount) status = 'revealed';
    else if (c.type === 'explicit_call_preview') status = 'leak';
    else if (i >= safeCount) status = 'after-leak';
    else status = 'hidden-at-level';
    const statusLabel = {
      revealed: `shown at L${level}`,
      'hidden-at-level': `hidden at L${level}`,
      leak: 'leak: hidden from every level',
      'after-leak': 'after a leak: hidden from every level',
    }[status];
    return { index: i, id: c.id, type: c.type, typeLabel: formatChunkType(c.type), text: c.text, status, statusLabel };
  });
  return { turn: turnIndex, chunks, counts: turn.prefixChunkCounts, revealedCount, safeCount, revealedText };
}

/** Totals over a trace at a level: chunks revealed, safe chunks, leaking chunks. */
export function summarizeTraceAtLevel(
  trace: ExpertTrace,
  level: PrefixLevel,
): { revealed: number; safe: number; leaks: number; chunks: number } {
  let revealed = 0;
  let safe = 0;
  let leaks = 0;
  let chunks = 0;
  for (const turn of trace.turns) {
    revealed += turn.prefixChunkCounts[level];
    safe += countSafeChunks(turn.chunks);
    leaks += turn.chunks.filter((c) => c.type === 'explicit_call_preview').length;
    chunks += turn.chunks.length;
  }
  return { revealed, safe, leaks, chunks };
}
