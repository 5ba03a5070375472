/**
 * Kuhn–Munkres (Hungarian) algorithm for a maximum-weight one-to-one matching on a
 * rectangular weight matrix: the solver behind MatchTIR's hard credit assignment
 * (PACT App. B, the max_X Σ X_ab S_ab problem with Σ_b X_ab ≤ 1, Σ_a X_ab ≤ 1).
 *
 * Method: the O(n²·m) shortest-augmenting-path form with row/column potentials
 * (Kuhn 1955, Munkres 1957; Jonker–Volgenant style), run on costs −max(w, 0) with
 * the smaller side as rows. Because the constraints are "≤ 1", a pair of weight ≤ 0
 * never helps: such pairs are clamped to 0 and reported as unmatched (null). Ties
 * between equally good matchings are broken by the algorithm's scan order.
 */

/**
 * Maximum-weight matching of rows to columns.
 * @param weights [nRows][nCols] finite numbers (rows may be 0; all rows the same length)
 * @returns for each row, the matched column or null; pairs with weight ≤ 0 are never matched
 */
export function solveMaxWeightMatching(weights: readonly (readonly number[])[]): (number | null)[] {
  const nRows = weights.length;
  if (nRows === 0) return [];
  const nCols = weights[0].length;
  weights.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== nCols) {
      throw new Error(`solveMaxWeightMatching: weights[${i}] has length ${row?.length}, expected ${nCols}`);
    }
    row.forEach((w, j) => {
      if (typeof w !== 'number' || !Number.isFinite(w))
        throw new Error(`solveMaxWeightMatching: weights[${i}][${j}] is not a finite number`);
    });
  });
  if (nCols === 0) return new Array<number | null>(nRows).fill(null);

  // The augmenting-path form needs rows ≤ columns: transpose when needed.
  const isTransposed = nRows > nCols;
  const n = isTransposed ? nCols : nRows;
  const m = isTransposed ? nRows : nCols;
  const gain = (i: number, j: number): number => Math.max(0, isTransposed ? weights[j][i] : weights[i][j]);
  const colOfRow = assignMinCost(n, m, (i, j) => -gain(i, j)); // [n] column per row

  const result = new Array<number | null>(nRows).fill(null);
  for (let i = 0; i < n; i++) {
    const j = colOfRow[i];
    const row = isTransposed ? j : i;
    const col = isTransposed ? i : j;
    if (weights[row][col] > 0) result[row] = col;
  }
  return result;
}

/**
 * Minimum-cost assignment of every one of n rows to a distinct one of m ≥ n columns.
 * 1-based potentials u[0..n], v[0..m]; p[j] = row assigned to column j (0 = none).
 * @returns [n] the column of each row
 */
function assignMinCost(n: number, m: number, cost: (i: number, j: number) => number): number[] {
  const u = new Float64Array(n + 1);
  const v = new Float64Array(m + 1);
  const p = new Int32Array(m + 1);
  const way = new Int32Array(m + 1);
  for (let i = 1; i <= n; i++) {
    p[0] = i;
    let j0 = 0;
    const minv = new Float64Array(m + 1).fill(Infinity);
    const used = new Uint8Array(m + 1);
    do {
      used[j0] = 1;
      const i0 = p[j0];
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= m; j++) {
        if (used[j]) continue;
        const reduced = cost(i0 - 1, j - 1) - u[i0] - v[j];
        if (reduced < minv[j]) {
          minv[j] = reduced;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (let j = 0; j <= m; j++) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (p[j0] !== 0);
    do {
      const j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0 !== 0);
  }
  const colOfRow = new Array<number>(n).fill(-1);
  for (let j = 1; j <= m; j++) if (p[j] !== 0) colOfRow[p[j] - 1] = j - 1;
  return colOfRow;
}
