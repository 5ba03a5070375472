/**
 * `pact bench` (`npm run bench`): throughput of the tfjs Qwen3 on each backend available in
 * Node (cpu, wasm), for the qwen3-nano and qwen3-micro presets:
 *   - training step: forward + backward of the mean next-token loss + global-norm clip +
 *     AdamW update (src/model/qwen3/train trainStep), tokens/s = batch·seq / step time;
 *   - generation with the KV cache (model.generate, greedy), new tokens/s;
 *   - generation without a cache (full recomputation of the sequence per new token);
 *   - a no-gradient log-prob read of the same batch (π_old, π_ref, kl_prompt_only's read), and
 *     its time as a fraction of the training step's;
 *   - the same training step with LoRA adapters (rank 8, α 16, on q and v; the base frozen),
 *     side by side with the full step in the same run: tokens/s, and the bytes the step's
 *     training state holds (tf.memory() after the steps minus before the optimiser: AdamW's
 *     moments, plus the adapters for LoRA).
 * Writes bench/results.json and prints a table. Where a python3 with torch is found
 * (/usr/bin/python3 first), runs the same shapes in plain PyTorch
 * (scripts/reference/bench_torch.py, float32, 1 thread by default like tfjs-wasm/cpu in
 * Node) in the same run and prints our/PyTorch ratios beside each number.
 *
 * A benchmark, not a test: nothing here asserts a speed. Timings are the mean over `iters`
 * after one untimed warm-up.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Scalar } from '@tensorflow/tfjs-core';
import type { Qwen3Config } from '../../model/qwen3/config';
import { parseFlags, registerCommand, type CliIO } from '../registry';
import { prepareTfjs } from './score';

const USAGE = `usage: pact bench [--presets qwen3-nano,qwen3-micro] [--backends cpu,wasm] [--iters 2]
                 [--out bench/results.json] [--torch-threads 1] [--no-torch]

Tokens/s of a training step (forward + backward + AdamW) and of generation with and
without the KV cache, per preset and backend; with PyTorch ratios when python3 has torch.`;

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface BenchCase {
  name: string;
  config: Qwen3Config;
  train: { batch: number; seq: number; iters: number };
  gen: { batch: number; prompt: number; new: number; iters: number };
}

export interface BenchRow {
  name: string;
  backend: string;
  params: number;
  train_tokens_per_s: number;
  gen_cache_tokens_per_s: number;
  gen_nocache_tokens_per_s: number;
  /**
   * A no-gradient log-prob read of the same batch (what the trainer does for π_old(c^h), π_ref
   * and the kl_prompt_only read of π_ref under x, Trainer.readLogprobs): tokens/s.
   */
  logprob_tokens_per_s: number;
  /** The training step with LoRA (BENCH_LORA) instead of every weight. */
  train_lora_tokens_per_s: number;
  /** Bytes of training state the full step keeps (AdamW moments of every weight). */
  train_state_bytes: number;
  /** The same for LoRA: the adapters and their AdamW moments. */
  train_lora_state_bytes: number;
}

/** The LoRA of the benchmark's LoRA training step. */
export const BENCH_LORA = { rank: 8, alpha: 16, targetModules: ['q', 'v'] as ('q' | 'v')[], seed: 0 };

export interface TorchBench {
  torch: string;
  threads: number;
  results: Array<Pick<BenchRow, 'name' | (typeof BENCH_METRICS)[number]>>;
}

export interface BenchReport {
  date: string;
  node: string;
  rows: BenchRow[];
  torch?: TorchBench;
  /** Why PyTorch did not run, when it did not. */
  torchSkipped?: string;
}

export const BENCH_METRICS = ['train_tokens_per_s', 'gen_cache_tokens_per_s', 'gen_nocache_tokens_per_s'] as const;

/** The benchmark shapes: small enough that a full `npm run bench` stays within minutes on 2 cores. */
export function listBenchCases(presets: Record<string, Qwen3Config>, iters: number): BenchCase[] {
  return Object.entries(presets).map(([name, config]) => ({
    name,
    config,
    train: { batch: 2, seq: 64, iters },
    gen: { batch: 2, prompt: 16, new: 16, iters: Math.max(1, Math.ceil(iters / 2)) },
  }));
}

async function measureMean(iters: number, fn: () => Promise<void>): Promise<number> {
  await fn(); // warm-up (kernel compilation, first allocations)
  const t0 = performance.now();
  for (let i = 0; i < iters; i++) await fn();
  return (performance.now() - t0) / 1000 / iters;
}

