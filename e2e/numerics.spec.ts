import { test, expect } from '@playwright/test';

// The Qwen3 fixtures exported by the PyTorch reference must match on WebGPU
// (SwiftShader here) and on wasm, inside the trainer worker, in real Chromium.
for (const backend of ['webgpu', 'wasm'] as const) {
  test(`Qwen3 logits, gradients and greedy tokens match the PyTorch reference on ${backend}`, async ({ page }) => {
    test.setTimeout(300_000); // SwiftShader compiles a shader per new shape: minutes, not a hang
    await page.goto('/');
    const line = page.getByTestId('device-line');
    await expect(line).not.toHaveAttribute('data-backend', '');
    if (backend === 'webgpu') {
      // This Chromium runs with --enable-unsafe-webgpu: the adapter must be there.
      await expect(line).toHaveAttribute('data-backend', 'webgpu');
    }
    await page.getByTestId(`check-${backend}`).click();
    const table = page.getByTestId(`numerics-${backend}`);
    await expect(table).toBeVisible({ timeout: 280_000 });
    await expect(table.locator('caption')).toHaveText(backend); // no fallback to another backend
    const logits = (await table.getByTestId('logits-err').allTextContents()).map(Number);
    const grads = (await table.getByTestId('grad-err').allTextContents()).map(Number);
    expect(logits.length).toBe(2);
    for (const e of logits) expect(e).toBeLessThan(1e-4);
    for (const e of grads) expect(e).toBeLessThan(1e-3);
    await expect(table.getByTestId('verdict')).toHaveText(['✓ pass', '✓ pass']);
    if (backend === 'webgpu') await page.screenshot({ path: 'e2e/screenshots/numerics-webgpu.png' });
  });
}
