/**
 * Every core in the browser: the built app is served cross-origin isolated (COOP/COEP from
 * scripts/crossOriginIsolation.ts), so the trainer worker runs tfjs-wasm's threaded SIMD build,
 * and a PACT step trains there. A behaviour test, not a timing one.
 *
 * Checked: the page is cross-origin isolated; the worker reports as many wasm threads as
 * Chromium reports logical cores (at most tfjs's 8; the single-threaded builds only ever
 * report 1); the step finishes with finite losses and a gradient; and the same step in a
 * page served without the two headers (so tfjs falls back to its one-thread SIMD build)
 * writes the same metrics bit for bit, time and memory aside: the threads change no number.
 */
import { test, expect, type Page } from '@playwright/test';
import { readPageDb } from '../scripts/pageDb';
import { compareRunMetrics, toStepRecords, type RunResult } from '../src/experiments/results';
import { ONE_STEP_WASM_URL } from './tinyRun';

/** Trains the one step through Run setup; returns its run as the experiment runner stores it, and the wasm threads. */
async function trainOneStep(page: Page): Promise<{ run: RunResult; threads: string }> {
  await page.goto(ONE_STEP_WASM_URL);
  const setup = page.getByTestId('run-setup');
  await expect(setup.getByTestId('setup-status')).toContainText('Valid configuration');
  await setup.getByTestId('btn-train').click();
  await expect(page.getByTestId('device-training-backend')).toHaveText('wasm', { timeout: 120_000 });
  const threads = (await page.getByTestId('device-wasm-threads').textContent())?.trim() ?? '';
  await expect(setup.getByTestId('train-progress')).toHaveAttribute('data-phase', 'finished', { timeout: 240_000 });
  await expect(setup.getByTestId('run-error')).toHaveCount(0);
  const db = await readPageDb(page);
  expect(db.runs).toHaveLength(1);
  const rows = db.metrics.filter((m) => m.runId === db.runs[0].id);
  return {
    run: {
      id: 'pact-one-step',
      status: db.runs[0].status as RunResult['status'],
      steps: toStepRecords(rows),
    } as RunResult,
    threads,
  };
}

test('tfjs-wasm trains on its threaded build in the cross-origin isolated app, to the same numbers as on one thread', async ({
  page,
  browser,
}) => {
  test.setTimeout(600_000);
  await page.goto('/');
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  test.skip(cores < 2, 'this Chromium reports one core: the threaded build cannot be told from the others');
  expect(await page.evaluate(() => crossOriginIsolated), 'COOP/COEP make the page cross-origin isolated').toBe(true);
  await expect(page.getByTestId('device-wasm')).toContainText('threaded');

  const threaded = await trainOneStep(page);
  expect(threaded.threads).toBe(String(Math.min(cores, 8)));
  expect(threaded.run.status).toBe('finished');
  expect(threaded.run.steps.map((s) => s.step)).toEqual([1]);
  const m = threaded.run.steps[0].values;
  expect(m.gate_fraction).toBe(0);
  for (const k of ['loss/Lh', 'loss/SFT', 'grad_norm']) expect(Number.isFinite(m[k]), k).toBe(true);
  expect(m.grad_norm ?? 0).toBeGreaterThan(0);

  // The same app without the two headers: not isolated, so tfjs-wasm runs one thread.
  const plain = await browser.newContext();
  await plain.route('**/*', async (route) => {
    const response = await route.fetch();
    const headers = { ...response.headers() };
    delete headers['cross-origin-opener-policy'];
    delete headers['cross-origin-embedder-policy'];
    await route.fulfill({ response, headers });
  });
  const plainPage = await plain.newPage();
  await plainPage.goto('/');
  expect(await plainPage.evaluate(() => crossOriginIsolated)).toBe(false);
  await expect(plainPage.getByTestId('device-wasm')).toContainText('one thread');
  const single = await trainOneStep(plainPage);
  expect(single.threads).toBe('1');
  expect(compareRunMetrics([threaded.run], [single.run])).toEqual([]);
  await plain.close();
});
