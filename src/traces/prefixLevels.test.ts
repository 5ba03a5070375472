import { describe, expect, it } from 'vitest';
import {
  assignPrefixLevels,
  computePrefixChunkCounts,
  countSafeChunks,
  describePrefixCountsError,
  revealPrefix,
} from './prefixLevels';
import type { ChunkType, ReasoningChunk, TraceTurn } from './types';

function makeChunks(types: ChunkType[]): ReasoningChunk[] {
  let isLeaked = false;
  return types.map((type, i) => {
    if (type === 'explicit_call_preview') isLeaked = true;
    return {
      id: `C${i + 1}`,
      type,
      text: i < types.length - 1 ? `P${i + 1}.\n\n` : `P${i + 1}.`,
      keepForPrefix: !isLeaked,
    };
  });
}

function makeTurn(types: ChunkType[]): TraceTurn {
  const chunks = makeChunks(types);
  return assignPrefixLevels({ reasoning: chunks.map((c) => c.text).join(''), chunks, calls: [], observations: [] });
}

describe('computePrefixChunkCounts', () => {
  it('0 safe chunks: every level reveals nothing', () => {
    expect(computePrefixChunkCounts(0)).toEqual([0, 0, 0, 0, 0]);
  });
  it('1 safe chunk: ceil(k/4) = 1 for k = 1..3, L4 = 1', () => {
    expect(computePrefixChunkCounts(1)).toEqual([0, 1, 1, 1, 1]);
  });
  it('3 safe chunks: ceil(3/4)=1, ceil(6/4)=2, ceil(9/4)=3, L4 = 3', () => {
    expect(computePrefixChunkCounts(3)).toEqual([0, 1, 2, 3, 3]);
  });
  it('2 safe chunks: ceil(2/4)=1, ceil(4/4)=1, ceil(6/4)=2, L4 = 2', () => {
    expect(computePrefixChunkCounts(2)).toEqual([0, 1, 1, 2, 2]);
  });
  it('6 safe chunks: the paper example L_k = k for k ≤ 3, L4 = all 6', () => {
    expect(computePrefixChunkCounts(6)).toEqual([0, 1, 2, 3, 6]);
  });
  it('rejects a negative or fractional count', () => {
    expect(() => computePrefixChunkCounts(-1)).toThrow(/non-negative integer/);
    expect(() => computePrefixChunkCounts(1.5)).toThrow(/non-negative integer/);
  });
});

describe('prefix levels of turns', () => {
  it('a leak in the middle: 6 chunks, preview at index 3 → 3 safe chunks → [0,1,2,3,3]', () => {
    const turn = makeTurn([
      'task_restate',
      'tool_selection',
      'required_arg_grounding',
      'explicit_call_preview',
      'decision_summary',
      'other',
    ]);
    expect(countSafeChunks(turn.chunks)).toBe(3);
    expect(turn.chunks.map((c) => c.keepForPrefix)).toEqual([true, true, true, false, false, false]);
    expect(turn.prefixChunkCounts).toEqual([0, 1, 2, 3, 3]);
    expect(revealPrefix(turn, 0)).toBe('');
    expect(revealPrefix(turn, 1)).toBe('P1.');
    expect(revealPrefix(turn, 2)).toBe('P1.\n\nP2.');
    expect(revealPrefix(turn, 4)).toBe('P1.\n\nP2.\n\nP3.');
  });

  it('a turn that starts with a leak reveals nothing at any level', () => {
    const turn = makeTurn(['explicit_call_preview', 'tool_selection']);
    expect(turn.prefixChunkCounts).toEqual([0, 0, 0, 0, 0]);
    expect(revealPrefix(turn, 4)).toBe('');
  });

  it('6 safe chunks and no leak: L3 shows C1..C3, L4 all six', () => {
    const turn = makeTurn([
      'task_restate',
      'tool_scan',
      'irrelevant_tool_rejection',
      'tool_selection',
      'required_arg_grounding',
      'decision_summary',
    ]);
    expect(revealPrefix(turn, 3)).toBe('P1.\n\nP2.\n\nP3.');
    expect(revealPrefix(turn, 4)).toBe('P1.\n\nP2.\n\nP3.\n\nP4.\n\nP5.\n\nP6.');
  });

  it('a chunk with keepForPrefix false ends the safe prefix even without the preview type', () => {
    const chunks = makeChunks(['task_restate', 'tool_selection', 'other']);
    chunks[1].keepForPrefix = false;
    chunks[2].keepForPrefix = false;
    expect(countSafeChunks(chunks)).toBe(1);
  });

  it('describes invalid stored counts and revealPrefix refuses them', () => {
    const turn = makeTurn(['task_restate', 'explicit_call_preview']);
    expect(describePrefixCountsError([0, 1, 1, 1, 2], turn.chunks)).toMatch(/passes the 1 safe chunk/);
    expect(describePrefixCountsError([1, 1, 1, 1, 1], turn.chunks)).toMatch(/L0\) must be 0/);
    expect(describePrefixCountsError([0, 1, 0, 1, 1], turn.chunks)).toMatch(/must not decrease/);
    expect(describePrefixCountsError([0, 1, 1], turn.chunks)).toMatch(/5 entries/);
    expect(() => revealPrefix({ ...turn, prefixChunkCounts: [0, 1, 1, 1, 2] }, 4)).toThrow(/passes the 1 safe chunk/);
    expect(() => revealPrefix(turn, 5 as never)).toThrow(/level must be one of 0..4/);
  });
});
