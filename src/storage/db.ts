/**
 * Runs, metric logs and checkpoints in IndexedDB, through `idb`.
 *
 * Guarantees:
 * - `saveCheckpoint` writes the checkpoint's chunks (each in its own transaction), then its
 *   header and the run's pointer to it in ONE transaction: a checkpoint is readable only once
 *   that commits, so a crash or reload between chunks leaves the old checkpoint current and
 *   some unreferenced chunks, which the run's next save, prune or delete removes. Older
 *   checkpoints of that run are pruned only after the header has committed, in another one. A
 *   failed save (quota, a value that cannot be cloned) leaves what was saved intact.
 * - `deleteRun` removes the run, its metrics, its checkpoints and every chunk in one transaction.
 * - `importRun` adds a new run, its checkpoint and its metric rows (chunks first, then the
 *   rest in one transaction); it never overwrites a run or checkpoint already saved.
 * - Quota errors surface as `StorageQuotaError`, saying how much was being written.
 * - Checkpoints written whole by DB_VERSION 1 read, prune and delete as before.
 */
import { openDB, deleteDB, type IDBPDatabase } from 'idb';
import {
  allocateCheckpoint,
  CHECKPOINT_CHUNK_BYTES,
  countChunks,
  cutChunks,
  splitCheckpoint,
} from './checkpointPieces';
import {
  DB_NAME,
  DB_VERSION,
  type CheckpointHeader,
  type CheckpointRecord,
  type MetricRow,
  type PactDB,
  type RunRecord,
} from './schema';

type Db = IDBPDatabase<PactDB>;

const isHeader = (v: CheckpointHeader | CheckpointRecord): v is CheckpointHeader => 'pieces' in v && !!v.pieces;
/** Every chunk key of one write. */
const piecesRange = (writeId: string) => IDBKeyRange.bound([writeId, -Infinity], [writeId, Infinity]);

/** Aborts a transaction whose request threw before it existed (an uncloneable value), then rethrows. */
async function abortWith(tx: { abort(): void; done: Promise<void> }, e: unknown): Promise<never> {
  try {
    tx.abort();
  } catch {
    /* already aborted */
  }
  await tx.done.catch(() => undefined);
  throw e;
}

