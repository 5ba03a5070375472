/**
 * A newcomer's first ten minutes, at 1280×800 and at 390 px: open the page, take the tour to
 * the end, press the home card's Train, watch the status area and the live memory reading during
 * the first step, see that step's point on the reward chart, reload while the next step trains (the
 * worker dies with the page: the run reads "interrupted" and Resume continues from the checkpoint
 * written after the last step done), resume, and stop. The status line (home card) and the Runs panel say
 * the same word at every stage, and IndexedDB agrees. Then it renames the run.
 *
 * The setup is the page's own default (the Quick size: 2 prompts × K 4, up to 4 turns and 576
 * response tokens, on the backend the page picks; wasm here) with steps = 6 so that the reload and
 * Stop land mid-run however fast a step goes: the first step a newcomer trains is the one this spec
 * times out on. Where a step lands is read from IndexedDB, never assumed from how slow steps are.
 */
import { test, expect, type Page } from '@playwright/test';
import { GUIDED_TOUR } from '../src/ui/lessons';
import { readPageDb } from '../scripts/pageDb';

const STEP_MS = 360_000;

/** The status word of the home card and of the run's Runs-panel row, and the stored status. */
async function statuses(page: Page, runId: string) {
  const home = await page.getByTestId('home-status-word').innerText();
  const row = await page.locator(`tr[data-run-id="${runId}"]`).getByTestId('run-status-word').innerText();
  const stored = (await readPageDb(page)).runs.find((r) => r.id === runId);
  return { home, row, stored: stored?.status };
}

async function openFold(page: Page, id: string) {
  const bar = page.getByTestId(`fold-${id}`);
  if ((await bar.isVisible()) && (await bar.getAttribute('aria-expanded')) === 'false') await bar.click();
}

