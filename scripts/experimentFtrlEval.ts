/**
 * An evaluation file (`"kind": "ftrl-eval"`, src/experiments/ftrlEvalConfig.ts) through the
 * page (scripts/browserExperiment.ts): the Task files panel loads the FTRL task file and
 * evaluates the file's policy; results.json holds the page's report, table.md and
 * table.csv its table.
 */
import type { Page } from '@playwright/test';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  isFtrlEvalFile,
  parseFtrlEvalExperiment,
  resolveFtrlTasksPath,
  shrinkFtrlEvalForSmoke,
  type FtrlEvalExperiment,
} from '../src/experiments/ftrlEvalConfig';
import { formatFtrlEvalCsv, formatFtrlEvalMarkdown, formatScore } from '../src/experiments/ftrlEvalTable';
import type { FtrlEvalReport } from '../workers/protocol';
import {
  ROOT,
  chooseBackend,
  newContext,
  openRunnerSession,
  readExperimentJson,
  readGit,
  showPath,
  type BackendDecision,
  type RunExperimentOptions,
} from './experimentSession';

export const FTRL_EVAL_RESULTS_FORMAT = 'pact-lab-ftrl-eval-results/1';

export interface FtrlEvalResults {
  format: typeof FTRL_EVAL_RESULTS_FORMAT;
  experiment: {
    name: string;
    description?: string;
    file: string;
    isSmoke: boolean;
    tasksFile: string;
    policy: string;
    settings: FtrlEvalExperiment['settings'];
  };
  app: { name: string; version: string; gitCommit: string; isGitDirty: boolean };
  backend: { name: string; reason: string };
  startedAt: string;
  finishedAt: string;
  /** The page's report: the table's rows, counts, predictions, settings, Pyodide's load time. */
  report: FtrlEvalReport;
}

/** Drives the Task files panel: loads the task file, sets the form, evaluates, returns the page's report. */
async function evaluateInPage(
  page: Page,
  baseUrl: string,
  exp: FtrlEvalExperiment,
  tasksPath: string,
  backend: BackendDecision,
  timeoutMs: number,
): Promise<FtrlEvalReport> {
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const withPageErrors = (message: string) =>
    message + (pageErrors.length > 0 ? ` (page errors: ${pageErrors.join('; ')})` : '');
  await page.goto(baseUrl);
  await page.getByTestId('ftrl-file').setInputFiles(tasksPath);
  const files = page.getByTestId('task-files');
  await files.locator('[data-testid="ftrl-summary"], [data-testid="ftrl-error"]').first().waitFor({ timeout: 120_000 });
  if ((await page.getByTestId('ftrl-error').count()) > 0)
    throw new Error(`the page refused the task file ${tasksPath}: ${await page.getByTestId('ftrl-error').innerText()}`);
  if ((await page.getByTestId('ftrl-eval').count()) === 0) {
    throw new Error(
      `the task file ${tasksPath} holds no task the page could import: ${(await page.getByTestId('ftrl-summary').innerText()).trim()}`,
    );
  }
  const panel = page.getByTestId('ftrl-eval');
  const s = exp.settings;
  await panel.getByTestId('ftrl-eval-perCategory').fill(s.perCategory === undefined ? '' : String(s.perCategory));
  await panel.getByTestId('ftrl-eval-maxTurns').fill(String(s.maxTurns));
  await panel.getByTestId('ftrl-eval-maxResponseTokens').fill(String(s.maxResponseTokens));
  await panel.getByTestId('ftrl-eval-toolTimeoutMs').fill(String(s.toolTimeoutMs));
  await panel.getByTestId('ftrl-eval-backend').selectOption(backend.name);
  if (exp.policy.startsWith('folder:')) {
    await panel.getByTestId('model-folder-input').setInputFiles(path.resolve(exp.policy.slice('folder:'.length)));
    const picked = panel.locator('[data-testid="model-folder-error"], [data-testid="model-folder-shape"]');
    await picked
      .first()
      .waitFor({ timeout: 60_000 })
      .catch(() => undefined);
    if ((await panel.getByTestId('ftrl-eval-policy').inputValue()) !== 'folder') {
      throw new Error(
        `the page refused the Qwen3 folder ${exp.policy.slice('folder:'.length)}: ${(await panel.getByTestId('model-folder').innerText()).trim()}`,
      );
    }
  }
  await panel.getByTestId('btn-ftrl-eval').click();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await panel.getAttribute('data-status');
    if (status === 'finished' || status === 'failed' || status === 'stopped') break;
    if (Date.now() > deadline)
      throw new Error(
        withPageErrors(
          `the evaluation did not finish within ${Math.round(timeoutMs / 1000)} s (last: ${await panel.getByTestId('ftrl-eval-progress').innerText()})`,
        ),
      );
    await page.waitForTimeout(1000);
  }
  if ((await panel.getByTestId('ftrl-eval-error').count()) > 0)
    throw new Error(withPageErrors(await panel.getByTestId('ftrl-eval-error').innerText()));
  return JSON.parse((await panel.getByTestId('ftrl-eval-report').textContent()) ?? 'null') as FtrlEvalReport;
}

