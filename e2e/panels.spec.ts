import { test, expect, type Page } from '@playwright/test';

/** Replaces a text field's content the way a user types it. */
async function typeInto(page: Page, selector: string, text: string) {
  const box = page.locator(selector);
  await box.fill(text);
}

test('mask schedule: λa and the prefix level at the marked step come from Eq. (tool-call-annealing)', async ({
  page,
}) => {
  await page.goto('/');
  const panel = page.getByTestId('mask-schedule');
  await expect(panel.getByTestId('lesson-mask-schedule')).toContainText('Eq. (tool-call-annealing)');

  await typeInto(page, '#sched-steps', '24');
  await typeInto(page, '#sched-lambdaStart', '0.8');
  await typeInto(page, '#sched-lambdaEnd', '0.2');
  const before = await panel.getByTestId('chart-lambda').locator('path').first().getAttribute('d');
  await typeInto(page, '#sched-horizon', '10');
  await typeInto(page, '#sched-marked', '5');

  // λa(5) = 0.8 − (0.8 − 0.2)·min(5/10, 1) = 0.8 − 0.6·0.5 = 0.5
  await expect(panel.getByTestId('marked-lambda')).toHaveText('0.500');
  // five stages L4…L0 over S = 10: stage floor(5·5/10) = 2 → L4 − 2 = L2
  await expect(panel.getByTestId('marked-level')).toHaveText('L2');
  // typing S redrew the curve
  await expect.poll(() => panel.getByTestId('chart-lambda').locator('path').first().getAttribute('d')).not.toBe(before);

  const table = panel.getByTestId('schedule-table');
  await expect(table.locator('tr.marked')).toContainText('0.500');
  await expect(table.locator('tr.marked')).toContainText('◀ marked');
  // S = 10: λa(10) = 0.2, level L0; T = 24 is past S, so the same
  await expect(table.locator('tbody tr', { hasText: /^10/ })).toContainText('0.200');
  await expect(table.locator('tbody tr', { hasText: /^10/ })).toContainText('L0');
  // s = 3 (¼S = 2.5 rounded): λa = 0.8 − 0.6·0.3 = 0.62; stage floor(5·3/10) = 1 → L3
  await expect(table.locator('tbody tr').nth(1)).toContainText('0.620');
  await expect(table.locator('tbody tr').nth(1)).toContainText('L3');

  // The start handle moves with the keyboard: ArrowDown lowers λa start by 0.05 → 0.75.
  await panel.getByRole('slider', { name: 'λa start' }).focus();
  await page.keyboard.press('ArrowDown');
  await expect(page.locator('#sched-lambdaStart')).toHaveValue('0.75');
  // λa(5) = 0.75 − (0.75 − 0.2)·0.5 = 0.475
  await expect(panel.getByTestId('marked-lambda')).toHaveText('0.475');

  // Dragging the end handle to the left shortens the horizon S (and sets λa end).
  const endHandle = panel.getByRole('slider', { name: 'λa end at the horizon S' });
  const box = (await endHandle.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 - 60, box.y + box.height / 2, { steps: 4 });
  await page.mouse.up();
  const dragged = Number(await page.locator('#sched-horizon').inputValue());
  expect(dragged).toBeGreaterThanOrEqual(1);
  expect(dragged).toBeLessThan(10);
  await expect(page.locator('#sched-lambdaEnd')).toHaveValue('0.2');
  await expect(panel.getByTestId('chart-lambda')).toContainText(`S = ${dragged}`);
  await typeInto(page, '#sched-horizon', '10');

  // Clicking near the right end of a chart moves the marked step past S: λa = end, level L0.
  const chart = (await panel.getByTestId('chart-level').boundingBox())!;
  await page.mouse.click(chart.x + chart.width - 30, chart.y + chart.height / 2);
  await expect.poll(async () => Number(await panel.getByTestId('marked-step').innerText())).toBeGreaterThan(20);
  await expect(panel.getByTestId('marked-lambda')).toHaveText('0.200');
  await expect(panel.getByTestId('marked-level')).toHaveText('L0');
  await typeInto(page, '#sched-marked', '5');

  // Fixed tool-call schedule: λa = start throughout; fixed reasoning: L4 throughout.
  await page.locator('#sched-toolCall').selectOption('fixed');
  await page.locator('#sched-reasoning').selectOption('fixed');
  await expect(panel.getByTestId('marked-lambda')).toHaveText('0.750');
  await expect(panel.getByTestId('marked-level')).toHaveText('L4');
  // Token A: 1 − min(5/10, 1) = 50% of each span's tokens
  await page.locator('#sched-toolCall').selectOption('token');
  await expect(panel.getByTestId('marked-lambda')).toHaveText('50% of span tokens');
});

