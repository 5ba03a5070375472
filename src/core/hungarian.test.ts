import { describe, expect, it } from 'vitest';
import { solveMaxWeightMatching } from './hungarian';
import { createRng } from './rng';

/** Brute force: the best total over every partial one-to-one matching (pairs ≤ 0 add nothing). */
function bruteForceBest(w: number[][]): number {
  const nCols = w[0]?.length ?? 0;
  const used = new Array<boolean>(nCols).fill(false);
  const recurse = (i: number): number => {
    if (i === w.length) return 0;
    let best = recurse(i + 1); // row i unmatched
    for (let j = 0; j < nCols; j++) {
      if (used[j] || w[i][j] <= 0) continue;
      used[j] = true;
      best = Math.max(best, w[i][j] + recurse(i + 1));
      used[j] = false;
    }
    return best;
  };
  return recurse(0);
}

function totalOf(w: number[][], assignment: (number | null)[]): number {
  return assignment.reduce<number>((s, j, i) => s + (j === null ? 0 : w[i][j]), 0);
}

describe('solveMaxWeightMatching', () => {
  it('solves a 3×3 by hand', () => {
    // permutations: (0,1,2)=4+0+2=6, (0,2,1)=4+5+2=11, (1,0,2)=1+2+2=5,
    //               (1,2,0)=1+5+3=9, (2,0,1)=3+2+2=7, (2,1,0)=3+0+3=6 → best (0,2,1)
    expect(
      solveMaxWeightMatching([
        [4, 1, 3],
        [2, 0, 5],
        [3, 2, 2],
      ]),
    ).toEqual([0, 2, 1]);
  });

  it('solves a wide 2×3: r0→2 (3) + r1→1 (7) = 10 beats r0→1 (5) + r1→0 (4) = 9', () => {
    expect(
      solveMaxWeightMatching([
        [1, 5, 3],
        [4, 7, 0],
      ]),
    ).toEqual([2, 1]);
  });

  it('solves a tall 3×2: r2→0 (5) + r1→1 (3) = 8, row 0 left over', () => {
    expect(
      solveMaxWeightMatching([
        [2, 0],
        [0, 3],
        [5, 1],
      ]),
    ).toEqual([null, 1, 0]);
  });

  it('never matches a pair of weight ≤ 0', () => {
    expect(
      solveMaxWeightMatching([
        [0, -1],
        [-2, 0],
      ]),
    ).toEqual([null, null]);
    expect(
      solveMaxWeightMatching([
        [0, 2],
        [0, 0],
      ]),
    ).toEqual([1, null]);
  });

  it('handles empty inputs', () => {
    expect(solveMaxWeightMatching([])).toEqual([]);
    expect(solveMaxWeightMatching([[], []])).toEqual([null, null]);
  });

  it('names the bad entry', () => {
    expect(() => solveMaxWeightMatching([[1, 2], [3]])).toThrow(/weights\[1\] has length 1, expected 2/);
    expect(() => solveMaxWeightMatching([[1, Number.NaN]])).toThrow(/weights\[0\]\[1\]/);
  });

  it('equals brute force on 300 random matrices up to 6×6, with ties, zeros and negatives', () => {
    const rng = createRng('hungarian-brute-force');
    for (let trial = 0; trial < 300; trial++) {
      const nRows = 1 + rng.int(6);
      const nCols = 1 + rng.int(6);
      // integer weights in −1..3 make many ties; every third matrix uses floats instead
      const isFloat = trial % 3 === 0;
      const w = Array.from({ length: nRows }, () =>
        Array.from({ length: nCols }, () => (isFloat ? rng.next() * 2 - 0.3 : rng.int(5) - 1)),
      );
      const assignment = solveMaxWeightMatching(w);
      expect(assignment).toHaveLength(nRows);
      const cols = assignment.filter((j): j is number => j !== null);
      expect(new Set(cols).size).toBe(cols.length); // one-to-one
      assignment.forEach((j, i) => {
        if (j !== null) expect(w[i][j]).toBeGreaterThan(0);
      });
      expect(totalOf(w, assignment)).toBeCloseTo(bruteForceBest(w), 9);
    }
  });
});
