import { describe, expect, it } from 'vitest';
import {
  classifyToolrlTurnFormat,
  scoreMultisetOverlap,
  toolrlCorrectness,
  toolrlFormatReward,
  toolrlReward,
} from './toolrlReward';

describe('scoreMultisetOverlap (ToolRL match_score)', () => {
  it('is intersection over union of multisets', () => {
    // [a,a,b] vs [a,c]: shared 1 → 1 / (3 + 2 − 1) = 0.25
    expect(scoreMultisetOverlap(['a', 'a', 'b'], ['a', 'c'])).toBe(0.25);
    expect(scoreMultisetOverlap(['a', 'b'], ['b', 'a'])).toBe(1); // 2 / (2 + 2 − 2)
    expect(scoreMultisetOverlap([], [])).toBe(1);
    expect(scoreMultisetOverlap(['a'], [])).toBe(0);
  });
});

describe('toolrlCorrectness', () => {
  const weatherParis = { name: 'weather', arguments: { city: 'Paris', unit: 'C' } };
  const timeCet = { name: 'time', arguments: { zone: 'CET' } };

  it('combines name, key and value matches into 6·R_match/S_max − 3', () => {
    const preds = [
      { name: 'weather', arguments: { city: 'Paris', unit: 'F' } },
      { name: 'search', arguments: { q: 'x' } },
    ];
    const r = toolrlCorrectness(preds, [weatherParis, timeCet]);
    // r_name = |{weather}| / |{weather,time,search}| = 1/3
    // weather: keys equal → 1, values: city ✓ unit ✗ → 1; time: no call of that name → 0
    // R_match = 1/3 + 2 = 7/3; S_max = 1 + (1 + 2) + (1 + 1) = 6 → 6·(7/3)/6 − 3 = −2/3
    expect(r.nameScore).toBeCloseTo(1 / 3, 12);
    expect(r.match).toBeCloseTo(7 / 3, 12);
    expect(r.maxMatch).toBe(6);
    expect(r.reward).toBeCloseTo(-2 / 3, 12);
  });

  it('scores extra keys by key IoU and compares numbers by value', () => {
    // keys [a] vs [a,b] → 1/2; value 1 == 1.0 → 1; R_match = 1 + 1.5 = 2.5; S_max = 1 + 1 + 1 = 3
    // 6·2.5/3 − 3 = 2
    const r = toolrlCorrectness([{ name: 'f', arguments: { a: 1.0, b: 2 } }], [{ name: 'f', arguments: { a: 1 } }]);
    expect(r.reward).toBeCloseTo(2, 12);
    // "1" is not 1: value 0 → R_match = 1 + 0.5 = 1.5 → 6·1.5/3 − 3 = 0
    expect(
      toolrlCorrectness([{ name: 'f', arguments: { a: '1', b: 2 } }], [{ name: 'f', arguments: { a: 1 } }]).reward,
    ).toBeCloseTo(0, 12);
  });

  it('matches gold calls greedily in gold order, as the released code', () => {
    // gold f{x:1}, f{x:2}; pred f{x:2}. r_name = 1/(2+1−1) = 0.5.
    // gold 0 takes the pred (keys 1 + values 0 = 1 > 0); gold 1 finds it used → 0.
    // R_match = 1.5; S_max = 1 + 2 + 2 = 5 → 6·1.5/5 − 3 = −1.2
    const r = toolrlCorrectness(
      [{ name: 'f', arguments: { x: 2 } }],
      [
        { name: 'f', arguments: { x: 1 } },
        { name: 'f', arguments: { x: 2 } },
      ],
    );
    expect(r.reward).toBeCloseTo(-1.2, 12);
  });

  it('is +3 for identical calls (also both empty) and −3 with nothing right', () => {
    expect(toolrlCorrectness([weatherParis], [weatherParis]).reward).toBe(3);
    expect(toolrlCorrectness([], []).reward).toBe(3);
    expect(toolrlCorrectness([], [weatherParis]).reward).toBe(-3); // R_match 0
    expect(toolrlCorrectness([timeCet], []).reward).toBe(-3); // r_name 0, S_max 1
  });

  it('names malformed calls', () => {
    expect(() => toolrlCorrectness([{ name: 'f', arguments: [] as unknown as Record<string, unknown> }], [])).toThrow(
      /preds\[0\]\.arguments/,
    );
  });
});

describe('ToolRL format reward', () => {
  it('classifies one turn', () => {
    expect(classifyToolrlTurnFormat('<think>a</think>\n<tool_call>\n{}\n</tool_call>')).toBe('call');
    expect(
      classifyToolrlTurnFormat('<think>a</think><tool_call>{}</tool_call>\n<tool_call>{}</tool_call><|im_end|>'),
    ).toBe('call');
    expect(classifyToolrlTurnFormat('<think>a</think><answer>x</answer><|im_end|>')).toBe('answer');
    expect(classifyToolrlTurnFormat('<tool_call>{}</tool_call>')).toBeNull(); // no reasoning
    expect(classifyToolrlTurnFormat('<think>a</think><tool_call>{}</tool_call> trailing')).toBeNull();
    expect(classifyToolrlTurnFormat('<think>a</think><answer>x</answer><answer>y</answer>')).toBeNull();
    expect(classifyToolrlTurnFormat('<think>a</think><tool_call>{}</tool_call><answer>x</answer>')).toBeNull();
  });
  it('is 1 only for call turns then a final answer turn', () => {
    const call = '<think>a</think><tool_call>{}</tool_call>';
    const answer = '<think>b</think><answer>y</answer>';
    expect(toolrlFormatReward([call, answer])).toBe(1);
    expect(toolrlFormatReward([answer])).toBe(1);
    expect(toolrlFormatReward([call, call])).toBe(0); // never answered
    expect(toolrlFormatReward([answer, call])).toBe(0);
    expect(toolrlFormatReward([])).toBe(0);
  });
  it('sums format and correctness', () => {
    const preds = [{ name: 'weather', arguments: { city: 'Paris', unit: 'F' } }];
    const golds = [{ name: 'weather', arguments: { city: 'Paris', unit: 'C' } }];
    // r_name 1, keys 1, values 1 → R_match 3 of S_max 4 → 6·3/4 − 3 = 1.5; format 1 → 2.5
    const texts = ['<think>a</think><tool_call>{}</tool_call>', '<think>b</think><answer>y</answer>'];
    expect(toolrlReward(texts, preds, golds, 'toolrl')).toEqual({ reward: 2.5, format: 1, correct: 1.5 });
    // MatchTIR's compute_toolrl (the default) has no format term.
    expect(toolrlReward(texts, preds, golds)).toEqual({ reward: 1.5, format: 1, correct: 1.5 });
  });

  it("gives 0 to an episode without calls under MatchTIR's rule, −3 + format under ToolRL's", () => {
    const golds = [{ name: 'weather', arguments: { city: 'Paris' } }];
    const texts = ['<think>b</think><answer>y</answer>'];
    expect(toolrlReward(texts, [], golds)).toEqual({ reward: 0, format: 1, correct: 0 });
    expect(toolrlReward(texts, [], golds, 'toolrl')).toEqual({ reward: -2, format: 1, correct: -3 });
    expect(() => toolrlReward(texts, [], golds, 'other' as never)).toThrow(/unknown rule "other"/);
  });
});