/** Runs an evaluation file (kind "ftrl-eval") through the page and writes results/NAME/. */
export async function runFtrlEvalExperiment(options: RunExperimentOptions): Promise<FtrlEvalResults> {
  const log = options.log ?? ((line: string) => console.log(line));
  const filePath = path.resolve(options.file);
  const json = await readExperimentJson(options.file);
  const parsed = parseFtrlEvalExperiment(json, { defaultName: path.basename(filePath, '.json') });
  const exp = options.isSmoke ? shrinkFtrlEvalForSmoke(parsed) : parsed;
  const tasksPath = path.resolve(resolveFtrlTasksPath(options.tasksPath, process.env));
  const tasksStat = await stat(tasksPath).catch((e: NodeJS.ErrnoException) => {
    throw new Error(`cannot read the FTRL task file --tasks ${tasksPath}: ${e.code ?? e.message}`);
  });
  if (!tasksStat.isFile()) throw new Error(`the FTRL task file --tasks ${tasksPath} is not a file`);
  if (exp.policy.startsWith('folder:')) {
    const dir = path.resolve(exp.policy.slice('folder:'.length));
    const dirStat = await stat(dir).catch(() => null);
    if (!dirStat?.isDirectory()) throw new Error(`ftrl-eval.policy: the Qwen3 folder ${dir} does not exist`);
  }
  const { outDir, pkg, startedAt, server, browser, close } = await openRunnerSession(exp.name, options, log);
  try {
    const backend = await chooseBackend(browser, server.baseUrl, options.backend ?? exp.backend);
    log(
      `experiment ${exp.name}${options.isSmoke ? ' (--smoke)' : ''}: ${exp.policy} on ${showPath(tasksPath)} (${exp.settings.perCategory ?? 'all'} tasks per category) on ${backend.name} (${backend.reason}), app ${server.baseUrl} → ${showPath(outDir)}`,
    );
    const context = await newContext(browser, { width: 1280, height: 1000 });
    let report: FtrlEvalReport;
    try {
      const page = await context.newPage();
      try {
        report = await evaluateInPage(
          page,
          server.baseUrl,
          exp,
          tasksPath,
          backend,
          options.runTimeoutMs ?? 24 * 3600_000,
        );
      } finally {
        await mkdir(path.join(outDir, 'screenshots'), { recursive: true });
        await page
          .getByTestId('task-files')
          .screenshot({ path: path.join(outDir, 'screenshots', 'task-files.png') })
          .catch(() => undefined);
      }
    } finally {
      await context.close();
    }
    const git = readGit();
    const out: FtrlEvalResults = {
      format: FTRL_EVAL_RESULTS_FORMAT,
      experiment: {
        name: exp.name,
        ...(exp.description ? { description: exp.description } : {}),
        file: path.relative(ROOT, filePath),
        isSmoke: Boolean(options.isSmoke),
        tasksFile: showPath(tasksPath),
        policy: exp.policy,
        settings: exp.settings,
      },
      app: { name: pkg.name, version: pkg.version, ...git },
      backend,
      startedAt,
      finishedAt: new Date().toISOString(),
      report,
    };
    await writeFile(path.join(outDir, 'results.json'), JSON.stringify(out, null, 2) + '\n');
    const r = report;
    const notes = [
      `Policy: ${r.policySource} (window ${r.contextTokens} tokens). Tasks: ${showPath(tasksPath)}, ${exp.settings.perCategory === undefined ? 'every task' : `the first ${exp.settings.perCategory} of each category`}; ` +
        `up to ${r.settings.maxTurns} turns and ${r.settings.maxResponseTokens} response tokens, greedy; tool time limit ${r.settings.toolTimeoutMs} ms; ` +
        `${r.pyodideLoadMs !== undefined ? `Pyodide loaded in ${(r.pyodideLoadMs / 1000).toFixed(1)} s` : 'Pyodide not needed (no prompt fit the window)'}.`,
      `Backend: ${r.backend} (${backend.reason}). App ${pkg.name} ${pkg.version}, commit ${git.gitCommit}${git.isGitDirty ? ' with uncommitted changes' : ''}. ${options.isSmoke ? 'Smoke run (--smoke): at most 2 tasks per category; not a result.' : ''}`.trim(),
    ];
    await writeFile(
      path.join(outDir, 'table.md'),
      formatFtrlEvalMarkdown(r.summary, { title: `${exp.name}${options.isSmoke ? ' (smoke)' : ''}`, notes }),
    );
    await writeFile(path.join(outDir, 'table.csv'), formatFtrlEvalCsv(r.summary));
    const o = r.summary.overall;
    log(
      `done in ${r.seconds.toFixed(0)} s: ${r.summary.selected} tasks, ${r.summary.promptTooLong} over the window; overall Solve-R ${formatScore(o.solveR)} Solve-P ${formatScore(o.solveP)} Solve-F1 ${formatScore(o.solveF1)}; ${showPath(path.join(outDir, 'table.md'))}`,
    );
    return out;
  } finally {
    await close();
  }
}

/** True when the file is an evaluation file (kind "ftrl-eval"); an unreadable file is left to the runner to report. */
export async function isFtrlEvalPath(file: string): Promise<boolean> {
  try {
    return isFtrlEvalFile(JSON.parse(await readFile(path.resolve(file), 'utf8')));
  } catch {
    return false;
  }
}
