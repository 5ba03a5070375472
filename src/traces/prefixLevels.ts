/**
 * Prefix levels L0–L4 over semantic reasoning chunks (PACT §3.3 "Annealed Reasoning
 * Supervision" and App. C "Prefix-reasoning construction"): five cumulative levels per
 * turn; L0 reveals nothing, L4 the strongest safe prefix before explicit tool-call
 * leakage. Training anneals L4 → L3 → L2 → L1 → L0.
 * Rule (S = number of safe chunks = chunks before the first chunk that is an
 * `explicit_call_preview` or has keepForPrefix false):
 *   L0 = 0, L4 = S, and for k = 1..3
 *     S ≥ 4:  L_k = k                  (the paper's example: L_k shows C1..C_k)
 *     S < 4:  L_k = ceil(k · S / 4)    (spread the few chunks evenly; S = 4 gives 1,2,3
 *                                       under both branches, so the rule is continuous)
 *
 * Simplification: the paper leaves the level boundaries to the annotator's
 * `recommended_prefix_levels`; this rule is what we use when none are given (docs/traces.md).
 */
import type { PrefixLevel, ReasoningChunk, TraceTurn } from './types';

export const PREFIX_LEVELS: readonly PrefixLevel[] = [0, 1, 2, 3, 4] as const;

export type PrefixChunkCounts = [number, number, number, number, number];

/** Number of leading chunks that may be revealed: those before the first leak. */
export function countSafeChunks(chunks: readonly Pick<ReasoningChunk, 'type' | 'keepForPrefix'>[]): number {
  const firstUnsafe = chunks.findIndex((c) => !c.keepForPrefix || c.type === 'explicit_call_preview');
  return firstUnsafe === -1 ? chunks.length : firstUnsafe;
}

/** The L0..L4 cumulative chunk counts for a turn with `safeChunkCount` safe chunks. */
export function computePrefixChunkCounts(safeChunkCount: number): PrefixChunkCounts {
  if (!Number.isInteger(safeChunkCount) || safeChunkCount < 0) {
    throw new Error(`computePrefixChunkCounts: safeChunkCount must be a non-negative integer, got ${safeChunkCount}`);
  }
  const s = safeChunkCount;
  const middle = [1, 2, 3].map((k) => (s >= 4 ? k : Math.ceil((k * s) / 4)));
  return [0, middle[0], middle[1], middle[2], s];
}

/** Returns the turn with `prefixChunkCounts` recomputed from its chunks. */
export function assignPrefixLevels<T extends Pick<TraceTurn, 'chunks'>>(
  turn: T,
): T & { prefixChunkCounts: PrefixChunkCounts } {
  return { ...turn, prefixChunkCounts: computePrefixChunkCounts(countSafeChunks(turn.chunks)) };
}

/**
 * Why `counts` are not valid prefix levels for `chunks`, or null when they are:
 * five non-negative integers, L0 = 0, non-decreasing, L4 ≤ number of safe chunks.
 */
export function describePrefixCountsError(
  counts: readonly number[],
  chunks: readonly Pick<ReasoningChunk, 'type' | 'keepForPrefix'>[],
): string | null {
  if (!Array.isArray(counts) || counts.length !== 5)
    return `prefixChunkCounts must have 5 entries (L0..L4), got ${Array.isArray(counts) ? counts.length : typeof counts}`;
  for (let level = 0; level < 5; level++) {
    if (!Number.isInteger(counts[level]) || counts[level] < 0)
      return `prefixChunkCounts[${level}] must be a non-negative integer, got ${counts[level]}`;
  }
  if (counts[0] !== 0) return `prefixChunkCounts[0] (L0) must be 0, got ${counts[0]}`;
  for (let level = 1; level < 5; level++) {
    if (counts[level] < counts[level - 1])
      return `prefixChunkCounts must not decrease: L${level}=${counts[level]} < L${level - 1}=${counts[level - 1]}`;
  }
  const safe = countSafeChunks(chunks);
  if (counts[4] > safe)
    return `prefixChunkCounts[4] (L4) = ${counts[4]} passes the ${safe} safe chunk(s) before the first leak`;
  return null;
}

/**
 * The reasoning text revealed at `level`: the first prefixChunkCounts[level] chunks,
 * concatenated exactly as they appear in `turn.reasoning`, with the trailing paragraph
 * separator (whitespace) removed. Level 0 gives ''. Throws when the level or the
 * stored counts are invalid, so a leak can never be revealed by corrupt data.
 */
export function revealPrefix(turn: Pick<TraceTurn, 'chunks' | 'prefixChunkCounts'>, level: PrefixLevel): string {
  if (!PREFIX_LEVELS.includes(level)) throw new Error(`revealPrefix: level must be one of 0..4, got ${String(level)}`);
  const problem = describePrefixCountsError(turn.prefixChunkCounts, turn.chunks);
  if (problem) throw new Error(`revealPrefix: ${problem}`);
  return turn.chunks
    .slice(0, turn.prefixChunkCounts[level])
    .map((c) => c.text)
    .join('')
    .trimEnd();
}
