/**
 * The model-level cases of `pact bench`, at the shapes a step really runs: decoding with
 * the KV cache (batch 8, 576 new tokens after a 1,024-token context) and a training step
 * (forward + backward + AdamW at B = 8, T = 1,536), plus the no-gradient log-prob read and
 * the LoRA step at the same shape, and the dense-matmul rate of the same backend (1024³).
 * Whatever the active tfjs backend and engine setting are (src/model/qwen3/engineBridge.ts).
 */
import type { Qwen3Config } from '../../model/qwen3/config';

/** The shapes a real step runs: decode 8 rows × 576 new tokens after 1,024; train 8 × 1,536. */
export const REAL_SHAPES = { decode: { batch: 8, context: 1024, newTokens: 576 }, train: { batch: 8, seq: 1536 } };

export interface KernelCaseSpec {
  name: string;
  config: Qwen3Config;
  decode: { batch: number; context: number; newTokens: number };
  train: { batch: number; seq: number; iters: number };
}

export interface KernelCaseResult {
  name: string;
  params: number;
  decode: {
    batch: number;
    context: number;
    new_tokens: number;
    prefill_s: number;
    decode_s: number;
    decode_tokens_per_s: number;
    ms_per_step_first: number;
    ms_per_step_last: number;
    /** What a step moves and computes on average (decodeStepWork). */
    bytes_per_step: number;
    flops_per_step: number;
  };
  train: {
    batch: number;
    seq: number;
    step_s: number;
    tokens_per_s: number;
    flops: number;
    gflops: number;
    /** The causal FLOP count (countTrainFlops(…, true)) and its rate. */
    flops_causal: number;
    gflops_causal: number;
    state_bytes: number;
  };
  /** A no-gradient log-prob read of the same batch (π_old, π_ref). */
  read: { tokens_per_s: number };
  /** The training step with LoRA (rank 8, α 16, q and v) on the frozen base. */
  lora: { tokens_per_s: number; state_bytes: number };
}

/** The LoRA of the benchmark's LoRA training step. */
export const BENCH_LORA = { rank: 8, alpha: 16, targetModules: ['q', 'v'] as ('q' | 'v')[], seed: 0 };

/**
 * Matmul FLOPs of one training step at B×T (backward = 2× forward), counting the full T×T
 * attention products as the textbook eager attention computes them (scripts/reference/
 * bench_torch.py uses the same formula): 3·B·T·[L·(2H·(nh + 2nkv)·d + 2·nh·d·H + 6·H·I +
 * 4·nh·d·T) + 2·H·V]. `causal`: the attention term 2·nh·d·(T + 1), each query against the
 * (T + 1)/2 keys it sees on average, the least a causal implementation computes.
 */
export function countTrainFlops(c: Qwen3Config, B: number, T: number, causal = false): number {
  const H = c.hidden_size;
  const d = c.head_dim;
  const nh = c.num_attention_heads;
  const nkv = c.num_key_value_heads;
  const attention = causal ? 2 * nh * d * (T + 1) : 4 * nh * d * T;
  const layer = 2 * H * (nh + 2 * nkv) * d + 2 * nh * d * H + 6 * H * c.intermediate_size + attention;
  return 3 * B * T * (c.num_hidden_layers * layer + 2 * H * c.vocab_size);
}

function seededIds(n: number, V: number, seed: number): number[] {
  let s = seed >>> 0;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % V;
  });
}

async function measureMean(iters: number, fn: () => Promise<void>): Promise<number> {
  await fn(); // warm-up: weight upload, first allocations
  const t0 = performance.now();
  for (let i = 0; i < iters; i++) await fn();
  return (performance.now() - t0) / 1000 / iters;
}

/**
 * The core's SIMD128 multiply-add rate in GFLOP/s, measured by the engine's kernels in use
 * (assembly/peak.ts: 12 independent multiply-add chains in registers, no memory; best of 5): the
 * ceiling of any kernel built from `madd`, against which the engine's achieved FLOP/s are read.
 */
export function measureSimdPeak(rt: { k: { maddPeak(iters: number, x: number): number } }, iters = 2e7): number {
  rt.k.maddPeak(iters / 10, 0.001); // tier-up
  let best = 0;
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    rt.k.maddPeak(iters, 0.001);
    best = Math.max(best, (96 * iters) / ((performance.now() - t0) / 1000) / 1e9);
  }
  return best;
}

