/**
 * SVG → PNG with Debian's Chromium through Playwright (no image library in the project):
 * the SVG is loaded as the page and the page is screenshot at the SVG's size. Node-only.
 */
import { writeFile } from 'node:fs/promises';
import { chromiumPath, CHROMIUM_ARGS } from './chromium.mjs';

export async function rasterizeSvg(
  svg: string,
  outPath: string,
  size: { width: number; height: number },
): Promise<void> {
  const { chromium } = await import('playwright-core');
  const executablePath = chromiumPath();
  let browser;
  try {
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true });
  } catch (e) {
    throw new Error(
      `cannot start Chromium at ${executablePath} to write ${outPath} (set CHROMIUM_PATH, or apt-get install chromium): ${(e as Error).message.split('\n')[0]}`,
    );
  }
  try {
    const page = await browser.newPage({ viewport: size, deviceScaleFactor: 1 });
    await page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
    const png = await page.screenshot({ clip: { x: 0, y: 0, ...size }, type: 'png' });
    await writeFile(outPath, png);
  } finally {
    await browser.close();
  }
}
