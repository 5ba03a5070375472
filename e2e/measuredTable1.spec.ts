/**
 * The home card's measured Table 1 (src/ui/MeasuredTable1.svelte), at 1280×800 and at 390 px: the
 * link under the short-run note opens the dialog; the PACT row's Solve-F1 is the cell that
 * results/table1/table.md has (read and parsed here, never written into the test); the figure
 * loaded; each of the four ablations, and the ToolSearcher table, opens from its disclosure with its
 * reading, figure and tables, the paper's row holding its committed cell; the wide tables scroll inside their own boxes while
 * the page does not; Escape closes it and gives the focus back to the link.
 */
import { readFileSync } from 'node:fs';
import { test, expect, type Page } from '@playwright/test';
import { readCell, readMeasuredTable } from '../src/ui/table1View';
import { ABLATIONS, specTablePath, TOOLSEARCHER_TABLE } from '../src/ui/ablationsView';

const TABLE1 = readMeasuredTable(readFileSync(new URL('../results/table1/table.md', import.meta.url), 'utf8'));

async function openTable1(page: Page, size: string) {
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  await page.goto('/');
  const link = page
    .getByTestId('home')
    .getByRole('button', { name: 'See the measured Table 1, ablations and ToolSearcher table' });
  await link.click();
  const dialog = page.getByRole('dialog', { name: 'Table 1, the ablations and ToolSearcher, as measured' });
  await expect(dialog).toBeVisible();

  // The PACT row's Solve-F1, as the committed file has it.
  const solveF1 = readCell(TABLE1.main, 'pact', 'Solve-F1');
  const main = dialog.getByTestId('table1-main');
  await expect(main.locator('tbody tr')).toHaveCount(TABLE1.main.rows.length);
  await expect(main.locator('tr[data-row="pact"] [data-col="Solve-F1"]')).toHaveText(solveF1);
  await expect(main.getByRole('rowheader', { name: 'pact', exact: true })).toBeVisible();
  await expect(dialog.getByTestId('table1-paired').locator('tbody tr')).toHaveCount(TABLE1.paired!.rows.length);
  // The reading is shown (its claims hold for this table) and names the held-out set.
  await expect(dialog.getByTestId('table1-reading')).toContainText('PACT is level with the warm start');
  await expect(dialog.getByTestId('table1-provenance')).toContainText(TABLE1.heldOut!);

  // The figure loaded, from the app's own bundle.
  const figure = dialog.getByRole('img', { name: /held-out Solve-F1 minus the warm start's/ });
  await expect
    .poll(() => figure.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
    .toBeGreaterThan(0);

  // The ablations, each from its committed table-with-frozen.md, and the ToolSearcher table (ranked by F1).
  for (const spec of [...ABLATIONS, TOOLSEARCHER_TABLE]) {
    const metric = spec.metric ?? 'Solve-F1';
    const file = new URL(`../${specTablePath(spec)}`, import.meta.url);
    const t = readMeasuredTable(readFileSync(file, 'utf8'));
    const section = dialog.getByTestId(`ablation-${spec.name}`);
    await section.locator('summary').click();
    await expect(section.getByTestId('ablation-reading')).toContainText("The paper's configuration");
    await expect(section.getByTestId('ablation-paired').locator('tbody tr')).toHaveCount(t.paired!.rows.length);
    await expect(section.getByTestId('ablation-main').locator('tbody tr')).toHaveCount(t.main.rows.length);
    const paperRow = `${spec.paperRow} − frozen (held out: − vanilla)`;
    await expect(
      section.locator(`[data-testid="ablation-paired"] tr[data-row="${paperRow}"] [data-col="${metric}"]`),
    ).toHaveText(readCell(t.paired!, paperRow, metric));
    const chart = section.getByRole('img');
    await chart.scrollIntoViewIfNeeded();
    await expect
      .poll(() => chart.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
      .toBeGreaterThan(0);
  }
  await dialog.getByTestId('ablation-sft-schedules').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `e2e/screenshots/ablations-${size}.png` });
  await expect(dialog.getByTestId('ablation-toolsearcher').getByTestId('ablation-reading')).toContainText(
    'Held out, against the warm start (F1, paired by seed)',
  );
  await dialog.getByTestId('toolsearcher-intro').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `e2e/screenshots/toolsearcher-table-${size}.png` });

  // Wide tables scroll in their own box; the page never scrolls sideways.
  const pageOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(pageOverflow).toBeLessThanOrEqual(0);
  const paired = await dialog
    .locator('.table1-scroll')
    .nth(1)
    .evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, overflowX: getComputedStyle(el).overflowX }));
  expect(paired.overflowX).toBe('auto');
  await dialog.getByTestId('table1-paired').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `e2e/screenshots/table1-${size}.png` });

  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(link).toBeFocused();
  expect(consoleErrors, consoleErrors.join('\n')).toEqual([]);
  return paired;
}

test('the measured Table 1 at 1280×800', async ({ page }) => {
  await openTable1(page, '1280');
});

test('the measured Table 1 at 390 px: the tables scroll sideways in their boxes', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const paired = await openTable1(page, '390');
  expect(paired.scroll).toBeGreaterThan(paired.client);
});
