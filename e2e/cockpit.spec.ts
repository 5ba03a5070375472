/**
 * The training cockpit: Live charts, Rollout inspector, Runs, and the
 * training buttons.
 *
 * - What the page shows before training: the recorded demo run when the build ships
 *   `public/demo/demo-run.json`, else an empty state that says so.
 * - The panels' rendering, driven by a small hand-written run served in place of the
 *   demo file (page.route) and by runs written into IndexedDB the way the worker
 *   writes them (same database, same object stores). Those records are TEST DATA,
 *   built here with values checked by hand below; nothing of it ships.
 * - Training itself in the trainer worker on wasm (Train → charts get points →
 *   Pause/Step/Resume → the run saved as finished; the inspector shows K rollouts).
 */
import { test, expect, type Page } from '@playwright/test';
import { tinyRunUrl } from './tinyRun';
import { readPageDb } from '../scripts/pageDb';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const DEMO_FILE = resolve(HERE, '../public/demo/demo-run.json');
const hasDemo = existsSync(DEMO_FILE);

// ---- a hand-written run (test data) ---------------------------------------------------

function stepRow(step: number, reward: number, extra: Record<string, number> = {}) {
  return {
    step,
    recipe: 'pact',
    reward,
    reward_std: 0.1,
    frac_reward_zero_std: 0,
    'completions/mean_length': 40,
    kl: 0.001 * step,
    entropy: 1.5,
    clip_ratio: 0.02,
    grad_norm: 0.5,
    loss: 0.3,
    'loss/Lx': 0.2,
    'loss/Lh': Number.NaN,
    'loss/SFT': 1.1,
    lambda_a: 0.8,
    prefix_level: 4,
    gate_fraction: 0.5,
    lr: 2e-4,
    'tokens/s': 100 * step,
    seconds: 2,
    ...extra,
  };
}

/** K = 3 rollouts of one prompt; rollout 2 has a failed call. */
const FIXTURE = {
  config: { recipe: 'pact', steps: 2 },
  // JSON has no NaN: the absent Lh term is written as null and reads back as "no value".
  metrics: [stepRow(1, 0.25), stepRow(2, 0.5)].map((r) => ({ ...r, 'loss/Lh': null })),
  evals: [
    {
      step: 2,
      nTasks: 4,
      'eval/solve_r': 0.5,
      'eval/solve_p': 1,
      'eval/solve_f1': 0.6667,
      'eval/answer_correct': 0.25,
      'eval/reward': 0.4,
    },
  ],
  rollouts: [
    {
      step: 2,
      promptIndex: 0,
      taskId: 'hop-7',
      question: 'What is the population of the capital of France?',
      gate: 0,
      goldCalls: [
        { name: 'capital_of', arguments: '{"country":"France"}' },
        { name: 'population_of', arguments: '{"city":"Paris"}' },
      ],
      rollouts: [
        {
          segments: [
            {
              kind: 'prompt',
              turn: -1,
              text: '<system>tools…</system> What is the population…',
              nTokens: 30,
              advantage: 0,
            },
            { kind: 'reasoning', turn: 0, text: 'First find the capital.', nTokens: 6, advantage: 1.2 },
            {
              kind: 'tool_call',
              turn: 0,
              text: '{"name":"capital_of","arguments":{"country":"France"}}',
              nTokens: 12,
              advantage: 1.2,
            },
            { kind: 'observation', turn: 0, text: 'Paris', nTokens: 2, advantage: 0 },
            { kind: 'answer', turn: 1, text: 'About 2.1 million.', nTokens: 6, advantage: 0.9 },
          ],
          reward: 1.5,
          turnRewards: [1, 0.5],
          turnAdvantages: [1.2, 0.9],
          calls: [
            {
              turn: 0,
              name: 'capital_of',
              arguments: '{"country":"France"}',
              output: 'Paris',
              isError: false,
              matchedGold: 0,
              reward: 1,
            },
          ],
          answer: 'About 2.1 million.',
          stopReason: 'answer',
        },
        {
          segments: [
            {
              kind: 'prompt',
              turn: -1,
              text: '<system>tools…</system> What is the population…',
              nTokens: 30,
              advantage: 0,
            },
            {
              kind: 'tool_call',
              turn: 0,
              text: '{"name":"population_of","arguments":{"town":',
              nTokens: 10,
              advantage: -1.5,
            },
            { kind: 'observation', turn: 0, text: 'Error: malformed tool call', nTokens: 5, advantage: 0 },
            { kind: 'answer', turn: 1, text: 'I do not know.', nTokens: 5, advantage: -1.0 },
          ],
          reward: 0,
          turnRewards: [0, 0],
          turnAdvantages: [-1.5, -1.0],
          calls: [
            {
              turn: 0,
              name: 'population_of',
              arguments: '{"town":',
              output: 'Error: malformed tool call',
              isError: true,
              matchedGold: null,
              reward: 0,
            },
          ],
          answer: 'I do not know.',
          stopReason: 'answer',
        },
        {
          segments: [
            {
              kind: 'prompt',
              turn: -1,
              text: '<system>tools…</system> What is the population…',
              nTokens: 30,
              advantage: 0,
            },
            { kind: 'answer', turn: 0, text: 'Paris.', nTokens: 3, advantage: 0.3 },
          ],
          reward: 0.2,
          turnRewards: [0.2],
          turnAdvantages: [0.3],
          calls: [],
          answer: 'Paris.',
          stopReason: 'answer',
        },
      ],
    },
  ],
};

