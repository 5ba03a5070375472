/**
 * `npm run experiment -- experiments/NAME.json [--smoke] [--backend auto|webgpu|wasm]
 *                        [--out DIR] [--port N] [--dist DIR] [--run ID,…] [--base-url URL]
 *                        [--jobs N] [--resume]`
 *
 * Runs an experiment file through the app's real UI, in headless Chromium (Playwright), and writes
 * results/NAME/ (results.json, table.md and table.csv, figures, screenshots).
 * A failed run is recorded with its error and the others go on; the exit code is 1 when
 * any run failed. `--smoke` shrinks every run to about a minute (src/experiments/smoke.ts).
 * `runExperiment` is the library entry e2e/experiment.spec.ts calls.
 * Evaluation files (`"kind": "ftrl-eval"`, src/experiments/ftrlEvalConfig.ts) run
 * `runFtrlEvalExperiment` instead.
 *
 * The steps, --jobs, --resume and evaluation files: docs/runs.md.
 */
import { chromium, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expandExperiment, type ExperimentRun } from '../src/run/experimentFile';
import { RECIPE_NAMES } from '../src/ui/recipeNames';
import { describeConfigAsSetup, serializeSetup } from '../src/ui/runSetup';
import { buildCurves, buildTable, labelMetric, pickTableMetrics } from '../src/experiments/aggregate';
import { renderLineChartSvg, type ChartSeries } from '../src/cli/svgChart';
import { formatTableCsv, formatTableMarkdown } from '../src/experiments/format';
import { buildSeedPairs, defaultSeedPairs, MEAN_TRAIN_REWARD } from '../src/experiments/seedPairs';
import {
  RESULTS_FORMAT,
  diffJson,
  formatResultsJson,
  formatRunJson,
  pickResumableRuns,
  toStepRecords,
  type ExperimentResults,
  type RunResult,
} from '../src/experiments/results';
import { shrinkForSmoke } from '../src/experiments/smoke';
import { readPageDb } from './pageDb';
import {
  isFtrlEvalFile,
  parseFtrlEvalExperiment,
  resolveFtrlTasksPath,
  shrinkFtrlEvalForSmoke,
  type FtrlEvalExperiment,
} from '../src/experiments/ftrlEvalConfig';
import { formatFtrlEvalCsv, formatFtrlEvalMarkdown, formatScore } from '../src/experiments/ftrlEvalTable';
import type { FtrlEvalReport } from '../workers/protocol';
// @ts-expect-error plain ESM helper shared with e2e/playwright.config.ts
import { chromiumPath, CHROMIUM_ARGS } from './chromium.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export type BackendChoice = 'auto' | 'webgpu' | 'wasm';

export interface RunExperimentOptions {
  /** The experiment file (experiments/NAME.json). */
  file: string;
  isSmoke?: boolean;
  /** Output folder; default results/<experiment name>. */
  outDir?: string;
  /** A server already serving the built app: no build, no preview. */
  baseUrl?: string;
  /** Build folder for `vite build` (default dist-experiment). */
  distDir?: string;
  /** Port of `vite preview` (default 4188). */
  port?: number;
  backend?: BackendChoice;
  /** Only the runs whose id or name is listed. */
  onlyRuns?: string[];
  /** Longest a run may take in the page (default 24 h). */
  runTimeoutMs?: number;
  /** ftrl-eval files: the FTRL task file (default $PACT_FTRL_TASKS). */
  tasksPath?: string;
  /** Runs in flight at once, each in its own browser context and trainer worker (default 1). */
  jobs?: number;
  /** Keep the finished runs of an earlier, interrupted invocation (outDir/runs/<id>.json) whose config is unchanged. */
  resume?: boolean;
  log?: (line: string) => void;
}

/**
 * tsx (esbuild, keepNames) wraps named functions in `__name(fn, "name")`; functions handed
 * to page.evaluate carry those calls into the page, where the helper does not exist.
 */
