/**
 * One training run of an experiment through the app's page (scripts/browserExperiment.ts):
 * the run setup from the run's config, the Train button, the wait, the stored metrics read
 * back from the page's IndexedDB, the checks that the page ran what was asked, and the
 * panels' screenshots.
 */
import type { BrowserContext, Page } from '@playwright/test';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ExperimentRun } from '../src/run/experimentFile';
import { describeConfigAsSetup, serializeSetup } from '../src/ui/runSetup';
import { diffJson, toStepRecords, type RunResult } from '../src/experiments/results';
import { readPageDb } from './pageDb';
import { slug, type BackendDecision } from './experimentSession';

interface StoredRun {
  run: { id: string; status: string; error?: string; config: Record<string, unknown> } | null;
  metrics: { step: number; values: Record<string, number> }[];
}

/** The newest run in the page's IndexedDB (the worker wrote it) and its metric rows. */
async function readStoredRun(page: Page): Promise<StoredRun> {
  const { runs, metrics } = await readPageDb(page);
  const run = [...runs].sort((a, b) => b.createdAt - a.createdAt)[0] ?? null;
  const rows = run ? metrics.filter((m) => m.runId === run.id) : [];
  return {
    run: run ? { id: run.id, status: run.status, error: run.error, config: run.config } : null,
    metrics: rows.map((m) => ({ step: m.step, values: m.values })),
  };
}

const PANELS = ['run-setup', 'live-charts', 'rollout-inspector', 'runs-panel'] as const;

async function screenshotPanels(page: Page, dir: string, runId: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const panel of PANELS) {
    const loc = page.getByTestId(panel);
    if ((await loc.count()) === 0) continue;
    await loc.scrollIntoViewIfNeeded();
    await loc.screenshot({ path: path.join(dir, `${slug(runId)}-${panel}.png`) });
  }
}

export async function runInPage(
  context: BrowserContext,
  baseUrl: string,
  run: ExperimentRun,
  backend: BackendDecision,
  outDir: string,
  timeoutMs: number,
): Promise<RunResult> {
  const config = { ...run.config, backend: backend.name };
  const result: RunResult = {
    id: run.id,
    name: run.name,
    seed: run.seed,
    status: 'failed',
    config,
    seconds: 0,
    steps: [],
  };
  const started = Date.now();
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  try {
    const { values, overridesText } = describeConfigAsSetup(config as unknown as Record<string, unknown>);
    await page.goto(`${baseUrl}/?${serializeSetup(values, overridesText)}`);
    const panel = page.getByTestId('run-setup');
    await page.getByTestId('setup-status').waitFor();
    // The setup the page built must be exactly the run's config (else a field did not travel).
    const merged = page.getByTestId('setup-merged-config');
    if ((await merged.count()) === 0) {
      const errors = await panel
        .locator('[data-testid^="error-"], [data-testid="setup-other-errors"] li')
        .allInnerTexts();
      throw new Error(
        `the page rejected the setup: ${(await page.getByTestId('setup-status').innerText()).trim()}${errors.length ? `: ${errors.join('; ')}` : ''}`,
      );
    }
    const shown = JSON.parse((await merged.textContent()) ?? '{}');
    const diff = diffJson(shown, config);
    if (diff.length > 0) throw new Error(`the page's setup differs from the run's config: ${diff.join('; ')}`);

    await panel.getByTestId('btn-train').click();
    const progress = panel.getByTestId('train-progress');
    const deadline = started + timeoutMs;
    for (;;) {
      if ((await panel.getByTestId('start-error').count()) > 0)
        throw new Error(await panel.getByTestId('start-error').innerText());
      const phase = await progress.getAttribute('data-phase');
      if (phase === 'finished' || phase === 'failed' || phase === 'stopped') break;
      if (Date.now() > deadline)
        throw new Error(
          `did not finish within ${Math.round(timeoutMs / 1000)} s (last: ${await progress.innerText()})`,
        );
      await page.waitForTimeout(1000);
    }
    const stored = await readStoredRun(page);
    result.steps = toStepRecords(stored.metrics);
    result.pageRunId = stored.run?.id;
    const runError =
      (await panel.getByTestId('run-error').count()) > 0 ? await panel.getByTestId('run-error').innerText() : '';
    if (!stored.run) throw new Error('the page stored no run in IndexedDB');
    if (stored.run.status !== 'finished')
      throw new Error(`the run ended "${stored.run.status}": ${stored.run.error || runError || 'no error recorded'}`);
    const ranOn = (await page.getByTestId('device-training-backend').innerText()).trim();
    if (ranOn !== backend.name) throw new Error(`asked for ${backend.name}, the trainer ran on ${ranOn}`);
    const configDiff = diffJson(stored.run.config, config);
    if (configDiff.length > 0) throw new Error(`the worker ran a different config: ${configDiff.join('; ')}`);
    result.status = 'finished';
  } catch (e) {
    result.error =
      (e instanceof Error ? e.message : String(e)) +
      (pageErrors.length > 0 ? ` (page errors: ${pageErrors.join('; ')})` : '');
  } finally {
    result.seconds = (Date.now() - started) / 1000;
    await screenshotPanels(page, path.join(outDir, 'screenshots'), run.id).catch(() => undefined);
  }
  return result;
}
