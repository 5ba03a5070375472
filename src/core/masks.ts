/**
 * The component-aware supervision mask m_{i,n}(s) of PACT Eq. (sft-mask), derived
 * from the token tags of an expert trace (masks travel with tokens):
 *
 *   m_n = 1      on the active reasoning prefix R_i(s),
 *         λa(s)  on complete tool-call spans A_i,
 *         0      elsewhere (prompt, observation, answer, control tokens).
 *
 * R_i(s) at segment level L: a reasoning token of turn t with chunk index
 * tag.segment < prefixChunkCounts[t][L] (src/traces: cumulative levels L0..L4, L0 = 0
 * chunks, never past the first leaking chunk). The token-count variants of App. D
 * ("Token A", "Full Token A") keep the first floor(f·N) tokens instead; they never
 * reach past the L4 safe prefix either.
 */
import type { TokenTag } from './types';
import { MAX_PREFIX_LEVEL, type ReasoningSupervision, type ToolCallSupervision } from './schedules';

export interface ComponentSupervision {
  reasoning: ReasoningSupervision;
  toolCall: ToolCallSupervision;
}

function checkFraction(fraction: number, where: string): void {
  if (!(fraction >= 0 && fraction <= 1)) throw new Error(`${where}: fraction must be in [0, 1], got ${fraction}`);
}

function checkInputs(
  tags: readonly TokenTag[],
  prefixChunkCounts: readonly (readonly number[])[],
  where: string,
): void {
  if (!Array.isArray(tags)) throw new Error(`${where}: tags must be an array of TokenTag`);
  if (!Array.isArray(prefixChunkCounts))
    throw new Error(`${where}: prefixChunkCounts must be an array (one row per turn)`);
  prefixChunkCounts.forEach((counts, t) => {
    const isValid =
      Array.isArray(counts) &&
      counts.length === MAX_PREFIX_LEVEL + 1 &&
      counts.every((c, l) => Number.isInteger(c) && c >= 0 && (l === 0 ? c === 0 : c >= counts[l - 1]));
    if (!isValid) {
      throw new Error(
        `${where}: prefixChunkCounts[${t}] must be 5 non-decreasing integers starting at 0, got ${JSON.stringify(counts)}`,
      );
    }
  });
  tags.forEach((tag, n) => {
    if (!tag || typeof tag.kind !== 'string') throw new Error(`${where}: tags[${n}] has no kind`);
    if (tag.kind === 'reasoning') {
      if (!Number.isInteger(tag.segment) || (tag.segment as number) < 0) {
        throw new Error(`${where}: tags[${n}] is reasoning but has no segment index`);
      }
      if (!Number.isInteger(tag.turn) || tag.turn < 0 || tag.turn >= prefixChunkCounts.length) {
        throw new Error(
          `${where}: tags[${n}].turn = ${tag.turn} has no prefixChunkCounts row (${prefixChunkCounts.length} turns)`,
        );
      }
    }
  });
}

/** True for a reasoning token inside its turn's L4 safe prefix. */
function isSafeReasoning(tag: TokenTag, prefixChunkCounts: readonly (readonly number[])[]): boolean {
  return tag.kind === 'reasoning' && (tag.segment as number) < prefixChunkCounts[tag.turn][MAX_PREFIX_LEVEL];
}

/** Maximal runs of tokens that pass `isMember` and share a turn: [start, end) pairs. */
function findRuns(tags: readonly TokenTag[], isMember: (tag: TokenTag) => boolean): [number, number][] {
  const runs: [number, number][] = [];
  let start = -1;
  for (let n = 0; n <= tags.length; n++) {
    const isIn = n < tags.length && isMember(tags[n]);
    if (start >= 0 && (!isIn || tags[n].turn !== tags[start].turn)) {
      runs.push([start, n]);
      start = -1;
    }
    if (isIn && start < 0) start = n;
  }
  return runs;
}