const PAGE_SHIM = 'globalThis.__name = globalThis.__name || ((fn) => fn);';

async function newContext(browser: Browser, viewport = { width: 1280, height: 800 }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport });
  await context.addInitScript({ content: PAGE_SHIM });
  return context;
}

function showPath(p: string): string {
  const rel = path.relative(ROOT, p);
  return rel.startsWith('..') ? p : rel;
}

// ---- the server -------------------------------------------------------------------------

function runToEnd(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`)),
    );
  });
}

async function waitForHttp(url: string, timeoutMs: number, child: ChildProcess): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`vite preview exited with ${child.exitCode} before serving ${url}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`nothing answered at ${url} within ${timeoutMs / 1000} s`);
}

/** Builds the app into `distDir` and serves it; returns the URL and a stop function. */
async function startServer(
  distDir: string,
  port: number,
  log: (line: string) => void,
): Promise<{ baseUrl: string; stop: () => void }> {
  const vite = path.join(ROOT, 'node_modules/vite/bin/vite.js');
  log(`building the app into ${distDir}/ …`);
  await runToEnd(process.execPath, [vite, 'build', '--logLevel', 'warn', '--outDir', distDir]);
  // Its output goes to the runner's: a preview that never answers (seen once, not reproduced)
  // then shows what it printed.
  const child = spawn(
    process.execPath,
    [vite, 'preview', '--host', '127.0.0.1', '--port', String(port), '--strictPort', '--outDir', distDir],
    {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  try {
    // 3 minutes: a niced runner on a machine whose cores are busy can take over one to start vite preview.
    await waitForHttp(baseUrl, 180_000, child);
  } catch (e) {
    stop();
    throw e;
  }
  return { baseUrl, stop };
}

// ---- the backend ------------------------------------------------------------------------

interface BackendDecision {
  name: 'webgpu' | 'wasm';
  reason: string;
}

/** Asks the page for a WebGPU adapter; a software fallback adapter counts as none. */
async function chooseBackend(browser: Browser, baseUrl: string, choice: BackendChoice): Promise<BackendDecision> {
  if (choice === 'wasm') return { name: 'wasm', reason: 'asked for wasm (--backend wasm or the file)' };
  const context = await newContext(browser);
  try {
    const page = await context.newPage();
    await page.goto(baseUrl);
    const probe = await page.evaluate(async () => {
      const gpu = (navigator as Navigator & { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
      if (!gpu) return { hasAdapter: false, isFallback: false, description: 'navigator.gpu is absent' };
      const adapter = (await gpu.requestAdapter()) as null | {
        info?: Record<string, unknown>;
        isFallbackAdapter?: boolean;
      };
      if (!adapter) return { hasAdapter: false, isFallback: false, description: 'requestAdapter() returned null' };
      const info = adapter.info ?? {};
      const isFallback = Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter);
      const description = [info.vendor, info.architecture, info.description].filter(Boolean).join(' ');
      return { hasAdapter: true, isFallback, description: description || 'no adapter info' };
    });
    if (choice === 'webgpu')
      return {
        name: 'webgpu',
        reason: `asked for webgpu (adapter: ${probe.hasAdapter ? probe.description : 'none, the trainer will fall back'})`,
      };
    if (!probe.hasAdapter) return { name: 'wasm', reason: `no WebGPU adapter (${probe.description})` };
    if (probe.isFallback)
      return {
        name: 'wasm',
        reason: `the only WebGPU adapter is a software fallback (${probe.description}), slower than wasm`,
      };
    return { name: 'webgpu', reason: `WebGPU adapter: ${probe.description}` };
  } finally {
    await context.close();
  }
}

// ---- one run through the page -------------------------------------------------------------

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

function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '_');
}

async function runInPage(
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

// ---- figures ---------------------------------------------------------------------------

/**
 * One PNG per metric: the mean curve per method, with a ± sample-std band over seeds, drawn
 * by the project's SVG chart (src/cli/svgChart.ts: nice ticks, dashes and markers besides
 * colour) and rasterised by this browser.
 */
async function writeFigures(
  browser: Browser,
  runs: RunResult[],
  metrics: string[],
  dir: string,
  nSeeds: number,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const size = { width: 960, height: 560 };
  const context = await newContext(browser, size);
  const written: string[] = [];
  try {
    const page = await context.newPage();
    for (const key of metrics) {
      const curves = buildCurves(runs, key).filter((c) => c.steps.length > 0);
      if (curves.length === 0) continue;
      const name = key === 'reward' ? 'Train reward' : labelMetric(key);
      const series: ChartSeries[] = curves.map((c) => ({
        name: c.method,
        points: c.steps.map((x, i) => [x, c.mean[i]] as [number, number]),
        band:
          nSeeds > 1
            ? c.steps.map((x, i) => [x, c.mean[i] - c.std[i], c.mean[i] + c.std[i]] as [number, number, number])
            : undefined,
      }));
      const subtitle = `mean over ${nSeeds === 1 ? '1 seed' : `${nSeeds} seeds (band: ± sample std)`}`;
      const svg = renderLineChartSvg({
        title: `${name} by step`,
        subtitle,
        xLabel: 'step',
        yLabel: name,
        series,
        ...size,
      });
      await page.setContent(`<!doctype html><body style="margin:0">${svg}</body>`);
      const file = path.join(dir, `${slug(key.replace(/\//g, '-'))}.png`);
      await page.screenshot({ path: file, clip: { x: 0, y: 0, ...size } });
      written.push(file);
    }
  } finally {
    await context.close();
  }
  return written;
}

// ---- the experiment ----------------------------------------------------------------------

function readGit(): { gitCommit: string; isGitDirty: boolean } {
  try {
    const gitCommit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const isGitDirty =
      execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim() !==
      '';
    return { gitCommit, isGitDirty };
  } catch {
    return { gitCommit: 'unknown (no git)', isGitDirty: false };
  }
}

/** Runs every (run, seed) of an experiment file through the page and writes results/NAME/. */
/** An experiment file's JSON; a file that cannot be read or parsed is named in the error. */
async function readExperimentJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path.resolve(file), 'utf8'));
  } catch (e) {
    throw new Error(`cannot read experiment file ${file}: ${(e as Error).message}`);
  }
}

