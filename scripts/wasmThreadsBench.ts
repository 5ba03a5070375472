/**
 * tfjs-wasm in headless Chromium with 1 thread and with every core: tokens/s of a Qwen3
 * training step and of greedy decode with the KV cache (scripts/wasmThreadsBench/), in the
 * built app's conditions (a Vite production build served cross-origin isolated, so the
 * threaded SIMD build runs). A measurement, not a test: nothing here asserts a speed.
 *
 *   node --import tsx scripts/wasmThreadsBench.ts [--threads 1,N] [--kernels simd,fma]
 *       [--preset qwen3-nano] [--train 4x256] [--decode 8x256+64] [--iters 1] [--real] [--out FILE.json]
 *
 * --kernels: the CPU engine's builds to run, each at every thread count (default simd; `fma` is
 * relaxed SIMD's fused multiply-add, which Chromium runs by default: docs/engine.md);
 * --pairs N (with --real): N pairs of one browser run (the first --threads count and --kernels
 * build) and PyTorch's at the same thread count, alternating which goes first, each pair's
 * ratios and their median (the machine's speed moves within minutes: one pair is one draw), by
 * `pact bench --pairs`' own runPairs, the page run as its engine side;
 * --train BxT: the training batch; --decode BxP+N: batch, prompt tokens, new tokens;
 * --real: the real shapes of a step (train 8x1536, decode 8x1024+576), and beside them PyTorch
 * eager at the same shapes and thread counts (scripts/reference/bench_torch.py, as `pact bench`;
 * no ratio against a reference BLAS; --no-torch skips it); --threads defaults to 1 and every
 * core Chromium reports. Prints one JSON object (also written to --out).
 */
import { chromium } from '@playwright/test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, preview } from 'vite';
// @ts-expect-error plain ESM helper shared with the e2e config
import { chromiumPath, CHROMIUM_ARGS } from './chromium.mjs';
import type { BenchResult, BenchSpec } from './wasmThreadsBench/bench.worker';
import { KERNEL_VARIANTS } from '../src/model/engine/kernelChoice';
import {
  describeCpu,
  pairMedians,
  runPairs,
  runTorchReal,
  type BenchPair,
  type TorchReal,
} from '../src/cli/commands/bench';
import { getQwen3Preset } from '../src/model/qwen3/config';
import { findTorchPython } from '../src/model/torchPython';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PAGE = 'scripts/wasmThreadsBench/index.html';

function readFlag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