/** Indices of the tokens passing `isMember`, grouped by turn, in token order. */
function groupByTurn(tags: readonly TokenTag[], isMember: (tag: TokenTag) => boolean): Map<number, number[]> {
  const byTurn = new Map<number, number[]>();
  tags.forEach((tag, n) => {
    if (!isMember(tag)) return;
    const list = byTurn.get(tag.turn) ?? [];
    list.push(n);
    byTurn.set(tag.turn, list);
  });
  return byTurn;
}

/** Sets weight 1 on the first floor(fraction·N) indices of each group. */
function keepLeading(mask: number[], groups: Iterable<number[]>, fraction: number): void {
  for (const indices of groups) {
    const nKeep = Math.floor(fraction * indices.length + 1e-9);
    for (let k = 0; k < nKeep; k++) mask[indices[k]] = 1;
  }
}

/**
 * m_{i,n}(s) for one expert trace, PACT Eq. (sft-mask).
 * @param tags [N] token tags of the trace
 * @param prefixChunkCounts [turns][5] chunks revealed at L0..L4, per turn
 * @returns [N] weights
 */
export function buildComponentMask(
  tags: readonly TokenTag[],
  prefixChunkCounts: readonly (readonly number[])[],
  { reasoning, toolCall }: ComponentSupervision,
): number[] {
  checkInputs(tags, prefixChunkCounts, 'buildComponentMask');
  const mask = new Array<number>(tags.length).fill(0);

  if (reasoning.kind === 'prefix-level') {
    const level = reasoning.level;
    if (!Number.isInteger(level) || level < 0 || level > MAX_PREFIX_LEVEL) {
      throw new Error(`buildComponentMask: reasoning level must be an integer in 0..${MAX_PREFIX_LEVEL}, got ${level}`);
    }
    tags.forEach((tag, n) => {
      if (tag.kind === 'reasoning' && (tag.segment as number) < prefixChunkCounts[tag.turn][level]) mask[n] = 1;
    });
  } else if (reasoning.kind === 'token-fraction') {
    checkFraction(reasoning.fraction, 'buildComponentMask reasoning');
    keepLeading(mask, groupByTurn(tags, (tag) => isSafeReasoning(tag, prefixChunkCounts)).values(), reasoning.fraction);
  } else {
    throw new Error(`buildComponentMask: unknown reasoning supervision kind "${(reasoning as { kind: string }).kind}"`);
  }

  if (toolCall.kind === 'scale') {
    if (!(toolCall.scale >= 0) || !Number.isFinite(toolCall.scale))
      throw new Error(`buildComponentMask: tool-call scale must be ≥ 0, got ${toolCall.scale}`);
    tags.forEach((tag, n) => {
      if (tag.kind === 'tool_call') mask[n] = toolCall.scale;
    });
  } else if (toolCall.kind === 'token-fraction') {
    checkFraction(toolCall.fraction, 'buildComponentMask tool call');
    const spans = findRuns(tags, (tag) => tag.kind === 'tool_call').map(([a, b]) => range(a, b));
    keepLeading(mask, spans, toolCall.fraction);
  } else {
    throw new Error(`buildComponentMask: unknown tool-call supervision kind "${(toolCall as { kind: string }).kind}"`);
  }
  return mask;
}

function range(start: number, end: number): number[] {
  return Array.from({ length: end - start }, (_, k) => start + k);
}

/**
 * "Full Token A" (PACT App. D): per turn, the L4-safe reasoning tokens and the tool-call
 * tokens are taken together in token order and the first floor(fraction·N) get weight 1.
 * @returns [N] weights
 */
export function buildFullTokenMask(
  tags: readonly TokenTag[],
  prefixChunkCounts: readonly (readonly number[])[],
  fraction: number,
): number[] {
  checkInputs(tags, prefixChunkCounts, 'buildFullTokenMask');
  checkFraction(fraction, 'buildFullTokenMask');
  const mask = new Array<number>(tags.length).fill(0);
  const groups = groupByTurn(tags, (tag) => tag.kind === 'tool_call' || isSafeReasoning(tag, prefixChunkCounts));
  keepLeading(mask, groups.values(), fraction);
  return mask;
}
