/**
 * `pact bench` (`npm run bench`): the speed of training at the shapes a run really has.
 *   - whole steps of experiment files (benchStep.ts: pact-nano-short and table1 by default),
 *     split by phase, with tokens/s and peak memory; `--graph` adds the same step on the tfjs
 *     graph (the path before the CPU engine) in the same run;
 *   - decode with the KV cache at batch 8 (576 new tokens after 1,024) and a training step at
 *     B = 8, T = 1,536, with the log-prob read and the LoRA step beside it (benchKernels.ts);
 *   - the dense 1024³ matmul rate of the same backend.
 * Beside each, PyTorch on the same shapes and thread count (scripts/reference/bench_torch.py
 * --real): the fair baseline (causal attention by query chunks or scaled_dot_product_attention,
 * GQA as views, decode from a preallocated cache under inference_mode), on the BLAS, kernel and
 * CPU it names; against a reference BLAS no ratio is printed. FLOP rates full and causal.
 * `--pairs N` repeats the decode and training cases and PyTorch's N times, alternating which
 * goes first, and reports each pair's ratios and their median: on a shared machine whose speed
 * moves by a third within minutes, one pair is one draw.
 * Writes bench/results.json and prints tables. A benchmark, not a test: nothing asserts a
 * speed; compare numbers of one run on a quiet machine, not across runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Qwen3Config } from '../../model/qwen3/config';
import { parseFlags, registerCommand, type CliIO } from '../registry';
import {
  runKernelCases,
  measureMatmulRate,
  BENCH_LORA,
  REAL_SHAPES,
  type KernelCaseResult,
  type KernelCaseSpec,
} from './benchKernels';
import { runStepBench, type StepBenchResult } from './benchStep';
import { prepareTfjs, resolveFma, resolveThreads } from './score';
import { findTorchPython } from '../../model/torchPython';

export { REAL_SHAPES };

export { findTorchPython };

export { BENCH_LORA, countTrainFlops } from './benchKernels';

const USAGE = `usage: pact bench [--step FILE[,FILE…]] [--run NAME] [--steps N] [--graph]
                  [--presets qwen3-nano[,qwen3-micro]] [--backends wasm[,cpu]] [--iters 1]
                  [--no-kernels] [--no-steps] [--threads 1] [--fma] [--torch-threads N] [--no-torch]
                  [--pairs N] [--out bench/results.json]

Whole training steps of experiment files at their own shape (default
experiments/pact-nano-short.json and experiments/table1.json, run "pact", one step), split by
phase, with tokens/s and peak memory; decode with the KV cache (batch 8, 576 new tokens after
1,024) and a training step (B 8 × T 1,536) per preset; the backend's 1024³ matmul rate; and
PyTorch on the same shapes and thread count when python3 has torch (the fair baseline: causal
attention by query chunks or scaled_dot_product_attention, GQA as views, a preallocated KV
cache under inference_mode), with its BLAS kernel and the CPU model. Run on a quiet machine.
  --graph        also run each step on the tfjs graph (engine off): the path before the engine
                 (steps only: the graph's 8 × 1,536 training case does not fit the wasm heap)
  --steps N      steps per file (the first includes uploading the weights)
  --threads N    CPU-engine threads (default 1: one core); PyTorch gets the same unless --torch-threads
  --fma          the CPU engine's fused multiply-add kernels (or $PACT_FMA=1; docs/engine.md; pact
                 turns on Node 20's relaxed SIMD itself)
  --pairs N      the decode and training cases of the first preset and PyTorch's, N times in
                 turn (engine first in odd pairs, PyTorch first in even ones): each pair's ratios
                 and their median and range (about 100 s a pair for qwen3-nano on one thread)`;

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** PyTorch's side (bench_torch.py --real output, the fields read here). */
export interface TorchReal {
  torch: string;
  threads: number;
  /** /proc/cpuinfo's model name (absent in results written before it was reported). */
  cpu?: string | null;
  /** 'fair' (the default) or 'textbook'; absent in earlier results, which were all textbook. */
  baseline?: 'fair' | 'textbook';
  /** 'sdpa', 'chunked' or 'textbook', and why. */
  attention?: string;
  attention_why?: string;
  attention_chunk?: number;
  blas: {
    kind: string;
    is_reference: boolean;
    why?: string;
    gemm_gflops?: number;
    library?: string | null;
    /** OpenBLAS's core kernel (openblas_get_corename), e.g. Haswell. */
    kernel?: string | null;
    /** Whether the kernel is OpenBLAS's own choice or was set because it fell back (openblas_core.py). */
    kernel_choice?: { detected: string | null; forced: string | null; why: string };
  };
  gemm?: { n: number; gflops: number };
  decode?: {
    name: string;
    decode_tokens_per_s: number;
    ms_per_step_first: number;
    ms_per_step_last: number;
    prefill_s: number;
  }[];
  train?: {
    name: string;
    tokens_per_s: number;
    step_s: number;
    gflops: number;
    fraction_of_gemm: number;
    gflops_causal?: number;
  }[];
}