/**
 * What every runner invocation starts with: results/NAME/ (or --out), the app's name and
 * version, the start time, the app server (or --base-url) and a headless Chromium; `close`
 * ends both (the server too when Chromium fails to launch).
 */
async function openRunnerSession(name: string, options: RunExperimentOptions, log: (line: string) => void) {
  const outDir = path.resolve(options.outDir ?? path.join(ROOT, 'results', name));
  await mkdir(outDir, { recursive: true });
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  const startedAt = new Date().toISOString();
  const server = options.baseUrl
    ? { baseUrl: options.baseUrl.replace(/\/$/, ''), stop: () => {} }
    : await startServer(options.distDir ?? 'dist-experiment', options.port ?? 4188, log);
  let browser: Browser;
  try {
    browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
  } catch (e) {
    server.stop();
    throw e;
  }
  const close = async () => {
    await browser.close();
    server.stop();
  };
  return { outDir, pkg, startedAt, server, browser, close };
}

/** The runs/<id>.json files of an earlier invocation, for the given runs (absent or unreadable files are skipped). */
async function readRunFiles(dir: string, runs: readonly ExperimentRun[]): Promise<unknown[]> {
  const found: unknown[] = [];
  for (const run of runs) {
    try {
      found.push(JSON.parse(await readFile(path.join(dir, `${slug(run.id)}.json`), 'utf8')));
    } catch {
      // not run yet, or cut off mid-write: it runs again
    }
  }
  return found;
}