/**
 * The rate, in GB/s, at which one thread reads a buffer of `bytes` (far above the caches) with the
 * engine's streamSum (best of 5): the memory floor of work that streams its bytes once, as a decode
 * step does.
 */
export function measureReadRate(
  rt: { k: { streamSum(x: number, n: number): number }; allocZeroed(n: number): number; release(p: number): void },
  bytes = 128 << 20,
): number {
  const n = Math.floor(bytes / 128) * 32;
  const p = rt.allocZeroed(n);
  try {
    rt.k.streamSum(p, n);
    let best = 0;
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      rt.k.streamSum(p, n);
      best = Math.max(best, (4 * n) / ((performance.now() - t0) / 1000) / 1e9);
    }
    return best;
  } finally {
    rt.release(p);
  }
}

/**
 * What one decode step must move and compute, on average over a decode of `newTokens` after
 * `context` at batch `batch`: every weight once (float32; the tied LM head once) and each row's
 * cached keys and values at its mean length; the FLOPs of the weight products (2 per weight and
 * row) and of attention (4 per cached key, query head, dimension and row).
 */
export function decodeStepWork(
  c: Qwen3Config,
  params: number,
  batch: number,
  context: number,
  newTokens: number,
): { bytes: number; flops: number } {
  const meanLength = context + (newTokens - 1) / 2;
  const kvFloats = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * meanLength;
  const embedOnly = c.tie_word_embeddings ? 0 : c.vocab_size * c.hidden_size; // the input table: a few rows a step
  const weights = params - embedOnly;
  const attention = 4 * c.num_hidden_layers * c.num_attention_heads * c.head_dim * meanLength;
  return { bytes: 4 * (weights + batch * kvFloats), flops: batch * (2 * weights + attention) };
}

/**
 * GFLOP/s of an n³ float32 product on the active backend's own path (best of 3 after a warm-up),
 * and with the engine, the core's SIMD128 multiply-add peak (measureSimdPeak) and read rate
 * (measureReadRate, GB/s).
 */
export async function measureMatmulRate(
  n = 1024,
): Promise<{ engine?: number; tfjs: number; simdPeak?: number; readGBs?: number }> {
  const tf = await import('../../model/qwen3/tf');
  const a = tf.randomNormal([n, n]);
  const best = async (f: () => Promise<void>) => {
    await f();
    let t = Infinity;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await f();
      t = Math.min(t, (performance.now() - t0) / 1000);
    }
    return (2 * n ** 3) / t / 1e9;
  };
  const tfjs = await best(async () => {
    const c = tf.matMul(a, a);
    await c.data();
    c.dispose();
  });
  a.dispose();
  let engine: number | undefined;
  let simdPeak: number | undefined;
  let readGBs: number | undefined;
  const backend = tf.getBackend();
  const { getEngineEnabled } = await import('../../model/qwen3/engineBridge');
  if ((backend === 'wasm' || backend === 'cpu') && getEngineEnabled()) {
    const { getEngineRuntime } = await import('../../model/engine/runtime');
    const rt = getEngineRuntime();
    const p = rt.allocZeroed(3 * n * n);
    engine = await best(async () => rt.k.gemm(p, n, p + n * n * 4, n, p + 2 * n * n * 4, n, n, n, n, 0));
    rt.release(p);
    simdPeak = measureSimdPeak(rt);
    readGBs = measureReadRate(rt);
  }
  return { engine, tfjs, ...(simdPeak === undefined ? {} : { simdPeak, readGBs }) };
}

