/**
 * tfjs-wasm in headless Chromium with 1 thread and with every core: tokens/s of a Qwen3
 * training step and of greedy decode with the KV cache (scripts/wasmThreadsBench/), in the
 * built app's conditions (a Vite production build served cross-origin isolated, so the
 * threaded SIMD build runs). A measurement, not a test: nothing here asserts a speed.
 *
 *   node --import tsx scripts/wasmThreadsBench.ts [--threads 1,N] [--preset qwen3-nano]
 *       [--train 4x256] [--decode 8x256+64] [--iters 1] [--real] [--out FILE.json]
 *
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
import { runTorchReal, type TorchReal } from '../src/cli/commands/bench';
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
  const spec: Omit<BenchSpec, 'threads'> = {
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
      const query = new URLSearchParams({ threads, spec: JSON.stringify(spec) });
      await page.goto(`${new URL(PAGE, base).href}?${query}`);
      await page.waitForFunction(() => window.benchResults !== undefined, undefined, { timeout: 0, polling: 1000 });
      const results = await page.evaluate(() => window.benchResults);
      const torch =
        isReal && !args.includes('--no-torch') ? compareWithTorch(spec.preset, results as BenchRun) : undefined;
      const report = { date: new Date().toISOString(), chromium: browser.version(), spec, ...results, ...torch };
      const text = JSON.stringify(report, null, 2);
      console.log(text);
      const out = readFlag(args, 'out');
      if (out) writeFileSync(out, text + '\n');
      if (results && 'error' in results) process.exitCode = 1;
    } finally {
      await browser.close();
      await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
    }
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

type BenchRun = { runs?: BenchResult[] } | { error: string } | undefined;

/** PyTorch eager at each thread count the browser ran, and the browser's ratio to it (none against a reference BLAS). */
function compareWithTorch(
  preset: string,
  results: BenchRun,
): { torch: TorchReal[]; ratios: Record<string, unknown>[] } | { torchSkipped: string } {
  const runs = results && 'runs' in results ? (results.runs ?? []) : [];
  const found = findTorchPython();
  if (!found.python) return { torchSkipped: found.reason ?? 'no PyTorch' };
  const torch: TorchReal[] = [];
  const ratios: Record<string, unknown>[] = [];
  for (const r of runs) {
    const t = runTorchReal(found.python, { [preset]: getQwen3Preset(preset) }, r.threads, 'gemm,decode,train');
    torch.push(t);
    const usable = !t.blas.is_reference;
    const decode = t.decode?.[0]?.decode_tokens_per_s;
    const train = t.train?.[0]?.tokens_per_s;
    ratios.push({
      threads: r.threads,
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
