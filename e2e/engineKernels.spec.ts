/**
 * The CPU engine's kernels as a run setting: Run setup offers the fma kernels where the page's
 * WebAssembly validates relaxed SIMD (Chromium does), with the line that says what they cost;
 * a run trained with them says so in the Device panel, the Runs panel and its IndexedDB record
 * (config.engineKernels and engineKernels), and its step is finite.
 * Screenshots of the setup's Run group with the control at 1280 and 390 px: e2e/screenshots/engine-kernels-*.png.
 */
import { test, expect } from '@playwright/test';
import { readPageDb } from '../scripts/pageDb';
import { ONE_STEP_WASM_URL } from './tinyRun';

test('the fma engine kernels: offered where relaxed SIMD validates, trained with, and recorded', async ({ page }) => {
  test.setTimeout(600_000);
  await page.goto(ONE_STEP_WASM_URL);
  const setup = page.getByTestId('run-setup');
  await expect(setup.getByTestId('setup-status')).toContainText('Valid configuration');
  const field = setup.locator('[data-field="kernels"]');
  const select = field.locator('select');
  // A link without the field is the plain kernels, the default.
  await expect(select).toHaveValue('simd');
  await expect(field).toContainText('default simd (plain)');
  await expect(field).toContainText('an AMD Zen 5 gained nothing'); // where it helps, as measured (docs/perf.md)
  await expect(field).toContainText('results differ in the last digits');
  expect(await page.evaluate(() => typeof WebAssembly.validate === 'function')).toBe(true);
  await expect(select.locator('option[value="fma"]')).toBeEnabled(); // Chromium validates relaxed SIMD
  await expect(field.getByTestId('unavailable-kernels-fma')).toHaveCount(0);

  await select.selectOption('fma');
  await expect(select).toHaveValue('fma');
  await expect(page).toHaveURL(/kernels=fma/); // the link reproduces the setting
  const group = setup.getByTestId('setup-group-run');
  await group.scrollIntoViewIfNeeded();
  await group.screenshot({ path: 'e2e/screenshots/engine-kernels-1280.png' });
  await page.setViewportSize({ width: 390, height: 844 });
  await field.scrollIntoViewIfNeeded();
  await group.screenshot({ path: 'e2e/screenshots/engine-kernels-390.png' });
  const box = await field.boundingBox();
  expect(box!.width).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1280, height: 800 });

  await setup.getByTestId('btn-train').click();
  await expect(page.getByTestId('device-training-backend')).toHaveText('wasm', { timeout: 120_000 });
  await expect(page.getByTestId('device-engine-kernels')).toHaveText('fma (fused)');
  await expect(setup.getByTestId('train-progress')).toHaveAttribute('data-phase', 'finished', { timeout: 240_000 });
  await expect(setup.getByTestId('run-error')).toHaveCount(0);
  await expect(setup.getByTestId('kernels-warning')).toHaveCount(0); // they ran: no fallback to say
  await expect(page.getByTestId('runs-table').getByTestId('run-engine')).toHaveText('wasm · fma kernels');
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    await page.getByTestId('runs-table').scrollIntoViewIfNeeded();
    await page.getByTestId('runs-table').screenshot({ path: `e2e/screenshots/engine-kernels-runs-${width}.png` });
    await page.getByTestId('device-engine-kernels').scrollIntoViewIfNeeded();
    await page.locator('.device .facts').screenshot({ path: `e2e/screenshots/engine-kernels-device-${width}.png` });
  }

  const db = await readPageDb(page);
  expect(db.runs).toHaveLength(1);
  const [run] = db.runs;
  expect([run.status, run.backend, run.engineKernels, run.config.engineKernels]).toEqual([
    'finished',
    'wasm',
    'fma',
    'fma',
  ]);
  const [row] = db.metrics.filter((m) => m.runId === run.id);
  expect(row.step).toBe(1);
  for (const k of ['loss', 'loss/Lh', 'loss/SFT', 'grad_norm', 'entropy'])
    expect(Number.isFinite(row.values[k]), `${k} = ${row.values[k]}`).toBe(true);
  expect(row.values.grad_norm).toBeGreaterThan(0);
});

test('where the page has no relaxed SIMD, fma is offered disabled with the reason, and a link asking for it is refused at its field', async ({
  page,
}) => {
  // This page's WebAssembly made to refuse f32x4.relaxed_madd (0xfd 0x85 0x02), as a browser without relaxed SIMD does.
  await page.addInitScript(() => {
    const validate = WebAssembly.validate.bind(WebAssembly);
    WebAssembly.validate = (bytes: BufferSource) => {
      const b = new Uint8Array(ArrayBuffer.isView(bytes) ? bytes.buffer : bytes);
      for (let i = 0; i + 2 < b.length; i++) if (b[i] === 0xfd && b[i + 1] === 0x85 && b[i + 2] === 0x02) return false;
      return validate(bytes);
    };
  });
  await page.goto(ONE_STEP_WASM_URL);
  const setup = page.getByTestId('run-setup');
  const field = setup.locator('[data-field="kernels"]');
  await expect(setup.getByTestId('setup-status')).toContainText('Valid configuration'); // simd trains as ever
  await expect(field.locator('option[value="fma"]')).toBeDisabled();
  await expect(field.getByTestId('unavailable-kernels-fma')).toContainText(
    "fma (fused) unavailable: this browser's WebAssembly has no relaxed SIMD",
  );
  await field.screenshot({ path: 'e2e/screenshots/engine-kernels-unavailable.png' });

  await page.goto(`${ONE_STEP_WASM_URL}&kernels=fma`);
  await expect(setup.getByTestId('error-kernels')).toContainText('Engine kernels "fma": this browser');
  await expect(setup.getByTestId('setup-status')).toContainText('1 value needs fixing');
  await setup.getByTestId('btn-train').click();
  await expect(setup.getByTestId('start-error')).toContainText('Cannot start: Engine kernels "fma"');
});
