import { describe, expect, it } from 'vitest';
import { buildComponentMask, buildFullTokenMask } from './masks';
import { componentSftLoss } from './losses';
import type { TokenTag } from './types';

// A two-turn expert trace, one tag per token:
//  n  kind         turn seg
//  0  prompt        -1
//  1  control        0        (<think>)
//  2  reasoning      0   0
//  3  reasoning      0   0
//  4  reasoning      0   1
//  5  reasoning      0   2    (a leaking chunk: beyond the L4 count)
//  6  control        0        (</think>)
//  7  tool_call      0
//  8  tool_call      0
//  9  observation    0
// 10  reasoning      1   0
// 11  tool_call      1
// 12  observation    1
// 13  answer         1
const R = (turn: number, segment: number): TokenTag => ({ kind: 'reasoning', turn, segment });
const T = (kind: TokenTag['kind'], turn: number): TokenTag => ({ kind, turn });
const tags: TokenTag[] = [
  T('prompt', -1),
  T('control', 0),
  R(0, 0),
  R(0, 0),
  R(0, 1),
  R(0, 2),
  T('control', 0),
  T('tool_call', 0),
  T('tool_call', 0),
  T('observation', 0),
  R(1, 0),
  T('tool_call', 1),
  T('observation', 1),
  T('answer', 1),
];
// turn 0: L0..L4 reveal 0,1,1,2,2 chunks (L4 stops before the leaking chunk 2); turn 1: 0,0,1,1,1
const counts = [
  [0, 1, 1, 2, 2],
  [0, 0, 1, 1, 1],
];
const lvl = (level: number) => ({ kind: 'prefix-level' as const, level });
const scale = (s: number) => ({ kind: 'scale' as const, scale: s });

