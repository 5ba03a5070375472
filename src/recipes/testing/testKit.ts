/**
 * Test helper (tests only): a tiny tool-use training setup — two generated train tasks
 * and one test task with teacher traces, Qwen3's tokenizer pruned to the vocabulary of
 * their rendered expert episodes (a few hundred tokens), a 2-layer hidden-32 Qwen3 and
 * the in-process tool executor — so trainer tests run in seconds on the cpu backend.
 */
import * as tf from '../../model/qwen3/tf';
import { klK3 } from '../../core/losses';
import { POLICY_KINDS } from '../../core/types';
import { generateTasks } from '../../envs/generator';
import { RolloutEnv, type RenderChat } from '../../envs/rollout';
import { InProcessExecutor } from '../../envs/sandbox';
import type { Task } from '../../envs/types';
import { Qwen3Model, type Qwen3Config } from '../../model/qwen3';
import { createTrainerTestQwen3Config } from '../../model/weights/testFolders';
import { loadQwen3TokenizerFromPackage } from '../../model/tokenizer/nodeLoader';
import { PrunedTokenizer, selectKeptIds } from '../../model/tokenizer/prunedVocab';
import { attachTeacherTraces, bindRenderChat, buildPolicyCorpus } from '../policyVocab';
import { afterAll, beforeAll } from 'vitest';
import { selectBackend } from '../../model/backend';
import { getNodeWasmPaths } from '../../model/qwen3/node';
import { useCpuBackend } from '../../model/qwen3/train/testBackend';
import { resolveConfig, type TrainConfigInput } from '../config';
import { Trainer, createToolUsePrompts } from '../train/trainer';
import { isMachineMetric, type PolicySampler, type RolloutGroup, type StepMetrics, type StepProgress } from '../types';
import type { NamedArray } from '../../model/qwen3/train/types';

export interface TinySetup {
  tokenizer: PrunedTokenizer;
  renderChat: RenderChat;
  executor: InProcessExecutor;
  trainTasks: Task[];
  testTasks: Task[];
  modelConfig: Qwen3Config;
  createModel(seed?: number): Qwen3Model;
}

let cached: Promise<TinySetup> | undefined;

/** The shared tiny setup (built once per test file). */
export function createTinySetup(): Promise<TinySetup> {
  cached ??= (async () => {
    const source = await loadQwen3TokenizerFromPackage();
    const executor = new InProcessExecutor();
    const renderChat = bindRenderChat(source);
    const options = { hops: 2, distractors: 0, categories: ['single_hop', 'multi_hop'] as const };
    const trainTasks = await attachTeacherTraces(
      generateTasks({ ...options, seed: 1, split: 'train', n: 2 }),
      executor,
      1,
    );
    const testTasks = await attachTeacherTraces(
      generateTasks({ ...options, seed: 2, split: 'test', n: 1 }),
      executor,
      2,
    );
    const env = new RolloutEnv({ executor, renderChat });
    const corpus = await buildPolicyCorpus([...trainTasks, ...testTasks], env);
    const tokenizer = new PrunedTokenizer(source, selectKeptIds(source, corpus));
    const modelConfig: Qwen3Config = createTrainerTestQwen3Config({
      vocab_size: tokenizer.vocabSize,
      max_position_embeddings: 2048,
    });
    return {
      tokenizer,
      renderChat,
      executor,
      trainTasks,
      testTasks,
      modelConfig,
      createModel: (seed = 7) => Qwen3Model.fromConfig(modelConfig, seed),
    };
  })();
  return cached;
}

/** Log-probs [N − 1] of one token row under `model`: an independent reading, no padding. */
export function readRowLogprobs(model: Qwen3Model, ids: number[]): number[] {
  return tf.tidy(() => {
    const inputIds = tf.tensor2d([ids], [1, ids.length], 'int32');
    return (model.computeTokenLogprobs(inputIds, tf.onesLike(inputIds)).logprobs.arraySync() as number[][])[0];
  });
}

/**
 * The mean k3 KL(old ‖ ref) over every policy-written token of the groups' rollouts, each
 * rollout read as it was sampled (under x) by two plain models: the independent reading
 * kl_prompt_only is checked against. Returns the mean and the token count.
 */