/** Runs every case on the current tfjs backend (select it first with prepareTfjs). */
export async function runTfjsBench(cases: readonly BenchCase[], backend: string): Promise<BenchRow[]> {
  const tf = await import('../../model/qwen3/tf');
  const { Qwen3Model } = await import('../../model/qwen3/index');
  const { AdamW, createLora, disposeLora, setParamsTrainable, trainStep } = await import('../../model/qwen3/train/index');
  const { createRng } = await import('../../core/rng');
  const rows: BenchRow[] = [];
  for (const c of cases) {
    const model = Qwen3Model.fromConfig(c.config, 0);
    const V = c.config.vocab_size;
    const rng = createRng(`bench/${c.name}`);
    const randomIds = (n: number) => Array.from({ length: n }, () => rng.int(V));
    const { batch: B, seq: T } = c.train;
    const ids = tf.tensor2d(randomIds(B * T), [B, T], 'int32');
    const mask = tf.ones([B, T]) as typeof ids;
    const lossFn = () =>
      tf.tidy(() => {
        const out = model.computeTokenLogprobs(ids, mask); // [B, T−1]
        return out.logprobs.sum().neg().div(out.targetMask.sum()) as Scalar;
      });
    /** Mean step seconds and the bytes the steps left allocated (the training state). */
    const measureTraining = async (params: typeof model.params) => {
      const before = tf.memory().numBytes;
      const optimizer = new AdamW(params);
      const seconds = await measureMean(c.train.iters, async () => {
        await trainStep({ params, nMicro: 1, optimizer, maxGradNorm: 1, lr: 1e-4, lossFn });
      });
      const bytes = tf.memory().numBytes - before;
      optimizer.dispose();
      return { seconds, bytes };
    };
    const full = await measureTraining(model.params);
    const readSeconds = await measureMean(c.train.iters, async () => {
      const logprobs = tf.tidy(() => model.computeTokenLogprobs(ids, mask).logprobs);
      await logprobs.data(); // read back, as Trainer.readLogprobs does
      logprobs.dispose();
    });
    // LoRA: adapters on the frozen base; only A and B are differentiated and optimised.
    const adapterBytesBefore = tf.memory().numBytes;
    const { lora, trainable } = createLora(model.params, BENCH_LORA);
    const adapterBytes = tf.memory().numBytes - adapterBytesBefore;
    model.lora = lora;
    setParamsTrainable(model.params, false);
    const withLora = await measureTraining(trainable);
    model.lora = undefined;
    setParamsTrainable(model.params, true);
    disposeLora(lora);
    tf.dispose([ids, mask]);

    const g = c.gen;
    const prompts = Array.from({ length: g.batch }, () => randomIds(g.prompt));
    const cacheSeconds = await measureMean(g.iters, async () => {
      await model.generate(prompts, { maxNewTokens: g.new, temperature: 0 });
    });
    const noCacheSeconds = await measureMean(g.iters, async () => {
      const seqs = prompts.map((p) => p.slice());
      for (let s = 0; s < g.new; s++) {
        const L = seqs[0].length;
        const next = tf.tidy(() => {
          const x = tf.tensor2d(seqs.flat(), [g.batch, L], 'int32');
          const logits = model.computeLogits(x, tf.ones([g.batch, L]) as typeof x); // [B, L, V]
          return logits.slice([0, L - 1, 0], [g.batch, 1, V]).reshape([g.batch, V]).argMax(-1); // [B]
        });
        const picked = await next.data();
        next.dispose();
        seqs.forEach((row, b) => row.push(picked[b]));
      }
    });
    rows.push({
      name: c.name,
      backend,
      params: model.countParams(),
      train_tokens_per_s: (B * T) / full.seconds,
      gen_cache_tokens_per_s: (g.batch * g.new) / cacheSeconds,
      gen_nocache_tokens_per_s: (g.batch * g.new) / noCacheSeconds,
      logprob_tokens_per_s: (B * T) / readSeconds,
      train_lora_tokens_per_s: (B * T) / withLora.seconds,
      train_state_bytes: full.bytes,
      train_lora_state_bytes: adapterBytes + withLora.bytes,
    });
    model.dispose();
  }
  return rows;
}

/** The first of /usr/bin/python3, python3 that can import torch, or a reason none can. */
export function findTorchPython(): { python?: string; reason?: string } {
  for (const python of ['/usr/bin/python3', 'python3']) {
    const r = spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore' });
    if (r.status === 0) return { python };
  }
  return { reason: 'no python3 with torch (tried /usr/bin/python3, python3)' };
}