async function serveDemo(page: Page, body: unknown) {
  await page.route('**/demo/demo-run.json', (route) =>
    route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(body) }),
  );
}

// ---- before training --------------------------------------------------------------------

test('before training: the shipped recorded demo run, or an empty state that says it is absent', async ({ page }) => {
  await page.goto('/');
  const charts = page.getByTestId('live-charts');
  if (hasDemo) {
    const demo = JSON.parse(readFileSync(DEMO_FILE, 'utf8')) as { metrics: { step: number }[]; rollouts: unknown[] };
    await expect(charts.getByTestId('demo-badge')).toHaveText('recorded demo run');
    await expect(charts.getByTestId('charts-source')).toContainText('recorded demo run');
    // The reward chart draws as many steps as the file holds (its latest value is at the last step).
    const lastStep = Math.max(...demo.metrics.map((m) => m.step));
    await expect(charts.getByTestId('chart-reward-latest')).toContainText(`at step ${lastStep}`);
    if (demo.rollouts.length > 0)
      await expect(page.getByTestId('rollout-table').locator('tbody tr')).not.toHaveCount(0);
  } else {
    await expect(charts.getByTestId('charts-empty')).toContainText('ships no recorded demo run');
    await expect(charts.getByTestId('charts-empty')).toContainText('public/demo/demo-run.json');
    await expect(charts.locator('canvas')).toHaveCount(0);
    await expect(page.getByTestId('inspector-empty')).toBeVisible();
  }
  await charts.scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/cockpit-before-training.png' });
});

test('a malformed demo file is reported, not drawn', async ({ page }) => {
  await serveDemo(page, { config: {}, metrics: { step: 1 } });
  await page.goto('/');
  await expect(page.getByTestId('charts-empty')).toContainText('is malformed: metrics must be an array');
});

// ---- charts and inspector on a served run -----------------------------------------------

