import { describe, expect, it } from 'vitest';
import {
  isJsonEqual,
  matchGreedy,
  matchToolCalls,
  MATCHING_METHODS,
  scoreArgumentKeys,
  toolCallSimilarity,
} from './matching';
import type { ToolCall } from './types';

const call = (name: string, args: Record<string, unknown>): ToolCall => ({ name, arguments: args });

describe('toolCallSimilarity', () => {
  it('is 0 when names differ, and compares names lower-cased', () => {
    expect(toolCallSimilarity(call('search', { q: 1 }), call('lookup', { q: 1 }))).toBe(0);
    // same keys (keyScore 1), q exact (1): (1 + 1 + 1) / (2 + 1) = 1
    expect(toolCallSimilarity(call('Search', { q: 1 }), call('search', { q: 1 }))).toBe(1);
  });

  it('treats 1 and 1.0 as equal and "1" as different', () => {
    // keyScore 1, exact 2: (1 + 1 + 2) / (2 + 2) = 1
    expect(toolCallSimilarity(call('f', { a: 1.0, b: 'x' }), call('f', { a: 1, b: 'x' }))).toBe(1);
    // keyScore 1, exact 1 (a: "1" ≠ 1): (1 + 1 + 1) / 4 = 0.75
    expect(toolCallSimilarity(call('f', { a: '1', b: 'x' }), call('f', { a: 1, b: 'x' }))).toBe(0.75);
    // the same through JSON text: "1.0" parses to the number 1
    const parsed = JSON.parse('{"a": 1.0, "b": "x"}') as Record<string, unknown>;
    expect(toolCallSimilarity(call('f', parsed), call('f', { a: 1, b: 'x' }))).toBe(1);
  });

  it('scores partial key overlap with the multiset Jaccard term', () => {
    // keys {a,c} vs {a,b}: |∩| = 1 → 1 / (2 + 2 − 1) = 1/3; exact: a only → 1
    // (1 + 1/3 + 1) / (2 + 2) = (7/3) / 4 = 7/12
    expect(toolCallSimilarity(call('f', { a: 1, c: 2 }), call('f', { a: 1, b: 3 }))).toBeCloseTo(7 / 12, 12);
  });

  it('handles empty argument lists', () => {
    // pred empty, gold {a}: keyScore 0, exact 0 → 1 / 3
    expect(toolCallSimilarity(call('f', {}), call('f', { a: 1 }))).toBeCloseTo(1 / 3, 12);
    // pred {a}, gold empty: keyScore 0, exact 0 → 1 / 2
    expect(toolCallSimilarity(call('f', { a: 1 }), call('f', {}))).toBe(0.5);
    // both empty: the key lists are equal → keyScore 1 → (1 + 1 + 0) / 2 = 1
    expect(toolCallSimilarity(call('f', {}), call('f', {}))).toBe(1);
  });

  it('compares nested values deeply, arrays in order, keys in any order', () => {
    expect(toolCallSimilarity(call('f', { q: { x: [1, 2], y: null } }), call('f', { q: { y: null, x: [1, 2] } }))).toBe(
      1,
    );
    // [2,1] ≠ [1,2]: keyScore 1, exact 0 → (1 + 1 + 0) / 3 = 2/3
    expect(toolCallSimilarity(call('f', { q: { x: [2, 1] } }), call('f', { q: { x: [1, 2] } }))).toBeCloseTo(2 / 3, 12);
    // key order of the argument objects does not matter: {b,a} vs {a,b} → keyScore 1, exact 2 → 1
    expect(toolCallSimilarity(call('f', { b: 2, a: 1 }), call('f', { a: 1, b: 2 }))).toBe(1);
  });

  it('names the bad field', () => {
    expect(() => toolCallSimilarity(call('f', [] as unknown as Record<string, unknown>), call('f', {}))).toThrow(
      /pred.arguments/,
    );
    expect(() => toolCallSimilarity(call('f', {}), { arguments: {} } as unknown as ToolCall)).toThrow(/gold.name/);
  });
});

