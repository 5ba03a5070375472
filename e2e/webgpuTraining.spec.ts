/**
 * Two PACT steps in the trainer worker on WebGPU: in this Chromium the
 * adapter is SwiftShader (a CPU implementation of WebGPU), which compiles a shader for every
 * new shape, so the run is as small as PACT allows: one prompt, K = 2 rollouts of at most 16
 * tokens in one turn, q = 0 so that the step routes the prompt to the trace-conditioned
 * objective (L^h_RL under c^h = [x; h*] plus β_SFT·L_SFT: every loss path of PACT runs on the
 * GPU backend; klCoef 0, see below). Checked: the worker trained on webgpu (not a fallback), two metric rows with
 * finite losses were written to IndexedDB, and the run is saved as finished.
 * The numbers themselves are checked against PyTorch by the numerics spec; this spec proves
 * the training loop (rollouts, π_old(c^h), updates, checkpoint) runs on the backend.
 */
import { test, expect } from '@playwright/test';
import { readPageDb } from '../scripts/pageDb';

test('two PACT steps in the worker on WebGPU', async ({ page }) => {
  test.setTimeout(900_000);
  const overrides = {
    maxTurns: 1,
    maxResponseTokens: 16,
    tasks: { source: 'generated', trainSeed: 1, testSeed: 2, nTrain: 4, nTest: 1, categories: ['single_hop'] },
    evalEvery: 0,
    checkpointEvery: 0,
    // No KL term: its π_ref reads and the extra forward under x (klContext 'prompt') are more
    // shapes for SwiftShader to compile (a step took 5–8 min with them, most of it in the update);
    // the KL is plain arithmetic on log-probs whose WebGPU numbers the numerics spec checks.
    klCoef: 0,
  };
  // q = 0 goes in the form (its field wins over the overrides): every prompt takes the trace route.
  const query = new URLSearchParams({
    recipe: 'pact',
    steps: '2',
    K: '2',
    batch: '1',
    miniBatch: '1',
    q: '0',
    backend: 'webgpu',
    overrides: JSON.stringify(overrides),
  });
  await page.goto(`/?${query}`);
  const hasAdapter = await page.evaluate(async () => {
    const gpu = (navigator as Navigator & { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
    return gpu ? (await gpu.requestAdapter()) !== null : false;
  });
  // Skipped only in a Chromium without a WebGPU adapter (e.g. launched without
  // --enable-unsafe-webgpu); CI's Chromium offers SwiftShader, so it runs there.
  test.skip(!hasAdapter, 'this Chromium offers no WebGPU adapter (launched without --enable-unsafe-webgpu?)');

  const panel = page.getByTestId('run-setup');
  await expect(panel.getByTestId('setup-status')).toContainText('Valid configuration');
  await panel.getByTestId('btn-train').click();
  const progress = panel.getByTestId('train-progress');
  await expect(page.getByTestId('device-training-backend')).toContainText('webgpu', { timeout: 120_000 });
  await expect(progress).toHaveAttribute('data-phase', 'finished', { timeout: 840_000 });
  await expect(panel.getByTestId('run-error')).toHaveCount(0);

  const db = await readPageDb(page);
  const run = db.runs[0];
  const rows = {
    status: run.status,
    config: run.config as { backend?: string },
    metrics: db.metrics.filter((m) => m.runId === run.id),
  };
  expect(rows.status).toBe('finished');
  expect(rows.config.backend).toBe('webgpu');
  expect(rows.metrics.map((m) => m.step)).toEqual([1, 2]);
  for (const m of rows.metrics) {
    // Where a SwiftShader step's minutes go (shader compiles for each new shape, mostly), for the CI log.
    console.log(
      `webgpu step ${m.step}: ${['time/rollouts_s', 'time/logprobs_s', 'time/update_s', 'seconds'].map((k) => `${k} ${Number(m.values[k]).toFixed(1)}`).join(', ')}`,
    );
    // q = 0: every prompt takes the trace-conditioned route, so L^h and L_SFT are finite and L^x absent.
    expect(m.values.gate_fraction).toBe(0);
    expect(Number.isFinite(m.values['loss/Lh'])).toBe(true);
    expect(Number.isFinite(m.values['loss/SFT'])).toBe(true);
    expect(Number.isFinite(m.values.grad_norm)).toBe(true);
    expect(m.values.grad_norm).toBeGreaterThan(0);
  }
  await page.screenshot({ path: 'e2e/screenshots/webgpu-training.png', fullPage: false });
});

test("a micro-batch whose attention scores are over the GPU's buffer limit is refused before a step, naming the field", async ({
  page,
}) => {
  test.setTimeout(180_000);
  // The paper size's rows (1,024 + 2 × 1,024 tokens) with 8 rows a micro-batch: 8 · 4 heads ·
  // 3,072² floats = 1.13 GiB in one tensor, over SwiftShader's 1 GiB buffers (7 rows fit).
  const query = new URLSearchParams({ recipe: 'pact', size: 'paper', backend: 'webgpu' });
  query.set('overrides', JSON.stringify({ microBatchRows: 8, evalEvery: 0 }));
  await page.goto(`/?${query}`);
  const limits = await page.evaluate(async () => {
    const gpu = (
      navigator as Navigator & { gpu?: { requestAdapter(): Promise<{ limits: GPUSupportedLimits } | null> } }
    ).gpu;
    const adapter = gpu ? await gpu.requestAdapter() : null;
    return adapter
      ? { buffer: adapter.limits.maxBufferSize, binding: adapter.limits.maxStorageBufferBindingSize }
      : null;
  });
  test.skip(!limits, 'this Chromium offers no WebGPU adapter (launched without --enable-unsafe-webgpu?)');
  test.skip(
    Math.min(limits!.buffer, limits!.binding) !== 2 ** 30,
    `this adapter's buffers are not SwiftShader's 1 GiB (${JSON.stringify(limits)})`,
  );
  const panel = page.getByTestId('run-setup');
  await expect(panel.getByTestId('setup-status')).toContainText('Valid configuration');
  await panel.getByTestId('btn-train').click();
  const error = panel.getByTestId('start-error');
  await expect(error).toContainText('config.microBatchRows: 8 row(s) of up to 3,072 tokens make tensors of 1.13 GiB', {
    timeout: 150_000,
  });
  await expect(error).toContainText('set config.microBatchRows to at most 7');
  expect((await readPageDb(page)).runs).toEqual([]);
});
