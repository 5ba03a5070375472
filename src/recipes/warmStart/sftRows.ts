/**
 * The warm start's SFT data: an expert episode as token ids with a mask on its targets,
 * and those rows as bytes for trainers outside tfjs (scripts/reference/pretrain_torch.py).
 * Which tokens are trained is the trainer's plain-SFT rule (privilegedContext.ts
 * buildFullSftRow: PACT Eq. sft-mask with m = 1 on every policy-written token, i.e.
 * reasoning, tool calls, answers and control tokens; 0 on prompt and observations),
 * moved onto the targets ids[1:] the model predicts.
 *
 * Simplifications: an episode longer than maxSeqLen is cut (its tail turns are not
 * trained); no packing of several episodes into one row.
 */
import type { ExpertEpisode } from '../policyVocab';
import { buildFullSftRow } from '../train/privilegedContext';

/**
 * An SftRow (privilegedContext.ts) as the model reads it: ids and, per target position t
 * (predicting ids[t+1]), its weight.
 */
export interface SftTargetRow {
  ids: number[];
  /** length ids.length − 1: 1 when ids[t+1] is policy-written (POLICY_KINDS), else 0. */
  targetMask: number[];
}

/** Cuts an episode to maxSeqLen and derives the target mask from its tags (buildFullSftRow's mask, shifted). */
export function buildSftRow(episode: Pick<ExpertEpisode, 'ids' | 'tags'>, maxSeqLen: number): SftTargetRow {
  if (episode.ids.length !== episode.tags.length) {
    throw new Error(`buildSftRow: ${episode.ids.length} ids but ${episode.tags.length} tags`);
  }
  const n = Math.min(episode.ids.length, maxSeqLen);
  const row = buildFullSftRow({ ids: episode.ids.slice(0, n), tags: episode.tags.slice(0, n) });
  return { ids: row.ids, targetMask: row.mask.slice(1) }; // mask[n] weights token n = target n − 1
}

/**
 * SFT rows as bytes, for trainers outside tfjs (scripts/reference/pretrain_torch.py), all
 * little-endian: u32 row count n, then n × u32 row lengths, then every row's tokens as u16,
 * each `id | trained << 15`, where `trained` = targetMask[t − 1] (is token t a trained
 * target; 0 for a row's first token). Ids must be below 2^15.
 */
export function packSftRows(rows: readonly SftTargetRow[]): Uint8Array {
  const total = rows.reduce((s, r) => s + r.ids.length, 0);
  const bytes = new Uint8Array(4 + 4 * rows.length + 2 * total);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, rows.length, true);
  let at = 4 + 4 * rows.length;
  rows.forEach((row, r) => {
    if (row.targetMask.length !== row.ids.length - 1) {
      const [nIds, nEntries] = [row.ids.length, row.targetMask.length];
      throw new Error(`packSftRows: row ${r} has ${nIds} ids but ${nEntries} target-mask entries (want ids − 1)`);
    }
    view.setUint32(4 + 4 * r, row.ids.length, true);
    row.ids.forEach((id, t) => {
      if (!Number.isInteger(id) || id < 0 || id >= 1 << 15) {
        throw new Error(`packSftRows: row ${r} token ${t} id ${id} is not in [0, 32768)`);
      }
      view.setUint16(at, id | ((t > 0 && row.targetMask[t - 1] ? 1 : 0) << 15), true);
      at += 2;
    });
  });
  return bytes;
}

/** Inverse of packSftRows. */
export function unpackSftRows(bytes: Uint8Array): SftTargetRow[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true);
  const rows: SftTargetRow[] = [];
  let at = 4 + 4 * n;
  for (let r = 0; r < n; r++) {
    const len = view.getUint32(4 + 4 * r, true);
    const ids: number[] = [];
    const targetMask: number[] = [];
    for (let t = 0; t < len; t++) {
      const v = view.getUint16(at, true);
      at += 2;
      ids.push(v & 0x7fff);
      if (t > 0) targetMask.push(v >> 15);
    }
    rows.push({ ids, targetMask });
  }
  if (at !== bytes.length) throw new Error(`unpackSftRows: ${bytes.length} bytes but the rows end at ${at}`);
  return rows;
}