describe('scoreArgumentKeys / isJsonEqual', () => {
  it('follows the three cases of keyScore', () => {
    expect(scoreArgumentKeys(['a', 'b'], ['b', 'a'])).toBe(1);
    expect(scoreArgumentKeys([], [])).toBe(1);
    expect(scoreArgumentKeys([], ['a'])).toBe(0);
    // {a,b,c} vs {c,d}: ∩ = 1 → 1 / (3 + 2 − 1) = 0.25
    expect(scoreArgumentKeys(['a', 'b', 'c'], ['c', 'd'])).toBe(0.25);
  });

  it('is JSON deep equality', () => {
    expect(isJsonEqual(1, 1.0)).toBe(true);
    expect(isJsonEqual('1', 1)).toBe(false);
    expect(isJsonEqual(null, {})).toBe(false);
    expect(isJsonEqual([1, [2]], [1, [2]])).toBe(true);
    expect(isJsonEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(isJsonEqual([1], { 0: 1 })).toBe(false);
  });
});

describe('matchToolCalls', () => {
  // golds g0 = f{a:1}, g1 = f{b:1}; preds p0 = f{a:2}, p1 = f{a:1, b:1}
  //   S(p0,g0) = keys equal 1, exact 0 → (1+1+0)/3 = 2/3
  //   S(p0,g1) = keys {a}∩{b} = ∅ → 0, exact 0 → 1/3
  //   S(p1,g0) = keys {a,b} vs {a}: 1/(2+1−1) = 1/2, exact a → (1+1/2+1)/3 = 5/6
  //   S(p1,g1) = likewise 5/6
  const golds = [call('f', { a: 1 }), call('f', { b: 1 })];
  const preds = [call('f', { a: 2 }), call('f', { a: 1, b: 1 })];

  it('hungarian finds the maximum: p0→g0 + p1→g1 = 2/3 + 5/6 = 3/2', () => {
    const { assignment, rewards } = matchToolCalls(preds, golds, { method: 'hungarian' });
    expect(assignment).toEqual([0, 1]);
    expect(rewards[0]).toBeCloseTo(2 / 3, 12);
    expect(rewards[1]).toBeCloseTo(5 / 6, 12);
  });

  it('greedy takes the highest pair first, ties broken by gold order: p1→g0 (5/6), then p0→g1 (1/3) = 7/6', () => {
    // sorted pairs: (p1,g0)=5/6, (p1,g1)=5/6 (tie: g0 first), (p0,g0)=2/3, (p0,g1)=1/3
    const { assignment, rewards } = matchToolCalls(preds, golds, { method: 'greedy' });
    expect(assignment).toEqual([1, 0]);
    expect(rewards[0]).toBeCloseTo(1 / 3, 12);
    expect(rewards[1]).toBeCloseTo(5 / 6, 12);
  });

  it('greedy breaks a tie between predictions pred-major: the first prediction wins', () => {
    expect(matchGreedy([[0.5], [0.5]])).toEqual([0, null]);
    expect(matchToolCalls([call('f', {}), call('f', {})], [call('f', {})], { method: 'greedy' }).assignment).toEqual([
      0,
      null,
    ]);
  });

  it('gives unmatched predictions −unmatchedPenalty, and never matches a 0-score pair', () => {
    // one gold; p0 = exact (score 1), p1 = same call again (only one gold), p2 = another name (score 0)
    const g = [call('search', { q: 'x' })];
    const p = [call('search', { q: 'x' }), call('search', { q: 'x' }), call('weather', { q: 'x' })];
    expect(matchToolCalls(p, g)).toEqual({ assignment: [0, null, null], rewards: [1, 0, 0] });
    expect(matchToolCalls(p, g, { unmatchedPenalty: 0.5 })).toEqual({
      assignment: [0, null, null],
      rewards: [1, -0.5, -0.5],
    });
    expect(matchToolCalls(p, g, { method: 'greedy', unmatchedPenalty: 0.5 }).rewards).toEqual([1, -0.5, -0.5]);
    expect(matchToolCalls([call('a', {})], [call('b', {})])).toEqual({ assignment: [null], rewards: [0] });
  });

  it('handles empty sides', () => {
    expect(matchToolCalls([], [call('f', {})])).toEqual({ assignment: [], rewards: [] });
    expect(matchToolCalls([call('f', {}), call('g', {})], [], { unmatchedPenalty: 0.25 })).toEqual({
      assignment: [null, null],
      rewards: [-0.25, -0.25],
    });
  });

  it('fails on an unknown method, listing the valid ones, and names a bad call', () => {
    expect(() => matchToolCalls([], [], { method: 'optimal' })).toThrow(
      /unknown tool-call matching method "optimal"; valid: hungarian, greedy/,
    );
    expect(MATCHING_METHODS.names()).toEqual(['hungarian', 'greedy']);
    expect(() => matchToolCalls([call('f', {}), { name: 3 } as unknown as ToolCall], [])).toThrow(/preds\[1\].name/);
  });
});
