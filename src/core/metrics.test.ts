import { describe, expect, it } from 'vitest';
import { answerVerify, ftrlSolveMetrics, meanSolveMetrics, selectionMetrics, toolHopCorrect } from './metrics';

describe('answerVerify (FTRL answer_verify)', () => {
  it('removes commas, lower-cases and trims both sides, then tests containment', () => {
    expect(answerVerify('The answer is 1,024 units', '1024')).toBe(true);
    expect(answerVerify('PARIS', '  Paris ')).toBe(true);
    expect(answerVerify('Mishal Al-Ahmad', 'Mishal Al-Ahmad Al-Jaber')).toBe(false);
  });

  it("needs every ', '-separated piece of the gold answer", () => {
    // '1,024, 2,048'.split(', ') → ['1,024', '2,048'] → '1024', '2048'
    expect(answerVerify('got 1024 and 2048', '1,024, 2,048')).toBe(true);
    expect(answerVerify('got 1024', '1,024, 2,048')).toBe(false);
    // an empty gold piece is contained in anything (as in FTRL's code)
    expect(answerVerify('anything', '')).toBe(true);
  });
});

describe('ftrlSolveMetrics', () => {
  it('walks the calls in order and removes the first remaining verified answer', () => {
    const unsolved = { a: ['x', 'y'], b: ['z'] }; // n = 3
    const calls = [
      { name: 'a', output: 'found y' }, // removes 'y' (q = 1)
      { name: 'a', output: 'found y again' }, // remaining ['x']: no
      { name: 'c', output: 'x' }, // not a key
      { name: 'b', output: 'Z!' }, // removes 'z' (q = 2)
      { name: 'a', output: 'x' }, // removes 'x' (q = 3)
    ];
    // p = 5: P = 3/5 = 0.6, R = 3/3 = 1, F1 = 2·3/(5 + 3) = 0.75 (= 2·0.6·1/1.6)
    expect(ftrlSolveMetrics(calls, unsolved)).toEqual({ solveP: 0.6, solveR: 1, solveF1: 0.75, solved: 3 });
    expect(unsolved).toEqual({ a: ['x', 'y'], b: ['z'] }); // not modified
  });

  it('counts repeated expected answers once per call', () => {
    const unsolved = { a: ['1,024', '1,024'] };
    expect(
      ftrlSolveMetrics(
        [
          { name: 'a', output: '1024' },
          { name: 'a', output: '1024' },
        ],
        unsolved,
      ),
    ).toEqual({
      solveP: 1,
      solveR: 1,
      solveF1: 1,
      solved: 2,
    });
    // one call: P = 1/1, R = 1/2, F1 = 2·1/(1 + 2) = 2/3
    const one = ftrlSolveMetrics([{ name: 'a', output: '1024' }], unsolved);
    expect(one.solveR).toBe(0.5);
    expect(one.solveF1).toBeCloseTo(2 / 3, 12);
  });

  it('takes the first remaining answer that verifies, in list order', () => {
    // call 1 'paris france' verifies 'paris' first; call 2 'paris' does not contain 'paris france'
    // q = 1, p = 2, n = 2 → P = R = F1 = 0.5
    const r = ftrlSolveMetrics(
      [
        { name: 'a', output: 'Paris France' },
        { name: 'a', output: 'Paris' },
      ],
      { a: ['paris', 'paris france'] },
    );
    expect(r).toEqual({ solveP: 0.5, solveR: 0.5, solveF1: 0.5, solved: 1 });
  });

  it('gives Solve-P = 1 with no calls', () => {
    expect(ftrlSolveMetrics([], { a: ['x'] })).toEqual({ solveP: 1, solveR: 0, solveF1: 0, solved: 0 });
  });

  it('names a malformed call or answer list', () => {
    expect(() => ftrlSolveMetrics([{ name: 'a', output: 'x' }, { name: 'a' } as never], { a: ['x'] })).toThrow(
      /calls\[1\]/,
    );
    expect(() => ftrlSolveMetrics([], { a: 'x' } as never)).toThrow(/unsolvedSet\["a"\]/);
  });
});

describe('meanSolveMetrics', () => {
  it('macro-averages tasks', () => {
    const m = meanSolveMetrics([
      { solveP: 0.6, solveR: 1, solveF1: 0.75, solved: 3 },
      { solveP: 1, solveR: 0, solveF1: 0, solved: 0 },
    ]);
    // P (0.6 + 1)/2 = 0.8, R 0.5, F1 0.375, solved 3
    expect(m?.solveP).toBeCloseTo(0.8, 12);
    expect(m).toMatchObject({ solveR: 0.5, solveF1: 0.375, solved: 3 });
    expect(meanSolveMetrics([])).toBeNull();
  });
});

describe('toolHopCorrect', () => {
  it('is 1 when the output contains the answer', () => {
    expect(toolHopCorrect('The answer is Salmon.', 'salmon')).toBe(1);
    expect(toolHopCorrect('trout', 'salmon')).toBe(0);
  });
});

describe('selectionMetrics', () => {
  it('computes set P/R/F1, match and sRecall', () => {
    // selected {a,b,c} (duplicate c ignored), gold {a,d}: hits 1 → P 1/3, R 1/2,
    // F1 = 2·(1/6)/(5/6) = 0.4; both gold tools appeared in some search → sRecall 1
    const m = selectionMetrics(['a', 'b', 'c', 'c'], ['a', 'd'], [['a', 'x'], ['d']]);
    expect(m.precision).toBeCloseTo(1 / 3, 12);
    expect(m.recall).toBe(0.5);
    expect(m.f1).toBeCloseTo(0.4, 12);
    expect(m.match).toBe(false);
    expect(m.sRecall).toBe(1);
  });

  it('matches sets regardless of order; sRecall counts searched gold tools', () => {
    expect(selectionMetrics(['d', 'a'], ['a', 'd'], [])).toEqual({
      precision: 1,
      recall: 1,
      f1: 1,
      match: true,
      sRecall: 0,
    });
    expect(selectionMetrics([], ['a', 'b'], [['b']]).sRecall).toBe(0.5);
  });

  it('handles empty sets', () => {
    expect(selectionMetrics([], ['a'], [])).toEqual({ precision: 0, recall: 0, f1: 0, match: false, sRecall: 0 });
    expect(selectionMetrics([], [], [])).toEqual({ precision: 1, recall: 1, f1: 1, match: true, sRecall: 1 });
    expect(selectionMetrics(['a'], [], [])).toEqual({ precision: 0, recall: 1, f1: 0, match: false, sRecall: 1 });
  });

  it('names bad input', () => {
    expect(() => selectionMetrics(['a', 1] as never, [], [])).toThrow(/selected/);
    expect(() => selectionMetrics([], [], ['a'] as never)).toThrow(/searched/);
  });
});
