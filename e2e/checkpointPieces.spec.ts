/**
 * A checkpoint over what Chromium stores as one IndexedDB value (133,169,152 bytes) is saved in
 * pieces, survives a reload, and resumes bit for bit, in real Chromium with its real IndexedDB.
 *
 * The model: a Qwen3 folder of the warm start's pruned vocabulary (1,022), hidden 384, 6 layers,
 * tied embeddings: 9,835,392 parameters, so a checkpoint (weights, two AdamW moments, π_ref) is
 * about 157 MB, over the old one-record limit, in 3 chunks of at most 64 MiB. Two runs of the same
 * config (2 steps, K 2, one prompt): A trains straight through; B pauses after step 1, the page
 * reloads, and B resumes from its stored checkpoint. B's step 2 must equal A's: its metrics and
 * the SHA-256 of its checkpoint's bytes.
 */
import { test, expect, type Page } from '@playwright/test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { listQwen3ParamShapes, type Qwen3Config } from '../src/model/qwen3/config';
import { saveQwen3Folder } from '../src/model/weights/qwen3Folder';
import { readPageDb } from '../scripts/pageDb';
import { tinyRunUrl } from './tinyRun';

const WARM_START = path.resolve('public/warm-start');
const BIG: Qwen3Config = {
  vocab_size: 1022,
  hidden_size: 384,
  intermediate_size: 1024,
  num_hidden_layers: 6,
  num_attention_heads: 6,
  num_key_value_heads: 2,
  head_dim: 64,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 2048,
};
// 1,022 × 384 embedding + 384 final norm + 6 × (384 × (384 + 128 + 128) + 384 × 384 + 2 × 64 + 3 × 384 × 1,024 + 2 × 384).
const BIG_PARAMS = 9_835_392;
const CHROMIUM_MAX_VALUE_BYTES = 133_169_152;
const CHUNK_BYTES = 64 * 2 ** 20;

let root: string;

test.beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'pact-ckpt-pieces-'));
  const tensors = [...listQwen3ParamShapes(BIG)].map(([name, shape]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const isNorm = name.endsWith('norm.weight');
    return { name, shape, data: Float32Array.from({ length: n }, (_, i) => (isNorm ? 1 : 0.02 * Math.sin(i + 1))) };
  });
  expect(tensors.reduce((s, t) => s + t.data.length, 0)).toBe(BIG_PARAMS);
  const prunedVocab = JSON.parse(readFileSync(path.join(WARM_START, 'pruned_vocab.json'), 'utf8'));
  const dir = path.join(root, 'qwen3-157mb');
  mkdirSync(dir, { recursive: true });
  for (const [file, content] of Object.entries(saveQwen3Folder({ config: BIG, tensors, prunedVocab })))
    writeFileSync(path.join(dir, file), content);
});

test.afterAll(() => rmSync(root, { recursive: true, force: true }));

interface StoredCheckpoint {
  id: string;
  bytes: number;
  pieces: { writeId: string; count: number; chunkBytes: number; totalBytes: number };
  chunkSizes: number[];
  sha256: string;
}

