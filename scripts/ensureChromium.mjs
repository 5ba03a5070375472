#!/usr/bin/env node
// Makes sure a Chromium exists for the Playwright tests. Playwright cannot download
// its own browsers here, so we use Debian's `chromium`: installed with apt-get when
// running as root, otherwise we stop with one line that says how to install it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromiumPath, hasChromium } from './chromium.mjs';

if (!hasChromium()) {
  const path = chromiumPath();
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = existsSync('/usr/bin/apt-get');
  if (process.env.CHROMIUM_PATH) {
    console.error(
      `CHROMIUM_PATH=${path} does not exist: point it at a Chromium binary, or unset it to use /usr/bin/chromium.`,
    );
    process.exit(1);
  }
  if (!isRoot || !hasApt) {
    console.error(
      'Chromium not found: install it with `sudo apt-get install chromium` (or set CHROMIUM_PATH to a Chromium binary).',
    );
    process.exit(1);
  }
  console.log('Chromium not found at /usr/bin/chromium: installing Debian’s chromium with apt-get…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
  if (!hasChromium()) {
    console.error('apt-get finished but /usr/bin/chromium is still missing.');
    process.exit(1);
  }
}
console.log(`Chromium: ${chromiumPath()}`);
