/**
 * Run setup's "Export to VeRL (.tar)" in real Chromium: the button is offered only for what
 * the export carries (disabled with the reason otherwise), shows its progress, and downloads
 * one .tar that holds the VeRL job of the setup's current config: data/train.parquet,
 * config/pact_trainer.yaml, pact_verl/*.py with pact_verl/tool_server.mjs, launch.sh
 * (executable once `tar -xf` extracts it) and run_config.json equal to the merged config the
 * setup shows. A failed export says so. Saves screenshots at 1280 and 390 px wide (e2e/screenshots/).
 */
import { test, expect, type Page } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readTar } from '../src/storage/tar';

async function readMergedConfig(page: Page): Promise<Record<string, unknown>> {
  const details = page.getByTestId('setup-overrides');
  if (!(await details.evaluate((d) => (d as HTMLDetailsElement).open)))
    await details.locator('summary').first().click();
  const merged = page.getByTestId('setup-merged-config');
  if (!(await merged.isVisible())) await details.locator('details summary').click();
  return JSON.parse((await merged.textContent()) ?? '{}');
}

/** GNU tar, to extract the download as the user does; absent on a machine without it. */
function hasGnuTar(): boolean {
  try {
    return execFileSync('tar', ['--version'], { encoding: 'utf8' }).includes('GNU tar');
  } catch {
    return false;
  }
}

test('Export to VeRL downloads the setup as a VeRL job in one .tar', async ({ page }) => {
  await page.goto('/');
  const panel = page.getByTestId('run-setup');
  await expect(panel.getByTestId('setup-status')).toContainText('Valid configuration');
  const section = panel.getByTestId('verl-export');
  const button = section.getByTestId('btn-verl-export');
  await expect(button).toHaveText('Export to VeRL (.tar)');
  await expect(button).toBeEnabled();
  await expect(section).toContainText('tar -xf it, then bash launch.sh');

  // A recipe the export does not carry: disabled, with the reason.
  await page.locator('#setup-recipe').selectOption('sft');
  await expect(button).toBeDisabled();
  await expect(section.getByTestId('verl-export-blocked')).toContainText('The sft recipe has no VeRL mapping yet');
  await section.screenshot({ path: 'e2e/screenshots/verl-export-blocked.png' });
  await page.locator('#setup-recipe').selectOption('pact');
  await expect(button).toBeEnabled();
  await expect(section.getByTestId('verl-export-blocked')).toHaveCount(0);

  // The current setup, not the default one: a different seed and length.
  await page.locator('#setup-seed').fill('7');
  await page.locator('#setup-steps').fill('6');
  await expect(panel.getByTestId('setup-status')).toContainText('Valid configuration');
  const config = await readMergedConfig(page);
  expect(config).toMatchObject({ recipe: 'pact', seed: 7, steps: 6 });

  await panel.screenshot({ path: 'e2e/screenshots/verl-export-1280.png' });
  await section.screenshot({ path: 'e2e/screenshots/verl-export-section-1280.png' });

  // Every progress line the section shows while the export runs.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { verlProgress: string[] }).verlProgress = seen;
    new MutationObserver(() => {
      const line = document.querySelector('[data-testid="verl-export-progress"]');
      if (line?.textContent && seen.at(-1) !== line.textContent) seen.push(line.textContent);
    }).observe(document.querySelector('[data-testid="verl-export"]')!, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 90_000 }), button.click()]);
  expect(download.suggestedFilename()).toBe('pact-verl-pact-s7.tar');
  const done = section.getByTestId('verl-export-done');
  await expect(done).toContainText('Downloaded pact-verl-pact-s7.tar');
  await expect(button).toBeEnabled();
  const progress = await page.evaluate(() => (window as unknown as { verlProgress: string[] }).verlProgress);
  expect(progress).toContain('Generating 256 train tasks with their expert traces and 8 held-out tasks…');
  expect(progress.some((line) => line.startsWith('Writing 12 train rows'))).toBe(true);

  const bytes = new Uint8Array(readFileSync((await download.path())!));
  const entries = readTar(bytes);
  const folder = 'pact-verl-pact-s7';
  expect(entries.every((e) => e.name.startsWith(`${folder}/`))).toBe(true);
  const files = new Map(entries.map((e) => [e.name.slice(folder.length + 1), e.data]));
  for (const name of ['data/train.parquet', 'config/pact_trainer.yaml', 'pact_verl/tool_server.mjs', 'launch.sh'])
    expect(files.get(name)?.length ?? 0, name).toBeGreaterThan(0);
  const python = [...files.keys()].filter((n) => /^pact_verl\/[a-z_]+\.py$/.test(n));
  expect(python).toEqual(
    expect.arrayContaining([
      'pact_verl/actor.py',
      'pact_verl/algos.py',
      'pact_verl/register.py',
      'pact_verl/rewards.py',
    ]),
  );
  expect(python.length).toBeGreaterThanOrEqual(10);
  const text = (name: string) => new TextDecoder().decode(files.get(name));
  expect(text('pact_verl/tool_server.mjs')).toMatch(/^\/\/ Generated by pact export verl/);
  expect(new TextDecoder().decode(files.get('data/train.parquet')!.subarray(0, 4))).toBe('PAR1');
  const yaml = text('config/pact_trainer.yaml');
  for (const line of ['train_batch_size: 2', 'total_training_steps: 6', 'seed: 7']) expect(yaml).toContain(line);
  expect(JSON.parse(text('run_config.json'))).toEqual(config);

  if (hasGnuTar()) {
    // As the user does: tar -xf, then launch.sh is executable and parses as bash.
    const dir = mkdtempSync(path.join(tmpdir(), 'pact-verl-e2e-'));
    try {
      const tarPath = path.join(dir, download.suggestedFilename());
      writeFileSync(tarPath, bytes);
      execFileSync('tar', ['-xf', tarPath, '-C', dir]);
      const launch = path.join(dir, folder, 'launch.sh');
      expect(statSync(launch).mode & 0o111).not.toBe(0);
      execFileSync('bash', ['-n', launch]);
      expect(readFileSync(path.join(dir, folder, 'run_config.json'), 'utf8')).toBe(text('run_config.json'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  // The docs page the section links to is served with the app.
  const href = await section.getByTestId('verl-doc-link').getAttribute('href');
  const doc = await page.request.get(href!);
  expect(doc.status()).toBe(200);
  expect(await doc.text()).toMatch(/^# Exporting a run to VeRL/);
  const docPage = await page.context().newPage(); // opened as a page, not saved as a download
  await docPage.goto(href!);
  await expect(docPage.locator('body')).toContainText('What maps to what');
  await docPage.close();

  await page.setViewportSize({ width: 390, height: 844 });
  await section.scrollIntoViewIfNeeded();
  await page.screenshot({ path: 'e2e/screenshots/verl-export-390.png' });
  await section.screenshot({ path: 'e2e/screenshots/verl-export-section-390.png' });
});

test('a failed VeRL export says so, and the button can be pressed again', async ({ page }) => {
  await page.route('**/assets/browserExport-*.js', (route) => route.abort());
  await page.goto('/');
  const section = page.getByTestId('run-setup').getByTestId('verl-export');
  await section.getByTestId('btn-verl-export').click();
  await expect(section.getByTestId('verl-export-error')).toContainText('The VeRL export failed:');
  await expect(section.getByTestId('btn-verl-export')).toBeEnabled();
});