/** Runs scripts/reference/bench_torch.py on the same cases. */
export function runTorchBench(python: string, cases: readonly BenchCase[], threads: number): TorchBench {
  const script = path.join(REPO_ROOT, 'scripts/reference/bench_torch.py');
  const input = JSON.stringify({ threads, cases });
  const r = spawnSync(python, [script], { input, encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`bench_torch.py failed (exit ${r.status}): ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}`);
  return JSON.parse(r.stdout) as TorchBench;
}

/** The printed table: one line per (preset, backend), `ours (×ratio)` when PyTorch ran. */
export function formatBenchTable(report: BenchReport): string[] {
  const torchByName = new Map((report.torch?.results ?? []).map((r) => [r.name, r]));
  const header = ['preset', 'backend', 'params', 'train tok/s', 'gen+cache tok/s', 'gen no-cache tok/s'];
  const lines: string[][] = [header];
  const cell = (ours: number, ref: number | undefined) => (ref ? `${ours.toFixed(1)} (${(ours / ref).toFixed(2)}x)` : ours.toFixed(1));
  for (const row of report.rows) {
    const t = torchByName.get(row.name);
    lines.push([
      row.name,
      row.backend,
      `${(row.params / 1e6).toFixed(2)}M`,
      ...BENCH_METRICS.map((m) => cell(row[m], t?.[m])),
    ]);
  }
  for (const t of report.torch?.results ?? []) {
    lines.push([t.name, `torch ${report.torch!.threads}t`, '', ...BENCH_METRICS.map((m) => t[m].toFixed(1))]);
  }
  const widths = header.map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  const out = lines.map((l) => l.map((x, i) => x.padEnd(widths[i])).join('  ').trimEnd());
  out.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  out.push(report.torch ? `(x) = ours / PyTorch ${report.torch.torch} on the same machine, same shapes` : `PyTorch not run: ${report.torchSkipped}`);
  out.push('', 'A no-gradient log-prob read (π_old, π_ref, the kl_prompt_only read) against the training step, same batch:');
  for (const row of report.rows) {
    out.push(`  ${row.name} ${row.backend}: ${row.logprob_tokens_per_s.toFixed(1)} tok/s, ${(row.train_tokens_per_s / row.logprob_tokens_per_s).toFixed(2)}x a training step's time`);
  }
  out.push('', `LoRA (rank ${BENCH_LORA.rank}, α ${BENCH_LORA.alpha}, ${BENCH_LORA.targetModules.join(' and ')}) against every weight, side by side in this run:`);
  for (const row of report.rows) {
    const mib = (b: number) => `${(b / (1 << 20)).toFixed(2)} MiB`;
    out.push(
      `  ${row.name} ${row.backend}: train ${row.train_lora_tokens_per_s.toFixed(1)} tok/s (${(row.train_lora_tokens_per_s / row.train_tokens_per_s).toFixed(2)}x the full step); ` +
        `training state ${mib(row.train_lora_state_bytes)} against ${mib(row.train_state_bytes)} (${(row.train_lora_state_bytes / row.train_state_bytes).toFixed(3)}x)`,
    );
  }
  return out;
}

registerCommand({
  name: 'bench',
  summary: 'tokens/s of training and generation per preset and backend (with PyTorch ratios)',
  usage: USAGE,
  async run(args: string[], io: CliIO): Promise<number> {
    const { flags, positional } = parseFlags(args, {
      values: ['presets', 'backends', 'iters', 'out', 'torch-threads'],
      booleans: ['no-torch'],
    });
    if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"`);
    const str = (n: string, d: string) => (typeof flags[n] === 'string' ? (flags[n] as string) : d);
    const iters = Number(str('iters', '2'));
    if (!Number.isInteger(iters) || iters < 1) throw new Error(`--iters must be a positive integer, got "${str('iters', '2')}"`);
    const threads = Number(str('torch-threads', '1'));
    if (!Number.isInteger(threads) || threads < 1) throw new Error(`--torch-threads must be a positive integer`);
    const backends = str('backends', 'cpu,wasm').split(',').map((b) => b.trim());
    const { getQwen3Preset } = await import('../../model/qwen3/config');
    const presets: Record<string, Qwen3Config> = {};
    for (const name of str('presets', 'qwen3-nano,qwen3-micro').split(',')) presets[name.trim()] = getQwen3Preset(name.trim());
    const cases = listBenchCases(presets, iters);

    const report: BenchReport = { date: new Date().toISOString(), node: process.version, rows: [] };
    for (const backend of backends) {
      const sel = await prepareTfjs(backend);
      if (sel.backend !== backend) {
        io.err(`backend ${backend} unavailable (${sel.reason ?? 'fell back to ' + sel.backend}); skipped`);
        continue;
      }
      io.err(`benchmarking on ${backend} …`);
      report.rows.push(...(await runTfjsBench(cases, backend)));
    }
    if (flags['no-torch'] === true) report.torchSkipped = '--no-torch';
    else {
      const found = findTorchPython();
      if (!found.python) report.torchSkipped = found.reason;
      else {
        io.err(`benchmarking PyTorch (${found.python}, ${threads} thread(s)) …`);
        try {
          report.torch = runTorchBench(found.python, cases, threads);
        } catch (e) {
          report.torchSkipped = (e as Error).message;
        }
      }
    }
    const outPath = path.resolve(REPO_ROOT, str('out', 'bench/results.json'));
    mkdirSync(path.dirname(outPath), { recursive: true });
    writeFileSync(outPath, JSON.stringify(report, null, 2) + '\n');
    for (const line of formatBenchTable(report)) io.out(line);
    io.out(`wrote ${path.relative(process.cwd(), outPath) || outPath}`);
    return 0;
  },
});