test('anchoring gates: the fraction shown is the count of anchor cells over all cells, and q resamples', async ({
  page,
}) => {
  await page.goto('/');
  const panel = page.getByTestId('anchoring-gates');
  await expect(panel.getByTestId('lesson-anchoring-gates')).toContainText('Eq. (prompt-routing-gate)');

  async function readGrid() {
    const nAnchor = await panel.locator('td.gate.anchor').count();
    const nTrace = await panel.locator('td.gate.trace').count();
    const nAnchorByLetter = await panel.locator('td.gate', { hasText: /^x$/ }).count();
    return { nAnchor, nTrace, nAnchorByLetter };
  }

  // Defaults (the quick run size): batch 2 prompts × 24 steps = 48 gates.
  let g = await readGrid();
  expect(g.nAnchor + g.nTrace).toBe(48);
  expect(g.nAnchorByLetter).toBe(g.nAnchor); // the letter x marks every anchor, not colour alone
  await expect(panel.getByTestId('gate-total')).toHaveText('48');
  await expect(panel.getByTestId('gate-anchors')).toHaveText(String(g.nAnchor));
  await expect(panel.getByTestId('gate-fraction-value')).toHaveText((g.nAnchor / 48).toFixed(3));
  expect(g.nAnchor).toBeGreaterThan(0);
  expect(g.nAnchor).toBeLessThan(48);

  // The Σx row sums each column.
  const perStep = await panel.locator('tfoot td').allInnerTexts();
  expect(perStep.map(Number).reduce((a, b) => a + b, 0)).toBe(g.nAnchor);

  // q = 0: nothing anchored; q = 1: everything anchored.
  await typeInto(page, '#gates-q', '0');
  await expect(panel.getByTestId('gate-anchors')).toHaveText('0');
  expect(await panel.locator('td.gate.anchor').count()).toBe(0);
  await typeInto(page, '#gates-q', '1');
  await expect(panel.getByTestId('gate-anchors')).toHaveText('48');
  await expect(panel.getByTestId('gate-fraction-value')).toHaveText('1.000');

  // Another seed draws other gates; the text still matches the cells.
  await typeInto(page, '#gates-q', '0.4');
  const pattern1 = await panel.locator('td.gate').evaluateAll((tds) => tds.map((t) => t.textContent).join(''));
  await panel.getByRole('button', { name: 'Next seed' }).click();
  await expect(page.locator('#gates-seed')).toHaveValue('2');
  await expect
    .poll(() => panel.locator('td.gate').evaluateAll((tds) => tds.map((t) => t.textContent).join('')))
    .not.toBe(pattern1);
  g = await readGrid();
  await expect(panel.getByTestId('gate-anchors')).toHaveText(String(g.nAnchor));
  await expect(panel.getByTestId('gate-fraction-value')).toHaveText((g.nAnchor / 48).toFixed(3));

  // A smaller batch shrinks the grid: 3 prompts × 24 steps.
  await typeInto(page, '#setup-miniBatch', '1');
  await typeInto(page, '#setup-batch', '3');
  await expect(panel.getByTestId('gate-total')).toHaveText('72');
  expect(await panel.locator('td.gate').count()).toBe(72);
});

test('run setup: the URL carries the configuration and a reload restores it', async ({ page }) => {
  await page.goto('/');
  const panel = page.getByTestId('run-setup');
  await expect(panel.getByTestId('setup-status')).toContainText('Valid configuration');
  await expect(page.locator('#setup-q')).toHaveValue('0.4'); // PACT Table 6 default

  await typeInto(page, '#setup-q', '0.25');
  await typeInto(page, '#setup-K', '4');
  await typeInto(page, '#setup-lr', '1e-4');
  await page.locator('#setup-reasoning').selectOption('token');
  await page.locator('#setup-backend').selectOption('wasm');
  await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe('0.25');
  const url = new URL(page.url());
  expect(url.searchParams.get('K')).toBe('4');
  expect(url.searchParams.get('reasoning')).toBe('token');

  await page.reload();
  await expect(page.locator('#setup-q')).toHaveValue('0.25');
  await expect(page.locator('#setup-K')).toHaveValue('4');
  await expect(page.locator('#setup-lr')).toHaveValue('1e-4');
  await expect(page.locator('#setup-reasoning')).toHaveValue('token');
  await expect(page.locator('#setup-backend')).toHaveValue('wasm');
  // The other panels read the same setup: the gate preview uses q = 0.25.
  await expect(page.getByTestId('gate-fraction')).toContainText('q = 0.25');
  // The share link is the same query.
  const href = await panel.getByTestId('setup-link').getAttribute('href');
  expect(new URL(href!, page.url()).searchParams.get('q')).toBe('0.25');

  // Before a run: Train is offered; Pause, Step and Stop wait for a run.
  await expect(panel.getByRole('button', { name: /^Train/ })).toBeEnabled();
  for (const name of ['Pause', 'Step', 'Stop']) {
    await expect(panel.getByRole('button', { name: new RegExp(`^${name}`) })).toBeDisabled();
  }
  await expect(page.getByTestId('train-progress')).toContainText('No run yet');
  // The default (PACT) says nothing about its starting policy; a search recipe from
  // "warm-start" is told that it starts from the search warm start, and what that one does.
  await expect(panel.getByTestId('setup-policy-note')).toHaveCount(0);
  await page.goto('/?recipe=gdpo');
  await expect(panel.getByTestId('setup-policy-note')).toHaveText(
    /A gdpo run starts from the search warm start \(public\/warm-start-search\).*F1 0\.57 .* on 200 held-out queries/,
  );
  // The quick size gives a search episode its budget, so the note has no warning that episodes
  // will be cut, and the size and the home card speak of queries and of the search table.
  await expect(panel.getByTestId('setup-policy-note')).not.toContainText('cut before their answer');
  await expect(panel).toContainText(
    '1,536 response tokens each (search results count as response tokens), 8 held-out queries',
  );
  await expect(page.getByTestId('home-short-run')).toContainText('whether ToolSearcher beats Search-R1, GSPO, GDPO');
  // The page serves that folder from its own origin, where the trainer worker reads it.
  const info = await page.evaluate(async () => {
    const r = await fetch('/warm-start-search/warm_start.json');
    return r.ok ? ((await r.json()) as { searchTasks?: number }) : null;
  });
  expect(info?.searchTasks).toBe(4000);
});

