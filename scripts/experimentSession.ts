/**
 * What every invocation of the experiment runner (scripts/browserExperiment.ts) shares: its
 * options, the browser contexts it opens (with the page shim), the backend it picks, the
 * git state and experiment file it records, and the session that opens the output folder,
 * the app server (experimentServer.ts) and headless Chromium.
 */
import { chromium, type Browser, type BrowserContext } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error plain ESM helper shared with e2e/playwright.config.ts
import { chromiumPath, CHROMIUM_ARGS } from './chromium.mjs';
import { startServer } from './experimentServer';
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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

export async function newContext(browser: Browser, viewport = { width: 1280, height: 800 }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport });
  await context.addInitScript({ content: PAGE_SHIM });
  return context;
}

export function showPath(p: string): string {
  const rel = path.relative(ROOT, p);
  return rel.startsWith('..') ? p : rel;
}

export interface BackendDecision {
  name: 'webgpu' | 'wasm';
  reason: string;
}

/** Asks the page for a WebGPU adapter; a software fallback adapter counts as none. */
export async function chooseBackend(
  browser: Browser,
  baseUrl: string,
  choice: BackendChoice,
): Promise<BackendDecision> {
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

export function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '_');
}

export function readGit(): { gitCommit: string; isGitDirty: boolean } {
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

/** An experiment file's JSON; a file that cannot be read or parsed is named in the error. */
export async function readExperimentJson(file: string): Promise<unknown> {
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
export async function openRunnerSession(name: string, options: RunExperimentOptions, log: (line: string) => void) {
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