test('live charts draw every metric family of a run, label it as recorded, and export PNG and CSV', async ({
  page,
}) => {
  await serveDemo(page, FIXTURE);
  await page.goto('/');
  const charts = page.getByTestId('live-charts');
  await expect(charts.getByTestId('demo-badge')).toHaveText('recorded demo run');
  for (const id of ['reward', 'eval', 'loss', 'kl', 'entropy', 'clip', 'grad', 'speed']) {
    await expect(charts.getByTestId(`chart-${id}`).locator('canvas')).toHaveCount(1);
  }
  // reward 0.5 at step 2; tokens/s = 100·2 = 200; KL = 0.001·2 = 0.002
  await expect(charts.getByTestId('chart-reward-latest')).toContainText('0.5 at step 2');
  // The same readout from the keyboard: focus the plot, ← goes to the last step, ← again to step 1.
  await charts.getByTestId('chart-reward').getByRole('slider').focus();
  await page.keyboard.press('ArrowLeft');
  await expect(charts.getByTestId('chart-reward-latest')).toHaveAttribute('data-hover', 'yes');
  await page.keyboard.press('ArrowLeft');
  await expect(charts.getByTestId('chart-reward-latest')).toContainText('0.25 at step 1');
  await page.keyboard.press('Escape');
  await expect(charts.getByTestId('chart-reward-latest')).toContainText('0.5 at step 2');
  await expect(charts.getByTestId('chart-speed-latest')).toContainText('200 at step 2');
  await expect(charts.getByTestId('chart-kl-latest')).toContainText('0.002 at step 2');
  // Solve-R/P/F1 from the eval row at step 2; the loss chart has Lx and SFT but no Lh (null in every row).
  await expect(charts.getByTestId('chart-eval-latest').locator('li')).toHaveCount(3);
  await expect(charts.getByTestId('chart-eval-latest')).toContainText('Solve-F1: 0.6667');
  await expect(charts.getByTestId('chart-loss-latest').locator('li')).toHaveCount(2);
  await expect(charts.getByTestId('chart-loss-latest')).not.toContainText('L^h_RL');
  await expect(charts.getByTestId('chart-trace-gap')).toHaveCount(0); // no L^h row, so no c^h-against-x chart

  // Hover shows the values at that step under the chart (else the latest).
  const plot = charts.getByTestId('chart-reward').locator('.u-over');
  await plot.scrollIntoViewIfNeeded();
  const box = (await plot.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.move(box.x + 3, box.y + box.height / 2, { steps: 3 });
  await expect(charts.getByTestId('chart-reward-latest')).toHaveAttribute('data-hover', 'yes');
  await expect(charts.getByTestId('chart-reward-latest')).toContainText('0.25 at step 1');
  await page.mouse.move(box.x + box.width / 2, box.y - 60);
  await expect(charts.getByTestId('chart-reward-latest')).toContainText('0.5 at step 2');

  const [png] = await Promise.all([
    page.waitForEvent('download'),
    charts.getByTestId('chart-reward').getByRole('button', { name: /PNG/ }).click(),
  ]);
  expect(png.suggestedFilename()).toBe('pact-Reward.png');
  const pngBytes = readFileSync((await png.path())!);
  expect([...pngBytes.subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG');
  await png.saveAs('e2e/screenshots/cockpit-reward-export.png');

  const [csv] = await Promise.all([page.waitForEvent('download'), charts.getByTestId('export-metrics-csv').click()]);
  const text = readFileSync((await csv.path())!, 'utf8')
    .trim()
    .split('\n');
  expect(text).toHaveLength(3); // header + steps 1 and 2
  const header = text[0].split(',');
  const row2 = text[2].split(',');
  expect(row2[header.indexOf('step')]).toBe('2');
  expect(row2[header.indexOf('reward')]).toBe('0.5');
  expect(row2[header.indexOf('eval/solve_r')]).toBe('0.5');
  expect(row2[header.indexOf('loss/SFT')]).toBe('1.1');
  expect(header).not.toContain('loss/Lh'); // no value in any row: no column, never a 0

  await charts.scrollIntoViewIfNeeded();
  await charts.screenshot({ path: 'e2e/screenshots/cockpit-charts.png' });
  await page.setViewportSize({ width: 390, height: 800 });
  await charts.getByTestId('chart-loss').scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/cockpit-charts-390.png' });
});

test('a run with trace-conditioned (L^h) prompts gets the c^h-against-x log-prob chart', async ({ page }) => {
  const metrics = [
    stepRow(1, 0.25, { 'loss/Lh': 0.4, trace_logprob_gap: -1.25 }),
    stepRow(2, 0.5, { 'loss/Lh': 0.3, trace_logprob_gap: -0.75 }),
  ];
  await serveDemo(page, { ...FIXTURE, metrics });
  await page.goto('/');
  const charts = page.getByTestId('live-charts');
  await expect(charts.getByTestId('chart-trace-gap').locator('canvas')).toHaveCount(1);
  await expect(charts.getByTestId('chart-trace-gap-latest')).toContainText('-0.75 at step 2');
  await charts.getByTestId('chart-trace-gap').scrollIntoViewIfNeeded();
  await charts.screenshot({ path: 'e2e/screenshots/cockpit-trace-gap.png' });
});

test('rollout inspector: K rollouts, turn rewards, gold matches, failed calls, advantage strip with signs', async ({
  page,
}) => {
  await serveDemo(page, FIXTURE);
  await page.goto('/');
  const panel = page.getByTestId('rollout-inspector');
  await expect(panel.locator('.recorded-badge')).toHaveText('recorded demo run');
  await expect(panel.getByTestId('rollout-table').locator('tbody tr')).toHaveCount(3);
  await expect(panel.getByTestId('gold-calls').locator('li')).toHaveCount(2);
  const row1 = panel.getByTestId('rollout-table').locator('tbody tr').nth(0);
  await expect(row1).toContainText('1.50'); // reward
  await expect(row1).toContainText('1.00, 0.50'); // r_t
  await expect(row1).toContainText('+1.20, +0.90'); // turn advantages
  await expect(row1).toContainText('1: 1 matched');
  await expect(panel.getByTestId('rollout-table').locator('tbody tr').nth(1)).toContainText('1: 1 failed');

  // Rollout 1: the strip has one cell per segment after the prompt; the tool response carries no advantage.
  const cells = panel.getByTestId('advantage-strip').locator('.adv-cell');
  await expect(cells).toHaveCount(4); // reasoning, tool call, tool response, answer
  await expect(cells.nth(2)).toHaveClass(/no-adv/);
  await expect(cells.nth(0)).toHaveText('+');
  await expect(cells.nth(3)).toHaveText('+');
  // the largest |A| of the group is 1.5 (rollout 2's call): +1.2 is 80% of the way to blue
  // (242 + 0.8·(0 − 242), 242 + 0.8·(114 − 242), 242 + 0.8·(178 − 242)) = (48.4, 139.6, 190.8) → rgb(48, 140, 191)
  await expect(cells.nth(0)).toHaveCSS('background-color', 'rgb(48, 140, 191)');
  const transcript = panel.getByTestId('transcript');
  for (const kind of ['reasoning', 'tool call', 'tool response', 'answer']) {
    await expect(transcript.locator('.seg-kind', { hasText: new RegExp(`^${kind}$`) }).first()).toBeVisible();
  }
  await expect(transcript).toContainText('matched gold call #1 (capital_of)');

  // Rollout 2: the malformed call is marked failed, in words; its advantages are negative (− marker).
  await panel.getByRole('button', { name: '#2' }).click();
  await expect(panel.getByTestId('call-failed')).toContainText('✗ failed or malformed call');
  await expect(panel.getByTestId('call-failed')).toContainText('no gold call matched');
  await expect(panel.getByTestId('call-failed')).toContainText('Error: malformed tool call');
  await expect(panel.getByTestId('advantage-strip').locator('.adv-cell').nth(0)).toHaveText('−');
  // −1.5 is the far end of the scale: vermillion #d55e00
  await expect(panel.getByTestId('advantage-strip').locator('.adv-cell').nth(0)).toHaveCSS(
    'background-color',
    'rgb(213, 94, 0)',
  );

  await panel.scrollIntoViewIfNeeded();
  await panel.screenshot({ path: 'e2e/screenshots/cockpit-inspector.png' });
  await page.setViewportSize({ width: 390, height: 800 });
  await panel.screenshot({ path: 'e2e/screenshots/cockpit-inspector-390.png' });
});

test("rollout inspector: a run whose recipe is not MatchTIR's says its advantages are that recipe's", async ({
  page,
}) => {
  // The fixture's views name no recipe (as older recordings): the MatchTIR lesson alone.
  await serveDemo(page, FIXTURE);
  await page.goto('/');
  const panel = page.getByTestId('rollout-inspector');
  await expect(panel.getByTestId('rollout-table').locator('tbody tr')).toHaveCount(3);
  await expect(panel.getByTestId('inspector-recipe-credit')).toHaveCount(0);
  // The same views from a GRPO run: the note names GRPO's own credit, from the recipe registry.
  await page.unroute('**/demo/demo-run.json');
  await serveDemo(page, { ...FIXTURE, rollouts: FIXTURE.rollouts.map((g) => ({ ...g, recipe: 'grpo' })) });
  await page.reload();
  await expect(panel.getByTestId('inspector-recipe-credit')).toHaveText(
    "This run's recipe is grpo (GRPO: outcome reward (answer F1), group-normalised advantages, prompt-only), not MatchTIR: the advantages below are its own, while the turn rewards are MatchTIR's matched-call rewards, shown for comparison.",
  );
  await panel.scrollIntoViewIfNeeded();
  await panel.screenshot({ path: 'e2e/screenshots/cockpit-inspector-grpo.png' });
});

// ---- runs saved in IndexedDB ------------------------------------------------------------

/** Writes runs and metric rows the way PactStore does (same database and stores). */
async function insertRuns(page: Page) {
  await page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((res, rej) => {
      const r = indexedDB.open('pact-lab');
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    const tx = db.transaction(['runs', 'metrics'], 'readwrite');
    const now = Date.UTC(2026, 10, 30, 12, 0);
    tx.objectStore('runs').put({
      id: 'e2e-a',
      name: 'pact-seed1',
      recipe: 'pact',
      config: { recipe: 'pact', steps: 3 },
      createdAt: now,
      updatedAt: now + 2,
      status: 'paused',
      lastStep: 3,
      lastCheckpointId: 'e2e-a@3',
    });
    tx.objectStore('runs').put({
      id: 'e2e-b',
      name: 'grpo-seed1',
      recipe: 'grpo',
      config: { recipe: 'grpo', steps: 2 },
      createdAt: now,
      updatedAt: now + 1,
      status: 'finished',
      lastStep: 2,
    });
    for (const [step, reward] of [
      [1, 0.1],
      [2, 0.2],
      [3, 0.4],
    ])
      tx.objectStore('metrics').put({ runId: 'e2e-a', step, values: { reward, kl: 0.01 } });
    for (const [step, reward] of [
      [1, 0.3],
      [2, 0.35],
    ])
      tx.objectStore('metrics').put({ runId: 'e2e-b', step, values: { reward } });
    await new Promise<void>((res, rej) => {
      tx.oncomplete = () => res();
      tx.onerror = () => rej(tx.error);
    });
    db.close();
  });
}

test('runs panel: saved runs listed newest first, overlaid on the charts, exported, deleted after confirming', async ({
  page,
}) => {
  await page.route('**/demo/demo-run.json', (route) => route.fulfill({ status: 404, body: 'absent' }));
  await page.goto('/');
  const panel = page.getByTestId('runs-panel');
  await expect(panel.getByTestId('runs-empty')).toBeVisible(); // the app opened (and created) the database
  await insertRuns(page);
  await panel.getByTestId('runs-refresh').click();
  const rows = panel.getByTestId('runs-table').locator('tbody tr');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toContainText('pact-seed1'); // updated last
  await expect(rows.nth(0)).toContainText('paused');
  await expect(rows.nth(0).getByTestId('run-step')).toHaveText('3');
  await expect(rows.nth(1)).toContainText('grpo');
  await expect(rows.nth(1)).toContainText('finished');
  // Resume needs a checkpoint and an unfinished run.
  await expect(rows.nth(0).getByRole('button', { name: 'Resume' })).toBeEnabled();
  await expect(rows.nth(1).getByRole('button', { name: 'Resume' })).toBeDisabled();
  await expect(rows.nth(1).getByTestId('export-checkpoint')).toBeDisabled(); // e2e-b has no checkpoint
  await expect(rows.nth(0).getByTestId('export-checkpoint')).toBeEnabled();
  await expect(panel.getByTestId('import-checkpoint')).toBeEnabled();

  // Overlay both runs on the charts: two reward series, latest values 0.4 (step 3) and 0.35 (step 2),
  // each under its name (which starts with its recipe, so the legend does not say the recipe twice).
  await rows.nth(0).getByRole('checkbox').check();
  await rows.nth(1).getByRole('checkbox').check();
  const latest = page.getByTestId('chart-reward-latest');
  await expect(latest.locator('li')).toHaveCount(2);
  await expect(latest.locator('li').nth(0)).toContainText('pact-seed1: 0.4 at step 3');
  await expect(latest.locator('li').nth(1)).toContainText('grpo-seed1: 0.35 at step 2');

  // Metrics export as CSV: one line per stored step.
  const [csv] = await Promise.all([
    page.waitForEvent('download'),
    rows.nth(0).getByRole('button', { name: 'CSV' }).click(),
  ]);
  expect(csv.suggestedFilename()).toBe('pact-e2e-a-metrics.csv');
  expect(readFileSync((await csv.path())!, 'utf8')).toBe(
    'run_id,run_label,step,kl,reward\ne2e-a,pact-seed1,1,0.01,0.1\ne2e-a,pact-seed1,2,0.01,0.2\ne2e-a,pact-seed1,3,0.01,0.4\n',
  );
  const [json] = await Promise.all([
    page.waitForEvent('download'),
    rows.nth(1).getByRole('button', { name: 'JSON' }).click(),
  ]);
  const parsed = JSON.parse(readFileSync((await json.path())!, 'utf8'));
  expect(parsed.run.id).toBe('e2e-b');
  expect(parsed.metrics.map((m: { values: { reward: number } }) => m.values.reward)).toEqual([0.3, 0.35]);

  await panel.scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/cockpit-runs.png' });

  // Delete asks first; Cancel (focused, so Enter/Escape keep the run) keeps it.
  await rows.nth(1).getByRole('button', { name: 'Delete' }).click();
  const dialog = panel.getByTestId('delete-dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText('Delete run “grpo-seed1”?');
  await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await page.screenshot({ path: 'e2e/screenshots/cockpit-delete-dialog.png' });
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(rows).toHaveCount(2);
  await rows.nth(1).getByRole('button', { name: 'Delete' }).click();
  await dialog.getByRole('button', { name: 'Delete run' }).click();
  await expect(rows).toHaveCount(1);
  await expect(latest.locator('li')).toHaveCount(1); // its overlay went with it
  // Gone from the database too, metrics included.
  const left = await page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((res) => {
      const r = indexedDB.open('pact-lab');
      r.onsuccess = () => res(r.result);
    });
    const count = (store: string) =>
      new Promise<number>((res) => {
        const q = db.transaction(store).objectStore(store).count();
        q.onsuccess = () => res(q.result);
      });
    const out = { runs: await count('runs'), metrics: await count('metrics') };
    db.close();
    return out;
  });
  expect(left).toEqual({ runs: 1, metrics: 3 });

  await page.setViewportSize({ width: 390, height: 800 });
  await panel.scrollIntoViewIfNeeded();
  await panel.screenshot({ path: 'e2e/screenshots/cockpit-runs-390.png' });
});

// ---- training (needs the trainer worker) -------------------------------------------------

test('an invalid setup: pressing Train names the field and sends nothing', async ({ page }) => {
  await page.goto('/?q=1.5');
  const panel = page.getByTestId('run-setup');
  await panel.getByTestId('btn-train').click();
  await expect(panel.getByTestId('start-error')).toHaveText(/^Cannot start: q must be ≤ 1 \(got "1.5"\)/);
  await expect(panel.getByTestId('train-progress')).toHaveAttribute('data-phase', 'idle');
  await expect(panel.getByTestId('btn-pause')).toBeDisabled();
  await panel.locator('.controls').scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/cockpit-setup-error.png' });
  await page.setViewportSize({ width: 390, height: 800 });
  await panel.locator('.controls').scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/cockpit-setup-error-390.png' });
});

/** Presses Train with a tiny three-step setup (wasm, K = 2, two prompts) and checks the worker accepted it. */
async function startTinyRun(page: Page) {
  await page.goto(tinyRunUrl({ steps: '3', K: '2', batch: '2', miniBatch: '1', backend: 'wasm' }));
  const panel = page.getByTestId('run-setup');
  await panel.getByTestId('btn-train').click();
  const progress = panel.getByTestId('train-progress');
  await expect
    .poll(
      async () =>
        (await panel.getByTestId('start-error').count()) > 0 ? 'error' : await progress.getAttribute('data-phase'),
      { timeout: 60_000 },
    )
    .not.toBe('starting');
  const startError =
    (await panel.getByTestId('start-error').count()) > 0 ? await panel.getByTestId('start-error').innerText() : '';
  expect(startError).toBe('');
  return panel;
}

test('training: Train → progress and chart points; Pause, Step, Resume; the run is saved; the inspector shows its K rollouts', async ({
  page,
}) => {
  test.setTimeout(600_000);
  const panel = await startTinyRun(page);
  const progress = panel.getByTestId('train-progress');
  const latest = page.getByTestId('chart-reward-latest');
  /** Steps the worker has stored (IndexedDB): what the test waits on, never how fast a step goes. */
  const storedSteps = async () => (await readPageDb(page)).runs[0]?.lastStep ?? 0;
  await expect(panel.getByTestId('btn-pause')).toBeEnabled();
  await panel.getByTestId('btn-pause').click();
  // Pause takes effect when the step under way ends: step 1 here, step 2 where step 1 landed before
  // the click. Either way the run pauses with a step left, so the test waits for the pause, then reads
  // where it paused instead of assuming it.
  await expect(progress).toHaveAttribute('data-phase', 'paused', { timeout: 300_000 });
  const pausedAt = await storedSteps();
  expect([1, 2]).toContain(pausedAt);
  await expect(panel.getByTestId('btn-train')).toHaveText(/Resume/);
  await expect(panel.getByTestId('btn-step')).toBeEnabled();
  await panel.getByTestId('btn-step').click();
  // Step trains exactly one step: wait until it is stored (its point on the chart), not until some point shows.
  await expect.poll(storedSteps, { timeout: 300_000, intervals: [2000] }).toBe(pausedAt + 1);
  await expect(latest).toContainText(`at step ${pausedAt + 1}`);
  if (pausedAt + 1 < 3) {
    // Still paused after the single step; Resume trains the rest.
    await expect(progress).toHaveAttribute('data-phase', 'paused');
    await panel.getByTestId('btn-train').click(); // Resume
  }
  await expect(progress).toHaveAttribute('data-phase', 'finished', { timeout: 300_000 });
  expect(await storedSteps()).toBe(3);
  await expect(latest).toContainText('at step 3');
  await expect(page.getByTestId('device-tokens-per-s')).not.toContainText('no run yet');
  await expect(page.getByTestId('runs-table').locator('tbody tr').first()).toContainText('finished');
  // The rollout inspector shows the K = 2 rollouts of a prompt of the latest step, live (not the recorded demo).
  const inspector = page.getByTestId('rollout-inspector');
  await expect(inspector.getByTestId('rollout-table').locator('tbody tr')).toHaveCount(2);
  await expect(inspector.getByTestId('advantage-strip').locator('.adv-cell')).not.toHaveCount(0);
  await expect(inspector.locator('.recorded-badge')).toHaveCount(0);
  await page.screenshot({ path: 'e2e/screenshots/cockpit-trained.png', fullPage: true });
});