export interface BenchReport {
  date: string;
  /** CPU-engine threads. */
  threads?: number;
  /** The CPU engine's kernels (runtime.ts KernelVariant) when fma was asked for: `fma`, or `simd` where it fell back. */
  engineKernels?: string;
  node: string;
  cpu: string;
  cores: number;
  /** GFLOP/s: the 1024³ matmul, and the core's measured SIMD128 multiply-add peak (the engine's kernels). */
  matmul: Record<string, { engine?: number; tfjs: number; simdPeak?: number; readGBs?: number }>;
  kernels: (KernelCaseResult & { backend: string; path: 'engine' | 'graph' })[];
  steps: StepBenchResult[];
  torch?: TorchReal;
  /** Why PyTorch did not run, when it did not. */
  torchSkipped?: string;
  /** `--pairs N`: the engine's and PyTorch's decode and training rates, pair by pair, first preset. */
  pairs?: BenchPair[];
}

/**
 * The CPU a bench ran on: its model name and, on Linux, its family and model numbers and the
 * vector features that set the engine's and OpenBLAS's ceilings (a VM's model name is often just
 * "AMD EPYC", and ratios against PyTorch move with the CPU: docs/perf.md). `cpuinfo`: the text of
 * /proc/cpuinfo (read when not given; absent elsewhere).
 */
export function describeCpu(cpuinfo?: string): string {
  let text = cpuinfo;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      text = '';
    }
  }
  const first = text.split(/\n\s*\n/)[0] ?? '';
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(first)?.[1]?.trim();
  const name = field('model name') ?? os.cpus()[0]?.model.trim() ?? 'unknown';
  const family = field('cpu family');
  const model = field('model');
  if (family === undefined || model === undefined) return name;
  const flags = new Set((field('flags') ?? '').split(/\s+/));
  const features = ['fma', 'avx2', 'avx512f'].filter((f) => flags.has(f));
  return `${name} (family ${family}, model ${model}${features.length > 0 ? `; ${features.join(', ')}` : ''})`;
}

/** Decode and training rates of one side of a pair. */
export interface PairRates {
  decode_tokens_per_s: number;
  train_tokens_per_s: number;
}

/**
 * One pair of `--pairs`: the engine's and PyTorch's rates measured one right after the other;
 * `run`, the engine side's whole record where its runner keeps one (the browser bench's page run).
 */
export interface BenchPair {
  first: 'engine' | 'torch';
  engine: PairRates;
  torch: PairRates;
  decode_ratio: number;
  train_ratio: number;
  run?: unknown;
}

/** The median of xs (the mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The median engine ÷ PyTorch ratios of a set of pairs. */
export function pairMedians(pairs: readonly BenchPair[]): { decode_ratio: number; train_ratio: number } {
  return {
    decode_ratio: median(pairs.map((p) => p.decode_ratio)),
    train_ratio: median(pairs.map((p) => p.train_ratio)),
  };
}

/**
 * `--pairs`: the engine's cases and PyTorch's in turn, `n` times, alternating which runs first
 * (the engine in odd pairs). `caseName` is the case PyTorch reports; `runEngine` runs the engine
 * side (`pact bench`'s kernel cases in Node, or a page run in Chromium: scripts/wasmThreadsBench.ts).
 */
export async function runPairs(
  n: number,
  caseName: string,
  runEngine: () => Promise<PairRates & { run?: unknown }>,
  runTorch: () => TorchReal,
  log: (line: string) => void,
): Promise<BenchPair[]> {
  const pairs: BenchPair[] = [];
  for (let i = 0; i < n; i++) {
    const first = i % 2 === 0 ? 'engine' : 'torch';
    log(`pair ${i + 1} of ${n} (${first} first) …`);
    let torch: TorchReal | undefined;
    if (first === 'torch') torch = runTorch();
    const { run, ...engine } = await runEngine();
    torch ??= runTorch();
    const td = torch.decode?.find((d) => d.name === caseName);
    const tt = torch.train?.find((t) => t.name === caseName);
    if (!td || !tt) throw new Error(`PyTorch reported no decode or train case for ${caseName}`);
    pairs.push({
      first,
      engine,
      torch: { decode_tokens_per_s: td.decode_tokens_per_s, train_tokens_per_s: tt.tokens_per_s },
      decode_ratio: engine.decode_tokens_per_s / td.decode_tokens_per_s,
      train_ratio: engine.train_tokens_per_s / tt.tokens_per_s,
      ...(run === undefined ? {} : { run }),
    });
  }
  return pairs;
}