function formatHours(seconds: number): string {
  return seconds < 3600 ? `${(seconds / 60).toFixed(0)} min` : `${(seconds / 3600).toFixed(1)} h`;
}

export async function runExperiment(options: RunExperimentOptions): Promise<ExperimentResults> {
  const log = options.log ?? ((line: string) => console.log(line));
  const filePath = path.resolve(options.file);
  const json = (await readExperimentJson(options.file)) as Record<string, unknown>;
  if (isFtrlEvalFile(json))
    throw new Error(`${options.file} is an evaluation file ("kind": "ftrl-eval"): run it with runFtrlEvalExperiment`);
  const smoke = options.isSmoke ? shrinkForSmoke(json) : null;
  const experiment = expandExperiment(smoke ? smoke.file : json, {
    defaultName: path.basename(filePath, '.json'),
    recipeNames: RECIPE_NAMES,
    overrides: smoke?.overrides,
  });
  const runs = options.onlyRuns
    ? experiment.runs.filter((r) => options.onlyRuns!.includes(r.id) || options.onlyRuns!.includes(r.name))
    : experiment.runs;
  if (runs.length === 0)
    throw new Error(
      `no run matches ${options.onlyRuns?.join(',')}; runs: ${experiment.runs.map((r) => r.id).join(', ')}`,
    );
  const { outDir, pkg, startedAt, server, browser, close } = await openRunnerSession(experiment.name, options, log);
  try {
    // A backend the file itself names wins over auto.
    const fileBackends = new Set(runs.map((r) => r.config.backend).filter(Boolean));
    const choice: BackendChoice =
      options.backend ?? (fileBackends.size === 1 ? ([...fileBackends][0] as BackendChoice) : 'auto');
    const backend = await chooseBackend(
      browser,
      server.baseUrl,
      choice === 'webgpu' || choice === 'wasm' ? choice : 'auto',
    );
    log(
      `experiment ${experiment.name}${smoke ? ' (--smoke)' : ''}: ${runs.length} run(s) on ${backend.name} (${backend.reason}), app ${server.baseUrl} → ${showPath(outDir)}`,
    );

    const git = readGit();
    const runsDir = path.join(outDir, 'runs');
    await mkdir(runsDir, { recursive: true });
    const kept = options.resume
      ? pickResumableRuns(runs, await readRunFiles(runsDir, runs), backend.name)
      : new Map<string, RunResult>();
    if (options.resume)
      log(
        `--resume: ${kept.size} of ${runs.length} run(s) kept from ${showPath(runsDir)}, ${runs.length - kept.size} to run`,
      );
    const results: (RunResult | undefined)[] = runs.map((r) => kept.get(r.id));
    const nSeeds = new Set(runs.map((r) => r.seed)).size;
    /** results.json, table.md and table.csv over the runs done so far (all of them at the end). */
    const writeOutputs = async (): Promise<ExperimentResults> => {
      const done = results.filter((r): r is RunResult => r !== undefined);
      const table = buildTable(done);
      const out: ExperimentResults = {
        format: RESULTS_FORMAT,
        experiment: {
          name: experiment.name,
          description: experiment.description,
          file: path.relative(ROOT, filePath),
          isSmoke: Boolean(smoke),
          ...(smoke ? { smokeOverrides: smoke.overrides } : {}),
        },
        app: { name: pkg.name, version: pkg.version, ...git },
        backend,
        startedAt,
        finishedAt: new Date().toISOString(),
        runs: done,
        table,
      };
      await writeFile(path.join(outDir, 'results.json'), formatResultsJson(out));
      const missing = runs.length - done.length;
      const notes = [
        `Backend: ${backend.name} (${backend.reason}). App ${pkg.name} ${pkg.version}, commit ${git.gitCommit}${git.isGitDirty ? ' with uncommitted changes' : ''}. ${smoke ? 'Smoke run (--smoke): shrunk sizes, first seed only; not a result.' : ''}`.trim(),
        ...(kept.size > 0
          ? [`${kept.size} run(s) were kept from an earlier invocation (--resume); their app commit may differ.`]
          : []),
        ...(missing > 0 ? [`PARTIAL: ${done.length} of ${runs.length} runs so far; ${missing} still to run.`] : []),
        `Wall clock of the runs in the page: ${formatHours(done.reduce((a, r) => a + r.seconds, 0))} in all${(options.jobs ?? 1) > 1 ? `, ${options.jobs} at a time` : ''}.`,
      ];
      const heldOut = done.find((r) => r.config.tasks)?.config;
      if (heldOut)
        notes.unshift(
          `Held out: ${heldOut.tasks.nTest} tasks of the test world of seed ${heldOut.tasks.testSeed} (the same for every row), ` +
            (heldOut.evalSamples > 0 ? `${heldOut.evalSamples} sampled rollouts each.` : 'one greedy rollout each.'),
        );
      const pairs = buildSeedPairs(
        done,
        [...table.metrics.filter((k) => k !== 'reward'), MEAN_TRAIN_REWARD],
        defaultSeedPairs(table.rows.map((r) => r.method)),
      );
      await writeFile(
        path.join(outDir, 'table.md'),
        formatTableMarkdown(table, { title: `${experiment.name}${smoke ? ' (smoke)' : ''}`, notes, pairs }),
      );
      await writeFile(path.join(outDir, 'table.csv'), formatTableCsv(table));
      return out;
    };

    // Seed by seed (every method's first seed, then the second…), so an interrupted experiment
    // already has a row per method; results stay in the file's order.
    const seedOrder = [...new Set(runs.map((r) => r.seed))];
    const todo = runs
      .map((run, i) => ({ run, i }))
      .filter(({ run }) => !kept.has(run.id))
      .sort((x, y) => seedOrder.indexOf(x.run.seed) - seedOrder.indexOf(y.run.seed) || x.i - y.i);
    let finishedCount = kept.size;
    let writing = Promise.resolve<unknown>(undefined);
    const worker = async () => {
      for (let next = todo.shift(); next; next = todo.shift()) {
        const { run, i } = next;
        const context = await newContext(browser);
        const r = await runInPage(
          context,
          server.baseUrl,
          run,
          backend,
          outDir,
          options.runTimeoutMs ?? 24 * 3600_000,
        ).finally(() => context.close());
        results[i] = r;
        finishedCount++;
        const last = r.steps[r.steps.length - 1]?.values ?? {};
        const shown = Object.entries(last)
          .filter(([k, v]) => (k.startsWith('eval/') || k === 'reward') && typeof v === 'number')
          .map(([k, v]) => `${k} ${(v as number).toFixed(3)}`)
          .join(' ');
        log(
          `[${finishedCount}/${runs.length}] ${r.id}: ${r.status} in ${r.seconds.toFixed(0)} s, ${r.steps.length} step(s)${r.error ? ` — ${r.error}` : ''}${shown ? ` · ${shown}` : ''}`,
        );
        // One writer at a time: runs finishing together must not interleave their writes.
        writing = writing.then(async () => {
          await writeFile(path.join(runsDir, `${slug(r.id)}.json`), formatRunJson(r));
          await writeOutputs();
        });
        await writing;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.jobs ?? 1, todo.length)) }, worker));
    await writing;

    const out = await writeOutputs();
    const all = results as RunResult[];
    const figureMetrics = [
      ...new Set([
        'reward',
        ...pickTableMetrics(all)
          .filter((k) => k.startsWith('eval/'))
          .slice(0, 3),
      ]),
    ];
    const figures = await writeFigures(browser, all, figureMetrics, path.join(outDir, 'figures'), nSeeds);
    const failed = all.filter((r) => r.status !== 'finished').length;
    log(
      `done: ${all.length - failed} of ${all.length} run(s) finished; ${showPath(path.join(outDir, 'table.md'))}, ${figures.length} figure(s)`,
    );
    return out;
  } finally {
    await close();
  }
}