/** Runs each case on the active backend (select it first). */
export async function runKernelCases(specs: readonly KernelCaseSpec[]): Promise<KernelCaseResult[]> {
  const tf = await import('../../model/qwen3/tf');
  const { Qwen3Model } = await import('../../model/qwen3/index');
  const { AdamW, createLora, disposeLora, setParamsTrainable, trainStep } =
    await import('../../model/qwen3/train/index');
  const out: KernelCaseResult[] = [];
  for (const spec of specs) {
    const c = spec.config;
    const V = c.vocab_size;
    const model = Qwen3Model.fromConfig(c, 0);
    try {
      // Decode: random contexts, every row runs to newTokens (no stop).
      const { batch: Bd, context, newTokens } = spec.decode;
      const prompts = Array.from({ length: Bd }, (_, b) => seededIds(context, V, 100 + b));
      // Greedy, as the PyTorch side (scripts/reference/bench_torch.py takes the argmax), so both do
      // the same work a step (before 2026-12-04, night, temperature 1: the engine also drew from
      // a softmax). A stamp after each step's tokens: the first one ends the prefill.
      const stamps: number[] = [];
      const onToken = () => stamps.push(performance.now());
      await model.generate(
        prompts.map((p) => p.slice(0, 32)),
        { maxNewTokens: 4, temperature: 0 },
      ); // warm-up
      const t0 = performance.now();
      await model.generate(prompts, { maxNewTokens: newTokens, temperature: 0, onToken });
      const total = (performance.now() - t0) / 1000;
      const prefill = (stamps[0] - t0) / 1000;
      const steps = stamps.slice(1).map((t, i) => t - stamps[i]); // ms per decode step
      const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      const decodeS = total - prefill;
      // Training at B×T: the mean next-token loss, AdamW, clip 1.
      const { batch: B, seq: T, iters } = spec.train;
      const ids = tf.tensor2d(seededIds(B * T, V, 7), [B, T], 'int32');
      const mask = tf.ones([B, T]) as typeof ids;
      const lossFn = () =>
        tf.tidy(() => {
          const r = model.computeTokenLogprobs(ids, mask);
          return r.logprobs.sum().neg().div(r.targetMask.sum()) as import('@tensorflow/tfjs-core').Scalar;
        });
      const measureTraining = async (params: typeof model.params) => {
        const before = tf.memory().numBytes;
        const optimizer = new AdamW(params);
        const seconds = await measureMean(iters, async () => {
          await trainStep({ params, nMicro: 1, optimizer, maxGradNorm: 1, lr: 1e-4, lossFn });
        });
        const bytes = tf.memory().numBytes - before;
        optimizer.dispose();
        return { seconds, bytes };
      };
      const full = await measureTraining(model.params);
      const readS = await measureMean(iters, async () => {
        const lp = tf.tidy(() => model.computeTokenLogprobs(ids, mask).logprobs);
        await lp.data();
        lp.dispose();
      });
      const adapterBefore = tf.memory().numBytes;
      const { lora, trainable } = createLora(model.params, BENCH_LORA);
      const adapterBytes = tf.memory().numBytes - adapterBefore;
      model.lora = lora;
      setParamsTrainable(model.params, false);
      const withLora = await measureTraining(trainable);
      model.lora = undefined;
      setParamsTrainable(model.params, true);
      disposeLora(lora);
      tf.dispose([ids, mask]);
      const flops = countTrainFlops(c, B, T);
      const flopsCausal = countTrainFlops(c, B, T, true);
      out.push({
        name: spec.name,
        params: model.countParams(),
        decode: {
          batch: Bd,
          context,
          new_tokens: newTokens,
          prefill_s: prefill,
          decode_s: decodeS,
          decode_tokens_per_s: (Bd * (newTokens - 1)) / decodeS,
          ms_per_step_first: avg(steps.slice(0, 16)),
          ms_per_step_last: avg(steps.slice(-16)),
          ...(() => {
            const w = decodeStepWork(c, model.countParams(), Bd, context, newTokens);
            return { bytes_per_step: w.bytes, flops_per_step: w.flops };
          })(),
        },
        train: {
          batch: B,
          seq: T,
          step_s: full.seconds,
          tokens_per_s: (B * T) / full.seconds,
          flops,
          gflops: flops / full.seconds / 1e9,
          flops_causal: flopsCausal,
          gflops_causal: flopsCausal / full.seconds / 1e9,
          state_bytes: full.bytes,
        },
        read: { tokens_per_s: (B * T) / readS },
        lora: { tokens_per_s: (B * T) / withLora.seconds, state_bytes: adapterBytes + withLora.bytes },
      });
    } finally {
      model.dispose();
    }
  }
  return out;
}
