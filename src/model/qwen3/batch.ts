/**
 * Packs token-id rows of different lengths into the [B, T] int32 ids and float32
 * attention mask the model takes. Right padding is the training layout (positions
 * 0..len−1 either way, since positions come from the mask); left padding is what
 * generation uses.
 */
import * as tf from './tf';

export interface PackedBatch {
  /** [B, T] int32 */
  inputIds: tf.Tensor2D;
  /** [B, T] float32: 1 token, 0 padding */
  attentionMask: tf.Tensor2D;
}

export function packTokenRows(
  rows: number[][],
  opts: { padTokenId?: number; side?: 'left' | 'right'; length?: number } = {},
): PackedBatch {
  if (rows.length === 0) throw new Error('packTokenRows: no rows');
  const longest = Math.max(...rows.map((r) => r.length));
  const T = opts.length ?? longest;
  if (T < longest) throw new Error(`packTokenRows: length ${T} is shorter than the longest row (${longest})`);
  const B = rows.length;
  const ids = new Int32Array(B * T).fill(opts.padTokenId ?? 0);
  const mask = new Float32Array(B * T);
  rows.forEach((row, b) => {
    const offset = opts.side === 'left' ? T - row.length : 0;
    row.forEach((id, t) => {
      if (!Number.isInteger(id) || id < 0) throw new Error(`packTokenRows: rows[${b}][${t}] = ${id} is not a token id`);
      ids[b * T + offset + t] = id;
      mask[b * T + offset + t] = 1;
    });
  });
  return { inputIds: tf.tensor2d(ids, [B, T], 'int32'), attentionMask: tf.tensor2d(mask, [B, T]) };
}
