import { test, expect, type Page } from '@playwright/test';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSafetensors, writeSafetensors } from '../src/model/weights/safetensors';
import { resolveConfig } from '../src/recipes/config';

// FTRL evaluation in the app: a user loads FTRL's real test file in the Task files panel and
// evaluates the shipped warm start on it, in the trainer worker, with the tasks' Python tools in
// Pyodide served by the app itself. The data is public benchmark data read from ../shared/data
// (or $PACT_DATA_DIR) at test time, never copied into the repository.
//
// Every task of the file is selected (200, 50 per category). qwen3-nano's window is 2048 tokens;
// with 128 response tokens the prompt budget is 1920, and in the warm start's pruned vocabulary
// only one FTRL prompt fits (line 150, self/parallel_single_hop: 1,027 tokens; the next shortest
// is 2,131). So the table must show 199 prompts over the window, honestly, and one real greedy
// rollout, for which Pyodide loads in the browser.

const dataDir =
  process.env.PACT_DATA_DIR ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../shared/data');
const ftrlPath = path.join(dataDir, 'ftrl/test.jsonl');
const hasData = existsSync(ftrlPath);
if (!hasData) console.warn(`[ftrlEval.spec] ${ftrlPath} is absent: the FTRL evaluation tests are skipped`);

interface ShownRow {
  category: string;
  tasks: number;
  promptTooLong: number;
  scores: number[];
}

async function readRows(page: Page, testId: string): Promise<ShownRow[]> {
  return page.getByTestId(testId).evaluateAll((trs) =>
    trs.map((tr) => {
      const cell = (col: string) => (tr.querySelector(`[data-col="${col}"]`) as HTMLElement).innerText.trim();
      return {
        category: tr.getAttribute('data-category') ?? '',
        tasks: Number(cell('tasks')),
        promptTooLong: Number(cell('promptTooLong')),
        scores: ['solveR', 'solveP', 'solveF1'].map((c) => Number(cell(c))),
      };
    }),
  );
}

async function loadFile(page: Page): Promise<void> {
  await page.goto('/');
  await page.getByTestId('ftrl-file').setInputFiles(ftrlPath);
  await expect(page.getByTestId('ftrl-summary')).toContainText('200 tasks imported', { timeout: 30_000 });
}

test("the warm start evaluated on FTRL's test file: per-category Solve-R/P/F1, prompts over the window counted", async ({
  page,
}) => {
  // Skips only where ../shared/data (or $PACT_DATA_DIR) lacks the FTRL test file, which is never copied into the repository.
  test.skip(!hasData, `FTRL data absent at ${ftrlPath}`);
  test.setTimeout(180_000);
  // Independent count of the categories, straight from the raw JSON.
  const expected: Record<string, number> = {};
  for (const line of readFileSync(ftrlPath, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const c = JSON.parse(line).data_source as string;
    expected[c] = (expected[c] ?? 0) + 1;
  }
  const total = Object.values(expected).reduce((a, b) => a + b, 0);

  await loadFile(page);
  const panel = page.getByTestId('ftrl-eval');
  await panel.getByTestId('ftrl-eval-maxTurns').fill('2');
  await panel.getByTestId('ftrl-eval-maxResponseTokens').fill('128');
  await panel.getByTestId('ftrl-eval-backend').selectOption('wasm');
  await expect(panel.getByTestId('ftrl-eval-policy')).toHaveValue('warm-start');
  await panel.getByTestId('btn-ftrl-eval').click();
  // Running, or already done where the evaluation is fast (one prompt fits): the page must not be
  // caught mid-run for the test to pass, so it waits for the end and checks how it ended.
  await expect(panel).toHaveAttribute('data-status', /^(running|finished|failed)$/);
  await expect(panel).toHaveAttribute('data-status', /finished|failed/, { timeout: 150_000 });
  await expect(panel.getByTestId('ftrl-eval-error')).toHaveCount(0);

  const rows = await readRows(page, 'ftrl-eval-row');
  const [overall] = await readRows(page, 'ftrl-eval-overall');
  // One row per category of the file, each with all its tasks.
  expect(Object.fromEntries(rows.map((r) => [r.category, r.tasks]))).toEqual(expected);
  for (const r of [...rows, overall]) {
    for (const x of r.scores) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThanOrEqual(1);
    }
    expect(r.promptTooLong).toBeLessThanOrEqual(r.tasks);
  }
  // The counts add up: rows → overall, and the summary line says the same.
  expect(overall.tasks).toBe(total);
  expect(rows.reduce((s, r) => s + r.tasks, 0)).toBe(overall.tasks);
  expect(rows.reduce((s, r) => s + r.promptTooLong, 0)).toBe(overall.promptTooLong);
  // Exactly one prompt fits qwen3-nano's 1920-token budget (see the header): shown, not hidden.
  expect(overall.promptTooLong).toBe(total - 1);
  expect(rows.find((r) => r.category === 'self/parallel_single_hop')!.promptTooLong).toBe(
    expected['self/parallel_single_hop'] - 1,
  );
  await expect(panel.getByTestId('ftrl-eval-too-long')).toHaveText(String(total - 1));
  await expect(panel.getByTestId('ftrl-eval-too-long-note')).toContainText(
    `${total - 1} of ${total} tasks had a prompt over the model's budget of 1920 prompt tokens`,
  );
  // The one task that fits ran through Pyodide, loaded from this app.
  await expect(panel.getByTestId('ftrl-eval-details')).toContainText('Pyodide loaded in');
  const report = JSON.parse((await panel.getByTestId('ftrl-eval-report').textContent()) ?? '{}');
  expect(report.summary.predictions).toHaveLength(1);
  expect(JSON.parse(report.summary.predictions[0]).index).toBe(149);
  expect(report.backend).toBe('wasm');
  await panel.scrollIntoViewIfNeeded();
  await page.getByTestId('task-files').screenshot({ path: 'e2e/screenshots/ftrl-eval.png' });
});