/** `runPairs`' engine side in Node: the kernel cases of one preset. */
export async function engineCaseRates(spec: KernelCaseSpec): Promise<PairRates> {
  const [k] = await runKernelCases([spec]);
  return { decode_tokens_per_s: k.decode.decode_tokens_per_s, train_tokens_per_s: k.train.tokens_per_s };
}

/** Runs scripts/reference/bench_torch.py --real on the presets' configs. */
export function runTorchReal(
  python: string,
  configs: Record<string, Qwen3Config>,
  threads: number,
  cases = 'gemm,decode,train',
): TorchReal {
  const script = path.join(REPO_ROOT, 'scripts/reference/bench_torch.py');
  const { decode, train } = REAL_SHAPES;
  const args = [
    script,
    '--real',
    '--threads',
    String(threads),
    '--cases',
    cases,
    '--decode',
    `${decode.batch}x${decode.context}+${decode.newTokens}`,
    '--train',
    `${train.batch}x${train.seq}`,
  ];
  for (const [name, c] of Object.entries(configs)) args.push('--config', `${name}=${JSON.stringify(c)}`);
  const r = spawnSync(python, args, { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0)
    throw new Error(
      `bench_torch.py failed (exit ${r.status}): ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}`,
    );
  return JSON.parse(r.stdout) as TorchReal;
}

const fmt = (x: number | undefined, digits = 1) => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits));
const mib = (b: number | undefined) => (b === undefined ? '–' : `${(b / 2 ** 20).toFixed(0)} MiB`);

/** The baseline PyTorch ran (results written before the field existed were all textbook). */
function baselineOf(torch: TorchReal): 'fair' | 'textbook' {
  return torch.baseline ?? 'textbook';
}

/** ours / PyTorch as text, or why there is no ratio. */
function ratio(ours: number, ref: number | undefined, torch: TorchReal | undefined): string {
  if (!torch || ref === undefined) return '';
  if (torch.blas.is_reference) return ' (no ratio: PyTorch ran on a reference BLAS)';
  const against = baselineOf(torch) === 'textbook' ? "PyTorch's textbook (unfair) baseline" : 'PyTorch';
  return ` (${(ours / ref).toFixed(2)}× ${against})`;
}

/** What PyTorch ran and on what: baseline and attention, BLAS library and kernel, CPU model. */
export function describeTorchSide(t: TorchReal): string {
  const baseline =
    baselineOf(t) === 'textbook'
      ? 'textbook baseline (repeat_kv copies, T × T scores under a mask: not a fair yardstick)'
      : `fair baseline (${t.attention ?? '?'} attention${t.attention === 'chunked' && t.attention_chunk ? `, query chunks of ${t.attention_chunk}` : ''})`;
  const forced = t.blas.kernel_choice?.forced ? ` (${t.blas.kernel_choice.why})` : '';
  const blas = `BLAS ${t.blas.kind}${t.blas.library ? ` (${t.blas.library})` : ''}, kernel ${t.blas.kernel ?? 'unknown'}${forced}`;
  return `PyTorch ${t.torch}, ${t.threads} thread(s), ${baseline}; ${blas}; CPU ${t.cpu ?? 'unknown'}`;
}

