import { test, expect, type Page } from '@playwright/test';
import { GUIDED_TOUR } from '../src/ui/lessons';
import { minCardHeight } from '../src/ui/tourPlacement';

// The guided tour: what the app is and how long a run takes here, then Setup → Train → Live
// charts → Inspector → Runs → the method's panels. At 1280×800 and at 390 px: each step's
// target is on screen, the card never overlaps it, the page only scrolls down, and the keys work.

const GAP = 12;

/** The box of the thing the step points at, as the card must leave it (its top part when too tall). */
async function targetBox(page: Page) {
  const active = page.locator('[data-tour-active]');
  await expect(active).toHaveCount(1);
  const box = (await active.boundingBox())!;
  const view = page.viewportSize()!;
  // The card's least height is the app's own rule: 150 px, or 45 % of a phone's screen (< 600 px wide).
  const room = view.height - minCardHeight(view) - 4 * GAP;
  return { ...box, height: Math.min(box.height, room) };
}

function overlaps(
  a: { x: number; y: number; width: number; height: number },
  b: { x: number; y: number; width: number; height: number },
) {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

async function expectStep(page: Page, i: number) {
  const step = GUIDED_TOUR[i];
  const card = page.getByTestId('tour-card');
  await expect(card).toHaveAttribute('data-step', step.id);
  await expect(page.getByTestId('tour-title')).toHaveText(step.title);
  await expect(page.getByTestId('tour-count')).toContainText(`Step ${i + 1} of ${GUIDED_TOUR.length}`);
  await expect(page.getByTestId('tour-count')).toContainText(`${step.panelName} panel`);
  // The pointed-at thing is the step's target inside the step's panel (or the panel itself).
  const panel = page.getByTestId(step.panel);
  const active = page.locator('[data-tour-active]');
  await expect(active).toHaveCount(1);
  expect(await active.evaluate((el, testid) => !!el.closest(`[data-testid="${testid}"]`), step.panel)).toBe(true);
  const matched = await active.evaluate((el, sels) => sels.findIndex((s) => el.matches(s)), [...step.targets]);
  if (step.targets.length > 0 && matched < 0) expect(await active.getAttribute('data-testid')).toBe(step.panel);
  await expect(active).toHaveAttribute('data-tour-label', `Tour step ${i + 1} of ${GUIDED_TOUR.length}`);
  await expect(page.getByTestId('tour-ring')).toContainText(`Tour step ${i + 1} of ${GUIDED_TOUR.length}`);
  await expect(panel).toBeVisible();
  // On screen, and not under the card: the card is placed off it, and fits the screen.
  await expect
    .poll(
      async () => {
        const t = await targetBox(page);
        const c = (await card.boundingBox())!;
        const view = page.viewportSize()!;
        const isOnScreen = t.y >= 0 && t.y + t.height <= view.height + 1;
        const isCardOnScreen =
          c.x >= 0 && c.y >= 0 && c.x + c.width <= view.width + 1 && c.y + c.height <= view.height + 1;
        return { isOnScreen, isCardOnScreen, overlaps: overlaps(t, c) };
      },
      { message: `step ${i + 1} (${step.id}): target and card on screen, apart` },
    )
    .toEqual({ isOnScreen: true, isCardOnScreen: true, overlaps: false });
  await expect(card).toBeFocused();
}

async function walk(page: Page, size: string) {
  const opener = page.getByRole('button', { name: 'Take the tour', exact: true });
  await opener.click();
  await expectStep(page, 0);
  await expect(page.getByTestId('tour-back')).toBeDisabled();
  await expect(page.getByRole('dialog', { name: GUIDED_TOUR[0].title })).toBeVisible();
  // The first step says how long a run of this setup takes on this device.
  await expect(page.getByTestId('tour-look')).toContainText(
    /How long a run of the current setup takes here: about \d+ (s|min|h)/,
  );
  await page.screenshot({ path: `e2e/screenshots/tour-${size}-1-start.png` });
  const scrolls = [await page.evaluate(() => window.scrollY)];
  for (let i = 1; i < GUIDED_TOUR.length; i++) {
    if (i % 2 === 1) await page.getByTestId('tour-next').click();
    else await page.keyboard.press('ArrowRight');
    await expectStep(page, i);
    scrolls.push(await page.evaluate(() => window.scrollY));
    if (['train', 'live-charts', 'prompt-only-anchoring'].includes(GUIDED_TOUR[i].id)) {
      await page.screenshot({ path: `e2e/screenshots/tour-${size}-${i + 1}-${GUIDED_TOUR[i].id}.png` });
    }
  }
  // It never jumps back up the page.
  for (let i = 1; i < scrolls.length; i++)
    expect(scrolls[i], `step ${i + 1} scrolled up: ${scrolls.join(', ')}`).toBeGreaterThanOrEqual(scrolls[i - 1] - 1);
  // The last step has Finish instead of Next, and → does nothing past it; ← goes back.
  await expect(page.getByTestId('tour-next')).toHaveCount(0);
  await expect(page.getByTestId('tour-finish')).toBeVisible();
  await page.keyboard.press('ArrowRight');
  await expectStep(page, GUIDED_TOUR.length - 1);
  await page.keyboard.press('ArrowLeft');
  await expectStep(page, GUIDED_TOUR.length - 2);
  await page.keyboard.press('ArrowRight');
  await expectStep(page, GUIDED_TOUR.length - 1);
}

test('tour at 1280×800: every step on screen and uncovered, going down the page; Esc closes', async ({ page }) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/');
  await expect(page.getByTestId('device-line')).not.toContainText('Checking', { timeout: 60_000 });
  await expect(page.getByTestId('tour-card')).toHaveCount(0);
  await walk(page, '1280');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('tour-card')).toHaveCount(0);
  await expect(page.locator('[data-tour-active]')).toHaveCount(0);
  await expect(page.getByTestId('tour-ring')).toHaveCount(0);
  const opener = page.getByRole('button', { name: 'Take the tour', exact: true });
  await expect(opener).toBeFocused();
  await expect(opener).toHaveAttribute('aria-expanded', 'false');
});

test('tour at 390 px: folded panels open as it reaches them, the card fits beside its target; Finish closes it', async ({
  page,
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/');
  await expect(page.getByTestId('fold-device')).toContainText(/WASM|WEBGPU|CPU/, { timeout: 60_000 });
  // Keyboard only: Tab from the skip link reaches the tour button.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Take the tour', exact: true })).toBeFocused();
  await page.keyboard.press('Escape'); // nothing open: nothing happens
  await expect(page.getByTestId('fold-inspector')).toHaveAttribute('aria-expanded', 'false');
  await walk(page, '390');
  await expect(page.getByTestId('fold-inspector')).toHaveAttribute('aria-expanded', 'true');
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.getByTestId('tour-finish').click();
  await expect(page.getByTestId('tour-card')).toHaveCount(0);
  await expect(page.locator('[data-tour-active]')).toHaveCount(0);
  // The home card's "take the tour first" opens it at step 1 too; Close (Esc) closes it.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.getByTestId('home-tour').click();
  await expectStep(page, 0);
  await page.getByTestId('tour-close').click();
  await expect(page.getByTestId('tour-card')).toHaveCount(0);
});
