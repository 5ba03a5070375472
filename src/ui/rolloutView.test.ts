import { describe, expect, it } from 'vitest';
import {
  buildAdvantageStrip,
  computeAdvantageScale,
  countCalls,
  describeCallCounts,
  describeCallMatch,
  formatAdvantage,
  groupSegmentsByTurn,
  mapAdvantageToColour,
  markAdvantageSign,
  pickAdvantageInk,
  describeRecipeCredit,
} from './rolloutView';
import type { RolloutView } from '../../workers/protocol';
import { getRecipe, listRecipes } from '../recipes/allRecipes';

function rollout(): RolloutView {
  return {
    segments: [
      { kind: 'prompt', turn: -1, text: 'Q?', nTokens: 10, advantage: 0 },
      { kind: 'reasoning', turn: 0, text: 'look ', nTokens: 2, advantage: 0.5 },
      { kind: 'reasoning', turn: 0, text: 'up', nTokens: 2, advantage: 1.0 },
      { kind: 'tool_call', turn: 0, text: '{"name":"f"}', nTokens: 4, advantage: 1.0 },
      { kind: 'observation', turn: 0, text: '42', nTokens: 2, advantage: 0 },
      { kind: 'answer', turn: 1, text: '42', nTokens: 2, advantage: -2.0 },
    ],
    reward: 0.75,
    turnRewards: [1, 0.5],
    turnAdvantages: [1, -2],
    calls: [
      { turn: 0, name: 'f', arguments: '{}', output: '42', isError: false, matchedGold: 0, reward: 1 },
      { turn: 0, name: 'g', arguments: '{', output: 'Error: bad JSON', isError: true, matchedGold: null, reward: 0 },
    ],
    answer: '42',
    stopReason: 'answer',
  };
}

describe('advantage colours (blue–orange, colour-blind safe)', () => {
  it('maps 0 to grey and ±maxAbs to the two ends', () => {
    expect(mapAdvantageToColour(0, 2)).toBe('#f2f2f2');
    expect(mapAdvantageToColour(2, 2)).toBe('#0072b2');
    expect(mapAdvantageToColour(-2, 2)).toBe('#d55e00');
    expect(mapAdvantageToColour(5, 2)).toBe('#0072b2'); // clamped
    expect(mapAdvantageToColour(1, 0)).toBe('#f2f2f2'); // no scale: neutral
  });

  it('interpolates linearly in RGB', () => {
    // t = 1/2 toward blue (0,114,178): 242 + ½(0 − 242) = 121 = 0x79; 242 + ½(114 − 242) = 178 = 0xb2;
    // 242 + ½(178 − 242) = 210 = 0xd2
    expect(mapAdvantageToColour(1, 2)).toBe('#79b2d2');
    // t = 1/4 toward vermillion (213,94,0): 242 − 7.25 = 234.75 → 235 = 0xeb; 242 − 37 = 205 = 0xcd;
    // 242 − 60.5 = 181.5 → 182 = 0xb6
    expect(mapAdvantageToColour(-0.5, 2)).toBe('#ebcdb6');
  });

  it('writes the sign as a marker, so it never rests on colour alone', () => {
    expect(markAdvantageSign(0.3)).toBe('+');
    expect(markAdvantageSign(-0.3)).toBe('−');
    expect(markAdvantageSign(0)).toBe('0');
    expect(markAdvantageSign(1e-12)).toBe('0');
    expect(formatAdvantage(0.534)).toBe('+0.53');
    expect(formatAdvantage(-1.2)).toBe('−1.20');
    expect(formatAdvantage(0.001)).toBe('0.00');
  });

  it('uses white text on strong colours only', () => {
    expect(pickAdvantageInk(1.5, 2)).toBe('#ffffff'); // 0.75 > 0.6
    expect(pickAdvantageInk(1, 2)).toBe('#1b2430'); // 0.5
  });
});

describe('advantage strip', () => {
  it('scales by the largest policy advantage, leaves the prompt out and gives tool responses no advantage', () => {
    const r = rollout();
    expect(computeAdvantageScale([r])).toBe(2); // |−2.0| on the answer; the prompt's 0 and observation are not policy tokens
    const cells = buildAdvantageStrip(r, 2);
    // after the prompt: 2 + 2 + 4 + 2 + 2 = 12 tokens
    expect(cells.map((c) => c.share)).toEqual([2 / 12, 2 / 12, 4 / 12, 2 / 12, 2 / 12]);
    expect(cells.map((c) => c.kind)).toEqual(['reasoning', 'reasoning', 'tool_call', 'observation', 'answer']);
    expect(cells.map((c) => c.sign)).toEqual(['+', '+', '+', '', '−']);
    expect(cells[3].hasAdvantage).toBe(false); // tool response
    expect(cells[4].colour).toBe('#d55e00'); // −2 of maxAbs 2
    expect(cells[2].colour).toBe('#79b2d2'); // +1 of 2
  });
});