/** The printed report. */
export function formatBenchReport(report: BenchReport): string[] {
  const out: string[] = [];
  const t = report.torch;
  out.push(
    `pact bench, ${report.date}: ${report.cpu}, ${report.cores} cores, Node ${report.node}, engine threads ${report.threads ?? 1}${report.engineKernels ? `, engine kernels ${report.engineKernels}` : ''}`,
  );
  if (t) {
    out.push(
      `${describeTorchSide(t)}${t.blas.is_reference ? ` — a reference BLAS (${t.blas.why ?? ''}): no ratios` : ''}`,
    );
    if (t.attention_why) out.push(`  attention: ${t.attention_why}`);
  } else out.push(`PyTorch not run: ${report.torchSkipped}`);
  out.push('', 'Dense 1024³ float32 matmul, GFLOP/s (the engine on one thread; tfjs and PyTorch on their threads):');
  for (const [backend, m] of Object.entries(report.matmul)) {
    out.push(
      `  ${backend}: engine ${fmt(m.engine)}, tfjs ${fmt(m.tfjs)}${t?.gemm ? `; PyTorch ${fmt(t.gemm.gflops)} (native)` : ''}`,
    );
    if (m.simdPeak !== undefined)
      out.push(
        `  this core's SIMD128 multiply-add peak, measured (12 chains in registers, the engine's ${report.engineKernels ?? 'simd'} kernels): ${fmt(m.simdPeak)} GFLOP/s; ` +
          `the engine's matmul reaches ${fmt((m.engine ?? NaN) / m.simdPeak, 2)} of it${t?.gemm ? `, PyTorch's native matmul ${fmt(t.gemm.gflops / m.simdPeak, 2)}× it` : ''}`,
      );
    if (m.readGBs !== undefined)
      out.push(`  this core's read rate, measured (a 128 MiB stream, the engine's kernels): ${fmt(m.readGBs)} GB/s`);
  }
  for (const k of report.kernels) {
    const td = t?.decode?.find((d) => d.name === k.name);
    const tt = t?.train?.find((d) => d.name === k.name);
    const m = report.matmul[k.backend];
    const own = m?.[k.path === 'engine' ? 'engine' : 'tfjs'];
    const peak = m?.simdPeak;
    const d = k.decode;
    out.push(
      '',
      `${k.name} (${(k.params / 1e6).toFixed(2)}M parameters), ${k.backend}, ${k.path === 'engine' ? 'CPU engine' : 'tfjs graph'}:`,
    );
    if (t && (td || tt)) out.push(`  beside ${describeTorchSide(t)}`);
    out.push(
      `  decode, batch ${d.batch}, ${d.new_tokens} new after ${d.context}: ${fmt(d.decode_tokens_per_s)} tok/s${ratio(d.decode_tokens_per_s, td?.decode_tokens_per_s, t)}; ` +
        `${fmt(d.ms_per_step_first, 2)} → ${fmt(d.ms_per_step_last, 2)} ms/step first → last 16${td ? ` (PyTorch ${fmt(td.decode_tokens_per_s)} tok/s, ${fmt(td.ms_per_step_first, 2)} → ${fmt(td.ms_per_step_last, 2)})` : ''}; prefill ${fmt(d.prefill_s, 2)} s`,
    );
    if (k.path === 'engine' && m?.readGBs && peak && d.bytes_per_step)
      out.push(
        `  a decode step moves ${fmt(d.bytes_per_step / 1e6)} MB (every weight, the rows' cached keys and values): ${fmt(d.bytes_per_step / m.readGBs / 1e6, 2)} ms at the read rate; ` +
          `it computes ${fmt(d.flops_per_step / 1e6)} MFLOP: ${fmt(d.flops_per_step / peak / 1e6, 2)} ms at the SIMD peak; it took ${fmt((1000 * d.batch) / d.decode_tokens_per_s, 2)} ms`,
      );
    const tr = k.train;
    out.push(
      `  train step ${tr.batch} × ${tr.seq}: ${fmt(tr.tokens_per_s)} tok/s${ratio(tr.tokens_per_s, tt?.tokens_per_s, t)}, ${fmt(tr.gflops)} GFLOP/s = ${fmt(own ? tr.gflops / own : NaN, 2)} of this backend's matmul rate` +
        `${peak && k.path === 'engine' ? `, ${fmt(tr.gflops / peak, 2)} of the SIMD128 peak` : ''}` +
        `${t?.gemm ? `, ${fmt(tr.gflops / t.gemm.gflops, 2)} of the native rate` : ''}; counting causal FLOPs ${fmt(tr.gflops_causal)} GFLOP/s` +
        `${tt ? ` (PyTorch ${fmt(tt.tokens_per_s)} tok/s, ${fmt(tt.gflops)} GFLOP/s, ${fmt(tt.gflops_causal)} causal)` : ''}`,
    );
    out.push(
      `  log-prob read (no gradient), same batch: ${fmt(k.read.tokens_per_s)} tok/s, ${fmt(tr.tokens_per_s / k.read.tokens_per_s, 2)}× a training step's time per token`,
    );
    out.push(
      `  LoRA (rank ${BENCH_LORA.rank}, α ${BENCH_LORA.alpha}, ${BENCH_LORA.targetModules.join(' and ')}): ${fmt(k.lora.tokens_per_s)} tok/s (${fmt(k.lora.tokens_per_s / tr.tokens_per_s, 2)}× the full step); training state ${mib(k.lora.state_bytes)} against ${mib(tr.state_bytes)}`,
    );
  }
  if (report.pairs && report.pairs.length > 0) {
    const ps = report.pairs;
    const range = (xs: number[]) => `${fmt(Math.min(...xs), 2)}–${fmt(Math.max(...xs), 2)}`;
    out.push(
      '',
      `${ps.length} pairs, one right after the other (${report.kernels[0]?.name ?? 'first preset'}, engine ÷ PyTorch, tok/s):`,
    );
    ps.forEach((p, i) =>
      out.push(
        `  pair ${i + 1} (${p.first} first): decode ${fmt(p.engine.decode_tokens_per_s)} / ${fmt(p.torch.decode_tokens_per_s)} = ${fmt(p.decode_ratio, 2)}×; ` +
          `train ${fmt(p.engine.train_tokens_per_s)} / ${fmt(p.torch.train_tokens_per_s)} = ${fmt(p.train_ratio, 2)}×`,
      ),
    );
    const m = pairMedians(ps);
    const dr = ps.map((p) => p.decode_ratio);
    const tr = ps.map((p) => p.train_ratio);
    out.push(
      `  median: decode ${fmt(m.decode_ratio, 2)}× (${range(dr)}), train ${fmt(m.train_ratio, 2)}× (${range(tr)})`,
    );
  }
  if (report.steps.length > 0)
    out.push(
      '',
      'Whole steps (seconds wall; phases from the trainer; rollouts split into prefill, decode and tool calls):',
    );
  for (const s of report.steps) {
    const r = s.rollouts;
    out.push(
      `  ${path.basename(s.file)} ${s.run} step ${s.step}, ${s.path === 'engine' ? 'CPU engine' : 'tfjs graph'} (${s.backend}): ${fmt(s.seconds)} s (${fmt(s.cpu_seconds)} s CPU) = rollouts ${fmt(s.phases.rollouts_s)} ` +
        `[prefill ${fmt(r.prefill_s)}, decode ${fmt(r.decode_s)}, ${r.tool_calls} tool calls ${fmt(r.tool_s, 2)}] + π_old/π_ref ${fmt(s.phases.logprobs_s)} + update ${fmt(s.phases.update_s)}; ` +
        `${s.tokens.generated} generated tokens (${fmt(s.generated_tokens_per_s)}/s), ${s.tokens.rollout} rollout tokens (${fmt(s.rollout_tokens_per_s)}/s); ` +
        `peak engine ${mib(s.memory.engine_peak_bytes)} (heap ${mib(s.memory.engine_heap_bytes)}), tfjs ${mib(s.memory.tfjs_peak_bytes)}, RSS ${mib(s.memory.rss_peak_bytes)}`,
    );
  }
  const pairs = report.steps.filter((s) => s.path === 'graph');
  for (const g of pairs) {
    const e = report.steps.find(
      (s) => s.path === 'engine' && s.file === g.file && s.step === g.step && s.backend === g.backend,
    );
    if (e)
      out.push(
        `  ${path.basename(g.file)} step ${g.step}: the engine step takes ${fmt(g.seconds / e.seconds)}× less time than the graph's (${fmt(g.cpu_seconds / e.cpu_seconds)}× less CPU)`,
      );
  }
  return out;
}

