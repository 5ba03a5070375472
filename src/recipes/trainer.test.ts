/**
 * The trainer end to end on a tiny setup (testKit: 2-layer hidden-32 Qwen3, pruned vocab,
 * two generated tasks with teacher traces), on the wasm backend (the cpu backend is ~10×
 * slower for this model on the shared 2-core machine; wasm runs single-threaded here and
 * is deterministic, which the resume test checks):
 *   - the expert trace never enters a rollout context (every prompt given to generate is
 *     recorded and searched for trace text and trace token n-grams), while the same step
 *     does train on c^h and on L_SFT;
 *   - resume: 4 steps straight = 2 steps → exportState → fresh Trainer (another init) →
 *     importState → 2 steps, metrics and weights bit for bit;
 *   - no tensor leak over two steps;
 *   - every registered recipe runs a step with finite loss.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '../model/qwen3/tf';
import { selectBackend } from '../model/backend';
import { getNodeWasmPaths } from '../model/qwen3/node';
import { exportTensors } from '../model/qwen3/train/snapshot';
import { useCpuBackend } from '../model/qwen3/train/testBackend';
import { buildCheckpointFiles, readCheckpointState } from './checkpoint';
import { encodeTrace } from './privilegedContext';
import { resolveConfig, type TrainConfigInput } from './config';
import { listRecipes } from './registry';
import { createTinySetup, type TinySetup } from './testKit';
import { Trainer, createToolUsePrompts } from './trainer';
import type { PolicySampler, StepMetrics } from './types';
import { DEFAULT_SYSTEM_PROMPT, formatUserPrompt } from '../envs/rollout';
import './index';

let setup: TinySetup;

beforeAll(async () => {
  await useCpuBackend();
  await selectBackend('wasm', { wasmPaths: getNodeWasmPaths() });
  setup = await createTinySetup();
}, 60_000);
afterAll(async () => {
  await tf.setBackend('cpu');
});

const TINY: TrainConfigInput = {
  batchPrompts: 2,
  miniBatchPrompts: 1,
  rolloutsPerPrompt: 2,
  maxTurns: 2,
  maxPromptTokens: 1024,
  maxResponseTokens: 12,
  steps: 4,
  lr: 1e-2,
};

function createTrainer(input: TrainConfigInput, opts: { modelSeed?: number; wrapPolicy?: (p: PolicySampler) => PolicySampler } = {}): Trainer {
  return new Trainer({
    config: resolveConfig({ ...TINY, ...input }),
    model: setup.createModel(opts.modelSeed ?? 7),
    tokenizer: setup.tokenizer,
    renderChat: setup.renderChat,
    executor: setup.executor,
    trainPrompts: createToolUsePrompts(setup.trainTasks),
    testPrompts: createToolUsePrompts(setup.testTasks),
    wrapPolicy: opts.wrapPolicy,
  });
}

/** Metrics without the wall-clock ones. */
function stripTiming(m: StepMetrics): Record<string, unknown> {
  const { seconds: _s, 'tokens/s': _t, ...rest } = m;
  return rest;
}

function containsSubsequence(haystack: readonly number[], needle: readonly number[]): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

