import { test, expect } from '@playwright/test';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// FTRL's test tasks are public benchmark data: read from ../shared/data (or $PACT_DATA_DIR) at
// test time, never copied into the repository.
const dataDir =
  process.env.PACT_DATA_DIR ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../shared/data');
const ftrlPath = path.join(dataDir, 'ftrl/test.jsonl');
const hasData = existsSync(ftrlPath);
if (!hasData) console.warn(`[taskFiles.spec] ${ftrlPath} is absent: the FTRL upload test is skipped`);

test('a user loads an FTRL task file: counts per category, and a bad line named by number', async ({ page }) => {
  // Skipped only where the benchmark data is not beside the checkout (it is never committed).
  test.skip(!hasData, `FTRL data absent at ${ftrlPath}`);
  const lines = readFileSync(ftrlPath, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  // Every 17th real task (12 of them, spread over the four categories), a line that is
  // not JSON (line 13), then one more task.
  const chosen = lines.filter((_, i) => i % 17 === 0).slice(0, 12);
  const last = lines[1];
  const text = [...chosen, '{"messages": [', last].join('\n');
  // Independent count of the expected categories straight from the raw JSON
  // (data_source reads like "self/single_hop").
  const expected: Record<string, number> = {};
  for (const l of [...chosen, last]) {
    const c = (JSON.parse(l).data_source as string).split('/').pop()!;
    expected[c] = (expected[c] ?? 0) + 1;
  }
  expect(Object.keys(expected).length).toBeGreaterThan(1);
  await page.goto('/');
  await page
    .getByTestId('ftrl-file')
    .setInputFiles({ name: 'ftrl-sample.jsonl', mimeType: 'text/plain', buffer: Buffer.from(text) });
  await expect(page.getByTestId('ftrl-summary')).toContainText('13 tasks imported');
  await expect(page.getByTestId('ftrl-summary')).toContainText('1 line rejected');
  await expect(page.getByTestId('ftrl-line-errors')).toContainText('line 13');
  for (const [category, n] of Object.entries(expected)) {
    await expect(page.getByTestId(`ftrl-count-${category}`)).toHaveText(String(n));
  }
  await page.getByTestId('task-files').screenshot({ path: 'e2e/screenshots/task-files.png' });
});

test('an empty file is refused with a message that says what a task file is', async ({ page }) => {
  await page.goto('/');
  await page
    .getByTestId('ftrl-file')
    .setInputFiles({ name: 'empty.jsonl', mimeType: 'text/plain', buffer: Buffer.from('\n\n') });
  await expect(page.getByTestId('ftrl-error')).toHaveText(
    'empty.jsonl is empty: expected one FTRL task (JSON object) per line',
  );
});
