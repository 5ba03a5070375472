import { test, expect, chromium } from '@playwright/test';
// @ts-expect-error plain ESM helper
import { chromiumPath, CHROMIUM_ARGS } from '../scripts/chromium.mjs';

test('the device line names the backend the worker found, checked against the browser itself', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'PACT Lab', level: 1 })).toBeVisible();
  const line = page.getByTestId('device-line');
  await expect(line).not.toHaveAttribute('data-backend', '');

  // Independent check, in a worker like the trainer's: does this browser give a WebGPU adapter?
  const hasAdapter = await page.evaluate(async () => {
    const src =
      'onmessage = async () => { const a = self.navigator.gpu ? await self.navigator.gpu.requestAdapter() : null; postMessage(!!a); }';
    const w = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
    const r = await new Promise<boolean>((res) => {
      w.onmessage = (e) => res(e.data);
      w.postMessage(0);
    });
    w.terminate();
    return r;
  });
  if (hasAdapter) {
    await expect(line).toHaveAttribute('data-backend', 'webgpu');
    await expect(line).toContainText('WebGPU:');
    await expect(page.getByText('Max storage binding')).toBeVisible();
  } else {
    await expect(line).toHaveAttribute('data-backend', 'wasm');
    await expect(page.getByTestId('fallback-reason')).toContainText('requestAdapter');
  }
  await expect(page.getByTestId('planned-panels')).toContainText("The GPU's own memory on WebGPU");
  await page.screenshot({ path: 'e2e/screenshots/home.png', fullPage: true });
});

test('without WebGPU the page says it falls back to wasm and why', async ({ baseURL }) => {
  // A second Chromium without --enable-unsafe-webgpu: requestAdapter() gives null there.
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: CHROMIUM_ARGS.filter((a: string) => a !== '--enable-unsafe-webgpu'),
    headless: true,
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(baseURL!);
    const line = page.getByTestId('device-line');
    await expect(line).toHaveAttribute('data-backend', 'wasm');
    await expect(line).toContainText('WebAssembly (SIMD)');
    await expect(page.getByTestId('fallback-reason')).toContainText('Falling back to wasm');
    await page.screenshot({ path: 'e2e/screenshots/home-no-webgpu.png', fullPage: true });
  } finally {
    await browser.close();
  }
});

test('narrow screen: the home card first, then the panels stacked as bars that open', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/');
  await expect(page.getByTestId('device-line')).not.toHaveAttribute('data-backend', '');
  const home = (await page.getByTestId('home').boundingBox())!;
  const device = (await page.locator('[data-fold="device"]').boundingBox())!;
  const method = (await page.locator('[data-fold="method"]').boundingBox())!;
  // Stacked: the device bar under the home card, the method bar further down, at the same left edge.
  expect(device.y).toBeGreaterThan(home.y + home.height - 1);
  expect(method.y).toBeGreaterThan(device.y + device.height - 1);
  expect(Math.abs(method.x - device.x)).toBeLessThan(2);
  // Folded, a panel is one bar; opened, it shows.
  await expect(page.locator('.method')).toBeHidden();
  await page.getByTestId('fold-method').click();
  await expect(page.locator('.method')).toBeVisible();
  await expect(page.getByTestId('fold-method')).toHaveAttribute('aria-expanded', 'true');
  await page.screenshot({ path: 'e2e/screenshots/home-narrow.png', fullPage: true });
});
