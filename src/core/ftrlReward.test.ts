import { describe, expect, it } from 'vitest';
import { computeFtrlCallCredits, ftrlReward } from './ftrlReward';
import { ftrlSolveMetrics } from './metrics';

const unsolved = { a: ['10', '20'], b: ['Paris'] }; // n = 3
const turns = [
  [
    { name: 'a', output: 'result 10' }, // solves a:'10'
    { name: 'b', output: 'London' }, // wrong
  ],
  [
    { name: 'a', output: '10 again' }, // '10' already solved, '20' not in output
    { name: 'a', output: 'value 20' }, // solves a:'20'
  ],
  [],
];

describe('computeFtrlCallCredits', () => {
  it('credits a call only for a remaining sub-question it verifies', () => {
    expect(computeFtrlCallCredits(turns.flat(), unsolved)).toEqual([1, 0, 0, 1]);
  });
  it('agrees with ftrlSolveMetrics on q', () => {
    const credits = computeFtrlCallCredits(turns.flat(), unsolved);
    expect(credits.reduce((s, x) => s + x, 0)).toBe(ftrlSolveMetrics(turns.flat(), unsolved).solved);
  });
  it('ignores tools outside the unsolved set and names bad input', () => {
    expect(computeFtrlCallCredits([{ name: 'c', output: '10' }], unsolved)).toEqual([0]);
    expect(() => computeFtrlCallCredits([{ name: 'a' } as never], unsolved)).toThrow(/calls\[0\]/);
    expect(() => computeFtrlCallCredits([], { a: 'x' } as never)).toThrow(/unsolvedSet\["a"\]/);
  });
});

describe('ftrlReward', () => {
  it('spreads Solve-F1 over the solving calls', () => {
    const r = ftrlReward(turns, unsolved);
    // p = 4 calls, n = 3, q = 2 → Solve-F1 = 2·2/(4 + 3) = 4/7; each solving call earns 2/7
    expect(r.reward).toBeCloseTo(4 / 7, 12);
    expect(r.turnRewards[0]).toBeCloseTo(2 / 7, 12);
    expect(r.turnRewards[1]).toBeCloseTo(2 / 7, 12);
    expect(r.turnRewards[2]).toBe(0);
    expect(r.callCredits).toEqual([[1, 0], [0, 1], []]);
    expect(r.metrics.solveP).toBe(0.5); // 2/4
    expect(r.metrics.solveR).toBeCloseTo(2 / 3, 12);
  });
  it('gives 0 with no calls and 1 when there is nothing to solve and no call', () => {
    expect(ftrlReward([[], []], unsolved)).toMatchObject({ reward: 0, turnRewards: [0, 0] });
    expect(ftrlReward([[], []], {})).toMatchObject({ reward: 1, turnRewards: [0, 1] });
  });
});
