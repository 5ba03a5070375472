// Where the e2e tests find Chromium: $CHROMIUM_PATH, else Debian's /usr/bin/chromium.
// Shared by scripts/ensureChromium.mjs and e2e/playwright.config.ts.
import { existsSync } from 'node:fs';

export function chromiumPath() {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return fromEnv;
  return '/usr/bin/chromium';
}

export function hasChromium() {
  return existsSync(chromiumPath());
}

/** Launch flags measured in ../shared/RECIPE.md; WebGPU needs exactly --enable-unsafe-webgpu. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--enable-unsafe-webgpu',
];