test('a bad setting is named by its field and blocks Evaluate', async ({ page }) => {
  // Skips only where ../shared/data (or $PACT_DATA_DIR) lacks the FTRL test file, which is never copied into the repository.
  test.skip(!hasData, `FTRL data absent at ${ftrlPath}`);
  await loadFile(page);
  const panel = page.getByTestId('ftrl-eval');
  await panel.getByTestId('ftrl-eval-perCategory').fill('0');
  await expect(panel.getByTestId('ftrl-eval-error-perCategory')).toHaveText(
    'Tasks per category: must be an integer from 1 to 100000, got 0',
  );
  await expect(panel.getByTestId('btn-ftrl-eval')).toBeDisabled();
  await panel.getByTestId('ftrl-eval-perCategory').fill('1');
  await expect(panel.getByTestId('btn-ftrl-eval')).toBeEnabled();
});

test('Pyodide failing to load is named, with the URL it was loaded from', async ({ page, context }) => {
  // Skips only where ../shared/data (or $PACT_DATA_DIR) lacks the FTRL test file, which is never copied into the repository.
  test.skip(!hasData, `FTRL data absent at ${ftrlPath}`);
  test.setTimeout(120_000);
  // The app's own copy of Pyodide's wasm is missing, and the server answers with its index.html
  // (as vite preview and most single-page-app hosts do for a path they do not have).
  await context.route('**/pyodide/pyodide.asm.wasm', (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>PACT Lab</title>' }),
  );
  await loadFile(page);
  const panel = page.getByTestId('ftrl-eval');
  // Only line 150 fits the warm start's window with 128 response tokens: Python is needed for it.
  await panel.getByTestId('ftrl-eval-maxResponseTokens').fill('128');
  await panel.getByTestId('ftrl-eval-backend').selectOption('wasm');
  await panel.getByTestId('btn-ftrl-eval').click();
  await expect(panel).toHaveAttribute('data-status', 'failed', { timeout: 100_000 });
  const error = panel.getByTestId('ftrl-eval-error');
  await expect(error).toContainText(
    'The evaluation failed: Python for the tools could not start: Pyodide failed to load from http://127.0.0.1:',
  );
  await expect(error).toContainText('pyodide.asm.wasm is not served at http://127.0.0.1:');
  await expect(error).toContainText('/pyodide/pyodide.asm.wasm (the server sent an HTML page in its place)');
  await expect(panel.getByTestId('ftrl-eval-table')).toHaveCount(0);
});

test("a saved run's checkpoint is a policy to evaluate", async ({ page }) => {
  // Skips only where ../shared/data (or $PACT_DATA_DIR) lacks the FTRL test file, which is never copied into the repository.
  test.skip(!hasData, `FTRL data absent at ${ftrlPath}`);
  test.setTimeout(120_000);
  // A checkpoint folder of the warm start's weights (step 3), imported through the Runs panel as
  // a saved run: the Task files panel then offers it, and the worker loads it from IndexedDB.
  const warm = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../public/warm-start');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pact-ftrl-ckpt-'));
  try {
    for (const f of ['config.json', 'model.safetensors', 'pruned_vocab.json'])
      copyFileSync(path.join(warm, f), path.join(dir, f));
    const weights = [...parseSafetensors(readFileSync(path.join(warm, 'model.safetensors'))).tensors];
    const zeros = (shape: number[]) => new Float32Array(shape.reduce((a, b) => a * b, 1));
    const optimizer = weights.flatMap(([name, t]) => [
      { name: `${name}.exp_avg`, shape: t.shape, data: zeros(t.shape) },
      { name: `${name}.exp_avg_sq`, shape: t.shape, data: zeros(t.shape) },
      { name: `${name}.step`, shape: [], data: new Float32Array([3]) },
    ]);
    writeFileSync(path.join(dir, 'optimizer.safetensors'), writeSafetensors(optimizer, { format: 'pact-adamw' }));
    const config = resolveConfig({
      recipe: 'pact',
      name: 'ftrl-ckpt',
      model: { preset: 'qwen3-nano', init: 'warm-start' },
    });
    writeFileSync(
      path.join(dir, 'trainer_state.json'),
      JSON.stringify({
        version: 1,
        step: 3,
        dataCursor: 0,
        rngStates: { root: { key: 'e2e', words: [1, 2, 3, 4] } },
        config,
        recipe: 'pact',
      }),
    );

    await page.goto('/');
    await page.getByTestId('import-checkpoint-folder-input').setInputFiles(dir);
    await expect(page.getByTestId('ckpt-import-message')).toContainText('as run', { timeout: 60_000 });
    await page.getByTestId('ftrl-file').setInputFiles(ftrlPath);
    const panel = page.getByTestId('ftrl-eval');
    const policy = panel.getByTestId('ftrl-eval-policy');
    const option = policy.locator('option', { hasText: 'checkpoint at step 3' });
    await expect(option).toHaveCount(1);
    await policy.selectOption((await option.getAttribute('value'))!);
    await panel.getByTestId('ftrl-eval-perCategory').fill('1');
    await panel.getByTestId('ftrl-eval-backend').selectOption('wasm');
    await panel.getByTestId('btn-ftrl-eval').click();
    await expect(panel).toHaveAttribute('data-status', /finished|failed/, { timeout: 90_000 });
    await expect(panel.getByTestId('ftrl-eval-error')).toHaveCount(0);
    await expect(panel.getByTestId('ftrl-eval-summary')).toContainText(
      /run .+, checkpoint at step 3 on 4 tasks of test\.jsonl/,
    );
    const [overall] = await readRows(page, 'ftrl-eval-overall');
    expect(overall.tasks).toBe(4);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a picked Qwen3 folder is a policy to evaluate', async ({ page }) => {
  // Skips only where ../shared/data (or $PACT_DATA_DIR) lacks the FTRL test file, which is never copied into the repository.
  test.skip(!hasData, `FTRL data absent at ${ftrlPath}`);
  // The warm start's own folder, picked as "your Qwen3 folder" (config.json, model.safetensors, pruned_vocab.json).
  const warm = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../public/warm-start');
  await loadFile(page);
  const panel = page.getByTestId('ftrl-eval');
  await panel.getByTestId('model-folder-input').setInputFiles(warm);
  await expect(panel.getByTestId('ftrl-eval-policy')).toHaveValue('folder');
  await expect(panel.getByTestId('model-folder-name')).toHaveText('warm-start');
  await panel.getByTestId('ftrl-eval-perCategory').fill('1');
  await panel.getByTestId('ftrl-eval-backend').selectOption('wasm');
  await panel.getByTestId('btn-ftrl-eval').click();
  await expect(panel).toHaveAttribute('data-status', /finished|failed/, { timeout: 90_000 });
  await expect(panel.getByTestId('ftrl-eval-error')).toHaveCount(0);
  await expect(panel.getByTestId('ftrl-eval-summary')).toContainText(
    'your Qwen3 folder "warm-start" on 4 tasks of test.jsonl',
  );
});
