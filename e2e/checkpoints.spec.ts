/**
 * Checkpoints in the browser: a run saved in IndexedDB survives a reload
 * and resumes from its checkpoint; a checkpoint leaves the page as one .tar of the
 * Hugging Face folder + optimizer + trainer state + the metric log, and comes back as a new
 * run with its metric rows.
 *
 * One tiny wasm run (2 steps, K = 2, 2 prompts, warm start) does it all, because a step
 * costs about a minute here; its four stages are in docs/testing.md.
 */
import { test, expect, type Page } from '@playwright/test';
import { ONE_STEP_WASM_URL, tinyRunUrl } from './tinyRun';
import { readPageDb } from '../scripts/pageDb';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTar, writeTar } from '../src/storage/tar';

const HERE = dirname(fileURLToPath(import.meta.url));
const WARM_CONFIG = JSON.parse(readFileSync(resolve(HERE, '../public/warm-start/config.json'), 'utf8')) as Record<
  string,
  unknown
>;

interface StoredRun {
  id: string;
  name: string;
  status: string;
  lastStep: number;
  lastCheckpointId?: string;
}

/** Runs and metric rows as the app stored them (database `pact-lab`). */
async function readDb(
  page: Page,
): Promise<{ runs: StoredRun[]; metrics: { runId: string; step: number; values: Record<string, number> }[] }> {
  return (await readPageDb(page)) as unknown as {
    runs: StoredRun[];
    metrics: { runId: string; step: number; values: Record<string, number> }[];
  };
}

/** Sets config.evalEvery = 0 in a stored run and its checkpoint (test setup, see below). */
async function disableEval(page: Page, runId: string) {
  await page.evaluate(async (id) => {
    const db = await new Promise<IDBDatabase>((res, rej) => {
      const r = indexedDB.open('pact-lab');
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    const tx = db.transaction(['runs', 'checkpoints'], 'readwrite');
    const get = <T>(store: string, key: string) =>
      new Promise<T>((res, rej) => {
        const q = tx.objectStore(store).get(key);
        q.onsuccess = () => res(q.result as T);
        q.onerror = () => rej(q.error);
      });
    const run = await get<{ config: Record<string, unknown>; lastCheckpointId: string }>('runs', id);
    const ckpt = await get<{ config: Record<string, unknown> }>('checkpoints', run.lastCheckpointId);
    tx.objectStore('runs').put({ ...run, config: { ...run.config, evalEvery: 0 } });
    tx.objectStore('checkpoints').put({ ...ckpt, config: { ...ckpt.config, evalEvery: 0 } });
    await new Promise<void>((res, rej) => {
      tx.oncomplete = () => res();
      tx.onerror = () => rej(tx.error);
    });
    db.close();
  }, runId);
}

async function pickFiles(page: Page, button: string, files: { name: string; mimeType: string; buffer: Buffer }[]) {
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByTestId(button).click()]);
  await chooser.setFiles(files);
}

/** Resumes a saved run from its Runs-panel row and waits until IndexedDB says it finished. */
async function resumeToEnd(page: Page, runId: string) {
  const row = page.locator(`tr[data-run-id="${runId}"]`);
  await expect(row.getByRole('button', { name: 'Resume' })).toBeEnabled();
  await row.getByRole('button', { name: 'Resume' }).click();
  const startError = page.getByTestId('run-setup').getByTestId('start-error');
  await expect
    .poll(
      async () => {
        if ((await startError.count()) > 0) return `start error: ${await startError.innerText()}`;
        const run = (await readDb(page)).runs.find((r) => r.id === runId);
        return run?.status === 'failed' ? `failed: ${JSON.stringify(run)}` : run?.status;
      },
      { timeout: 240_000, intervals: [2000] },
    )
    .toBe('finished');
}

/** Training metrics that do not depend on wall time or memory. */
const DETERMINISTIC = [
  'reward',
  'reward_std',
  'loss',
  'kl',
  'entropy',
  'clip_ratio',
  'grad_norm',
  'completions/mean_length',
  'lr',
];

