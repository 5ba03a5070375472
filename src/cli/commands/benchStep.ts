/**
 * `pact bench --step FILE`: one whole training step of an experiment file's run, at its own
 * shape and seed, as `pact train` runs it (evaluation and checkpoints off), split by phase:
 *   rollouts: prefill (prompts and observations into the KV cache), decode, tool calls;
 *   π_old/π_ref reads (the trainer's plan phase); the PPO update;
 * with end-to-end tokens/s and peak memory (the engine's heap, tfjs tensor bytes, process RSS).
 * With the engine off (`--graph`) the same step runs on the tfjs graph: the code path before
 * the CPU engine, measured in the same run.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { KernelVariant } from '../../model/engine/kernelChoice';

export interface StepBenchResult {
  file: string;
  run: string;
  path: 'engine' | 'graph';
  backend: string;
  step: number;
  seconds: number;
  cpu_seconds: number;
  phases: { rollouts_s: number; logprobs_s: number; update_s: number };
  /** Inside the rollouts (engine path only for prefill/decode). */
  rollouts: {
    prefill_s?: number;
    prefill_tokens?: number;
    decode_s?: number;
    decode_tokens?: number;
    tool_s: number;
    tool_calls: number;
  };
  /** Generated tokens, and every rollout token (prompt + response), of the step. */
  tokens: { generated: number; rollout: number };
  generated_tokens_per_s: number;
  rollout_tokens_per_s: number;
  memory: { engine_peak_bytes?: number; engine_heap_bytes?: number; tfjs_peak_bytes: number; rss_peak_bytes: number };
  metrics: { reward: number; loss: number; kl: number };
}

export interface StepBenchOptions {
  run?: string;
  steps?: number;
  useEngine: boolean;
  /** The engine's kernels, over the file's engineKernels (pact bench: its own, --fma or not). */
  engineKernels?: KernelVariant;
  publicDir?: string;
  log?: (line: string) => void;
}

/** Runs `steps` steps (default 1) of one run of `file` and measures each. */
export async function runStepBench(file: string, options: StepBenchOptions): Promise<StepBenchResult[]> {
  const tf = await import('../../model/qwen3/tf');
  const { setEngineEnabled, getEngineEnabled } = await import('../../model/qwen3/engineBridge');
  const { getQwen3Engine, createEngineStats } = await import('../../model/engine/qwen3Engine');
  const { getEngineRuntime } = await import('../../model/engine/runtime');
  await import('../../recipes/index');
  const { expandExperiment } = await import('../../run/experimentFile');
  const { listRecipes } = await import('../../recipes/registry');
  const { prepareRunAssets, createRunTrainer } = await import('../../run/nodeRun');
  const json = JSON.parse(await readFile(file, 'utf8'));
  const steps = options.steps ?? 1;
  const exp = expandExperiment(json, {
    defaultName: path.basename(file, '.json'),
    recipeNames: listRecipes(),
    overrides: {
      evalAtStart: false,
      evalEvery: 0,
      checkpointEvery: 0,
      ...(options.engineKernels ? { engineKernels: options.engineKernels } : {}),
    },
  });
  const wanted = options.run ?? (exp.runs.some((r) => r.name === 'pact') ? 'pact' : exp.runs[0].name);
  const run = exp.runs.find((r) => r.name === wanted || r.id === wanted);
  if (!run)
    throw new Error(
      `bench --step: ${file} has no run "${wanted}"; runs: ${[...new Set(exp.runs.map((r) => r.name))].join(', ')}`,
    );
  const config = { ...run.config, steps: Math.max(run.config.steps, steps) };
  const was = getEngineEnabled();
  setEngineEnabled(options.useEngine);
  try {
    const assets = await prepareRunAssets(config, { publicDir: options.publicDir, log: () => {} });
    const tool = { ms: 0, calls: 0 };
    const executor = assets.executor;
    const timed = Object.create(executor) as typeof executor;
    timed.execute = async (...args: Parameters<typeof executor.execute>) => {
      const t0 = performance.now();
      try {
        return await executor.execute(...args);
      } finally {
        tool.ms += performance.now() - t0;
        tool.calls++;
      }
    };
    const trainer = createRunTrainer(config, { ...assets, executor: timed });
    const model = assets.policy.model;
    const engine = options.useEngine ? getQwen3Engine(model.config) : undefined;
    const rt = options.useEngine ? getEngineRuntime() : undefined;
    const results: StepBenchResult[] = [];
    for (let s = 0; s < steps; s++) {
      tool.ms = 0;
      tool.calls = 0;
      if (engine) engine.stats = createEngineStats();
      rt?.resetPeak();
      let tfPeak = tf.memory().numBytes;
      const sampler = setInterval(() => (tfPeak = Math.max(tfPeak, tf.memory().numBytes)), 5);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const m = await trainer.step();
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      clearInterval(sampler);
      tfPeak = Math.max(tfPeak, tf.memory().numBytes);
      const rollouts = trainer.lastGroups.flatMap((g) => g.rollouts);
      const generated = rollouts.reduce((a, r) => a + r.generatedLength, 0);
      const rolloutTokens = rollouts.reduce((a, r) => a + r.ids.length, 0);
      const st = engine?.stats;
      results.push({
        file,
        run: run.id,
        path: options.useEngine ? 'engine' : 'graph',
        backend: tf.getBackend(),
        step: m.step,
        seconds,
        cpu_seconds: (cpu.user + cpu.system) / 1e6,
        phases: {
          rollouts_s: Number(m['time/rollouts_s']),
          logprobs_s: Number(m['time/logprobs_s']),
          update_s: Number(m['time/update_s']),
        },
        rollouts: {
          prefill_s: st ? st.prefillMs / 1000 : undefined,
          prefill_tokens: st?.prefillTokens,
          decode_s: st ? st.decodeMs / 1000 : undefined,
          decode_tokens: st?.decodeTokens,
          tool_s: tool.ms / 1000,
          tool_calls: tool.calls,
        },
        tokens: { generated, rollout: rolloutTokens },
        generated_tokens_per_s: generated / seconds,
        rollout_tokens_per_s: rolloutTokens / seconds,
        memory: {
          engine_peak_bytes: rt?.peakAllocatedBytes,
          engine_heap_bytes: rt?.memoryBytes,
          tfjs_peak_bytes: tfPeak,
          rss_peak_bytes: process.resourceUsage().maxRSS * 1024,
        },
        metrics: { reward: m.reward, loss: m.loss, kl: m.kl },
      });
      options.log?.(
        `  ${path.basename(file)} ${run.id} step ${m.step} (${options.useEngine ? 'engine' : 'tfjs graph'}): ${seconds.toFixed(1)} s`,
      );
    }
    trainer.dispose();
    model.dispose();
    return results;
  } finally {
    setEngineEnabled(was);
  }
}
