#!/usr/bin/env node
// `npm test`: the format and lint checks (prettier --check, eslint; warnings pass), the
// unit tests (vitest, Node; scripts/ensurePython.mjs first installs or names the Python the
// PyTorch and VeRL reference tests import) and then the browser tests (Playwright in Debian's Chromium,
// against the built app). Ends with one summary line "N passed, N failed" counting the
// tests, and a line naming the checks that failed; any failure fails the run.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';

const tmp = 'test-results';
mkdirSync(tmp, { recursive: true });
const run = (cmd, args, env = {}) =>
  spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } }).status ?? 1;

let passed = 0;
let failed = 0;
let skipped = 0;

// 0. Format and lint: reported now and in the summary; the tests still run.
const checks = [
  ['prettier --check', run('npx', ['prettier', '--check', '.', '--log-level', 'warn'])],
  ['eslint', run('npx', ['eslint', '.'])],
];
const failedChecks = checks.filter(([, status]) => status !== 0).map(([name]) => name);
if (failedChecks.length) {
  const hint = '`npm run format` fixes the layout, `npm run lint` lists the lint errors';
  console.error(`\n${failedChecks.join(' and ')} failed (${hint})`);
}

// 1. Unit tests (the reference tests' Python first: installed or named, never failing the run).
run('node', ['scripts/ensurePython.mjs']);
const unitJson = `${tmp}/vitest.json`;
rmSync(unitJson, { force: true });
const unitStatus = run('npx', [
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${unitJson}`,
]);
if (existsSync(unitJson)) {
  const r = JSON.parse(readFileSync(unitJson, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  if (unitStatus !== 0 && r.numFailedTests === 0) failed += 1; // a suite that failed to load
} else if (unitStatus !== 0) {
  failed += 1;
}

// 2. Browser tests: Chromium, a fresh build, Playwright.
let e2eStatus = run('node', ['scripts/ensureChromium.mjs']);
if (e2eStatus === 0) e2eStatus = run('npx', ['vite', 'build', '--logLevel', 'warn']);
const e2eJson = resolve(tmp, 'playwright.json');
rmSync(e2eJson, { force: true });
if (e2eStatus === 0) {
  e2eStatus = run('npx', ['playwright', 'test', '-c', 'e2e/playwright.config.ts', '--reporter=list,json'], {
    PLAYWRIGHT_JSON_OUTPUT_NAME: e2eJson,
  });
  if (existsSync(e2eJson)) {
    const s = JSON.parse(readFileSync(e2eJson, 'utf8')).stats;
    passed += s.expected;
    failed += s.unexpected + s.flaky;
    skipped += s.skipped;
    if (e2eStatus !== 0 && s.unexpected === 0) failed += 1;
  } else if (e2eStatus !== 0) failed += 1;
} else {
  failed += 1;
}

console.log(`\nunit + e2e: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
if (failedChecks.length) console.log(`format + lint: ${failedChecks.join(', ')} failed`);
process.exit(unitStatus === 0 && e2eStatus === 0 && failed === 0 && failedChecks.length === 0 ? 0 : 1);