describe('buildComponentMask (PACT Eq. sft-mask)', () => {
  it('L4 with λa = 0.8: safe reasoning 1, tool calls 0.8, the rest 0', () => {
    expect(buildComponentMask(tags, counts, { reasoning: lvl(4), toolCall: scale(0.8) })).toEqual([
      0, 0, 1, 1, 1, 0, 0, 0.8, 0.8, 0, 1, 0.8, 0, 0,
    ]);
  });

  it('L1 keeps chunk 0 of turn 0 and nothing of turn 1', () => {
    expect(buildComponentMask(tags, counts, { reasoning: lvl(1), toolCall: scale(0.5) })).toEqual([
      0, 0, 1, 1, 0, 0, 0, 0.5, 0.5, 0, 0, 0.5, 0, 0,
    ]);
  });

  it('L2 keeps chunk 0 of both turns', () => {
    const m = buildComponentMask(tags, counts, { reasoning: lvl(2), toolCall: scale(0) });
    expect(m.flatMap((w, n) => (w > 0 ? [n] : []))).toEqual([2, 3, 10]);
  });

  it('L0 with λa = 0 gives Z = 0, and the SFT term is skipped', () => {
    const m = buildComponentMask(tags, counts, { reasoning: lvl(0), toolCall: scale(0) });
    expect(m.every((w) => w === 0)).toBe(true);
    expect(componentSftLoss(new Array(tags.length).fill(-1), m)).toBeNull();
  });

  it("token-count reasoning keeps floor(f·N) tokens of each turn's L4 prefix", () => {
    // turn 0 safe tokens n2,n3,n4 (N = 3); turn 1: n10 (N = 1)
    // f = 0.5: floor(1.5) = 1 → n2; floor(0.5) = 0
    const half = buildComponentMask(tags, counts, {
      reasoning: { kind: 'token-fraction', fraction: 0.5 },
      toolCall: scale(0),
    });
    expect(half.flatMap((w, n) => (w > 0 ? [n] : []))).toEqual([2]);
    // f = 0.7: floor(2.1) = 2 → n2, n3; floor(0.7) = 0
    const most = buildComponentMask(tags, counts, {
      reasoning: { kind: 'token-fraction', fraction: 0.7 },
      toolCall: scale(0),
    });
    expect(most.flatMap((w, n) => (w > 0 ? [n] : []))).toEqual([2, 3]);
    // f = 1: the whole safe prefix, never the leaking n5
    const all = buildComponentMask(tags, counts, {
      reasoning: { kind: 'token-fraction', fraction: 1 },
      toolCall: scale(0),
    });
    expect(all.flatMap((w, n) => (w > 0 ? [n] : []))).toEqual([2, 3, 4, 10]);
  });

  it('token-count tool calls keep floor(f·N) leading tokens of each span with weight 1', () => {
    // spans [7, 8] (N = 2 → 1 token) and [11] (N = 1 → floor(0.5) = 0)
    const m = buildComponentMask(tags, counts, {
      reasoning: lvl(0),
      toolCall: { kind: 'token-fraction', fraction: 0.5 },
    });
    expect(m.flatMap((w, n) => (w > 0 ? [n] : []))).toEqual([7]);
    // two spans of one turn separated by a control token are separate spans: 2 → 1, 3 → floor(1.5) = 1
    const twoCalls: TokenTag[] = [
      T('tool_call', 0),
      T('tool_call', 0),
      T('control', 0),
      T('tool_call', 0),
      T('tool_call', 0),
      T('tool_call', 0),
    ];
    expect(
      buildComponentMask(twoCalls, [[0, 0, 0, 0, 0]], {
        reasoning: lvl(0),
        toolCall: { kind: 'token-fraction', fraction: 0.5 },
      }),
    ).toEqual([1, 0, 0, 1, 0, 0]);
  });

  it('names what is wrong', () => {
    const sup = { reasoning: lvl(4), toolCall: scale(0.8) };
    expect(() => buildComponentMask([{ kind: 'reasoning', turn: 0 }], counts, sup)).toThrow(
      /tags\[0\] is reasoning but has no segment/,
    );
    expect(() => buildComponentMask([R(2, 0)], counts, sup)).toThrow(/tags\[0\].turn = 2 has no prefixChunkCounts row/);
    expect(() =>
      buildComponentMask(
        tags,
        [
          [0, 2, 1, 2, 2],
          [0, 0, 1, 1, 1],
        ],
        sup,
      ),
    ).toThrow(/prefixChunkCounts\[0\] must be 5 non-decreasing/);
    expect(() => buildComponentMask(tags, counts, { reasoning: lvl(5), toolCall: scale(0.8) })).toThrow(
      /level must be an integer in 0..4/,
    );
    expect(() =>
      buildComponentMask(tags, counts, { reasoning: { kind: 'token-fraction', fraction: 2 }, toolCall: scale(0.8) }),
    ).toThrow(/fraction must be in \[0, 1\]/);
  });

  it('gives an empty trace an empty mask', () => {
    expect(buildComponentMask([], [], { reasoning: lvl(4), toolCall: scale(0.8) })).toEqual([]);
  });
});

describe('buildFullTokenMask (PACT App. D "Full Token A")', () => {
  it("keeps floor(f·N) leading tokens of each turn's reasoning + tool-call tokens", () => {
    // turn 0 pool: n2,n3,n4,n7,n8 (N = 5); turn 1 pool: n10,n11 (N = 2)
    // f = 0.5: floor(2.5) = 2 → n2,n3; floor(1) = 1 → n10
    expect(buildFullTokenMask(tags, counts, 0.5).flatMap((w, n) => (w > 0 ? [n] : []))).toEqual([2, 3, 10]);
    // f = 0.8: floor(4) = 4 → n2,n3,n4,n7; floor(1.6) = 1 → n10
    expect(buildFullTokenMask(tags, counts, 0.8).flatMap((w, n) => (w > 0 ? [n] : []))).toEqual([2, 3, 4, 7, 10]);
    // f = 1: every pooled token, weight 1 (never the leaking n5, prompt, observation or answer)
    expect(buildFullTokenMask(tags, counts, 1)).toEqual([0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0, 0]);
    expect(buildFullTokenMask(tags, counts, 0).every((w) => w === 0)).toBe(true);
  });
});
