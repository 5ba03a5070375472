import { test, expect, type Page } from '@playwright/test';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { capitalCodeLine } from '../src/run/ftrlTestLines';
import { readPageDb } from '../scripts/pageDb';
import { writeScriptedFolder } from './scriptedQwen3Folder';

// Training on a loaded FTRL file in the app: the file loaded in Task files, "loaded FTRL file" as
// Run setup's task source, the split and the window read before Train, and a step trained in the
// worker with the task's Python tool run in Pyodide.
//
// The file: three hand-written FTRL lines (src/run/ftrlTestLines.ts, not benchmark data), the
// capitals of FR, DE and BE, each with its Python tool country_capital and 18 decoy tools, so
// that each prompt is as long as FTRL's: 1,671 tokens in Qwen3's vocabulary, 2,464–2,465 in the
// shipped warm start's pruned one (counted by the run's own rule; see the unit tests for the
// words). With the shipped qwen3-nano (2,048 positions) none fits; with a Qwen3 folder of 8,192
// positions all do.
//
// The folder: e2e/scriptedQwen3Folder.ts, Qwen3's full vocabulary, hidden 24, 8,192 positions
// (hidden 24: its checkpoint, weights, two AdamW moments and π_ref, is 4 × 29 MB; the app stores it
// in pieces of 64 MiB, e2e/checkpointPieces.spec.ts), whose every sampled turn is
// `<tool_call>{"name":"country_capital","arguments":{"code": "FR"}}</tool_call><|im_end|>` (16
// distinct tokens). A purely random policy would call no tool, and the test must see Python run in a step.

const CALL = '<tool_call>{"name":"country_capital","arguments":{"code": "FR"}}</tool_call>';
const DECOYS = 18;
const FILE_NAME = 'capitals.jsonl';
const FILE_TEXT = ['FR', 'DE', 'BE'].map((code) => capitalCodeLine({ code: code as 'FR', decoys: DECOYS })).join('\n');

let root: string;
let folder: string;

test.beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'pact-ftrl-train-'));
  folder = path.join(root, 'qwen3-scripted');
  await writeScriptedFolder(folder, CALL);
});

test.afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The run setup of both tests: the FTRL recipe, 1 step of 1 prompt × K 2, 2 turns of at most 32 tokens, wasm. */
const SETUP_URL = `/?${new URLSearchParams({
  recipe: 'ftrl',
  steps: '1',
  K: '2',
  batch: '1',
  miniBatch: '1',
  backend: 'wasm',
  overrides: JSON.stringify({ maxTurns: 2, maxResponseTokens: 32, evalEvery: 1 }),
})}`;

async function loadFileAndChooseFtrl(page: Page): Promise<void> {
  await page.goto(SETUP_URL);
  const setup = page.getByTestId('run-setup');
  // Before a file is loaded the source is offered disabled, with its reason.
  await expect(page.locator('#setup-tasks option[value="ftrl"]')).toBeDisabled();
  await expect(setup.getByTestId('unavailable-tasks-ftrl')).toContainText(
    'load an FTRL task file in the Task files panel first',
  );
  await page
    .getByTestId('ftrl-file')
    .setInputFiles({ name: FILE_NAME, mimeType: 'text/plain', buffer: Buffer.from(FILE_TEXT) });
  await expect(page.getByTestId('ftrl-summary')).toContainText('3 tasks imported');
  await page.locator('#setup-tasks').selectOption('ftrl');
  await expect(page.locator('#setup-tasks option[value="ftrl"]')).toHaveText('loaded FTRL file');
  // trainFraction 0.8 of 3 lines, seeded by trainSeed 1: lines 1 and 3 train, line 2 is held out.
  await expect(setup.getByTestId('ftrl-setup-split')).toHaveText(
    `Split. 2 lines of ${FILE_NAME} train (lines 1, 3); 1 is held out and evaluated (line 2). ` +
      "Split by a permutation of the file's 3 task lines seeded by trainSeed 1 (trainFraction 0.8: 2 train, 1 held out). " +
      'The held-out lines are never trained on: the run refuses a split whose parts share a line or a task, and reports scores on the held-out lines only.',
  );
  await expect(setup.getByTestId('ftrl-setup-recipes')).toContainText(
    "Recipes that train on this file: GRPO (the answer F1 against the task's answer); FTRL (FTRL's compute_solve_f1",
  );
}

