import { test, expect, type Page } from '@playwright/test';
import { GUIDED_TOUR } from '../src/ui/lessons';

// The guided tour (issue 6, "Teaching"): every step's title, count and highlighted panel,
// walked with the buttons and with the keyboard, closed with Esc, at 1280×800 and 390 px.

async function expectStep(page: Page, i: number) {
  const step = GUIDED_TOUR[i];
  const card = page.getByTestId('tour-card');
  await expect(card).toHaveAttribute('data-step', step.id);
  await expect(page.getByTestId('tour-title')).toHaveText(step.title);
  await expect(page.getByTestId('tour-count')).toContainText(`Step ${i + 1} of ${GUIDED_TOUR.length}`);
  await expect(page.getByTestId('tour-count')).toContainText(`${step.panelName} panel`);
  // Exactly one panel is highlighted, the step's, with a text label (not colour alone), and it is on screen.
  await expect(page.locator('[data-tour-active]')).toHaveCount(1);
  const panel = page.getByTestId(step.panel);
  await expect(panel).toHaveAttribute('data-tour-active', 'true');
  await expect(panel).toHaveAttribute('data-tour-label', `Tour step ${i + 1} of ${GUIDED_TOUR.length}`);
  await expect(panel.locator('h2').first()).toHaveText(step.panelName);
  await expect(panel.locator('h2').first()).toBeInViewport();
  // …and above the card, not hidden behind it.
  await expect
    .poll(async () => {
      const heading = (await panel.locator('h2').first().boundingBox())!;
      const cardBox = (await card.boundingBox())!;
      return heading.y >= 0 && heading.y + heading.height <= cardBox.y;
    })
    .toBe(true);
  // Focus stays on the card, so the arrow keys and Esc work at once.
  await expect(card).toBeFocused();
}

test('tour at 1280×800: walk every step with Next and the arrow keys, close with Esc', async ({ page }) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/');
  const opener = page.getByRole('button', { name: 'Take the tour' });
  await expect(opener).toBeVisible();
  await expect(page.getByTestId('tour-card')).toHaveCount(0);

  await opener.click();
  await expectStep(page, 0);
  await expect(page.getByTestId('tour-back')).toBeDisabled();
  await expect(page.getByRole('dialog', { name: GUIDED_TOUR[0].title })).toBeVisible();

  // Buttons for the first half, arrow keys for the rest.
  await page.getByTestId('tour-next').click();
  await expectStep(page, 1);
  await page.screenshot({ path: 'e2e/screenshots/tour-step2.png' });
  await page.getByTestId('tour-next').click();
  await expectStep(page, 2);
  await page.keyboard.press('ArrowRight');
  await expectStep(page, 3);
  await page.keyboard.press('ArrowLeft');
  await expectStep(page, 2);
  for (let i = 3; i < GUIDED_TOUR.length; i++) {
    await page.keyboard.press('ArrowRight');
    await expectStep(page, i);
  }
  // The last step has Finish instead of Next, and → does nothing past it.
  await expect(page.getByTestId('tour-next')).toHaveCount(0);
  await expect(page.getByTestId('tour-finish')).toBeVisible();
  await page.keyboard.press('ArrowRight');
  await expectStep(page, GUIDED_TOUR.length - 1);
  await page.screenshot({ path: 'e2e/screenshots/tour-anchoring.png' });

  await page.keyboard.press('Escape');
  await expect(page.getByTestId('tour-card')).toHaveCount(0);
  await expect(page.locator('[data-tour-active]')).toHaveCount(0);
  await expect(opener).toBeFocused();
  await expect(opener).toHaveAttribute('aria-expanded', 'false');
});

test('tour at 390 px: reachable by keyboard only, card fits the screen, Finish closes it', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('/');
  // Keyboard only: Tab from the skip link reaches the tour button.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Take the tour' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expectStep(page, 0);

  const card = page.getByTestId('tour-card');
  const box = (await card.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  expect(box.y + box.height).toBeLessThanOrEqual(844);
  // The buttons are all on screen and nothing scrolls sideways.
  for (const id of ['tour-back', 'tour-next', 'tour-close']) await expect(page.getByTestId(id)).toBeInViewport();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

  await page.keyboard.press('ArrowRight');
  await expectStep(page, 1);
  await page.screenshot({ path: 'e2e/screenshots/tour-step2-390.png' });
  for (let i = 2; i < GUIDED_TOUR.length; i++) {
    await page.getByTestId('tour-next').click();
    await expectStep(page, i);
  }
  await page.screenshot({ path: 'e2e/screenshots/tour-anchoring-390.png' });
  await page.getByTestId('tour-finish').click();
  await expect(card).toHaveCount(0);
  await expect(page.locator('[data-tour-active]')).toHaveCount(0);

  // Reopening starts again at step 1; Close (Esc) button closes too.
  await page.getByRole('button', { name: 'Take the tour' }).click();
  await expectStep(page, 0);
  await page.getByTestId('tour-close').click();
  await expect(card).toHaveCount(0);
});
