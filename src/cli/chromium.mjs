// Where Chromium is found: $CHROMIUM_PATH, else Debian's /usr/bin/chromium, and its launch flags.
// Used by `pact plot` (rasterize.ts) and, through scripts/chromium.mjs, by the e2e tests and
// scripts/ensureChromium.mjs. Plain ESM so that plain `node scripts/*.mjs` can load it;
// its types are in chromium.d.mts.
import { existsSync } from 'node:fs';

export function chromiumPath() {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) return fromEnv;
  return '/usr/bin/chromium';
}

export function hasChromium() {
  return existsSync(chromiumPath());
}

/** Chromium launch flags; WebGPU needs exactly --enable-unsafe-webgpu. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--enable-unsafe-webgpu',
];
