/**
 * How a batch of token rows is laid out for one pass, before any number is computed:
 *   - segments: the rows packed back to back with no padding; when every row starts with
 *     the same tokens (the K rollouts of a prompt share x, the K trace-conditioned rows
 *     share [x; h*]) those tokens are one segment computed once (row −1), and each row
 *     keeps only its suffix, which attends to the shared segment as its parent;
 *   - LM-head items: which hidden rows need a log-prob, of which target, and which
 *     (row, column) outputs each one feeds (a shared position feeds every row).
 *
 *   packed tokens:  [ shared prefix (P) | row 0's suffix | row 1's suffix | … ]  N in all
 */

/** Rows shorter than this share no prefix (the copies would cost more than they save). */
const MIN_SHARED_PREFIX = 16;

/** A run of tokens computed together: a shared prefix (row −1) or one row's tokens after it. */
export interface Segment {
  /** First token in the packed batch. */
  off: number;
  len: number;
  /** Position of its first token. */
  pos0: number;
  /** Index of the segment its tokens also attend to (the shared prefix), or −1. */
  parent: number;
  row: number;
}

export interface BatchPlan {
  /** Tokens every row shares (0: no sharing). */
  prefix: number;
  segments: Segment[];
  /** Packed tokens. */
  N: number;
  lengths: number[];
}

/** LM-head items: hidden row index, target, and the (row, column) outputs each feeds. */
export interface HeadPlan {
  hidden: Int32Array;
  target: Int32Array;
  outs: number[][];
}

/** The segments of a batch: a shared prefix (if every row has at least MIN_SHARED_PREFIX tokens in common), then each row. */
export function planSegments(rows: readonly ArrayLike<number>[]): BatchPlan {
  const lengths = rows.map((r) => r.length);
  let prefix = 0;
  if (rows.length >= 2) {
    const shortest = Math.min(...lengths);
    prefix = shortest - 1;
    for (let b = 1; b < rows.length && prefix > 0; b++) {
      let i = 0;
      while (i < prefix && rows[b][i] === rows[0][i]) i++;
      prefix = i;
    }
    if (prefix < MIN_SHARED_PREFIX) prefix = 0;
  }
  const segments: Segment[] = [];
  let N = 0;
  if (prefix > 0) {
    segments.push({ off: 0, len: prefix, pos0: 0, parent: -1, row: -1 });
    N = prefix;
  }
  rows.forEach((_, b) => {
    const len = lengths[b] - prefix;
    segments.push({ off: N, len, pos0: prefix, parent: prefix > 0 ? 0 : -1, row: b });
    N += len;
  });
  return { prefix, segments, N, lengths };
}

/** LM-head positions: hidden row, target id, and the outputs (row, column) it feeds. */
export function planHead(rows: readonly ArrayLike<number>[], plan: BatchPlan): HeadPlan {
  const hidden: number[] = [];
  const target: number[] = [];
  const outs: number[][] = []; // per item: [row0, col0, row1, col1, …]
  const P = plan.prefix;
  if (P > 0) {
    for (let t = 0; t < P - 1; t++) {
      hidden.push(t);
      target.push(rows[0][t + 1]);
      outs.push(rows.flatMap((_, b) => [b, t]));
    }
  }
  for (const s of plan.segments) {
    if (s.row < 0) continue;
    const row = rows[s.row];
    for (let t = Math.max(0, P - 1); t < row.length - 1; t++) {
      hidden.push(t < P ? t : s.off + t - P);
      target.push(row[t + 1]);
      outs.push([s.row, t]);
    }
  }
  return { hidden: Int32Array.from(hidden), target: Int32Array.from(target), outs };
}

/** Packs the rows' token ids and positions into `ids` and `pos` (int32 [N]) as the segments lay them out. */
export function writeIdsAndPositions(
  i32: Int32Array,
  ids: number,
  pos: number,
  rows: readonly ArrayLike<number>[],
  plan: BatchPlan,
): void {
  for (const s of plan.segments) {
    const src = rows[s.row < 0 ? 0 : s.row];
    for (let t = 0; t < s.len; t++) {
      i32[(ids >> 2) + s.off + t] = src[s.pos0 + t];
      i32[(pos >> 2) + s.off + t] = s.pos0 + t;
    }
  }
}