describe('Trainer', () => {
  it('never puts the expert trace into a rollout context, while training on c^h and L_SFT', async () => {
    const contexts: number[][] = [];
    const trainer = createTrainer(
      { recipe: 'pact', pact: { anchorProb: 0 } }, // every prompt trace-routed: h* is used in this very step
      {
        wrapPolicy: (p) => ({
          generate: (prompts, opts) => {
            contexts.push(...prompts.map((x) => x.slice()));
            return p.generate(prompts, opts);
          },
        }),
      },
    );
    const m = await trainer.step();
    trainer.model.dispose();
    trainer.dispose();
    expect(contexts.length).toBeGreaterThanOrEqual(4); // 2 prompts × K = 2, first turn at least
    expect(Number.isFinite(m['loss/Lh'])).toBe(true);
    expect(Number.isFinite(m['loss/SFT'])).toBe(true);
    expect(m.gate_fraction).toBe(0);

    // The first generate call holds the first turn of every episode: exactly the prompts x.
    const promptIds = setup.trainTasks.map((task) => setup.tokenizer.encode(setup.renderChat(
      [{ role: 'system', content: DEFAULT_SYSTEM_PROMPT }, { role: 'user', content: formatUserPrompt(task) }],
      { tools: task.tools, addGenerationPrompt: true },
    )));
    for (const context of contexts.slice(0, 4)) expect(promptIds.some((x) => x.length === context.length && x.every((id, n) => id === context[n]))).toBe(true);
    for (const task of setup.trainTasks) {
      const trace = task.expertTrace!;
      const chunkTexts = trace.turns.flatMap((t) => t.chunks.map((c) => c.text)).filter((text) => text.length >= 20);
      expect(chunkTexts.length).toBeGreaterThan(0);
      // Token 8-grams of the trace's reasoning and tool calls that the prompts x do not
      // contain (a restated question or a tool name legitimately recurs).
      const h = encodeTrace(trace, setup.tokenizer, { reasoning: true, toolCalls: true, toolResponses: false });
      const grams: number[][] = [];
      for (let n = 0; n + 8 <= h.ids.length; n++) {
        const gram = h.ids.slice(n, n + 8);
        const isTraceOnly = h.tags.slice(n, n + 8).every((t) => t.kind === 'reasoning' || t.kind === 'tool_call');
        if (isTraceOnly && !promptIds.some((x) => containsSubsequence(x, gram))) grams.push(gram);
      }
      expect(grams.length).toBeGreaterThan(20);
      for (const context of contexts) {
        const text = setup.tokenizer.decode(context);
        for (const chunk of chunkTexts) expect(text.includes(chunk), `trace text in a rollout context: ${chunk}`).toBe(false);
        for (const gram of grams) expect(containsSubsequence(context, gram), `trace tokens in a rollout context: ${setup.tokenizer.decode(gram)}`).toBe(false);
      }
    }
  }, 120_000);

  it('resumes bit for bit: 4 steps = 2 steps → export → new Trainer → import → 2 steps', async () => {
    const config: TrainConfigInput = { recipe: 'pact', batchPrompts: 1, maxTurns: 1, maxResponseTokens: 8, pact: { anchorProb: 0 } }; // SFT on every step: the weights move
    const straight = createTrainer(config);
    const straightMetrics: StepMetrics[] = [];
    for (let s = 0; s < 4; s++) straightMetrics.push(await straight.step());
    const straightWeights = await exportTensors(straight.model.params);

    const first = createTrainer(config);
    await first.step();
    await first.step();
    // Through the checkpoint files (safetensors + trainer_state.json), as `pact train` writes them.
    const files = buildCheckpointFiles(await first.exportState(), setup.modelConfig, setup.tokenizer.toMapping());
    const state = await readCheckpointState({
      listFiles: async () => Object.keys(files),
      readFile: async (name) => {
        const f = files[name];
        return typeof f === 'string' ? new TextEncoder().encode(f) : f;
      },
    });
    first.model.dispose();
    first.dispose();

    const resumed = createTrainer(config, { modelSeed: 99 }); // a different init: everything must come from the state
    resumed.importState(state);
    expect(resumed.completedSteps).toBe(2);
    const resumedMetrics = [await resumed.step(), await resumed.step()];
    const resumedWeights = await exportTensors(resumed.model.params);

    expect(resumedMetrics.map(stripTiming)).toEqual(straightMetrics.slice(2).map(stripTiming));
    expect(resumedWeights.map((w) => w.name)).toEqual(straightWeights.map((w) => w.name));
    resumedWeights.forEach((w, i) => expect(Buffer.from(w.data.buffer).equals(Buffer.from(straightWeights[i].data.buffer)), w.name).toBe(true));
    // The run did move: a weight differs from a fresh model of the same seed.
    const fresh = setup.createModel(7);
    const initial = await exportTensors(fresh.params);
    expect(initial.some((w, i) => !Buffer.from(w.data.buffer).equals(Buffer.from(straightWeights[i].data.buffer)))).toBe(true);
    for (const t of [straight, resumed]) {
      t.model.dispose();
      t.dispose();
    }
    fresh.dispose();
  }, 240_000);

  it('leaks no tensors over two steps', async () => {
    const trainer = createTrainer({ recipe: 'pact', pact: { anchorProb: 0.5 } });
    await trainer.step(); // the first step may build lasting constants once
    const before = tf.memory().numTensors;
    await trainer.step();
    expect(tf.memory().numTensors).toBe(before);
    trainer.model.dispose();
    trainer.dispose();
  }, 120_000);

  it('runs one step of every registered tool-use recipe with finite metrics', async () => {
    for (const name of listRecipes()) {
      const trainer = createTrainer({ recipe: name, batchPrompts: 1, sftSteps: 1 });
      if (trainer.recipe.env !== 'tool-use') {
        trainer.model.dispose();
        trainer.dispose();
        continue;
      }
      const m = await trainer.step();
      expect(Number.isFinite(m.loss), `${name}: loss ${m.loss}`).toBe(true);
      expect(Number.isFinite(m.grad_norm), `${name}: grad_norm ${m.grad_norm}`).toBe(true);
      trainer.model.dispose();
      trainer.dispose();
    }
  }, 240_000);

  it('evaluates held-out tasks greedily with Solve-R/P/F1 and answer correctness in [0, 1]', async () => {
    const trainer = createTrainer({ recipe: 'matchtir' });
    const e = await trainer.evaluate();
    expect(e.nTasks).toBe(1);
    for (const key of ['eval/solve_r', 'eval/solve_p', 'eval/solve_f1', 'eval/answer_correct']) {
      expect(e[key]).toBeGreaterThanOrEqual(0);
      expect(e[key]).toBeLessThanOrEqual(1);
    }
    // Greedy decoding is deterministic: a second evaluation gives the same numbers.
    expect(await trainer.evaluate()).toEqual(e);
    trainer.model.dispose();
    trainer.dispose();
  }, 120_000);
});