test('with the shipped qwen3-nano no FTRL prompt fits: the page says so and what is needed, and Train is off', async ({
  page,
}) => {
  test.setTimeout(120_000);
  await loadFileAndChooseFtrl(page);
  const setup = page.getByTestId('run-setup');
  // 2,048 − 32 response tokens = 2,016 prompt tokens; the prompts take 2,464–2,465 in the warm start's vocabulary.
  await expect(setup.getByTestId('ftrl-setup-fit')).toHaveText(
    "Window. No prompt of this file fits qwen3-nano: its window of 2,048 positions leaves 2,016 prompt tokens beside 32 response tokens, and the run's 3 prompts are 2,464–2,465 tokens.",
    { timeout: 60_000 },
  );
  const need = setup.getByTestId('ftrl-setup-need');
  await expect(need).toContainText("at least 2,497 tokens, counted in qwen3-nano's vocabulary"); // 2,465 + 32
  await expect(need).toContainText("FTRL's own test prompts run to 6,447 tokens, so a window of about 7,000");
  await expect(need).toContainText('At real sizes it needs WebGPU');
  await expect(setup.getByTestId('btn-train')).toBeDisabled();
  await expect(setup.getByTestId('train-blocked')).toHaveText(
    "Train is off: No FTRL prompt fits qwen3-nano's window (2,048 positions; these prompts are 2,464–2,465 tokens): pick a Qwen3 folder with a window of at least 2,497 tokens.",
  );
  // A recipe that needs expert traces is refused first, with checkFtrlRecipe's reason.
  await page.locator('#setup-recipe').selectOption('pact');
  await expect(setup.getByTestId('train-blocked')).toContainText(
    'Train is off: recipe "pact" cannot train on FTRL tasks: it needs expert traces h*',
  );
  await page.locator('#setup-recipe').selectOption('ftrl');
  await setup.getByTestId('ftrl-setup').scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/ftrl-train-nano-1280.png' });
  await page.setViewportSize({ width: 390, height: 844 });
  await setup.getByTestId('ftrl-setup').scrollIntoViewIfNeeded();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: 'e2e/screenshots/ftrl-train-nano-390.png' });
});

test('a Qwen3 folder with a long window: every prompt fits, Train runs a step whose tool call runs in Pyodide', async ({
  page,
}) => {
  test.setTimeout(600_000);
  await loadFileAndChooseFtrl(page);
  const setup = page.getByTestId('run-setup');
  await setup.getByTestId('model-folder-input').setInputFiles(folder);
  await expect(setup.getByTestId('model-folder-name')).toHaveText('qwen3-scripted');
  await expect(setup.getByTestId('ftrl-setup-fit')).toHaveText(
    'Window. All 3 of the run\'s prompts fit your folder "qwen3-scripted": the longest is 1,671 tokens, and 1,671 + 32 response tokens ≤ its window of 8,192. ' +
      'But maxPromptTokens 1,024 is below the longest prompt (1,671 tokens): set it to 1,671.',
    { timeout: 60_000 },
  );
  await expect(setup.getByTestId('btn-train')).toBeDisabled();
  await setup.getByTestId('btn-ftrl-max-prompt').click();
  await expect(setup.getByTestId('ftrl-setup-fit')).toContainText('maxPromptTokens 1,671 holds every prompt.');
  await expect(setup.getByTestId('train-blocked')).toHaveCount(0);
  await expect(setup.getByTestId('btn-train')).toBeEnabled();
  await setup.getByTestId('ftrl-setup').scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/ftrl-train-folder-1280.png' });
  await page.setViewportSize({ width: 390, height: 844 });
  await setup.getByTestId('ftrl-setup').scrollIntoViewIfNeeded();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: 'e2e/screenshots/ftrl-train-folder-390.png' });
  await page.setViewportSize({ width: 1280, height: 800 });

  await setup.getByTestId('btn-train').click();
  const progress = setup.getByTestId('train-progress');
  await expect
    .poll(
      async () =>
        (await setup.getByTestId('start-error').count()) > 0 ? 'error' : await progress.getAttribute('data-phase'),
      { timeout: 180_000 },
    )
    .not.toBe('starting');
  expect(
    (await setup.getByTestId('start-error').count()) > 0 ? await setup.getByTestId('start-error').innerText() : '',
  ).toBe('');
  await expect(progress).toHaveAttribute('data-phase', /finished|failed/, { timeout: 420_000 });
  expect(await setup.getByTestId('run-error').allInnerTexts()).toEqual([]);

  // The step's metrics, as the worker stored them: the calls its rollouts made ran in Pyodide.
  const db = await readPageDb(page);
  expect(db.runs).toHaveLength(1);
  expect(db.runs[0].config.tasks).toMatchObject({ source: 'ftrl', path: FILE_NAME, trainFraction: 0.8 });
  const row = db.metrics.find((m) => m.step === 1)!;
  // 2 rollouts, one call each: country_capital(code="FR") in Python. (Then each episode ends: the
  // call's 17 tokens and its 15-token response use up the 32-token response budget.)
  expect(row.values['tools/python_calls']).toBe(2);
  expect(row.values['completions/mean_length']).toBe(17);
  expect(row.values['tools/python_errors']).toBe(0);
  expect(Number.isFinite(row.values.reward)).toBe(true);
  expect(Number.isFinite(row.values.loss)).toBe(true);
  // The held-out evaluation ran on line 2 only (DE: the scripted call answers Paris, not Berlin).
  expect(row.values.nTasks).toBe(1);
  expect(Number.isFinite(row.values['eval/solve_f1'])).toBe(true);

  // The inspector shows the call and what Python answered (sorted() and an f-string: only Python writes this).
  const inspector = page.getByTestId('rollout-inspector');
  await inspector.scrollIntoViewIfNeeded();
  await expect(inspector.getByTestId('call-ok').first()).toContainText('country_capital');
  await expect(inspector.locator('[data-kind="observation"]').first()).toContainText('Paris (of BE, DE, FR)');
  await page.screenshot({ path: 'e2e/screenshots/ftrl-train-inspector.png' });
});