export class StorageQuotaError extends Error {
  constructor(
    readonly bytes: number,
    cause: unknown,
  ) {
    super(
      `the browser refused to store ${formatBytes(bytes)} (storage quota exceeded): ` +
        'delete old runs or checkpoints, or export them and free space; nothing already saved was lost',
    );
    this.name = 'StorageQuotaError';
    this.cause = cause;
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** True for the errors browsers raise when a write exceeds the origin's quota. */
export function isQuotaError(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  const name = (e as { name?: string }).name;
  // Chrome/Firefox: QuotaExceededError; old Firefox: NS_ERROR_DOM_QUOTA_REACHED.
  return name === 'QuotaExceededError' || name === 'NS_ERROR_DOM_QUOTA_REACHED';
}

export class PactStore {
  private lastTick = 0;
  private constructor(
    private readonly db: Db,
    /** The largest chunk record of a checkpoint (tests use small ones). */
    readonly chunkBytes: number,
  ) {}

  /** Wall-clock ms, strictly increasing within this store, so "most recent" is well defined. */
  private tick(): number {
    this.lastTick = Math.max(Date.now(), this.lastTick + 1);
    return this.lastTick;
  }

  static async open(name = DB_NAME, opts: { chunkBytes?: number } = {}): Promise<PactStore> {
    const chunkBytes = opts.chunkBytes ?? CHECKPOINT_CHUNK_BYTES;
    countChunks(0, chunkBytes); // checks it
    const db = await openDB<PactDB>(name, DB_VERSION, {
      // Creates what is missing, so a version-1 database (or an empty one) gains the chunk store.
      upgrade(db, _oldVersion, _newVersion, tx) {
        const has = (store: string) => db.objectStoreNames.contains(store as 'runs');
        if (!has('runs')) db.createObjectStore('runs', { keyPath: 'id' }).createIndex('byUpdated', 'updatedAt');
        if (!has('metrics'))
          db.createObjectStore('metrics', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
        const ckpts = has('checkpoints')
          ? tx.objectStore('checkpoints')
          : db.createObjectStore('checkpoints', { keyPath: 'id' });
        if (!ckpts.indexNames.contains('byRun')) ckpts.createIndex('byRun', 'runId');
        if (!ckpts.indexNames.contains('byRunStep')) ckpts.createIndex('byRunStep', ['runId', 'step']);
        // Only headers have `pieces`: version-1 records stay out of this index.
        if (!ckpts.indexNames.contains('byWriteId')) ckpts.createIndex('byWriteId', 'pieces.writeId');
        if (!has('checkpointChunks'))
          db.createObjectStore('checkpointChunks', { keyPath: ['writeId', 'index'] }).createIndex('byRun', 'runId');
      },
    });
    return new PactStore(db, chunkBytes);
  }

  static async destroy(name = DB_NAME): Promise<void> {
    await deleteDB(name);
  }

  close(): void {
    this.db.close();
  }

  // --- runs -------------------------------------------------------------

  async createRun(
    run: Omit<RunRecord, 'createdAt' | 'updatedAt' | 'status' | 'lastStep'> & Partial<RunRecord>,
  ): Promise<RunRecord> {
    const now = this.tick();
    const rec: RunRecord = { status: 'created', lastStep: 0, createdAt: now, updatedAt: now, ...run };
    await this.db.add('runs', rec).catch((e: unknown) => {
      if ((e as { name?: string })?.name === 'ConstraintError')
        throw new Error(`a run with id "${run.id}" already exists`);
      throw e;
    });
    return rec;
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return this.db.get('runs', id);
  }

  /** Runs, most recently updated first. */
  async listRuns(): Promise<RunRecord[]> {
    return (await this.db.getAllFromIndex('runs', 'byUpdated')).reverse();
  }

  async updateRun(id: string, patch: Partial<Omit<RunRecord, 'id' | 'createdAt'>>): Promise<RunRecord> {
    const tx = this.db.transaction('runs', 'readwrite');
    const cur = await tx.store.get(id);
    if (!cur) throw new Error(`no run with id "${id}"`);
    const next: RunRecord = { ...cur, ...patch, id, updatedAt: this.tick() };
    await tx.store.put(next);
    await tx.done;
    return next;
  }

  /** Deletes a run with its metrics, checkpoints and every chunk of them (unreferenced ones too), all or nothing. */
  async deleteRun(id: string): Promise<void> {
    const tx = this.db.transaction(['runs', 'metrics', 'checkpoints', 'checkpointChunks'], 'readwrite');
    await tx.objectStore('runs').delete(id);
    await tx.objectStore('metrics').delete(IDBKeyRange.bound([id, -Infinity], [id, Infinity]));
    const ckptIds = await tx.objectStore('checkpoints').index('byRun').getAllKeys(id);
    for (const k of ckptIds) await tx.objectStore('checkpoints').delete(k);
    const chunkKeys = await tx.objectStore('checkpointChunks').index('byRun').getAllKeys(id);
    for (const k of chunkKeys) await tx.objectStore('checkpointChunks').delete(k);
    await tx.done;
  }

  // --- metrics ----------------------------------------------------------

  /** Appends (or overwrites, for a replayed step) metric rows and advances the run's lastStep. */
  async appendMetrics(runId: string, rows: { step: number; values: Record<string, number> }[]): Promise<void> {
    if (rows.length === 0) return;
    const tx = this.db.transaction(['runs', 'metrics'], 'readwrite');
    const run = await tx.objectStore('runs').get(runId);
    if (!run) {
      tx.abort();
      await tx.done.catch(() => undefined);
      throw new Error(`no run with id "${runId}"`);
    }
    for (const r of rows) await tx.objectStore('metrics').put({ runId, step: r.step, values: r.values });
    const lastStep = Math.max(run.lastStep, ...rows.map((r) => r.step));
    await tx.objectStore('runs').put({ ...run, lastStep, updatedAt: this.tick() });
    await tx.done;
  }

  /** Metric rows of a run, ordered by step. */
  async getMetrics(runId: string): Promise<MetricRow[]> {
    return this.db.getAll('metrics', IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]));
  }

  // --- checkpoints ------------------------------------------------------

  /**
   * Commits a checkpoint and points the run at it, then prunes the run's older checkpoints
   * beyond `keepLast` (only after it committed). Metric rows past the checkpoint's step are kept.
   * The chunks are written first, one transaction each (`onChunk` after each commit); the
   * header and the run's pointer last, together. Only one chunk is held besides the record.
   */
  async saveCheckpoint(
    ckpt: CheckpointRecord,
    opts: { keepLast?: number; onChunk?: (index: number, count: number) => void | Promise<void> } = {},
  ): Promise<{ pruned: string[] }> {
    const keepLast = opts.keepLast ?? 2;
    if (!Number.isInteger(keepLast) || keepLast < 1)
      throw new Error(`keepLast must be an integer ≥ 1, got ${keepLast}`);
    if (!(await this.getRun(ckpt.runId))) throw new Error(`no run with id "${ckpt.runId}" for checkpoint "${ckpt.id}"`);
    await this.sweepChunks(ckpt.runId); // what a crash between chunks left
    const header = await this.writeChunks(ckpt, opts.onChunk);
    try {
      const tx = this.db.transaction(['runs', 'checkpoints', 'checkpointChunks'], 'readwrite');
      const run = await tx.objectStore('runs').get(ckpt.runId);
      if (!run) await abortWith(tx, new Error(`no run with id "${ckpt.runId}" for checkpoint "${ckpt.id}"`));
      // Saved again under the same id: its old chunks go with its old header.
      const replaced = await tx.objectStore('checkpoints').get(ckpt.id);
      try {
        await tx.objectStore('checkpoints').put(header);
        await tx.objectStore('runs').put({ ...run!, lastCheckpointId: ckpt.id, updatedAt: this.tick() });
        if (replaced && isHeader(replaced))
          await tx.objectStore('checkpointChunks').delete(piecesRange(replaced.pieces.writeId));
      } catch (e) {
        await abortWith(tx, e);
      }
      await tx.done;
    } catch (e) {
      await this.db.delete('checkpointChunks', piecesRange(header.pieces.writeId)).catch(() => undefined);
      if (isQuotaError(e)) throw new StorageQuotaError(ckpt.bytes, e);
      throw e;
    }
    return { pruned: await this.pruneCheckpoints(ckpt.runId, keepLast) };
  }

  /**
   * Writes a checkpoint's chunks under a new write id, each in its own transaction, and returns the
   * header that makes them a checkpoint (not yet written). On failure the chunks written are removed.
   */
  private async writeChunks(
    ckpt: CheckpointRecord,
    onChunk?: (index: number, count: number) => void | Promise<void>,
  ): Promise<CheckpointHeader> {
    const { header, buffers, totalBytes } = splitCheckpoint(ckpt);
    const pieces = {
      writeId: `${ckpt.id}#${this.tick()}`,
      count: countChunks(totalBytes, this.chunkBytes),
      chunkBytes: this.chunkBytes,
      totalBytes,
    };
    try {
      let index = 0;
      for (const data of cutChunks(buffers, this.chunkBytes)) {
        await this.db.put('checkpointChunks', { writeId: pieces.writeId, runId: ckpt.runId, index, data });
        await onChunk?.(index, pieces.count);
        index++;
      }
    } catch (e) {
      await this.db.delete('checkpointChunks', piecesRange(pieces.writeId)).catch(() => undefined);
      if (isQuotaError(e)) throw new StorageQuotaError(ckpt.bytes, e);
      throw e;
    }
    return { ...header, pieces };
  }

  /** Deletes the run's chunks that no committed header points at (a save cut short by a crash or reload). */
  async sweepChunks(runId: string): Promise<number> {
    const tx = this.db.transaction(['checkpoints', 'checkpointChunks'], 'readwrite');
    const keys = await tx.objectStore('checkpointChunks').index('byRun').getAllKeys(runId);
    const isKept = new Map<string, boolean>();
    let deleted = 0;
    for (const key of keys) {
      const writeId = key[0];
      if (!isKept.has(writeId))
        isKept.set(writeId, (await tx.objectStore('checkpoints').index('byWriteId').getKey(writeId)) !== undefined);
      if (isKept.get(writeId)) continue;
      await tx.objectStore('checkpointChunks').delete(key);
      deleted++;
    }
    await tx.done;
    return deleted;
  }

  /** Deletes all but the newest `keepLast` checkpoints of a run (by step), with their chunks; never the run's current one. */
  async pruneCheckpoints(runId: string, keepLast: number): Promise<string[]> {
    const tx = this.db.transaction(['runs', 'checkpoints', 'checkpointChunks'], 'readwrite');
    const run = await tx.objectStore('runs').get(runId);
    const keys = await tx
      .objectStore('checkpoints')
      .index('byRunStep')
      .getAllKeys(IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]));
    const doomed = keys.slice(0, Math.max(0, keys.length - keepLast)).filter((k) => k !== run?.lastCheckpointId);
    // The write ids of the doomed headers, read from the index (a version-1 record is not in it and is not loaded).
    const writeIds = new Map<string, string>();
    let cursor = await tx.objectStore('checkpoints').index('byWriteId').openKeyCursor();
    while (cursor) {
      writeIds.set(cursor.primaryKey, cursor.key);
      cursor = await cursor.continue();
    }
    for (const k of doomed) {
      await tx.objectStore('checkpoints').delete(k);
      const writeId = writeIds.get(k);
      if (writeId !== undefined) await tx.objectStore('checkpointChunks').delete(piecesRange(writeId));
    }
    await tx.done;
    return doomed;
  }

  /**
   * Adds a NEW run together with its checkpoint (an imported checkpoint file): the chunks
   * first, then the header, the run and `metrics` (the run's metric log, carried by the
   * checkpoint file) in one transaction: all are written or none (chunks written before a
   * failure are removed). The run id must be new (an existing run is never overwritten) and
   * the checkpoint must belong to it; the run points at it.
   */
  async importRun(
    run: Omit<RunRecord, 'createdAt' | 'updatedAt' | 'lastCheckpointId'>,
    ckpt: CheckpointRecord,
    metrics: readonly { step: number; values: Record<string, number> }[] = [],
  ): Promise<RunRecord> {
    if (ckpt.runId !== run.id)
      throw new Error(`checkpoint "${ckpt.id}" belongs to run "${ckpt.runId}", not to the imported run "${run.id}"`);
    const now = this.tick();
    const rec: RunRecord = { ...run, createdAt: now, updatedAt: now, lastCheckpointId: ckpt.id };
    const takenError = async (tx: {
      objectStore(n: 'runs' | 'checkpoints'): { getKey(k: string): Promise<unknown> };
    }) => {
      const [oldRun, oldCkpt] = await Promise.all([
        tx.objectStore('runs').getKey(run.id),
        tx.objectStore('checkpoints').getKey(ckpt.id),
      ]);
      if (oldRun !== undefined) return new Error(`a run with id "${run.id}" already exists`);
      if (oldCkpt !== undefined) return new Error(`a checkpoint with id "${ckpt.id}" already exists`);
      return null;
    };
    const taken = await takenError(this.db.transaction(['runs', 'checkpoints']));
    if (taken) throw taken;
    const header = await this.writeChunks(ckpt);
    try {
      const tx = this.db.transaction(['runs', 'checkpoints', 'metrics'], 'readwrite');
      const takenNow = await takenError(tx);
      if (takenNow) await abortWith(tx, takenNow);
      try {
        await tx.objectStore('checkpoints').add(header);
        await tx.objectStore('runs').add(rec);
        for (const r of metrics) await tx.objectStore('metrics').put({ runId: run.id, step: r.step, values: r.values });
      } catch (e) {
        // A value that cannot be cloned throws before its request exists, which would let
        // the transaction commit what came before it: abort explicitly, all or nothing.
        await abortWith(tx, e);
      }
      await tx.done;
    } catch (e) {
      await this.db.delete('checkpointChunks', piecesRange(header.pieces.writeId)).catch(() => undefined);
      if (isQuotaError(e)) throw new StorageQuotaError(ckpt.bytes, e);
      throw e;
    }
    return rec;
  }

  /**
   * A checkpoint put back together: the header and every chunk it points at, read in one
   * transaction (a prune cannot cut it short); a version-1 record as it was stored. Holds the
   * whole record plus one chunk.
   */
  async getCheckpoint(id: string): Promise<CheckpointRecord | undefined> {
    const tx = this.db.transaction(['checkpoints', 'checkpointChunks']);
    const stored = await tx.objectStore('checkpoints').get(id);
    if (!stored || !isHeader(stored)) return stored;
    const { writeId, count, chunkBytes, totalBytes } = stored.pieces;
    const { record, place } = allocateCheckpoint(stored);
    for (let index = 0; index < count; index++) {
      const chunk = await tx.objectStore('checkpointChunks').get([writeId, index]);
      const expected = Math.min(chunkBytes, totalBytes - index * chunkBytes);
      if (!chunk || chunk.data.byteLength !== expected)
        throw new Error(
          `checkpoint "${id}" is damaged: piece ${index + 1} of ${count} is ` +
            (chunk ? `${chunk.data.byteLength} bytes, not ${expected}` : 'missing'),
        );
      place(index * chunkBytes, chunk.data);
    }
    await tx.done;
    return record;
  }

  /** The checkpoint the run points at (the last one committed). */
  async loadLatestCheckpoint(runId: string): Promise<CheckpointRecord | undefined> {
    const run = await this.getRun(runId);
    return run?.lastCheckpointId ? this.getCheckpoint(run.lastCheckpointId) : undefined;
  }

  /** Checkpoint summaries (no tensor data), oldest first. */
  async listCheckpoints(runId: string): Promise<{ id: string; step: number; createdAt: number; bytes: number }[]> {
    const all = await this.db.getAllFromIndex(
      'checkpoints',
      'byRunStep',
      IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]),
    );
    return all.map(({ id, step, createdAt, bytes }) => ({ id, step, createdAt, bytes }));
  }
}
