/**
 * Checkpoints stored in pieces (checkpointPieces.ts, PactStore): a checkpoint larger than one chunk
 * comes back bit for bit; a save cut short between chunks leaves no readable part of it; prune and
 * delete leave no chunk behind; a record written whole by DB_VERSION 1 still reads. fake-indexeddb;
 * small chunks (1 KiB) stand in for the app's 64 MiB.
 */
import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allocateCheckpoint, CHECKPOINT_CHUNK_BYTES, cutChunks, splitCheckpoint } from './checkpointPieces';
import { PactStore } from './db';
import type { CheckpointChunk, CheckpointRecord } from './schema';

const CHUNK = 1024;
let store: PactStore;
let dbName: string;
let n = 0;

beforeEach(async () => {
  dbName = `pact-pieces-${n++}`;
  store = await PactStore.open(dbName, { chunkBytes: CHUNK });
});
afterEach(async () => {
  store.close();
  await PactStore.destroy(dbName);
});

/** Floats whose bits differ everywhere (NaN payloads and -0 included), so a misplaced byte shows. */
function floats(length: number, seed: number): ArrayBuffer {
  const bits = Uint32Array.from({ length }, (_, i) => Math.imul(i + 1, 2654435761) ^ Math.imul(seed, 40503));
  bits[0] = 0x7fc00001 + seed; // a NaN with a payload
  bits[1] = 0x80000000; // -0
  return bits.buffer;
}

/**
 * A checkpoint of 5,000 bytes of weights, 7,000 of moments, 5,000 of π_ref and 300 of adapters
 * (17,300 bytes: 16 chunks of 1,024 and one of 916), no tensor on a chunk boundary.
 */
function bigCkpt(runId: string, step: number): CheckpointRecord {
  return {
    id: `${runId}@${step}`,
    runId,
    step,
    createdAt: 1000 + step,
    config: { lr: 1e-3, model: { preset: 'qwen3-nano' } },
    weights: [
      { name: 'a', shape: [250], data: floats(250, step) },
      { name: 'b', shape: [25, 40], data: floats(1000, step + 1) },
    ],
    optimizer: { step, tensors: [{ name: 'a.exp_avg', shape: [1750], data: floats(1750, step + 2) }] },
    rngState: { root: { key: 'k', words: [1, 2, 3, step] } },
    trainerState: {
      version: 1,
      dataCursor: step * 2,
      referenceWeights: [{ name: 'a', shape: [1250], data: floats(1250, step + 3) }],
      adapterWeights: [{ name: 'a.lora_A', shape: [75], data: floats(75, step + 4) }],
      mapping: { keptIds: [0, 3, 4] },
    },
    bytes: 17_300,
  };
}

/** Every chunk record in the database, read past PactStore (a second connection). */
async function rawChunks(): Promise<CheckpointChunk[]> {
  const db = await openDB(dbName);
  const all = (await db.getAll('checkpointChunks')) as CheckpointChunk[];
  db.close();
  return all;
}

const bytesOf = (b: ArrayBuffer) => Array.from(new Uint8Array(b));
function expectSameCheckpoint(back: CheckpointRecord | undefined, want: CheckpointRecord) {
  expect(back).toBeDefined();
  const strip = (r: CheckpointRecord) =>
    JSON.parse(JSON.stringify(r, (_k, v) => (v instanceof ArrayBuffer ? bytesOf(v) : v)));
  expect(strip(back!)).toEqual(strip(want));
  expect(back!.weights[1].data).toBeInstanceOf(ArrayBuffer);
}