// ---- an evaluation file (kind "ftrl-eval") ----------------------------------------------------

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
async function isFtrlEvalPath(file: string): Promise<boolean> {
  try {
    return isFtrlEvalFile(JSON.parse(await readFile(path.resolve(file), 'utf8')));
  } catch {
    return false;
  }
}

// ---- the command line -----------------------------------------------------------------------

const USAGE = `usage: npm run experiment -- experiments/NAME.json [--smoke] [--backend auto|webgpu|wasm]
                              [--out DIR] [--port N] [--dist DIR] [--run ID,…] [--base-url URL]
                              [--jobs N] [--resume]
Runs every (run, seed) of the file through the app's run setup in headless Chromium and
writes results/NAME/ (results.json, table.md, table.csv, figures/, screenshots/).
  --smoke        shrink every run to about a minute (2 steps, K 2, 1 prompt, first seed)
  --backend B    auto (default: WebGPU when a hardware adapter is offered, else wasm), webgpu or wasm
  --out DIR      output folder (default results/NAME)
  --port N       port of vite preview (default 4188); --dist DIR its build folder (default dist-experiment)
  --run IDS      only these run ids or names (comma-separated)
  --jobs N       N runs at once, each in its own browser context and worker (default 1)
  --resume       keep the finished runs in the output folder's runs/ whose config is unchanged
  --base-url URL use a server that already serves the built app (no build)
  --tasks PATH   evaluation files ("kind": "ftrl-eval") only: the FTRL task file (default $PACT_FTRL_TASKS)`;

