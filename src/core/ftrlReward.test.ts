import { describe, expect, it } from 'vitest';
import { computeFtrlCallCredits, computeSolveF1TurnReward, ftrlReward, type FtrlTurn } from './ftrlReward';
import { ftrlSolveMetrics } from './metrics';

const unsolved = { a: ['10', '20'], b: ['Paris'] }; // 3 expected answers
const CALL = '<tool_call>{"name": "a", "arguments": {}}</tool_call>';

describe('computeFtrlCallCredits', () => {
  const calls = [
    { name: 'a', output: 'result 10' }, // solves a:'10'
    { name: 'b', output: 'London' }, // wrong
    { name: 'a', output: '10 again' }, // '10' already solved, '20' not in output
    { name: 'a', output: 'value 20' }, // solves a:'20'
  ];
  it('credits a call only for a remaining expected answer it verifies', () => {
    expect(computeFtrlCallCredits(calls, unsolved)).toEqual([1, 0, 0, 1]);
    expect(computeFtrlCallCredits(calls, unsolved).reduce((s, x) => s + x, 0)).toBe(
      ftrlSolveMetrics(calls, unsolved).solved,
    );
  });
  it('ignores tools outside the unsolved set and names bad input', () => {
    expect(computeFtrlCallCredits([{ name: 'c', output: '10' }], unsolved)).toEqual([0]);
    expect(() => computeFtrlCallCredits([{ name: 'a' } as never], unsolved)).toThrow(/calls\[0\]/);
    expect(() => computeFtrlCallCredits([], { a: 'x' } as never)).toThrow(/unsolvedSet\["a"\]/);
  });
});

describe('computeSolveF1TurnReward (FTRL compute_solve_f1)', () => {
  const turn = (text: string, n = 0): FtrlTurn => ({
    text,
    calls: Array.from({ length: n }, () => ({ name: 'a', output: '' })),
  });
  it('a calling turn earns 2·solved/(calls + 1)', () => {
    expect(computeSolveF1TurnReward(turn(CALL, 2), [1, 0], 3, 0, 'x')).toBeCloseTo(2 / 3, 12); // 2·1/(2 + 1)
    expect(computeSolveF1TurnReward(turn(CALL, 1), [1], 1, 0.5, 'x')).toBe(1); // 2·1/(1 + 1)
    expect(computeSolveF1TurnReward(turn(CALL, 3), [0, 0, 0], 1, 0.5, 'x')).toBe(0);
  });
  it('a turn without calls: empty −0.5, malformed call −0.3, the answer 1/(1 + unsolved), all solved 0.5, else 0', () => {
    expect(computeSolveF1TurnReward(turn('  \n'), [], 2, 0, 'Paris')).toBe(-0.5);
    expect(computeSolveF1TurnReward(turn('<|im_end|>'), [], 2, 0, 'Paris')).toBe(-0.5); // stripped, as FTRL does
    expect(computeSolveF1TurnReward(turn('<tool_call>{"name": "a", "argu'), [], 2, 0, 'Paris')).toBe(-0.3);
    // checked before the answer: a malformed call that also names the answer is still −0.3
    expect(computeSolveF1TurnReward(turn('Paris <tool_call>'), [], 2, 0, 'Paris')).toBe(-0.3);
    expect(computeSolveF1TurnReward(turn('<answer>paris</answer>'), [], 2, 0.5, 'Paris')).toBeCloseTo(1 / 3, 12); // 1/(1 + 2)
    expect(computeSolveF1TurnReward(turn('<answer>1969</answer>'), [], 0, 1, '1,969')).toBe(1); // commas removed: 1/(1 + 0)
    expect(computeSolveF1TurnReward(turn('<answer>Rome</answer>'), [], 0, 1, 'Paris')).toBe(0.5);
    expect(computeSolveF1TurnReward(turn('<answer>Rome</answer>'), [], 1, 2 / 3, 'Paris')).toBe(0);
  });
});

describe('ftrlReward over a rollout', () => {
  it('scores each turn against the state the earlier turns left', () => {
    const turns: FtrlTurn[] = [
      // solves a:'10' of 2 calls: 2·1/3; state after: 2 unsolved, solve_rate 1/3
      {
        text: CALL,
        calls: [
          { name: 'a', output: 'result 10' },
          { name: 'b', output: 'London' },
        ],
      },
      // the answer before everything is solved: 1/(1 + 2)
      { text: '<think>so</think><answer>Paris</answer>', calls: [] },
      // solves a:'20' and b:'Paris': 2·2/(2 + 1) = 4/3; all solved after it
      {
        text: CALL,
        calls: [
          { name: 'a', output: 'value 20' },
          { name: 'b', output: 'It is Paris.' },
        ],
      },
      // no answer but every sub-answer solved (solve_rate 1): 0.5
      { text: '<answer>Lyon</answer>', calls: [] },
      // the answer with nothing unsolved: 1/(1 + 0)
      { text: '<answer>paris</answer>', calls: [] },
    ];
    const r = ftrlReward(turns, unsolved, 'Paris');
    const expected = [2 / 3, 1 / 3, 4 / 3, 0.5, 1];
    r.turnRewards.forEach((x, t) => expect(x, `turn ${t}`).toBeCloseTo(expected[t], 12));
    expect(r.reward).toBeCloseTo(2 / 3 + 1 / 3 + 4 / 3 + 0.5 + 1, 12);
    expect(r.callCredits).toEqual([[1, 0], [], [1, 1], [], []]);
    // Solve metrics over the 4 calls: q = 3, p = 4, n = 3 → F1 = 6/7
    expect(r.metrics.solveF1).toBeCloseTo(6 / 7, 12);
  });
  it('gives nothing to solve solve_rate 1, and names bad input', () => {
    expect(ftrlReward([{ text: 'no idea', calls: [] }], {}, 'Paris').turnRewards).toEqual([0.5]);
    expect(ftrlReward([], unsolved, 'Paris')).toMatchObject({ reward: 0, turnRewards: [] });
    expect(() => ftrlReward([{ text: 'x' } as never], unsolved, 'Paris')).toThrow(/turns must be/);
  });
});