function parseShape(text: string, re: RegExp, what: string): number[] {
  const m = re.exec(text);
  if (!m) throw new Error(`--${what} "${text}" does not match ${re}`);
  return m.slice(1).map(Number);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const isReal = args.includes('--real');
  const iters = Number(readFlag(args, 'iters') ?? '1');
  const [trainB, trainT] = parseShape(
    readFlag(args, 'train') ?? (isReal ? '8x1536' : '4x256'),
    /^(\d+)x(\d+)$/,
    'train',
  );
  const [decB, decP, decN] = parseShape(
    readFlag(args, 'decode') ?? (isReal ? '8x1024+576' : '8x256+64'),
    /^(\d+)x(\d+)\+(\d+)$/,
    'decode',
  );
  const nPairs = Number(readFlag(args, 'pairs') ?? '0');
  if (!Number.isInteger(nPairs) || nPairs < 0) throw new Error(`--pairs must be a whole number`);
  const kernels = (readFlag(args, 'kernels') ?? 'simd').split(',');
  for (const k of kernels)
    if (!(KERNEL_VARIANTS as readonly string[]).includes(k))
      throw new Error(`--kernels "${k}": one of ${KERNEL_VARIANTS.join(', ')}`);
  const spec: Omit<BenchSpec, 'threads' | 'kernels'> = {
    preset: readFlag(args, 'preset') ?? 'qwen3-nano',
    train: { batch: trainB, seq: trainT, iters },
    decode: { batch: decB, prompt: decP, new: decN, iters },
  };
  const outDir = mkdtempSync(path.join(tmpdir(), 'pact-wasm-threads-'));
  const configFile = path.join(ROOT, 'vite.config.ts');
  try {
    await build({
      configFile,
      root: ROOT,
      publicDir: false,
      logLevel: 'warn',
      build: { outDir, emptyOutDir: true, rollupOptions: { input: path.join(ROOT, PAGE) } },
    });
    const server = await preview({
      configFile,
      root: ROOT,
      logLevel: 'warn',
      build: { outDir },
      preview: { port: 0, strictPort: false },
    });
    const browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
    const chromiumVersion = browser.version();
    let results: BenchRun;
    let pairs: BenchPair[] = [];
    try {
      const page = await browser.newPage();
      // The page's and its workers' console (tfjs-wasm's pthreads report their errors there).
      page.on('console', (msg) => console.error(`[page ${msg.type()}] ${msg.text()}`));
      page.on('pageerror', (err) => console.error(`[page error] ${err.message}`));
      page.on('worker', (w) => console.error(`[worker started] ${w.url().slice(0, 120)}`));
      const base = server.resolvedUrls?.local[0];
      if (!base) throw new Error('vite preview reported no URL');
      const cores = await (async () => {
        await page.goto(new URL(PAGE, base).href);
        return page.evaluate(() => navigator.hardwareConcurrency);
      })();
      const threads = readFlag(args, 'threads') ?? [...new Set([1, cores])].join(',');
      const query = new URLSearchParams({ threads, kernels: kernels.join(','), spec: JSON.stringify(spec) });
      const runPage = async (q: URLSearchParams): Promise<BenchRun> => {
        await page.goto(`${new URL(PAGE, base).href}?${q}`);
        await page.waitForFunction(() => window.benchResults !== undefined, undefined, { timeout: 0, polling: 1000 });
        const r = await page.evaluate(() => window.benchResults);
        await page.goto('about:blank'); // nothing of the page's runs beside PyTorch's
        return r;
      };
      if (nPairs > 0) {
        const found = findTorchPython();
        if (!isReal || !found.python) throw new Error('--pairs needs --real and PyTorch');
        const t1 = threads.split(',')[0];
        const q = new URLSearchParams({ threads: t1, kernels: kernels[0], spec: JSON.stringify(spec) });
        const runTorch = () =>
          runTorchReal(found.python!, { [spec.preset]: getQwen3Preset(spec.preset) }, Number(t1), 'decode,train');
        pairs = await runPairs(
          nPairs,
          spec.preset,
          async () => {
            const r = await runPage(q);
            if (!r || 'error' in r) throw new Error(`browser run failed: ${r ? r.error : 'no result'}`);
            const b = r.runs[0];
            return { decode_tokens_per_s: b.decode_tokens_per_s, train_tokens_per_s: b.train_tokens_per_s, run: b };
          },
          runTorch,
          (line) => console.error(line),
        );
      } else results = await runPage(query);
    } finally {
      await browser.close();
      await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
    }
    // PyTorch after the browser has closed, so nothing of Chromium's runs beside it.
    const torch =
      isReal && !args.includes('--no-torch') && nPairs === 0 ? compareWithTorch(spec.preset, results) : undefined;
    const summary = nPairs > 0 ? { pairs, median: pairMedians(pairs) } : {};
    const report = {
      date: new Date().toISOString(),
      chromium: chromiumVersion,
      cpu: describeCpu(),
      spec,
      ...results,
      ...torch,
      ...summary,
    };
    const text = JSON.stringify(report, null, 2);
    console.log(text);
    const out = readFlag(args, 'out');
    if (out) writeFileSync(out, text + '\n');
    if (results && 'error' in results) process.exitCode = 1;
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

type BenchRun = { runs?: BenchResult[] } | { error: string } | undefined;

/**
 * PyTorch eager (the fair baseline of `pact bench`) at each thread count the browser ran, right
 * after the browser's runs, and each browser run's ratio to it (none against a reference BLAS).
 */
function compareWithTorch(
  preset: string,
  results: BenchRun,
): { torch: TorchReal[]; ratios: Record<string, unknown>[] } | { torchSkipped: string } {
  const runs = results && 'runs' in results ? (results.runs ?? []) : [];
  const found = findTorchPython();
  if (!found.python) return { torchSkipped: found.reason ?? 'no PyTorch' };
  const torch: TorchReal[] = [];
  const byThreads = new Map<number, TorchReal>();
  for (const r of runs)
    if (!byThreads.has(r.threads)) {
      const t = runTorchReal(found.python, { [preset]: getQwen3Preset(preset) }, r.threads, 'gemm,decode,train');
      byThreads.set(r.threads, t);
      torch.push(t);
    }
  const ratios: Record<string, unknown>[] = [];
  for (const r of runs) {
    const t = byThreads.get(r.threads)!;
    const usable = !t.blas.is_reference;
    const decode = t.decode?.[0]?.decode_tokens_per_s;
    const train = t.train?.[0]?.tokens_per_s;
    ratios.push({
      threads: r.threads,
      kernels: r.kernels,
      engine: r.engine,
      blas: t.blas.kind,
      decode_ratio: usable && decode ? r.decode_tokens_per_s / decode : null,
      train_ratio: usable && train ? r.train_tokens_per_s / train : null,
    });
  }
  return { torch, ratios };
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