export function parseArgs(argv: string[]): RunExperimentOptions {
  const opts: Partial<RunExperimentOptions> = {};
  const valueOf = (i: number, flag: string) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value\n${USAGE}`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--smoke') opts.isSmoke = true;
    else if (a === '--backend') {
      const b = valueOf(i++, a);
      if (!['auto', 'webgpu', 'wasm'].includes(b))
        throw new Error(`--backend must be auto, webgpu or wasm, got "${b}"`);
      opts.backend = b as BackendChoice;
    } else if (a === '--out') opts.outDir = valueOf(i++, a);
    else if (a === '--port') {
      const p = valueOf(i++, a);
      if (!/^\d+$/.test(p)) throw new Error(`--port must be a number, got "${p}"`);
      opts.port = Number(p);
    } else if (a === '--dist') opts.distDir = valueOf(i++, a);
    else if (a === '--run') opts.onlyRuns = valueOf(i++, a).split(',');
    else if (a === '--jobs') {
      const n = valueOf(i++, a);
      if (!/^[1-9]\d*$/.test(n)) throw new Error(`--jobs must be a whole number ≥ 1, got "${n}"`);
      opts.jobs = Number(n);
    } else if (a === '--resume') opts.resume = true;
    else if (a === '--base-url') opts.baseUrl = valueOf(i++, a);
    else if (a === '--tasks') opts.tasksPath = valueOf(i++, a);
    else if (a === '--help' || a === '-h') throw new Error(USAGE);
    else if (a.startsWith('--')) throw new Error(`unknown flag ${a}\n${USAGE}`);
    else if (opts.file) throw new Error(`one experiment file at a time (got ${opts.file} and ${a})`);
    else opts.file = a;
  }
  if (!opts.file) throw new Error(USAGE);
  return opts as RunExperimentOptions;
}

async function main(): Promise<void> {
  try {
    const options = parseArgs(process.argv.slice(2));
    if (await isFtrlEvalPath(options.file)) {
      await runFtrlEvalExperiment(options);
      process.exitCode = 0;
      return;
    }
    if (options.tasksPath !== undefined)
      throw new Error(`--tasks is for evaluation files ("kind": "ftrl-eval"); ${options.file} is a training file`);
    const results = await runExperiment(options);
    process.exitCode = results.runs.some((r) => r.status !== 'finished') ? 1 : 0;
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) void main();
