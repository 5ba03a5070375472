/// <reference lib="webworker" />
/**
 * One measurement of scripts/wasmThreadsBench.ts in a module worker, on tfjs-wasm with the
 * thread count and engine kernels asked (the CPU engine serves the model's products where it
 * takes the shape, as in the app): a qwen3-nano (or other preset) training step (forward +
 * backward of the mean next-token loss + clip + AdamW, as `pact bench`) and greedy generation
 * with the KV cache (model.generate), timed as the mean of `iters` after one untimed warm-up.
 */
import { activateBackend } from '../../workers/tfBrowser';
import * as tf from '../../src/model/qwen3/tf';
import type { Scalar } from '@tensorflow/tfjs-core';
import { getQwen3Preset } from '../../src/model/qwen3/config';
import { isEngineActive, Qwen3Model } from '../../src/model/qwen3/index';
import { configureEngineKernels, type KernelVariant } from '../../src/model/engine/runtime';
import { AdamW, trainStep } from '../../src/model/qwen3/train/index';
import { createRng } from '../../src/core/rng';

export interface BenchSpec {
  threads: number;
  /** The engine kernels asked for (`fma` falls back to `simd` where relaxed SIMD is missing: see `kernels` in the result). */
  kernels: KernelVariant;
  preset: string;
  train: { batch: number; seq: number; iters: number };
  decode: { batch: number; prompt: number; new: number; iters: number };
}

export interface BenchResult {
  threads: number;
  /** What tfjs-wasm reports it runs with (tf.wasm.getThreadsCount). */
  wasmThreads: number;
  backend: string;
  /** Whether the CPU engine served the model (else tfjs-wasm's own kernels), on how many threads, with which kernels. */
  engine: boolean;
  engineThreads: number;
  kernels: KernelVariant;
  kernelsWarning?: string;
  /** The worker's own crossOriginIsolated, and tfjs's verdict on wasm threads there. */
  workerCrossOriginIsolated: boolean;
  wasmMultithreadSupport: boolean;
  train_tokens_per_s: number;
  /**
   * The loss of the second step, after one update (so forward, backward and AdamW all count):
   * equal across thread counts when the threads change no number.
   */
  train_loss: number;
  /** Generation with the cache, prefill included: new tokens / seconds. */
  gen_cache_tokens_per_s: number;
  /** The prompt's prefill alone (generate with one new token), seconds. */
  prefill_s: number;
  /** Per decoded token after the prefill: (generate − prefill) / (new − 1), ms per step of the whole batch. */
  decode_ms_per_step: number;
  /** decode.batch / decode_ms_per_step, tokens/s of decode alone. */
  decode_tokens_per_s: number;
}

const scope = self as unknown as DedicatedWorkerGlobalScope;

async function measureMean(iters: number, fn: () => Promise<void>): Promise<number> {
  await fn(); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < iters; i++) await fn();
  return (performance.now() - t0) / 1000 / iters;
}

async function run(spec: BenchSpec): Promise<BenchResult> {
  const selection = await activateBackend('wasm', { wasmThreads: spec.threads });
  if (selection.backend !== 'wasm') throw new Error(`wasm unavailable: ${selection.reason}`);
  const kernels = await configureEngineKernels(spec.kernels ?? 'simd');
  const config = getQwen3Preset(spec.preset);
  const model = Qwen3Model.fromConfig(config, 0);
  const engine = isEngineActive(model.params, config);
  const V = config.vocab_size;
  const rng = createRng(`wasm-threads-bench/${spec.preset}`);
  const randomIds = (n: number) => Array.from({ length: n }, () => rng.int(V));

  const { batch: B, seq: T } = spec.train;
  const ids = tf.tensor2d(randomIds(B * T), [B, T], 'int32');
  const mask = tf.ones([B, T]) as typeof ids;
  const lossFn = () =>
    tf.tidy(() => {
      const out = model.computeTokenLogprobs(ids, mask); // [B, T−1]
      return out.logprobs.sum().neg().div(out.targetMask.sum()) as Scalar;
    });
  const optimizer = new AdamW(model.params);
  const losses: number[] = [];
  const trainSeconds = await measureMean(spec.train.iters, async () => {
    const r = await trainStep({ params: model.params, nMicro: 1, optimizer, maxGradNorm: 1, lr: 1e-4, lossFn });
    losses.push(r.loss);
  });
  optimizer.dispose();
  tf.dispose([ids, mask]);

  const d = spec.decode;
  const prompts = Array.from({ length: d.batch }, () => randomIds(d.prompt));
  const cacheLength = d.prompt + d.new;
  const genSeconds = await measureMean(d.iters, async () => {
    await model.generate(prompts, { maxNewTokens: d.new, temperature: 0, cacheLength });
  });
  const prefillSeconds = await measureMean(d.iters, async () => {
    await model.generate(prompts, { maxNewTokens: 1, temperature: 0, cacheLength });
  });
  model.dispose();
  const decodeMs = ((genSeconds - prefillSeconds) / Math.max(1, d.new - 1)) * 1000;
  return {
    threads: spec.threads,
    wasmThreads: selection.wasmThreads ?? 1,
    backend: selection.backend,
    engine,
    engineThreads: selection.engineThreads ?? 1,
    kernels: kernels.kernels,
    ...(kernels.warning ? { kernelsWarning: kernels.warning } : {}),
    workerCrossOriginIsolated: scope.crossOriginIsolated,
    wasmMultithreadSupport: Boolean(await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT')),
    train_tokens_per_s: (B * T) / trainSeconds,
    train_loss: losses[1] ?? losses[0],
    gen_cache_tokens_per_s: (d.batch * d.new) / genSeconds,
    prefill_s: prefillSeconds,
    decode_ms_per_step: decodeMs,
    decode_tokens_per_s: d.batch / (decodeMs / 1000),
  };
}

scope.onmessage = (ev: MessageEvent<BenchSpec>) => {
  run(ev.data).then(
    (r) => scope.postMessage(r),
    (e: unknown) => scope.postMessage({ error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
  );
};
