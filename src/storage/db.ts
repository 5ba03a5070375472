/**
 * Runs, metric logs and checkpoints in IndexedDB, through `idb`.
 *
 * Guarantees:
 * - `saveCheckpoint` writes the checkpoint and points the run at it in ONE
 *   transaction; older checkpoints of that run are pruned only after that
 *   transaction has committed, in a second one. A failed save (quota, a value
 *   that cannot be cloned) aborts its transaction and leaves what was saved intact.
 * - `deleteRun` removes the run, its metrics and its checkpoints in one transaction.
 * - `importRun` adds a new run, its checkpoint and its metric rows in one transaction;
 *   it never overwrites a run or checkpoint already saved.
 * - Quota errors surface as `StorageQuotaError`, saying how much was being written.
 */
import { openDB, deleteDB, type IDBPDatabase } from 'idb';
import { DB_NAME, DB_VERSION, type CheckpointRecord, type MetricRow, type PactDB, type RunRecord } from './schema';

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
  private constructor(private readonly db: IDBPDatabase<PactDB>) {}

  /** Wall-clock ms, strictly increasing within this store, so "most recent" is well defined. */
  private tick(): number {
    this.lastTick = Math.max(Date.now(), this.lastTick + 1);
    return this.lastTick;
  }

  static async open(name = DB_NAME): Promise<PactStore> {
    const db = await openDB<PactDB>(name, DB_VERSION, {
      upgrade(db) {
        const runs = db.createObjectStore('runs', { keyPath: 'id' });
        runs.createIndex('byUpdated', 'updatedAt');
        const metrics = db.createObjectStore('metrics', { keyPath: ['runId', 'step'] });
        metrics.createIndex('byRun', 'runId');
        const ckpts = db.createObjectStore('checkpoints', { keyPath: 'id' });
        ckpts.createIndex('byRun', 'runId');
        ckpts.createIndex('byRunStep', ['runId', 'step']);
      },
    });
    return new PactStore(db);
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

  /** Deletes a run with its metrics and checkpoints, all or nothing. */
  async deleteRun(id: string): Promise<void> {
    const tx = this.db.transaction(['runs', 'metrics', 'checkpoints'], 'readwrite');
    await tx.objectStore('runs').delete(id);
    await tx.objectStore('metrics').delete(IDBKeyRange.bound([id, -Infinity], [id, Infinity]));
    const ckptIds = await tx.objectStore('checkpoints').index('byRun').getAllKeys(id);
    for (const k of ckptIds) await tx.objectStore('checkpoints').delete(k);
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
   * Commits a checkpoint and points the run at it (one transaction), then prunes
   * the run's older checkpoints beyond `keepLast` (a second transaction, only
   * after the first committed). Metric rows past the checkpoint's step are kept.
   */
  async saveCheckpoint(ckpt: CheckpointRecord, opts: { keepLast?: number } = {}): Promise<{ pruned: string[] }> {
    const keepLast = opts.keepLast ?? 2;
    if (!Number.isInteger(keepLast) || keepLast < 1)
      throw new Error(`keepLast must be an integer ≥ 1, got ${keepLast}`);
    try {
      const tx = this.db.transaction(['runs', 'checkpoints'], 'readwrite');
      const run = await tx.objectStore('runs').get(ckpt.runId);
      if (!run) {
        tx.abort();
        await tx.done.catch(() => undefined);
        throw new Error(`no run with id "${ckpt.runId}" for checkpoint "${ckpt.id}"`);
      }
      await tx.objectStore('checkpoints').put(ckpt);
      await tx.objectStore('runs').put({ ...run, lastCheckpointId: ckpt.id, updatedAt: this.tick() });
      await tx.done;
    } catch (e) {
      if (isQuotaError(e)) throw new StorageQuotaError(ckpt.bytes, e);
      throw e;
    }
    return { pruned: await this.pruneCheckpoints(ckpt.runId, keepLast) };
  }

  /** Deletes all but the newest `keepLast` checkpoints of a run (by step); never the run's current one. */
  async pruneCheckpoints(runId: string, keepLast: number): Promise<string[]> {
    const tx = this.db.transaction(['runs', 'checkpoints'], 'readwrite');
    const run = await tx.objectStore('runs').get(runId);
    const keys = await tx
      .objectStore('checkpoints')
      .index('byRunStep')
      .getAllKeys(IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]));
    const doomed = keys.slice(0, Math.max(0, keys.length - keepLast)).filter((k) => k !== run?.lastCheckpointId);
    for (const k of doomed) await tx.objectStore('checkpoints').delete(k);
    await tx.done;
    return doomed;
  }

  /**
   * Adds a NEW run together with its checkpoint (an imported checkpoint file), in one
   * transaction: both are written or neither. The run id must be new (an existing run is
   * never overwritten) and the checkpoint must belong to it; the run points at it. `metrics`
   * (the run's metric log, carried by the checkpoint file) are written in the same transaction.
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
    try {
      const tx = this.db.transaction(['runs', 'checkpoints', 'metrics'], 'readwrite');
      const [oldRun, oldCkpt] = await Promise.all([
        tx.objectStore('runs').getKey(run.id),
        tx.objectStore('checkpoints').getKey(ckpt.id),
      ]);
      if (oldRun !== undefined || oldCkpt !== undefined) {
        tx.abort();
        await tx.done.catch(() => undefined);
        throw new Error(
          oldRun !== undefined
            ? `a run with id "${run.id}" already exists`
            : `a checkpoint with id "${ckpt.id}" already exists`,
        );
      }
      try {
        await tx.objectStore('checkpoints').add(ckpt);
        await tx.objectStore('runs').add(rec);
        for (const r of metrics) await tx.objectStore('metrics').put({ runId: run.id, step: r.step, values: r.values });
      } catch (e) {
        // A value that cannot be cloned throws before its request exists, which would let
        // the transaction commit what came before it: abort explicitly, all or nothing.
        try {
          tx.abort();
        } catch {
          /* already aborted */
        }
        await tx.done.catch(() => undefined);
        throw e;
      }
      await tx.done;
    } catch (e) {
      if (isQuotaError(e)) throw new StorageQuotaError(ckpt.bytes, e);
      throw e;
    }
    return rec;
  }

  async getCheckpoint(id: string): Promise<CheckpointRecord | undefined> {
    return this.db.get('checkpoints', id);
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
