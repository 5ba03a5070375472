import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PactStore, StorageQuotaError, isQuotaError, formatBytes } from './db';
import type { CheckpointRecord } from './schema';

let store: PactStore;
let dbName: string;
let n = 0;

beforeEach(async () => {
  dbName = `pact-test-${n++}`;
  store = await PactStore.open(dbName);
});
afterEach(async () => {
  store.close();
  await PactStore.destroy(dbName);
});

function ckpt(runId: string, step: number, extra: Partial<CheckpointRecord> = {}): CheckpointRecord {
  const w = new Float32Array([step, step + 0.5, -step]);
  return {
    id: `${runId}@${step}`,
    runId,
    step,
    createdAt: 1000 + step,
    config: { lr: 1e-3 },
    weights: [{ name: 'model.norm.weight', shape: [3], data: w.buffer }],
    optimizer: { step, tensors: [] },
    rngState: { s: [1, 2, 3, step] },
    trainerState: { cursor: step * 4 },
    bytes: w.byteLength,
    ...extra,
  };
}

describe('PactStore (IndexedDB through idb; fake-indexeddb in Node)', () => {
  it('creates, lists and updates runs; a duplicate id is refused by name', async () => {
    await store.createRun({ id: 'a', name: 'first', recipe: 'pact', config: { q: 0.4 } });
    await store.createRun({ id: 'b', name: 'second', recipe: 'grpo', config: {} });
    await store.updateRun('a', { status: 'running' });
    const runs = await store.listRuns();
    expect(runs.map((r) => r.id)).toEqual(['a', 'b']); // 'a' was updated last
    expect(runs[0].status).toBe('running');
    await expect(store.createRun({ id: 'a', name: 'x', recipe: 'sft', config: {} })).rejects.toThrow(
      'a run with id "a" already exists',
    );
    await expect(store.updateRun('zzz', { status: 'paused' })).rejects.toThrow('no run with id "zzz"');
  });

  it('appends metric rows in step order and tracks lastStep', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    await store.appendMetrics('r', [
      { step: 2, values: { reward: 0.5 } },
      { step: 1, values: { reward: 0.25 } },
    ]);
    await store.appendMetrics('r', [{ step: 10, values: { reward: 1 } }]);
    const rows = await store.getMetrics('r');
    expect(rows.map((r) => [r.step, r.values.reward])).toEqual([
      [1, 0.25],
      [2, 0.5],
      [10, 1],
    ]);
    expect((await store.getRun('r'))!.lastStep).toBe(10);
    await expect(store.appendMetrics('nope', [{ step: 1, values: {} }])).rejects.toThrow('no run with id "nope"');
  });

  it('saves a checkpoint and reads back the same bytes, pointing the run at it', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    await store.saveCheckpoint(ckpt('r', 3));
    const back = await store.loadLatestCheckpoint('r');
    expect(back!.step).toBe(3);
    expect(Array.from(new Float32Array(back!.weights[0].data))).toEqual([3, 3.5, -3]);
    expect(back!.rngState).toEqual({ s: [1, 2, 3, 3] });
    expect(back!.trainerState).toEqual({ cursor: 12 });
  });

  it('prunes older checkpoints only after the new one is committed, keeping the newest keepLast', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    await store.saveCheckpoint(ckpt('r', 1), { keepLast: 2 });
    await store.saveCheckpoint(ckpt('r', 2), { keepLast: 2 });
    const { pruned } = await store.saveCheckpoint(ckpt('r', 3), { keepLast: 2 });
    expect(pruned).toEqual(['r@1']);
    expect((await store.listCheckpoints('r')).map((c) => c.step)).toEqual([2, 3]);
  });

  it('a failed checkpoint write aborts as a whole: no half checkpoint, the old one stays current', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    await store.saveCheckpoint(ckpt('r', 1));
    // A function cannot be structured-cloned: the put fails inside the transaction.
    const bad = ckpt('r', 2, { trainerState: { hook: () => 1 } as unknown as Record<string, unknown> });
    await expect(store.saveCheckpoint(bad, { keepLast: 1 })).rejects.toThrow();
    expect(await store.getCheckpoint('r@2')).toBeUndefined();
    expect((await store.getRun('r'))!.lastCheckpointId).toBe('r@1');
    expect((await store.listCheckpoints('r')).map((c) => c.step)).toEqual([1]); // nothing pruned
  });

  it('a checkpoint for an unknown run is refused, naming it', async () => {
    await expect(store.saveCheckpoint(ckpt('ghost', 1))).rejects.toThrow(
      'no run with id "ghost" for checkpoint "ghost@1"',
    );
  });

  it('deleteRun removes the run, its metrics and its checkpoints, and leaves other runs alone', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    await store.createRun({ id: 's', name: 's', recipe: 'pact', config: {} });
    await store.appendMetrics('r', [{ step: 1, values: { reward: 1 } }]);
    await store.appendMetrics('s', [{ step: 1, values: { reward: 2 } }]);
    await store.saveCheckpoint(ckpt('r', 1));
    await store.saveCheckpoint(ckpt('s', 1));
    await store.deleteRun('r');
    expect(await store.getRun('r')).toBeUndefined();
    expect(await store.getMetrics('r')).toEqual([]);
    expect(await store.listCheckpoints('r')).toEqual([]);
    expect((await store.getMetrics('s')).map((m) => m.values.reward)).toEqual([2]);
    expect((await store.listCheckpoints('s')).length).toBe(1);
  });

  it('importRun adds a new paused run and its checkpoint together, pointing the run at it', async () => {
    await store.createRun({ id: 'old', name: 'old', recipe: 'pact', config: {} });
    await store.saveCheckpoint(ckpt('old', 2));
    const run = await store.importRun(
      { id: 'imp', name: 'imported', recipe: 'pact', config: { lr: 1e-3 }, status: 'paused', lastStep: 3 },
      ckpt('imp', 3),
    );
    expect(run.lastCheckpointId).toBe('imp@3');
    expect((await store.getRun('imp'))!.status).toBe('paused');
    const back = await store.loadLatestCheckpoint('imp');
    expect(Array.from(new Float32Array(back!.weights[0].data))).toEqual([3, 3.5, -3]);
    // The run that was there is untouched.
    expect((await store.getRun('old'))!.lastCheckpointId).toBe('old@2');
    expect((await store.listRuns()).map((r) => r.id)).toEqual(['imp', 'old']);
  });

  it('importRun writes the metric rows the checkpoint file carried with the run, all or nothing', async () => {
    await store.createRun({ id: 'old', name: 'old', recipe: 'pact', config: {} });
    await store.appendMetrics('old', [{ step: 1, values: { reward: 9 } }]);
    const runOf = (id: string) => ({
      id,
      name: id,
      recipe: 'pact',
      config: {},
      status: 'paused' as const,
      lastStep: 2,
    });
    const rows: { step: number; values: Record<string, number> }[] = [
      { step: 0, values: { 'eval/reward': 0.1 } },
      { step: 1, values: { reward: 0.25 } },
      { step: 2, values: { reward: 0.5, kl: Number.NaN } },
    ];
    await store.importRun(runOf('imp'), ckpt('imp', 2), rows);
    expect(await store.getMetrics('imp')).toEqual(rows.map((r) => ({ runId: 'imp', ...r })));
    expect((await store.getRun('imp'))!.lastStep).toBe(2);
    // A taken id writes no rows: the saved run's log is as it was.
    await expect(store.importRun(runOf('old'), ckpt('old', 2), rows)).rejects.toThrow('already exists');
    expect(await store.getMetrics('old')).toEqual([{ runId: 'old', step: 1, values: { reward: 9 } }]);
    // A row that cannot be stored: neither the run, its checkpoint nor any row is written.
    const bad = [rows[0], { step: 1, values: { f: (() => 1) as unknown as number } }];
    await expect(store.importRun(runOf('z'), ckpt('z', 2), bad)).rejects.toThrow();
    expect([await store.getRun('z'), await store.getCheckpoint('z@2'), await store.getMetrics('z')]).toEqual([
      undefined,
      undefined,
      [],
    ]);
  });

  it("importRun writes nothing when the id is taken, the checkpoint is not the run's, or a value cannot be stored", async () => {
    await store.createRun({ id: 'old', name: 'old', recipe: 'pact', config: { keep: 1 } });
    await store.saveCheckpoint(ckpt('old', 2));
    const before = await store.getRun('old');
    const runOf = (id: string) => ({
      id,
      name: id,
      recipe: 'pact',
      config: {},
      status: 'paused' as const,
      lastStep: 1,
    });
    await expect(store.importRun(runOf('old'), ckpt('old', 5))).rejects.toThrow('a run with id "old" already exists');
    expect(await store.getCheckpoint('old@5')).toBeUndefined();
    expect(await store.getRun('old')).toEqual(before);
    await expect(store.importRun(runOf('x'), ckpt('y', 1))).rejects.toThrow(
      'checkpoint "y@1" belongs to run "y", not to the imported run "x"',
    );
    // A function cannot be structured-cloned: the checkpoint's add fails, and the run is not added either.
    const bad = ckpt('z', 1, { trainerState: { hook: () => 1 } as unknown as Record<string, unknown> });
    await expect(store.importRun(runOf('z'), bad)).rejects.toThrow();
    expect(await store.getRun('z')).toBeUndefined();
    // …and a failing run record leaves no orphan checkpoint.
    const badRun = { ...runOf('w'), config: { hook: () => 1 } as unknown as Record<string, unknown> };
    await expect(store.importRun(badRun, ckpt('w', 1))).rejects.toThrow();
    expect(await store.getCheckpoint('w@1')).toBeUndefined();
    expect((await store.listRuns()).map((r) => r.id)).toEqual(['old']);
  });

  it('recognises quota errors and words them for the user', () => {
    const quota = Object.assign(new Error('x'), { name: 'QuotaExceededError' });
    expect(isQuotaError(quota)).toBe(true);
    expect(isQuotaError(new Error('other'))).toBe(false);
    // 3 MiB = 3 * 1024 * 1024 = 3145728 bytes
    const e = new StorageQuotaError(3145728, quota);
    expect(e.message).toContain('refused to store 3.0 MiB');
    expect(e.message).toContain('nothing already saved was lost');
    expect(formatBytes(1536)).toBe('1.5 KiB'); // 1536 / 1024 = 1.5
  });
});