describe('segments grouped by turn', () => {
  it('merges neighbours of one kind, weights the advantage by tokens, attaches calls and turn values', () => {
    const turns = groupSegmentsByTurn(rollout());
    expect(turns.map((t) => t.turn)).toEqual([-1, 0, 1]);
    const t0 = turns[1];
    expect(t0.segments.map((s) => s.kind)).toEqual(['reasoning', 'tool_call', 'observation']);
    expect(t0.segments[0].text).toBe('look up');
    expect(t0.segments[0].nTokens).toBe(4);
    // (0.5·2 + 1.0·2) / 4 = 0.75
    expect(t0.segments[0].advantage).toBeCloseTo(0.75, 12);
    expect(t0.calls.map((c) => c.name)).toEqual(['f', 'g']);
    expect([t0.reward, t0.advantage]).toEqual([1, 1]);
    expect([turns[2].reward, turns[2].advantage]).toEqual([0.5, -2]);
    expect(turns[0].calls).toEqual([]);
    expect(turns[0].reward).toBeUndefined();
  });

  it('words MatchTIR matches and counts failed calls', () => {
    const r = rollout();
    const gold = [{ name: 'f', arguments: '{}' }];
    expect(describeCallMatch(r.calls[0], gold)).toBe('matched gold call #1 (f)');
    expect(describeCallMatch(r.calls[1], gold)).toBe('no gold call matched');
    expect(countCalls(r)).toEqual({ total: 2, matched: 1, matchedFailed: 0, unmatched: 0, failed: 1 });
    expect(describeCallCounts(r)).toBe('2: 1 matched, 1 failed');
  });

  it('counts calls in parts that add up to the total, a matched call that failed once', () => {
    // Three calls, all failed, one of them matched to a gold call: before, "3 (1 matched, 3 failed)".
    const call = (matchedGold: number | null, isError: boolean) => ({
      turn: 0,
      name: 'f',
      arguments: '{}',
      output: 'error',
      isError,
      matchedGold,
      reward: 0,
    });
    const r = { ...rollout(), calls: [call(0, true), call(null, true), call(null, true)] };
    const c = countCalls(r);
    expect(c.matched + c.matchedFailed + c.unmatched + c.failed).toBe(c.total);
    expect(describeCallCounts(r)).toBe('3: 1 matched but failed, 2 failed');
    expect(describeCallCounts({ ...r, calls: [call(0, false), call(null, false)] })).toBe('2: 1 matched, 1 unmatched');
    expect(describeCallCounts({ ...r, calls: [] })).toBe('none');
  });
});

describe('describeRecipeCredit', () => {
  it('says nothing for MatchTIR-credit recipes and unnamed (older) views', () => {
    expect(describeRecipeCredit('matchtir')).toBeNull();
    expect(describeRecipeCredit('pact')).toBeNull();
    expect(describeRecipeCredit('sft_then_matchtir')).toBeNull();
    expect(describeRecipeCredit(undefined)).toBeNull();
  });
  it("names another recipe's own credit from its registry summary", () => {
    expect(describeRecipeCredit('grpo')).toBe(
      "This run's recipe is grpo (GRPO: outcome reward (answer F1), group-normalised advantages, prompt-only), not MatchTIR: the advantages below are its own, while the turn rewards are MatchTIR's matched-call rewards, shown for comparison.",
    );
    expect(describeRecipeCredit('toolrl')).toContain('ToolRL: format + tool-call correctness reward');
    expect(describeRecipeCredit('nope')).toContain('recipe "nope"');
  });
  it('reads the registry: exactly matchtir, pact and sft_then_matchtir use MatchTIR credit', () => {
    expect(
      listRecipes()
        .filter((name) => getRecipe(name).usesMatchTirCredit)
        .sort(),
    ).toEqual(['matchtir', 'pact', 'sft_then_matchtir']);
    const silent = listRecipes().filter((name) => describeRecipeCredit(name) === null);
    expect(silent.sort()).toEqual(['matchtir', 'pact', 'sft_then_matchtir']);
  });
});