registerCommand({
  name: 'bench',
  summary: 'training speed at real shapes: whole steps, decode and a training step, beside PyTorch',
  usage: USAGE,
  async run(args: string[], io: CliIO): Promise<number> {
    const { flags, positional } = parseFlags(args, {
      values: ['step', 'run', 'steps', 'presets', 'backends', 'iters', 'out', 'torch-threads', 'threads', 'pairs'],
      booleans: ['no-torch', 'graph', 'no-kernels', 'no-steps', 'fma'],
    });
    if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"`);
    const str = (n: string, d: string) => (typeof flags[n] === 'string' ? (flags[n] as string) : d);
    const int = (n: string, d: string) => {
      const v = Number(str(n, d));
      if (!Number.isInteger(v) || v < 1) throw new Error(`--${n} must be a positive integer, got "${str(n, d)}"`);
      return v;
    };
    const iters = int('iters', '1');
    const nPairs = typeof flags.pairs === 'string' ? int('pairs', '1') : 0;
    const steps = int('steps', '1');
    const engineThreads = resolveThreads(str('threads', '') || undefined, 1);
    const threads = int('torch-threads', String(engineThreads));
    const backends = str('backends', 'wasm')
      .split(',')
      .map((b) => b.trim());
    const files =
      flags['no-steps'] === true
        ? []
        : str('step', 'experiments/pact-nano-short.json,experiments/table1.json')
            .split(',')
            .map((f) => f.trim());
    const { getQwen3Preset } = await import('../../model/qwen3/config');
    const presets: Record<string, Qwen3Config> = {};
    if (flags['no-kernels'] !== true)
      for (const name of str('presets', 'qwen3-nano').split(',')) presets[name.trim()] = getQwen3Preset(name.trim());
    const specs: KernelCaseSpec[] = Object.entries(presets).map(([name, config]) => ({
      name,
      config,
      decode: REAL_SHAPES.decode,
      train: { ...REAL_SHAPES.train, iters },
    }));

    const report: BenchReport = {
      date: new Date().toISOString(),
      threads: engineThreads,
      node: process.version,
      cpu: describeCpu(),
      cores: os.cpus().length,
      matmul: {},
      kernels: [],
      steps: [],
    };
    for (const backend of backends) {
      const sel = await prepareTfjs(backend, { threads: engineThreads, isFma: resolveFma(flags.fma === true) });
      if (sel.kernelsWarning) io.err(`warning: ${sel.kernelsWarning}`);
      if (sel.kernels) report.engineKernels = sel.kernels;
      const { setEngineEnabled } = await import('../../model/qwen3/engineBridge'); // after prepareTfjs: it loads tfjs
      if (sel.backend !== backend) {
        io.err(`backend ${backend} unavailable (${sel.reason ?? 'fell back to ' + sel.backend}); skipped`);
        continue;
      }
      io.err(`benchmarking on ${backend} …`);
      report.matmul[backend] = await measureMatmulRate();
      for (const useEngine of flags.graph === true ? [true, false] : [true]) {
        setEngineEnabled(useEngine);
        // The graph's training case at 8 × 1,536 holds [8, heads, T, T] per layer: past the wasm heap.
        if (specs.length > 0 && useEngine)
          report.kernels.push(
            ...(await runKernelCases(specs)).map((k) => ({
              ...k,
              backend,
              path: useEngine ? ('engine' as const) : ('graph' as const),
            })),
          );
        for (const file of files) {
          report.steps.push(
            ...(await runStepBench(path.resolve(REPO_ROOT, file), {
              run: str('run', '') || undefined,
              steps,
              useEngine,
              engineKernels: sel.kernels ?? 'simd',
              log: io.err,
            })),
          );
        }
      }
      setEngineEnabled(true);
    }
    if (flags['no-torch'] === true) report.torchSkipped = '--no-torch';
    else if (Object.keys(presets).length === 0) report.torchSkipped = '--no-kernels';
    else {
      const found = findTorchPython();
      if (!found.python) report.torchSkipped = found.reason;
      else {
        io.err(`benchmarking PyTorch (${found.python}, ${threads} thread(s)) …`);
        try {
          report.torch = runTorchReal(found.python, presets, threads);
        } catch (e) {
          report.torchSkipped = (e as Error).message;
        }
      }
    }
    if (nPairs > 0) {
      const found = findTorchPython();
      if (flags['no-torch'] === true || !found.python) throw new Error('--pairs needs PyTorch beside the engine');
      if (specs.length === 0) throw new Error('--pairs needs a preset (not --no-kernels)');
      if (backends.length > 1) io.err(`--pairs runs on the last backend, ${backends[backends.length - 1]}`);
      const spec = specs[0];
      report.pairs = await runPairs(
        nPairs,
        spec.name,
        () => engineCaseRates(spec),
        () => runTorchReal(found.python!, { [spec.name]: spec.config }, threads, 'decode,train'),
        io.err,
      );
    }
    const outPath = path.resolve(REPO_ROOT, str('out', 'bench/results.json'));
    mkdirSync(path.dirname(outPath), { recursive: true });
    writeFileSync(outPath, JSON.stringify(report, null, 2) + '\n');
    for (const line of formatBenchReport(report)) io.out(line);
    io.out(`wrote ${path.relative(process.cwd(), outPath) || outPath}`);
    return 0;
  },
});