export function meanPolicyTokenK3(
  groups: readonly RolloutGroup[],
  old: Qwen3Model,
  ref: Qwen3Model,
): { mean: number; count: number } {
  let sum = 0;
  let count = 0;
  for (const group of groups) {
    for (const rollout of group.rollouts) {
      const underOld = readRowLogprobs(old, rollout.ids);
      const underRef = readRowLogprobs(ref, rollout.ids);
      for (let n = rollout.promptLength; n < rollout.ids.length; n++) {
        if (!POLICY_KINDS.has(rollout.tags[n].kind)) continue;
        sum += klK3(underOld[n - 1], underRef[n - 1]);
        count++;
      }
    }
  }
  return { mean: sum / count, count };
}

/** A FolderReader over files held in memory (name → text or bytes). */
export function readerOfFiles(files: Record<string, string | Uint8Array>) {
  return {
    listFiles: async () => Object.keys(files),
    readFile: async (name: string) => {
      const f = files[name];
      if (f === undefined) throw new Error(`no file ${name}`);
      return typeof f === 'string' ? new TextEncoder().encode(f) : f;
    },
  };
}

/**
 * Registers the hooks of a trainer test file: wasm (single-threaded here, deterministic, ~10×
 * faster than cpu for the tiny model) before the file, the tiny setup built once, cpu again
 * after. Returns the getter of the setup (valid inside tests).
 */
export function useWasmTinySetup(): () => TinySetup {
  let setup: TinySetup | undefined;
  beforeAll(async () => {
    await useCpuBackend();
    await selectBackend('wasm', { wasmPaths: getNodeWasmPaths() });
    setup = await createTinySetup();
  }, 60_000);
  afterAll(async () => {
    await tf.setBackend('cpu');
  });
  return () => {
    if (!setup) throw new Error('useWasmTinySetup: the setup is built in beforeAll; read it inside a test');
    return setup;
  };
}

/** A Trainer over the tiny setup's tasks and a fresh model of `modelSeed` (default 7). */
export function createTinyTrainer(
  setup: TinySetup,
  input: TrainConfigInput,
  opts: {
    modelSeed?: number;
    wrapPolicy?: (p: PolicySampler) => PolicySampler;
    onProgress?: (p: StepProgress) => void;
  } = {},
): Trainer {
  return new Trainer({
    config: resolveConfig(input),
    model: setup.createModel(opts.modelSeed ?? 7),
    tokenizer: setup.tokenizer,
    renderChat: setup.renderChat,
    executor: setup.executor,
    trainPrompts: createToolUsePrompts(setup.trainTasks),
    testPrompts: createToolUsePrompts(setup.testTasks),
    wrapPolicy: opts.wrapPolicy,
    onProgress: opts.onProgress,
  });
}

/** Step metrics without the wall-clock and memory ones (what bit-for-bit comparisons compare). */
export function stripTiming(m: StepMetrics): Record<string, unknown> {
  return Object.fromEntries(Object.entries(m).filter(([k]) => !isMachineMetric(k)));
}

/** The trainer tests' tiny budgets: 2 prompts × K 2, 2 turns of 12 tokens, lr 1e-2. */
export const TINY_TRAINER_CONFIG: TrainConfigInput = {
  batchPrompts: 2,
  miniBatchPrompts: 1,
  rolloutsPerPrompt: 2,
  maxTurns: 2,
  maxPromptTokens: 1024,
  maxResponseTokens: 12,
  steps: 4,
  lr: 1e-2,
};

/** rank 2, α 4 (scale 2) on q and v: the tiny model's q_proj is [32, 32], v_proj [16, 32]. */
export const TINY_LORA_CONFIG: TrainConfigInput = {
  recipe: 'pact',
  batchPrompts: 1,
  miniBatchPrompts: 1,
  rolloutsPerPrompt: 2,
  maxTurns: 1,
  maxPromptTokens: 1024,
  maxResponseTokens: 8,
  steps: 4,
  lr: 1e-2,
  klCoef: 0.1,
  pact: { anchorProb: 0 }, // L^h + SFT every step: the adapters move whatever the rewards
  model: { lora: { rank: 2, alpha: 4, targets: ['q', 'v'] } },
};

/** Disposes each trainer (which takes its adapters off the model), then its model. */
export function releaseTrainers(...trainers: Trainer[]): void {
  for (const t of trainers) {
    const model = t.model;
    t.dispose();
    model.dispose();
  }
}

/** Whether two arrays hold the same float32 bits. */
export function hasSameBits(a: NamedArray, b: NamedArray): boolean {
  const bytes = (x: NamedArray) => Buffer.from(x.data.buffer, x.data.byteOffset, x.data.byteLength);
  return bytes(a).equals(bytes(b));
}
