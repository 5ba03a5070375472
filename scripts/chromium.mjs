// Where the e2e tests and scripts find Chromium, and its launch flags: src/cli/chromium.mjs
// (shared with `pact plot`), re-exported for scripts/ensureChromium.mjs, e2e/ and scripts/*.ts.
export { chromiumPath, hasChromium, CHROMIUM_ARGS } from '../src/cli/chromium.mjs';