/** A run's current checkpoint as IndexedDB holds it: its header, its chunks' sizes and the SHA-256 of their bytes in order. */
async function readStoredCheckpoint(page: Page, runId: string): Promise<StoredCheckpoint> {
  return page.evaluate(async (id) => {
    const db = await new Promise<IDBDatabase>((res, rej) => {
      const r = indexedDB.open('pact-lab');
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    const get = <T>(store: string, key: IDBValidKey) =>
      new Promise<T>((res, rej) => {
        const q = db.transaction(store).objectStore(store).get(key);
        q.onsuccess = () => res(q.result as T);
        q.onerror = () => rej(q.error);
      });
    const run = await get<{ lastCheckpointId: string }>('runs', id);
    const header = await get<Omit<StoredCheckpoint, 'chunkSizes' | 'sha256'>>('checkpoints', run.lastCheckpointId);
    const all = new Uint8Array(header.pieces.totalBytes);
    const chunkSizes: number[] = [];
    for (let i = 0; i < header.pieces.count; i++) {
      const chunk = await get<{ data: ArrayBuffer }>('checkpointChunks', [header.pieces.writeId, i]);
      chunkSizes.push(chunk.data.byteLength);
      all.set(new Uint8Array(chunk.data), i * header.pieces.chunkBytes);
    }
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', all));
    db.close();
    return {
      id: header.id,
      bytes: header.bytes,
      pieces: header.pieces,
      chunkSizes,
      sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join(''),
    };
  }, runId);
}

async function waitForStatus(page: Page, runId: () => string | undefined, status: string, timeout: number) {
  const startError = page.getByTestId('run-setup').getByTestId('start-error');
  await expect
    .poll(
      async () => {
        if ((await startError.count()) > 0) return `start error: ${await startError.innerText()}`;
        const run = (await readPageDb(page)).runs.find((r) => r.id === runId());
        return run?.status === 'failed' ? `failed: ${run.error}` : run?.status;
      },
      { timeout, intervals: [2000] },
    )
    .toBe(status);
}

/** Training metrics that do not depend on wall time or memory. */
const DETERMINISTIC = ['reward', 'reward_std', 'loss', 'kl', 'entropy', 'clip_ratio', 'grad_norm', 'lr'];

test('a 157 MB checkpoint is saved in 3 pieces, survives a reload and resumes bit for bit', async ({ page }) => {
  test.setTimeout(900_000);
  const t0 = Date.now();
  const mark = (what: string) =>
    console.log(`[checkpointPieces] ${what} at ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  await page.goto(tinyRunUrl({ steps: '2', K: '2', batch: '1', miniBatch: '1', backend: 'wasm' }));
  const setup = page.getByTestId('run-setup');
  await setup.getByTestId('model-folder-input').setInputFiles(path.join(root, 'qwen3-157mb'));
  await expect(setup.getByTestId('model-folder-shape')).toHaveText(
    '6 layers · hidden 384 · vocab 1,022 · 9.84 M parameters',
  );

  // ---- run A: two steps straight through ---------------------------------------------------
  await setup.getByTestId('btn-train').click();
  let idA: string | undefined;
  await expect.poll(async () => (idA = (await readPageDb(page)).runs[0]?.id), { timeout: 120_000 }).toBeTruthy();
  await waitForStatus(page, () => idA, 'finished', 400_000);
  mark('run A finished');
  const ckptA = await readStoredCheckpoint(page, idA!);
  expect(ckptA.id).toBe(`${idA}@2`);
  expect(ckptA.bytes).toBeGreaterThan(CHROMIUM_MAX_VALUE_BYTES);
  expect(ckptA.pieces.totalBytes).toBe(ckptA.bytes);
  expect(ckptA.chunkSizes).toHaveLength(3);
  expect(ckptA.chunkSizes.slice(0, 2)).toEqual([CHUNK_BYTES, CHUNK_BYTES]);
  expect(ckptA.chunkSizes.reduce((a, b) => a + b, 0)).toBe(ckptA.bytes);

  // ---- run B: pause after step 1, reload, resume from IndexedDB -----------------------------
  await setup.getByTestId('btn-train').click();
  let idB: string | undefined;
  await expect
    .poll(async () => (idB = (await readPageDb(page)).runs.find((r) => r.id !== idA)?.id), { timeout: 120_000 })
    .toBeTruthy();
  await expect(setup.getByTestId('btn-pause')).toBeEnabled({ timeout: 120_000 });
  await setup.getByTestId('btn-pause').click(); // takes effect after step 1, which is then checkpointed
  await waitForStatus(page, () => idB, 'paused', 400_000);
  mark('run B paused after step 1');
  const ckptB1 = await readStoredCheckpoint(page, idB!);
  expect([ckptB1.id, ckptB1.chunkSizes.length]).toEqual([`${idB}@1`, 3]);

  await page.reload();
  const row = page.locator(`tr[data-run-id="${idB}"]`);
  await expect(row.getByRole('button', { name: 'Resume' })).toBeEnabled({ timeout: 60_000 });
  await row.getByRole('button', { name: 'Resume' }).click();
  await waitForStatus(page, () => idB, 'finished', 400_000);
  mark('run B resumed to the end');

  const db = await readPageDb(page);
  const rowsOf = (id: string) => db.metrics.filter((m) => m.runId === id);
  expect(rowsOf(idB!).map((m) => m.step)).toEqual([1, 2]);
  const pick = (v: Record<string, number>) => Object.fromEntries(DETERMINISTIC.map((k) => [k, v[k]]));
  for (const step of [1, 2]) {
    const a = rowsOf(idA!).find((m) => m.step === step)!.values;
    const b = rowsOf(idB!).find((m) => m.step === step)!.values;
    expect(pick(b), `step ${step}`).toEqual(pick(a));
  }
  const ckptB = await readStoredCheckpoint(page, idB!);
  expect(ckptB.id).toBe(`${idB}@2`);
  expect(ckptB.sha256).toBe(ckptA.sha256); // weights, AdamW moments and π_ref, bit for bit
  // The last 2 checkpoints are kept, each with exactly its own chunks.
  const chunkCount = await page.evaluate(
    () =>
      new Promise<number>((res, rej) => {
        const r = indexedDB.open('pact-lab');
        r.onerror = () => rej(r.error);
        r.onsuccess = () => {
          const q = r.result.transaction('checkpointChunks').objectStore('checkpointChunks').count();
          q.onsuccess = () => (res(q.result), r.result.close());
          q.onerror = () => rej(q.error);
        };
      }),
  );
  expect(chunkCount).toBe(4 * 3); // runs A and B, checkpoints @1 and @2, 3 chunks each
});