test('a run checkpoints, exports and re-imports as a .tar, survives a reload, and both copies resume to the same step 2', async ({
  page,
}) => {
  test.setTimeout(480_000);
  const t0 = Date.now();
  const mark = (what: string) => console.log(`[checkpoints] ${what} at ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  await page.goto(tinyRunUrl({ steps: '2', K: '2', batch: '2', miniBatch: '1', backend: 'wasm' }));
  const setup = page.getByTestId('run-setup');
  const progress = setup.getByTestId('train-progress');
  await setup.getByTestId('btn-train').click();
  await expect(setup.getByTestId('btn-pause')).toBeEnabled({ timeout: 60_000 });
  await setup.getByTestId('btn-pause').click(); // takes effect after step 1, which is then checkpointed
  await expect(progress).toHaveAttribute('data-phase', 'paused', { timeout: 240_000 });

  mark('paused after step 1');
  // The worker writes the checkpoint, then marks the run paused.
  await expect.poll(async () => (await readDb(page)).runs[0]?.status, { timeout: 60_000 }).toBe('paused');
  let db = await readDb(page);
  expect(db.runs).toHaveLength(1);
  let original = db.runs[0];
  expect([original.status, original.lastStep, original.lastCheckpointId]).toEqual(['paused', 1, `${original.id}@1`]);

  // The setup form has no field for evalEvery, and the held-out evaluation at a run's last
  // step greedily decodes 32 test tasks (minutes on wasm here). It changes no training
  // metric, so this test turns it off in the stored run and checkpoint (config.evalEvery = 0,
  // the value the worker reads on resume), before exporting: the .tar carries it too.
  await disableEval(page, original.id);
  original = (await readDb(page)).runs[0];

  // ---- export: one .tar of the checkpoint folder --------------------------------------
  const panel = page.getByTestId('runs-panel');
  await panel.getByTestId('runs-refresh').click();
  const row = panel.locator(`tr[data-run-id="${original.id}"]`);
  const [download] = await Promise.all([page.waitForEvent('download'), row.getByTestId('export-checkpoint').click()]);
  const base = `${original.id}-step1`;
  expect(download.suggestedFilename()).toBe(`${base}.tar`);
  const tarPath = (await download.path())!;
  const tarBytes = new Uint8Array(readFileSync(tarPath));
  const entries = readTar(tarBytes);
  const names = [
    'config.json',
    'model.safetensors',
    'pruned_vocab.json',
    'optimizer.safetensors',
    'reference.safetensors',
    'trainer_state.json',
    'checkpoint_manifest.json',
    'metrics.jsonl', // the run's metric log up to the checkpoint's step, outside the manifest
  ];
  expect(entries.map((e) => e.name)).toEqual(names.map((n) => `${base}/${n}`));
  // GNU tar, an independent reader, lists the same files (when it is installed).
  let gnuList: string[] | null;
  try {
    gnuList = execFileSync('tar', ['-tf', tarPath], { encoding: 'utf8' }).trim().split('\n');
  } catch {
    gnuList = null;
  }
  if (gnuList) expect(gnuList).toEqual(names.map((n) => `${base}/${n}`));
  const fileOf = (n: string) => new TextDecoder().decode(entries.find((e) => e.name === `${base}/${n}`)!.data);
  const config = JSON.parse(fileOf('config.json'));
  // The run started from the shipped warm start: the same Qwen3 shape (vocab = its pruned vocabulary).
  for (const k of [
    'vocab_size',
    'hidden_size',
    'intermediate_size',
    'num_hidden_layers',
    'num_attention_heads',
    'num_key_value_heads',
    'head_dim',
    'tie_word_embeddings',
  ]) {
    expect(config[k], `config.json ${k}`).toBe(WARM_CONFIG[k]);
  }
  expect(JSON.parse(fileOf('pruned_vocab.json')).keptIds).toHaveLength(WARM_CONFIG.vocab_size as number);
  const state = JSON.parse(fileOf('trainer_state.json'));
  expect([
    state.step,
    state.recipe,
    state.config.steps,
    state.config.rolloutsPerPrompt,
    state.config.evalEvery,
  ]).toEqual([1, 'pact', 2, 2, 0]);

  // ---- import: a new run, the saved one untouched ---------------------------------------
  const rows = panel.getByTestId('runs-table').locator('tbody tr');
  await pickFiles(page, 'import-checkpoint', [
    { name: `${base}.tar`, mimeType: 'application/x-tar', buffer: Buffer.from(tarBytes) },
  ]);
  await expect(panel.getByTestId('ckpt-import-message')).toContainText(`Imported ${base}.tar as run`, {
    timeout: 60_000,
  });
  await expect(rows).toHaveCount(2);
  // The config never named the run, so the copy is named after where it came from (never "run").
  const importedRow = rows.filter({ hasText: 'imported from' });
  await expect(importedRow.getByTestId('run-name')).toHaveText(`imported from ${base}.tar, step 1`);
  await expect(importedRow.getByTestId('run-step')).toHaveText('1');
  await expect(importedRow).toContainText('paused');
  db = await readDb(page);
  const imported = db.runs.find((r) => r.id !== original.id)!;
  expect([imported.status, imported.lastStep, imported.lastCheckpointId]).toEqual(['paused', 1, `${imported.id}@1`]);
  expect(db.runs.find((r) => r.id === original.id)).toEqual(original);

  // ---- corrupt input: a named error, nothing added --------------------------------------
  const withoutState = writeTar(entries.filter((e) => !e.name.endsWith('trainer_state.json')));
  await pickFiles(page, 'import-checkpoint', [
    { name: 'no-state.tar', mimeType: 'application/x-tar', buffer: Buffer.from(withoutState) },
  ]);
  await expect(panel.getByTestId('ckpt-import-error')).toContainText('trainer_state.json is missing');
  await expect(panel.getByTestId('ckpt-import-message')).toHaveCount(0);
  const random = Buffer.from(Uint8Array.from({ length: 4096 }, (_, i) => (i * 131 + 17) & 255));
  await pickFiles(page, 'import-checkpoint', [
    { name: 'random.bin', mimeType: 'application/octet-stream', buffer: random },
  ]);
  await expect(panel.getByTestId('ckpt-import-error')).toContainText('random.bin is not a .tar archive');
  await expect(rows).toHaveCount(2);
  expect((await readDb(page)).runs).toHaveLength(2);
  await panel.scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/checkpoints-import.png' });

  // ---- reload, then resume the original run from IndexedDB ----------------------------
  mark('exported, imported, corrupt inputs refused');
  await page.reload();
  await expect(rows).toHaveCount(2);
  await resumeToEnd(page, original.id);
  db = await readDb(page);
  const finished = db.runs.find((r) => r.id === original.id)!;
  expect([finished.status, finished.lastStep]).toEqual(['finished', 2]);
  const originalRows = db.metrics.filter((m) => m.runId === original.id);
  expect(originalRows.map((m) => m.step)).toEqual([1, 2]);
  for (const m of originalRows) {
    for (const k of ['reward', 'loss', 'kl', 'entropy', 'grad_norm', 'completions/mean_length']) {
      expect(Number.isFinite(m.values[k]), `step ${m.step} ${k} = ${m.values[k]}`).toBe(true);
    }
  }

  // ---- resume the imported copy: the same step 2 -----------------------------------------
  mark('original resumed to the end');
  await resumeToEnd(page, imported.id);
  db = await readDb(page);
  expect(db.runs.find((r) => r.id === imported.id)).toMatchObject({ status: 'finished', lastStep: 2 });
  const importedRows = db.metrics.filter((m) => m.runId === imported.id);
  // The metric log travelled in the .tar: step 1 as the original logged it, then its own step 2.
  expect(importedRows.map((m) => m.step)).toEqual([1, 2]);
  expect(importedRows[0].values).toEqual(originalRows[0].values);
  const pick = (v: Record<string, number>) => Object.fromEntries(DETERMINISTIC.map((k) => [k, v[k]]));
  expect(pick(importedRows[1].values)).toEqual(pick(originalRows[1].values));
  await page.getByTestId('runs-panel').scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/checkpoints-resumed.png' });
  mark('imported copy resumed to the end');
});

test("a run whose checkpoints the site's storage quota cannot hold is refused before it starts, saying why", async ({
  page,
}) => {
  test.setTimeout(120_000);
  // The quota as the trainer's worker reads it (navigator.storage.estimate), cut to 40 MiB free:
  // a qwen3-nano checkpoint is 27.8 MiB (weights, π_ref and AdamW's moments) and a run needs
  // room for three at once. Chromium's own override (CDP Storage.overrideQuotaForOrigin) is
  // not honoured by Chromium 156 headless (estimate() and writes kept the 10 GiB quota), so the
  // worker's estimate is replaced; the session, its store and the page are the real ones.
  let quota = 40 * 2 ** 20;
  const stub = (w: import('@playwright/test').Worker) =>
    w
      .evaluate((q) => {
        const storage = (self.navigator as Navigator).storage;
        (self as unknown as { __quota: number }).__quota = q;
        storage.estimate = async () => ({ quota: (self as unknown as { __quota: number }).__quota, usage: 0 });
      }, quota)
      .catch(() => undefined);
  // The trainer's worker (a module URL); the engine's threads (blob: URLs) block in Atomics.wait.
  const trainerWorkers = () => page.workers().filter((w) => !w.url().startsWith('blob:'));
  page.on('worker', (w) => void (w.url().startsWith('blob:') ? undefined : stub(w)));
  await page.goto(ONE_STEP_WASM_URL);
  // The Runs panel says what the page's own estimate reads (Chromium's real quota here).
  await expect(page.getByTestId('runs-storage')).toContainText(
    /Browser storage: .* in use of the .* this site may store/,
  );
  const setup = page.getByTestId('run-setup');
  await setup.getByTestId('btn-train').click();
  const error = setup.getByTestId('start-error');
  await expect(error).toContainText("not enough browser storage for this run's checkpoints", { timeout: 90_000 });
  await expect(error).toContainText('needs 83.3 MiB more (3 × 27.8 MiB)');
  await expect(error).toContainText('this site has 40.0 MiB free');
  await expect(error).toContainText('Delete saved runs');
  expect((await readDb(page)).runs).toEqual([]); // nothing was created

  // With room for the three, the same setup trains.
  quota = 90 * 2 ** 20;
  await Promise.all(trainerWorkers().map(stub));
  await setup.getByTestId('btn-train').click();
  await expect.poll(async () => (await readDb(page)).runs.length, { timeout: 60_000 }).toBe(1);
  await expect(error).toHaveCount(0);
});
