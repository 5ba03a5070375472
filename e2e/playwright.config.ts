import { defineConfig } from '@playwright/test';
// @ts-expect-error plain ESM helper shared with scripts/ensureChromium.mjs
import { chromiumPath, CHROMIUM_ARGS } from '../scripts/chromium.mjs';

const PORT = Number(process.env.PACT_E2E_PORT ?? 4179);
// The built app's folder (`vite build --outDir X`); lets several builds be tested side by side.
const DIST = process.env.PACT_E2E_DIST ?? 'dist';

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: './.output',
  timeout: 120_000,
  workers: 1,
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    launchOptions: { executablePath: chromiumPath(), args: CHROMIUM_ARGS },
  },
  webServer: {
    // The built app, as `npm start` serves it (test:e2e builds first).
    command: `npx vite preview --host 127.0.0.1 --port ${PORT} --strictPort --outDir ${DIST}`,
    url: `http://127.0.0.1:${PORT}`,
    reuseExistingServer: false,
    timeout: 60_000,
    cwd: '..',
  },
});