describe('checkpoints in pieces', () => {
  it('cuts the byte stream across tensor boundaries and puts it back (pure functions)', () => {
    const rec = bigCkpt('r', 1);
    const { header, buffers, totalBytes } = splitCheckpoint(rec);
    expect(totalBytes).toBe(17_300); // 1,000 + 4,000 + 7,000 + 5,000 + 300
    expect(header.weights).toEqual([
      { name: 'a', shape: [250], data: { chunkedBytes: { offset: 0, byteLength: 1000 } } },
      { name: 'b', shape: [25, 40], data: { chunkedBytes: { offset: 1000, byteLength: 4000 } } },
    ]);
    const chunks = [...cutChunks(buffers, CHUNK)];
    expect(chunks.map((c) => c.byteLength)).toEqual([...Array(16).fill(1024), 916]); // 16 × 1,024 + 916 = 17,300
    const { record, place } = allocateCheckpoint({
      ...header,
      pieces: { writeId: 'w', count: chunks.length, chunkBytes: CHUNK, totalBytes },
    });
    [...chunks].reverse().forEach((c, i) => place((chunks.length - 1 - i) * CHUNK, c)); // in any order
    expectSameCheckpoint(record, rec);
    expect(CHECKPOINT_CHUNK_BYTES).toBe(67_108_864); // 64 MiB, under Chromium's 133,169,152 per value
  });

  it('a checkpoint of 17 chunks round-trips bit for bit; no chunk is over the chunk size', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    const chunksSeen: number[] = [];
    await store.saveCheckpoint(bigCkpt('r', 1), { onChunk: (i, count) => void chunksSeen.push(i, count) });
    expect(chunksSeen.length / 2).toBe(17);
    expectSameCheckpoint(await store.loadLatestCheckpoint('r'), bigCkpt('r', 1));
    const chunks = await rawChunks();
    expect(chunks).toHaveLength(17);
    expect(Math.max(...chunks.map((c) => c.data.byteLength))).toBe(CHUNK);
    expect(await store.listCheckpoints('r')).toEqual([{ id: 'r@1', step: 1, createdAt: 1001, bytes: 17_300 }]);
  });

  it('a save cut short between chunks (the page died) leaves no readable part of it; the next save sweeps its chunks', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    await store.saveCheckpoint(bigCkpt('r', 1));
    // Step 2's save stops for good after its third chunk committed, as a closed tab would.
    const saving = store.saveCheckpoint(bigCkpt('r', 2), {
      onChunk: (i) => (i === 2 ? new Promise<void>(() => undefined) : undefined),
    });
    void saving;
    await expect.poll(async () => (await rawChunks()).length).toBe(17 + 3);
    store.close();
    store = await PactStore.open(dbName, { chunkBytes: CHUNK }); // the reload
    expect((await store.getRun('r'))!.lastCheckpointId).toBe('r@1');
    expect(await store.getCheckpoint('r@2')).toBeUndefined();
    expect(await store.listCheckpoints('r')).toHaveLength(1);
    expectSameCheckpoint(await store.loadLatestCheckpoint('r'), bigCkpt('r', 1));
    // The resumed run saves step 2 again: the 3 stray chunks go first.
    await store.saveCheckpoint(bigCkpt('r', 2));
    expect((await rawChunks()).length).toBe(2 * 17);
    expectSameCheckpoint(await store.loadLatestCheckpoint('r'), bigCkpt('r', 2));
  });

  it('a save that fails between chunks removes what it wrote; the old checkpoint stays current', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    await store.saveCheckpoint(bigCkpt('r', 1));
    const failing = store.saveCheckpoint(bigCkpt('r', 2), {
      onChunk: (i) => {
        if (i === 5) throw new Error('disk gone');
      },
    });
    await expect(failing).rejects.toThrow('disk gone');
    expect(await rawChunks()).toHaveLength(17);
    expect((await store.getRun('r'))!.lastCheckpointId).toBe('r@1');
    // A value that cannot be cloned fails at the header, after every chunk: they are removed too.
    const bad = { ...bigCkpt('r', 3), trainerState: { hook: () => 1 } as unknown as Record<string, unknown> };
    await expect(store.saveCheckpoint(bad)).rejects.toThrow();
    expect(await rawChunks()).toHaveLength(17);
    expect(await store.listCheckpoints('r')).toHaveLength(1);
    // An unknown run is refused before any chunk is written.
    await expect(store.saveCheckpoint(bigCkpt('ghost', 1))).rejects.toThrow('no run with id "ghost"');
    expect(await rawChunks()).toHaveLength(17);
  });

  it('keeps the last 2 checkpoints with their chunks; saving one id again replaces its chunks', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    for (const step of [1, 2, 3]) await store.saveCheckpoint(bigCkpt('r', step), { keepLast: 2 });
    expect((await store.listCheckpoints('r')).map((c) => c.step)).toEqual([2, 3]);
    expect(await rawChunks()).toHaveLength(2 * 17);
    await store.saveCheckpoint(bigCkpt('r', 3), { keepLast: 2 });
    expect(await rawChunks()).toHaveLength(2 * 17);
    expectSameCheckpoint(await store.getCheckpoint('r@2'), bigCkpt('r', 2));
  });

  it('deleteRun removes every chunk of the run, stray ones included, and no other run’s', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    await store.createRun({ id: 's', name: 's', recipe: 'pact', config: {} });
    await store.saveCheckpoint(bigCkpt('r', 1));
    await store.saveCheckpoint(bigCkpt('r', 2));
    await store.saveCheckpoint(bigCkpt('s', 1));
    void store.saveCheckpoint(bigCkpt('r', 3), { onChunk: () => new Promise<void>(() => undefined) });
    await expect.poll(async () => (await rawChunks()).length).toBe(3 * 17 + 1);
    await store.deleteRun('r');
    const left = await rawChunks();
    expect(left).toHaveLength(17);
    expect(new Set(left.map((c) => c.runId))).toEqual(new Set(['s']));
    expectSameCheckpoint(await store.loadLatestCheckpoint('s'), bigCkpt('s', 1));
  });

  it('importRun writes the chunks with the run; a taken id writes none', async () => {
    await store.importRun(
      { id: 'imp', name: 'imp', recipe: 'pact', config: {}, status: 'paused', lastStep: 1 },
      bigCkpt('imp', 1),
    );
    expectSameCheckpoint(await store.loadLatestCheckpoint('imp'), bigCkpt('imp', 1));
    await expect(
      store.importRun(
        { id: 'imp', name: 'x', recipe: 'pact', config: {}, status: 'paused', lastStep: 1 },
        bigCkpt('imp', 1),
      ),
    ).rejects.toThrow('a run with id "imp" already exists');
    const badRun = {
      id: 'w',
      name: 'w',
      recipe: 'pact',
      config: { f: () => 1 },
      status: 'paused' as const,
      lastStep: 1,
    };
    await expect(store.importRun(badRun as never, bigCkpt('w', 1))).rejects.toThrow();
    expect(await rawChunks()).toHaveLength(17);
  });

  it('a checkpoint written whole by DB_VERSION 1 still reads, prunes and deletes after the upgrade', async () => {
    store.close();
    await PactStore.destroy(dbName);
    // The old layout, as version 1 created it: one record holding every tensor.
    const old = await openDB(dbName, 1, {
      upgrade(db) {
        db.createObjectStore('runs', { keyPath: 'id' }).createIndex('byUpdated', 'updatedAt');
        db.createObjectStore('metrics', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
        const ckpts = db.createObjectStore('checkpoints', { keyPath: 'id' });
        ckpts.createIndex('byRun', 'runId');
        ckpts.createIndex('byRunStep', ['runId', 'step']);
      },
    });
    await old.put('runs', {
      id: 'v1',
      name: 'v1',
      recipe: 'pact',
      config: {},
      createdAt: 1,
      updatedAt: 1,
      status: 'paused',
      lastStep: 1,
      lastCheckpointId: 'v1@1',
    });
    await old.put('checkpoints', bigCkpt('v1', 1));
    old.close();

    store = await PactStore.open(dbName, { chunkBytes: CHUNK });
    expectSameCheckpoint(await store.loadLatestCheckpoint('v1'), bigCkpt('v1', 1));
    expect(await rawChunks()).toHaveLength(0);
    // The run goes on in pieces; keepLast 1 prunes the whole record.
    await store.saveCheckpoint(bigCkpt('v1', 2), { keepLast: 1 });
    expect((await store.listCheckpoints('v1')).map((c) => c.id)).toEqual(['v1@2']);
    expectSameCheckpoint(await store.loadLatestCheckpoint('v1'), bigCkpt('v1', 2));
    await store.deleteRun('v1');
    expect([await rawChunks(), await store.listCheckpoints('v1')]).toEqual([[], []]);
  });

  it('a chunk gone missing is named, never read as zeros', async () => {
    await store.createRun({ id: 'r', name: 'r', recipe: 'pact', config: {} });
    await store.saveCheckpoint(bigCkpt('r', 1));
    const db = await openDB(dbName);
    const [first] = (await db.getAllKeys('checkpointChunks')) as [string, number][];
    await db.delete('checkpointChunks', [first[0], 4]);
    db.close();
    await expect(store.loadLatestCheckpoint('r')).rejects.toThrow(
      'checkpoint "r@1" is damaged: piece 5 of 17 is missing',
    );
  });
});
