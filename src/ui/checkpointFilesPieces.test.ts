/**
 * The .tar export of a checkpoint stored in pieces is byte for byte the export of the same record
 * before it was stored (what the one-record layout read back), and of that record written whole by
 * DB_VERSION 1. A real trainer state (a tiny Qwen3, its AdamW moments and π_ref) in 256-byte chunks.
 */
import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { afterEach, expect, it } from 'vitest';
import { buildCheckpointRecord } from '../../workers/checkpointRecord';
import { getQwen3Preset, listQwen3ParamShapes, type Qwen3Config } from '../model/qwen3/config';
import { resolveConfig } from '../recipes/config';
import type { TrainerState } from '../recipes/types';
import { PactStore } from '../storage/db';
import { buildCheckpointArchive } from './checkpointFiles';

const MODEL: Qwen3Config = {
  ...getQwen3Preset('qwen3-nano'),
  vocab_size: 6,
  hidden_size: 4,
  intermediate_size: 8,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 2,
};

function buildState(): TrainerState {
  const weights = [...listQwen3ParamShapes(MODEL)].map(([name, shape], i) => ({
    name,
    shape,
    data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, j) => Math.sin(i * 31 + j) / 7),
  }));
  return {
    version: 1,
    step: 1,
    dataCursor: 2,
    rngStates: { root: { key: '5', words: [9, 8, 7, 6] } },
    weights,
    optimizer: weights.flatMap((w) => [
      { name: `${w.name}.exp_avg`, shape: w.shape, data: w.data.map((x) => x / 3) },
      { name: `${w.name}.exp_avg_sq`, shape: w.shape, data: w.data.map((x) => x * x) },
      { name: `${w.name}.step`, shape: [], data: Float32Array.of(1) },
    ]),
    referenceWeights: weights.map((w) => ({ ...w, data: w.data.map((x) => -x) })),
    config: resolveConfig({ recipe: 'grpo', name: 'tiny', steps: 3, seed: 5 }),
    recipe: 'grpo',
  };
}

const names: string[] = [];
afterEach(async () => {
  for (const name of names.splice(0)) await PactStore.destroy(name);
});

const concat = (chunks: Uint8Array[]) => {
  const out = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
  let at = 0;
  for (const c of chunks) out.set(c, (at += c.length) - c.length);
  return out;
};

it('exports the same .tar bytes from a checkpoint stored in pieces as from the record itself and from a version-1 record', async () => {
  const record = buildCheckpointRecord('c', buildState(), { keptIds: [0, 3, 4, 10, 11, 151643] }, MODEL);
  const want = concat(buildCheckpointArchive({ id: 'c' }, structuredClone(record)).chunks);

  names.push('pact-tar-pieces');
  const store = await PactStore.open('pact-tar-pieces', { chunkBytes: 256 });
  await store.createRun({ id: 'c', name: 'c', recipe: 'grpo', config: {} });
  await store.saveCheckpoint(record);
  const fromPieces = (await store.loadLatestCheckpoint('c'))!;
  store.close();
  const db = await openDB('pact-tar-pieces');
  const chunkCount = (await db.count('checkpointChunks')) as number;
  db.close();
  expect(chunkCount).toBe(Math.ceil(record.bytes / 256));
  expect(chunkCount).toBeGreaterThan(3);
  expect(concat(buildCheckpointArchive({ id: 'c' }, fromPieces).chunks)).toEqual(want);

  // The same record written whole, as DB_VERSION 1 did, read after the upgrade.
  names.push('pact-tar-v1');
  const old = await openDB('pact-tar-v1', 1, {
    upgrade(db) {
      db.createObjectStore('runs', { keyPath: 'id' }).createIndex('byUpdated', 'updatedAt');
      db.createObjectStore('metrics', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
      const ckpts = db.createObjectStore('checkpoints', { keyPath: 'id' });
      ckpts.createIndex('byRun', 'runId');
      ckpts.createIndex('byRunStep', ['runId', 'step']);
    },
  });
  await old.put('checkpoints', record);
  old.close();
  const upgraded = await PactStore.open('pact-tar-v1', { chunkBytes: 256 });
  const fromV1 = (await upgraded.getCheckpoint('c@1'))!;
  upgraded.close();
  expect(concat(buildCheckpointArchive({ id: 'c' }, fromV1).chunks)).toEqual(want);
});
