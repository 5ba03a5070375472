import { describe, expect, it } from 'vitest';
import { answerF1, tokenizeAnswerWords, turnRewards } from './rewards';
import type { ToolCall } from './types';

const call = (name: string, args: Record<string, unknown>): ToolCall => ({ name, arguments: args });

describe('answerF1', () => {
  it('is F1 over word sets after lower-casing and punctuation → space', () => {
    // {the, eiffel, tower} vs {eiffel, tower}: shared 2, P = 2/3, R = 1 → 2·(2/3)/(5/3) = 0.8
    expect(answerF1('The Eiffel Tower!', 'eiffel tower')).toBeCloseTo(0.8, 12);
    // sets, not bags: {paris} vs {paris}
    expect(answerF1('paris paris', 'Paris.')).toBe(1);
    // "1,024" → words {1, 024}; "1024" → {1024}: no overlap
    expect(answerF1('1,024', '1024')).toBe(0);
    expect(answerF1('U.S.A.', 'u s a')).toBe(1);
    expect(tokenizeAnswerWords("  it's   [ok]\t\n")).toEqual(['it', 's', 'ok']);
  });

  it('is 0 when either side has no words', () => {
    expect(answerF1('', 'x')).toBe(0);
    expect(answerF1('!!!', 'x')).toBe(0);
    expect(answerF1('x', '')).toBe(0);
    expect(answerF1('', '')).toBe(0);
  });
});

describe('turnRewards', () => {
  // gold: g0 = search{q:'paris'}, g1 = weather{city:'paris', unit:'c'}; gold answer 'sunny'
  const golds = [call('search', { q: 'paris' }), call('weather', { city: 'paris', unit: 'c' })];
  const turns = [
    { calls: [call('search', { q: 'paris' })] }, // S = 1 with g0
    { calls: [call('weather', { city: 'paris' }), call('search', { q: 'london' })] },
    { calls: [] },
    { calls: [], answer: 'Paris is sunny' },
  ];
  // weather{city} vs g1: keys {city} vs {city,unit} → 1/2, exact city → (1 + 1/2 + 1)/4 = 0.625
  // search{q:london} could take g0 (2/3) but g0 is worth 1 to turn 0's call: it stays unmatched.
  // turn 3 answers: {paris, is, sunny} vs {sunny}: P = 1/3, R = 1 → F1 = (2/3)/(4/3) = 0.5

  it('averages matched rewards per turn, 0 for a turn without calls, answer F1 on the answer turn', () => {
    const r = turnRewards(turns, golds, 'sunny');
    expect(r.callRewards).toEqual([[1], [0.625, 0], [], []]);
    expect(r.assignment).toEqual([[0], [1, null], [], []]);
    // turn 1: (0.625 + 0) / 2 = 0.3125
    expect(r.turnRewards).toEqual([1, 0.3125, 0, 0.5]);
  });

  it('applies the unmatched penalty inside the turn mean', () => {
    // turn 1: (0.625 − 0.5) / 2 = 0.0625
    expect(turnRewards(turns, golds, 'sunny', { unmatchedPenalty: 0.5 }).turnRewards).toEqual([1, 0.0625, 0, 0.5]);
  });

  it('gives an answer turn the answer F1 even when it also made calls', () => {
    const r = turnRewards([{ calls: [call('search', { q: 'paris' })], answer: 'sunny' }], golds, 'sunny');
    expect(r.turnRewards).toEqual([1]);
    // MatchTIR's compute_process_KM matches only the calls of turns without an answer.
    expect(r.callRewards).toEqual([[0]]);
    expect(r.assignment).toEqual([[null]]);
    // an empty answer is still an answer turn: F1 = 0, not the call mean
    expect(turnRewards([{ calls: [call('search', { q: 'paris' })], answer: '' }], golds, 'sunny').turnRewards).toEqual([
      0,
    ]);
  });

  it("keeps answer-turn calls out of the matching: they cannot take an earlier call's gold", () => {
    // turn 0: weather{city:'paris'} alone would match g1 at 0.625 (hand count above).
    // The answer turn repeats the call exactly (similarity 1 with g1); matched together, the
    // exact call would take g1 and leave turn 0's call at 0. MatchTIR matches turn 0 alone.
    const r = turnRewards(
      [
        { calls: [call('weather', { city: 'paris' })] },
        { calls: [call('weather', { city: 'paris', unit: 'c' })], answer: 'sunny' },
      ],
      golds,
      'sunny',
    );
    expect(r.callRewards).toEqual([[0.625], [0]]);
    expect(r.assignment).toEqual([[1], [null]]);
    expect(r.turnRewards).toEqual([0.625, 1]);
  });

  it('handles an empty rollout and names a bad turn', () => {
    expect(turnRewards([], golds, 'x')).toEqual({ turnRewards: [], callRewards: [], assignment: [] });
    expect(() => turnRewards([{ calls: 'x' } as unknown as { calls: ToolCall[] }], golds, 'x')).toThrow(
      /turns\[0\].calls/,
    );
  });
});