test('run setup: an out-of-range q from a link shows an error naming q and keeps the other fields', async ({
  page,
}) => {
  await page.goto('/?q=1.5&K=4&lambdaStart=0.1&lambdaEnd=0.5');
  const panel = page.getByTestId('run-setup');
  await expect(panel.getByTestId('error-q')).toHaveText(/q must be ≤ 1 \(got "1.5"\)/);
  await expect(page.locator('#setup-q')).toHaveValue('1.5');
  await expect(page.locator('#setup-q')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.locator('#setup-K')).toHaveValue('4');
  await expect(panel.getByTestId('error-K')).toHaveCount(0);
  await expect(panel.getByTestId('error-lambdaEnd')).toContainText('λa end must be ≤ λa start (0.1)');
  await expect(panel.getByTestId('setup-status')).toContainText('2 values need fixing');
  // The gate preview falls back to the default q = 0.4 and says why.
  await expect(page.getByTestId('gate-fraction')).toContainText('q = 0.4');

  // Typing a valid value clears the error.
  await typeInto(page, '#setup-q', '0.3');
  await expect(panel.getByTestId('error-q')).toHaveCount(0);
  await typeInto(page, '#setup-q', 'abc');
  await expect(panel.getByTestId('error-q')).toHaveText(/q must be a number/);
});

test('screenshots: wide and narrow', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto('/');
  await expect(page.getByTestId('device-line')).not.toHaveAttribute('data-backend', '');
  await page.screenshot({ path: 'e2e/screenshots/panels-1280.png', fullPage: true });
  await page.screenshot({ path: 'e2e/screenshots/panels-1280-top.png' });
  await page.getByTestId('mask-schedule').screenshot({ path: 'e2e/screenshots/mask-schedule.png' });
  await page.getByTestId('anchoring-gates').screenshot({ path: 'e2e/screenshots/anchoring-gates.png' });

  await page.goto('/?q=1.5');
  await page.getByTestId('run-setup').screenshot({ path: 'e2e/screenshots/run-setup-error.png' });

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/');
  await expect(page.getByTestId('device-line')).not.toHaveAttribute('data-backend', '');
  // Nothing is wider than the screen except inside the scrolling gate grid.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(overflow).toBeLessThanOrEqual(390);
  await page.screenshot({ path: 'e2e/screenshots/panels-390.png', fullPage: true });
  await page.screenshot({ path: 'e2e/screenshots/panels-390-top.png' });
  // On a phone the panels are folded to bars: open these three.
  for (const fold of ['setup', 'schedule', 'gates']) await page.getByTestId(`fold-${fold}`).click();
  for (const id of ['run-setup', 'mask-schedule', 'anchoring-gates']) {
    await page.getByTestId(id).screenshot({ path: `e2e/screenshots/${id}-390.png` });
  }
});

test('keyboard: every setup control is reachable with Tab', async ({ page }) => {
  await page.goto('/');
  const reached = new Set<string>();
  const wanted = [
    'setup-recipe',
    'setup-q',
    'setup-betaSft',
    'setup-horizon',
    'setup-toolCall',
    'sched-lambdaStart',
    'sched-marked',
  ];
  // The mask schedule stands below the charts, the inspector, the runs and the method panels (the tour's order).
  for (let k = 0; k < 400 && !wanted.every((id) => reached.has(id)); k++) {
    await page.keyboard.press('Tab');
    const id = await page.evaluate(() => document.activeElement?.id ?? '');
    if (id) reached.add(id);
  }
  for (const id of wanted) {
    expect(reached, `#${id} reached by Tab`).toContain(id);
  }
});
