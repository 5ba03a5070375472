/**
 * A checkpoint record cut into pieces for IndexedDB, and put back together.
 *
 * Chromium refuses one IndexedDB value over 133,169,152 bytes, and a run's state is about 16 bytes a
 * parameter, so a checkpoint is stored as a HEADER (the record with every ArrayBuffer replaced by a
 * `ByteSlot`: its offset and length in the checkpoint's byte stream) and that stream cut into chunks
 * of at most `chunkBytes` (CHECKPOINT_CHUNK_BYTES, 64 MiB). The stream is the record's buffers end
 * to end, in the order a depth-first walk of the record meets them (weights, optimiser moments, π_ref,
 * adapters), so the chunks are cut straight out of the state's own buffers: one chunk at a time is
 * allocated, never a second copy of the whole state. How db.ts commits them: docs/runs.md.
 */
import type { CheckpointHeader, CheckpointRecord } from './schema';

/** The largest chunk record: half of what Chromium stores as one value, so a chunk is never refused for its size. */
export const CHECKPOINT_CHUNK_BYTES = 64 * 2 ** 20;

/** Where one of the record's ArrayBuffers lies in the checkpoint's byte stream. */
export interface ByteSlot {
  chunkedBytes: { offset: number; byteLength: number };
}

const isArrayBuffer = (v: unknown): v is ArrayBuffer => Object.prototype.toString.call(v) === '[object ArrayBuffer]';
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && [Object.prototype, null].includes(Object.getPrototypeOf(v));
const isSlot = (v: unknown): v is ByteSlot =>
  isPlainObject(v) && Object.keys(v).length === 1 && isPlainObject(v.chunkedBytes);

/**
 * The record's header (ArrayBuffers replaced by slots; other values, typed arrays included, kept
 * as they are) and its buffers in stream order. Nothing is copied.
 */
export function splitCheckpoint(rec: CheckpointRecord): {
  header: Omit<CheckpointHeader, 'pieces'>;
  buffers: ArrayBuffer[];
  totalBytes: number;
} {
  const buffers: ArrayBuffer[] = [];
  let offset = 0;
  const walk = (v: unknown): unknown => {
    if (isArrayBuffer(v)) {
      buffers.push(v);
      const slot: ByteSlot = { chunkedBytes: { offset, byteLength: v.byteLength } };
      offset += v.byteLength;
      return slot;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  const { weights, optimizer, trainerState, ...rest } = rec;
  const header = {
    ...rest,
    weights: walk(weights),
    optimizer: walk(optimizer),
    trainerState: walk(trainerState) as Record<string, unknown>,
  };
  return { header, buffers, totalBytes: offset };
}

/** How many chunks a stream of `totalBytes` is cut into. */
export function countChunks(totalBytes: number, chunkBytes: number): number {
  if (!Number.isInteger(chunkBytes) || chunkBytes < 1)
    throw new Error(`chunkBytes must be an integer ≥ 1, got ${chunkBytes}`);
  return Math.ceil(totalBytes / chunkBytes);
}

/** The stream's chunks, each a new ArrayBuffer of `chunkBytes` (the last one shorter), one at a time. */
export function* cutChunks(buffers: readonly ArrayBuffer[], chunkBytes: number): Generator<ArrayBuffer> {
  const totalBytes = buffers.reduce((s, b) => s + b.byteLength, 0);
  let b = 0; // the buffer being read
  let at = 0; // bytes of it already copied
  for (let start = 0; start < totalBytes; start += chunkBytes) {
    const chunk = new Uint8Array(Math.min(chunkBytes, totalBytes - start));
    let filled = 0;
    while (filled < chunk.length) {
      const src = buffers[b];
      const n = Math.min(src.byteLength - at, chunk.length - filled);
      chunk.set(new Uint8Array(src, at, n), filled);
      filled += n;
      at += n;
      if (at === src.byteLength) {
        b++;
        at = 0;
      }
    }
    yield chunk.buffer;
  }
}

/**
 * The inverse of splitCheckpoint: the record with a new, empty ArrayBuffer in every slot, and
 * `place(offset, chunk)`, which copies a chunk that starts at `offset` of the stream into them.
 */
export function allocateCheckpoint(header: CheckpointHeader): {
  record: CheckpointRecord;
  place: (offset: number, chunk: ArrayBuffer) => void;
} {
  const targets: { offset: number; bytes: Uint8Array }[] = [];
  const walk = (v: unknown): unknown => {
    if (isSlot(v)) {
      const buffer = new ArrayBuffer(v.chunkedBytes.byteLength);
      targets.push({ offset: v.chunkedBytes.offset, bytes: new Uint8Array(buffer) });
      return buffer;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  const { pieces: _pieces, weights, optimizer, trainerState, ...rest } = header;
  const record = {
    ...rest,
    weights: walk(weights),
    optimizer: walk(optimizer),
    trainerState: walk(trainerState),
  } as CheckpointRecord;
  targets.sort((a, b) => a.offset - b.offset);
  const place = (offset: number, chunk: ArrayBuffer) => {
    const src = new Uint8Array(chunk);
    const end = offset + src.length;
    for (const t of targets) {
      const tEnd = t.offset + t.bytes.length;
      if (tEnd <= offset || t.offset >= end) continue;
      const from = Math.max(offset, t.offset);
      const to = Math.min(end, tEnd);
      t.bytes.set(src.subarray(from - offset, to - offset), from - t.offset);
    }
  };
  return { record, place };
}