async function newcomerPath(page: Page, size: string) {
  const shot = (name: string) => page.screenshot({ path: `e2e/screenshots/newcomer-${size}-${name}.png` });
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/');
  await openFold(page, 'setup'); // a bar on a phone
  await expect(page.getByTestId('run-sizes').getByRole('radio', { name: /^Quick/ })).toBeChecked();
  await page.locator('#setup-steps').fill('6');

  // ---- open: where to start, and how long it takes here ------------------------------------
  const home = page.getByTestId('home');
  await expect(home.getByRole('heading', { name: 'Start here' })).toBeVisible();
  await expect(home.getByTestId('home-estimate')).toContainText('On this device (WebAssembly)', { timeout: 60_000 });
  await expect(home.getByTestId('home-estimate')).toContainText(/about \d+ (s|min|h)/);
  // The card says what a short run can and cannot show, before the newcomer trains one.
  await expect(home.getByTestId('home-short-run')).toContainText('cannot show: whether PACT beats the warm start');
  await expect(home.getByRole('button', { name: /Train with this setup/ })).toBeVisible();
  await shot('1-open');

  // ---- the tour, to the end ------------------------------------------------------------------
  await page.getByRole('button', { name: 'Take the tour', exact: true }).click();
  for (let i = 0; i < GUIDED_TOUR.length - 1; i++) {
    await expect(page.getByTestId('tour-card')).toHaveAttribute('data-step', GUIDED_TOUR[i].id);
    await page.getByTestId('tour-next').click();
  }
  await expect(page.getByTestId('tour-card')).toHaveAttribute('data-step', GUIDED_TOUR[GUIDED_TOUR.length - 1].id);
  await shot('2-tour-end');
  await page.getByTestId('tour-finish').click();
  await expect(page.getByTestId('tour-card')).toHaveCount(0);

  // ---- Train -----------------------------------------------------------------------------
  await page.evaluate(() => window.scrollTo(0, 0));
  await home.getByTestId('home-train').click();
  await expect(home.getByTestId('home-status-word')).toHaveText(/starting|running/);
  await expect(home.getByTestId('run-status')).toHaveAttribute('data-status', 'running', { timeout: 180_000 });
  const runId = (await readPageDb(page)).runs[0].id;
  await openFold(page, 'runs');
  await openFold(page, 'device');
  expect(await statuses(page, runId)).toEqual({ home: 'running', row: 'running', stored: 'running' });
  // A progress reading of the step under way: step 1, or a later one where step 1 landed before the page
  // looked; likewise the time left is either not measured yet or measured from the steps done.
  await expect(home.getByTestId('run-step-progress')).toContainText(/Step \d+/);
  await expect(home.getByTestId('run-eta')).toContainText(
    /Time left: measured after the first step|About \d+ (s|min|h)( \d+ min)? left \(from \d+ measured step/,
  );

  // Memory is read during a step, not once per step: two readings at different times within one step.
  const seen = new Map<string, Set<string>>();
  await expect
    .poll(
      async () => {
        const time = page.getByTestId('device-memory-time');
        const step = /· step (\d+)/.exec(await home.getByTestId('run-status').innerText())?.[1];
        if ((await time.count()) > 0 && step !== undefined) {
          const times = seen.get(step) ?? new Set<string>();
          seen.set(step, times.add(await time.innerText()));
        }
        return Math.max(0, ...[...seen.values()].map((t) => t.size));
      },
      { timeout: STEP_MS, intervals: [500] },
    )
    .toBeGreaterThanOrEqual(2);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot('3-training');

  // ---- the first real step's point on the reward chart ------------------------------------
  // (step 1's point, or a later one's where more steps landed before the page looked)
  const reward = page.getByTestId('chart-reward-latest');
  await expect(reward).toContainText(/current run \(pact\): -?[\d.]+ at step [1-6]\b/, { timeout: STEP_MS });
  await expect(page.getByTestId('demo-badge')).toHaveCount(0);
  // It is checkpointed after that first step (the app checkpoints after every step).
  await expect
    .poll(async () => Number((await readPageDb(page)).runs[0].lastCheckpointId?.split('@')[1] ?? 0), {
      timeout: 60_000,
    })
    .toBeGreaterThanOrEqual(1);
  await expect(home.getByTestId('run-eta')).toContainText(
    /About \d+ (s|min|h)( \d+ min)? left \(from \d+ measured steps?/,
  );
  await page.getByTestId('chart-reward').scrollIntoViewIfNeeded();
  await shot('4-first-point');

  // ---- reload while a later step trains: the worker is gone, so the run is interrupted ----------
  await page.reload();
  await expect(home.getByTestId('run-status')).toHaveAttribute('data-status', 'interrupted', { timeout: 60_000 });
  // What the reload left (step 1 here; later where steps are fast), read once the worker is gone:
  // the last stored step and the checkpoint Resume continues from (the same step, or the one before
  // where the reload came between a step's row and its checkpoint).
  const left = (await readPageDb(page)).runs.find((r) => r.id === runId)!;
  const ckptStep = Number(left.lastCheckpointId?.split('@')[1]);
  expect(left.lastStep).toBeGreaterThanOrEqual(1);
  expect([left.lastStep, left.lastStep - 1]).toContain(ckptStep);
  await openFold(page, 'runs');
  expect(await statuses(page, runId)).toEqual({ home: 'interrupted', row: 'interrupted', stored: 'interrupted' });
  await expect(home.getByTestId('run-resume-plan')).toContainText(
    "This run's tab was reloaded or closed while it trained",
  );
  await expect(home.getByTestId('run-resume-plan')).toContainText(
    `Resume continues from its checkpoint at step ${ckptStep}`,
  );
  await expect(page.locator(`tr[data-run-id="${runId}"]`).getByTestId('resume-plan')).toContainText(
    `Resume: continues from its checkpoint at step ${ckptStep}`,
  );
  // The charts keep the run's stored steps, not the demo.
  await expect(reward).toContainText(new RegExp(`current run \\(pact\\): -?[\\d.]+ at step ${left.lastStep}\\b`));
  await expect(page.getByTestId('demo-badge')).toHaveCount(0);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot('5-after-reload');

  // ---- resume, then stop -------------------------------------------------------------------
  await home.getByTestId('home-resume').click();
  await expect(home.getByTestId('run-status')).toHaveAttribute('data-status', 'running', { timeout: 180_000 });
  expect(await statuses(page, runId)).toEqual({ home: 'running', row: 'running', stored: 'running' });
  await home.getByTestId('home-stop').click();
  // Stop waits for the step to end: until it does both say so, never "paused" (a fast step may
  // already have ended, and then both say "stopped").
  await expect(home.getByTestId('home-status-word')).toHaveText(/^(stopping after this step|stopped)$/);
  await expect(page.locator(`tr[data-run-id="${runId}"]`).getByTestId('run-status-word')).toHaveText(
    /^(stopping after this step|stopped)$/,
  );
  await shot('6-stopping');
  await expect(home.getByTestId('run-status')).toHaveAttribute('data-status', 'stopped', { timeout: STEP_MS });
  await expect
    .poll(async () => statuses(page, runId), { timeout: 30_000 })
    .toEqual({ home: 'stopped', row: 'stopped', stored: 'stopped' });
  // It trained on from the checkpoint and stopped after the step under way (or a later one), saved.
  const run = (await readPageDb(page)).runs.find((r) => r.id === runId)!;
  expect(run.lastStep).toBeGreaterThan(ckptStep);
  expect(run.lastCheckpointId).toBe(`${runId}@${run.lastStep}`);
  await expect(reward).toContainText(new RegExp(`current run \\(pact\\): -?[\\d.]+ at step ${run.lastStep}\\b`));
  await expect(home.getByTestId('home-train')).toHaveText(/Train a new run with this setup/);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot('7-stopped');

  // ---- name it: the Runs panel renames, the status line follows ------------------------------
  const row = page.locator(`tr[data-run-id="${runId}"]`);
  await row.getByTestId('rename-run').click();
  await row.getByTestId('rename-input').fill('my first PACT run');
  await row.getByTestId('rename-save').click();
  await expect(row.getByTestId('run-name')).toHaveText('my first PACT run');
  await expect(home.getByTestId('run-status')).toContainText('my first PACT run');
  expect((await readPageDb(page)).runs.find((r) => r.id === runId)?.name).toBe('my first PACT run');
  expect(consoleErrors, consoleErrors.join('\n')).toEqual([]);
}

test('a newcomer at 1280×800: tour, Train, first point, reload, resume, stop', async ({ page }) => {
  test.setTimeout(1_200_000);
  await newcomerPath(page, '1280');
});

test('a newcomer at 390 px: the same path on a phone', async ({ page }) => {
  test.setTimeout(1_200_000);
  await page.setViewportSize({ width: 390, height: 844 });
  await newcomerPath(page, '390');
});
