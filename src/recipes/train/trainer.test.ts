/**
 * The trainer end to end on a tiny setup (testKit: 2-layer hidden-32 Qwen3, pruned vocab,
 * two generated tasks with teacher traces), on the wasm backend (the cpu backend is ~10×
 * slower for this model on the shared 2-core machine; wasm runs single-threaded here and
 * is deterministic):
 *   - the expert trace never enters a rollout context (every prompt given to generate is
 *     recorded and searched for trace text and trace token n-grams), while the same step
 *     does train on c^h and on L_SFT;
 *   - no tensor leak over two steps; micro-batches equal one chunk (docs/testing.md);
 *   - (resume bit for bit: src/run/resume.test.ts);
 *   - one update moves log-probs the way the advantages (and the SFT mask) say, on both ratio routes;
 *   - every registered recipe runs a step with finite loss.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '../../model/qwen3/tf';
import type { AggregationMode } from '../../core/losses';
import { AdamW, accumulateGradients, trainStep } from '../../model/qwen3/train/index';
import { assignNamedArrays, exportTensors } from '../../model/qwen3/train/snapshot';
import { buildPrivilegedContext, buildTraceConditionedRow, encodeTrace } from './privilegedContext';
import { resolveConfig, type TrainConfigInput } from '../config';
import { listRecipes } from '../registry';
import {
  createTinyTrainer,
  meanPolicyTokenK3,
  readRowLogprobs,
  stripTiming,
  useWasmTinySetup,
  type TinySetup,
  TINY_TRAINER_CONFIG,
} from '../testing/testKit';
import {
  Trainer,
  buildMicroBatchLoss,
  computePromptOnlyKl,
  computeTraceLogprobGap,
  createToolUsePrompts,
  splitMicroBatches,
  type PromptPlan,
} from './trainer';
import type { StepProgress } from '../types';
import { DEFAULT_SYSTEM_PROMPT, formatUserPrompt } from '../../envs/rollout';
import { POLICY_KINDS } from '../../core/types';
import '../index';

const tinySetup = useWasmTinySetup();
let setup: TinySetup;
beforeAll(() => {
  setup = tinySetup();
});

const TINY = TINY_TRAINER_CONFIG;

function createTrainer(input: TrainConfigInput, opts: Parameters<typeof createTinyTrainer>[2] = {}): Trainer {
  return createTinyTrainer(setup, { ...TINY, ...input }, opts);
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
    const promptIds = setup.trainTasks.map((task) =>
      setup.tokenizer.encode(
        setup.renderChat(
          [
            { role: 'system', content: DEFAULT_SYSTEM_PROMPT },
            { role: 'user', content: formatUserPrompt(task) },
          ],
          { tools: task.tools, addGenerationPrompt: true },
        ),
      ),
    );
    for (const context of contexts.slice(0, 4))
      expect(promptIds.some((x) => x.length === context.length && x.every((id, n) => id === context[n]))).toBe(true);
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
        for (const chunk of chunkTexts)
          expect(text.includes(chunk), `trace text in a rollout context: ${chunk}`).toBe(false);
        for (const gram of grams)
          expect(
            containsSubsequence(context, gram),
            `trace tokens in a rollout context: ${setup.tokenizer.decode(gram)}`,
          ).toBe(false);
      }
    }
  }, 120_000);

  it('reports progress inside a step: each rollout turn with the tokens so far, each log-prob read, each mini-batch', async () => {
    const seen: StepProgress[] = [];
    const calls: { contexts: number; tokens: number }[] = [];
    const trainer = createTrainer(
      { recipe: 'pact', pact: { anchorProb: 0 } },
      {
        onProgress: (p) => seen.push({ ...p }),
        wrapPolicy: (p) => ({
          generate: async (prompts, opts) => {
            const rows = await p.generate(prompts, opts);
            calls.push({ contexts: prompts.length, tokens: rows.reduce((n, r) => n + r.tokens.length, 0) });
            return rows;
          },
        }),
      },
    );
    await trainer.step();
    trainer.model.dispose();
    trainer.dispose();
    const rollouts = seen.filter((p) => p.phase === 'rollouts');
    // Start, one report per generate call (a turn of the episodes still running), end.
    expect(rollouts.length).toBe(calls.length + 2);
    expect(rollouts[0]).toEqual({ phase: 'rollouts', done: 0, total: 4, turn: 0, tokens: 0 });
    let tokens = 0;
    calls.forEach((c, t) => {
      expect(rollouts[t + 1]).toEqual({ phase: 'rollouts', done: 4 - c.contexts, total: 4, turn: t + 1, tokens });
      tokens += c.tokens;
    });
    expect(rollouts.at(-1)).toEqual({ phase: 'rollouts', done: 4, total: 4, turn: calls.length, tokens });
    // q = 0: both prompts read π_old(c^h) (one report each), then one mini-batch per prompt.
    expect(seen.filter((p) => p.phase === 'logprobs')).toEqual(
      [0, 1].map((done) => ({ phase: 'logprobs', done, total: 2 })),
    );
    expect(seen.filter((p) => p.phase === 'update')).toEqual(
      [0, 1].map((done) => ({ phase: 'update', done, total: 2 })),
    );
    expect(seen.map((p) => p.phase)).toEqual([
      ...rollouts.map(() => 'rollouts'),
      'logprobs',
      'logprobs',
      'update',
      'update',
    ]);
  }, 120_000);

  it('reports trace_logprob_gap: log π_old(τ | c^h) − log π_old(τ | x) over L^h tokens, recomputed here from the rollouts', async () => {
    const trainer = createTrainer({ recipe: 'pact', pact: { anchorProb: 0 } }); // both prompts on L^h
    const m = await trainer.step();
    // An independent reading with the pre-update weights (a fresh model of the same seed):
    // each rollout under x as it was sampled, and re-read after c^h = [x; h*; header].
    const before = setup.createModel(7);
    const readRow = (ids: number[]) => readRowLogprobs(before, ids);
    let sum = 0;
    let count = 0;
    for (const group of trainer.lastGroups) {
      const trace = group.prompt.kind === 'tool-use' ? group.prompt.trace! : undefined;
      for (const rollout of group.rollouts) {
        const prompt = {
          ids: rollout.ids.slice(0, rollout.promptLength),
          tags: rollout.tags.slice(0, rollout.promptLength),
        };
        const row = buildTraceConditionedRow(rollout, buildPrivilegedContext(prompt, trace!, setup.tokenizer));
        const underX = readRow(rollout.ids);
        const underH = readRow(row.ids);
        for (let n = rollout.promptLength; n < rollout.ids.length; n++) {
          if (!POLICY_KINDS.has(rollout.tags[n].kind)) continue;
          sum += underH[n - rollout.promptLength + row.responseStart - 1] - underX[n - 1];
          count++;
        }
      }
    }
    before.dispose();
    trainer.model.dispose();
    trainer.dispose();
    expect(count).toBeGreaterThan(0);
    expect(m.trace_logprob_gap).toBeCloseTo(sum / count, 4);
    // Anchored prompts only (q = 1): no L^h row, no gap.
    const anchored = createTrainer({ recipe: 'pact', pact: { anchorProb: 1 } });
    expect((await anchored.step()).trace_logprob_gap).toBeNaN();
    anchored.model.dispose();
    anchored.dispose();
  }, 120_000);

  it('reports kl_prompt_only: k3 KL(π_old ‖ π_ref) read under x on every route, recomputed here from the rollouts', async () => {
    // Step 1: π_old = π_ref, so ≈ 0. Step 2: an independent reading of step 2's rollouts
    // under x with the weights after step 1 (π_old) and a fresh model of the same seed (π_ref).
    // L^h rows: PACT at q = 0. L^x rows: CHORD (prompt-only ratios; its SFT term moves the
    // weights in step 1 even when every reward of the tiny setup ties).
    for (const [recipe, anchorProb] of [
      ['pact', 0],
      ['chord', 1],
    ] as const) {
      const trainer = createTrainer({ recipe, pact: { anchorProb }, klCoef: 0.1 });
      const first = await trainer.step();
      expect(first.kl_prompt_only, `${recipe}, step 1`).toBeCloseTo(0, 6);
      const afterStep1 = await exportTensors(trainer.model.params);
      const m = await trainer.step();
      const old = setup.createModel(11);
      assignNamedArrays(old.params, afterStep1);
      const ref = setup.createModel(7);
      const { mean, count } = meanPolicyTokenK3(trainer.lastGroups, old, ref);
      expect(count).toBeGreaterThan(0);
      expect(mean, `${recipe}: the weights moved`).toBeGreaterThan(1e-4);
      expect(m.kl_prompt_only, `${recipe}, step 2`).toBeCloseTo(mean, 4);
      for (const model of [old, ref, trainer.model]) model.dispose();
      trainer.dispose();
    }
    const noKl = createTrainer({ recipe: 'pact', pact: { anchorProb: 0 }, klCoef: 0 });
    expect((await noKl.step()).kl_prompt_only).toBeNaN();
    noKl.model.dispose();
    noKl.dispose();
  }, 180_000);

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

describe('checkContextWindow', () => {
  it('refuses a prompt + response budget over the model window (2048 here), naming both fields; exactly the window is allowed', () => {
    const model = setup.createModel();
    try {
      const build = (maxPromptTokens: number, maxResponseTokens: number) =>
        new Trainer({
          config: resolveConfig({ ...TINY, maxPromptTokens, maxResponseTokens }),
          model,
          tokenizer: setup.tokenizer,
          renderChat: setup.renderChat,
          executor: setup.executor,
          trainPrompts: createToolUsePrompts(setup.trainTasks),
          testPrompts: [],
        });
      expect(() => build(1024, 1025)).toThrow(
        "config.maxPromptTokens + config.maxResponseTokens = 1024 + 1025 = 2049 is over the model's window of 2048 tokens (max_position_embeddings); lower one of them",
      );
      expect(() => build(2000, 49)).toThrow('= 2049 is over');
      build(1024, 1024).dispose();
    } finally {
      model.dispose();
    }
  });
});

describe('computeTraceLogprobGap', () => {
  it('averages old(c^h) − prompt-only log-probs over the masked tokens of L^h rows only, by hand', () => {
    const h: PromptPlan = {
      route: { rl: 'h', rlWeight: 1, sftWeight: 0, sftMask: 'component', gate: 0 },
      rl: {
        level: 'token',
        ids: [[], []],
        mask: [
          [0, 1, 1],
          [1, 0],
        ],
        advantages: [
          [0, 0, 0],
          [0, 0],
        ],
        oldLogprobs: [
          [-9, -1, -2],
          [-0.5, -9],
        ],
        promptOnlyLogprobs: [
          [0, -0.5, -0.5],
          [-1.5, 0],
        ],
      },
    };
    const x: PromptPlan = {
      route: { rl: 'x', rlWeight: 1, sftWeight: 0, sftMask: 'component', gate: 1 },
      rl: { level: 'token', ids: [[]], mask: [[1]], advantages: [[0]], oldLogprobs: [[-7]] },
    };
    // masked pairs: (−1 + 0.5) + (−2 + 0.5) + (−0.5 + 1.5) = −0.5 + −1.5 + 1 = −1, over 3 tokens
    expect(computeTraceLogprobGap([h, x])).toBeCloseTo(-1 / 3, 12);
    expect(computeTraceLogprobGap([x])).toBeNaN();
  });
});

describe('computePromptOnlyKl', () => {
  it('averages k3(π_old, π_ref) under x over masked tokens, from the prompt-only columns of L^h rows, by hand', () => {
    const h: PromptPlan = {
      route: { rl: 'h', rlWeight: 1, sftWeight: 0, sftMask: 'component', gate: 0 },
      rl: {
        level: 'token',
        ids: [[], []],
        mask: [[0, 1], [1]],
        advantages: [[0, 0], [0]],
        oldLogprobs: [[-9, -9], [-9]], // under c^h: not read
        refLogprobs: [[-3, -3], [-3]], // under c^h: not read
        promptOnlyLogprobs: [[0, -1], [-2]],
        promptOnlyRefLogprobs: [[5, -1], [-1]],
      },
    };
    const x: PromptPlan = {
      route: { rl: 'x', rlWeight: 1, sftWeight: 0, sftMask: 'component', gate: 1 },
      rl: {
        level: 'token',
        ids: [[]],
        mask: [[1, 1]],
        advantages: [[0, 0]],
        oldLogprobs: [[-1, -0.5]],
        refLogprobs: [[-2, -0.5]],
      },
    };
    // k3(p, q) = e^(q−p) − (q−p) − 1: (−1, −1) → 0; (−2, −1) → e − 2; (−1, −2) → e^−1; (−0.5, −0.5) → 0
    expect(computePromptOnlyKl([h, x])).toBeCloseTo((Math.E - 2 + Math.exp(-1)) / 4, 12);
    expect(computePromptOnlyKl([h])).toBeCloseTo((Math.E - 2) / 2, 12);
    const noRef: PromptPlan = { ...x, rl: { ...x.rl!, refLogprobs: undefined } };
    expect(computePromptOnlyKl([noRef])).toBeNaN();
  });
});

describe('gradient micro-batches (microBatchRows)', () => {
  const K = 4;
  const LENGTHS = [9, 14, 11, 7];
  const PROMPT_TOKENS = 4;

  /** A trace-routed prompt with RL + KL + SFT on hand-made rows; π_old and π_ref = the model's log-probs ± a fixed wiggle. */
  async function buildPlan(
    model: ReturnType<TinySetup['createModel']>,
    level: 'token' | 'sequence',
  ): Promise<PromptPlan> {
    const V = setup.modelConfig.vocab_size;
    const ids = LENGTHS.map((n, k) => Array.from({ length: n }, (_, j) => (7 * j + 13 * k + 3) % V));
    const mask = ids.map((row, k) =>
      row.slice(1).map((_, c) => (k === 3 || c + 1 < PROMPT_TOKENS ? 0 : c % 5 === 4 ? 0.5 : 1)),
    ); // row 3: a dead row
    const advantages = ids.map((row, k) => row.slice(1).map((_, c) => ((k + c) % 3) - 0.8));
    const T = Math.max(...LENGTHS);
    const out = tf.tidy(() => {
      const inputIds = tf.tensor2d(
        ids.map((r) => [...r, ...new Array<number>(T - r.length).fill(0)]),
        [K, T],
        'int32',
      );
      const attentionMask = tf.tensor2d(
        ids.map((r) => Array.from({ length: T }, (_, n) => (n < r.length ? 1 : 0))),
        [K, T],
        'int32',
      );
      return model.computeTokenLogprobs(inputIds, attentionMask).logprobs; // [K, T−1]
    });
    const data = Array.from(await out.data());
    out.dispose();
    const wiggle = (sign: number) =>
      ids.map((r, k) => r.slice(1).map((_, c) => data[k * (T - 1) + c] + sign * 0.15 * Math.sin(k + 2 * c)));
    const sftIds = Array.from({ length: 12 }, (_, j) => (5 * j + 1) % V);
    return {
      route: { rl: 'h', rlWeight: 1, sftWeight: 0.5, sftMask: 'component' },
      rl: { level, ids, mask, advantages, oldLogprobs: wiggle(1), refLogprobs: wiggle(-1) },
      sft: { ids: sftIds, mask: sftIds.slice(1).map((_, c) => (c < 3 ? 0 : c % 2 === 0 ? 1 : 0.4)) },
    };
  }

  /** Σ over the micro-batches of the prompt's loss, its gradients and its stats. */
  async function computeSplit(
    model: ReturnType<TinySetup['createModel']>,
    plan: PromptPlan,
    rows: number,
    lossAgg: AggregationMode,
  ) {
    const micro = splitMicroBatches([plan], [0], rows);
    const stats = [0, 0, 0, 0, 0, 0];
    const { grads, loss } = accumulateGradients(
      model.params,
      (j) => {
        const t = buildMicroBatchLoss(model, plan, micro[j], { clipEps: 0.2, lossAgg, klCoef: 0.1 });
        const values = [t.rlLoss, t.sftLoss, t.klSum, t.entropySum, t.clipSum, t.tokenCount].map(
          (x) => x.dataSync()[0],
        );
        values.forEach((v, i) => (stats[i] += v));
        return t.total;
      },
      micro.length,
      'sum',
    );
    const named = new Map<string, Float32Array>();
    for (const [name, g] of grads) {
      named.set(name, (await g.data()) as Float32Array);
      g.dispose();
    }
    const value = (await loss.data())[0];
    loss.dispose();
    return { nMicro: micro.length, loss: value, stats, grads: named };
  }

  const CASES: [AggregationMode, 'token' | 'sequence'][] = [
    ['token-mean', 'token'],
    ['seq-mean-token-mean', 'token'],
    ['seq-mean-token-sum', 'token'],
    ['seq-mean-token-sum-norm', 'token'],
    ['token-mean', 'sequence'], // GSPO
  ];
  for (const [mode, level] of CASES) {
    it(`rows of 1 and 2 give the loss, gradients and stats of one K-row chunk (${mode}, ${level} ratio)`, async () => {
      const model = setup.createModel(7);
      const plan = await buildPlan(model, level);
      const whole = await computeSplit(model, plan, K, mode);
      expect(whole.nMicro).toBe(2); // K rows + the SFT row
      // Non-trivial totals: three live rows of 5, 10 and 7 masked columns (a few at 0.5), KL > 0.
      expect(whole.stats[5]).toBeGreaterThan(10);
      expect(whole.stats[2]).toBeGreaterThan(0);
      for (const rows of [1, 2]) {
        const split = await computeSplit(model, plan, rows, mode);
        expect(split.nMicro).toBe(Math.ceil(K / rows) + 1);
        expect(split.loss).toBeCloseTo(whole.loss, 5);
        split.stats.forEach((v, i) => expect(v, `stat ${i}`).toBeCloseTo(whole.stats[i], 4));
        expect([...split.grads.keys()]).toEqual([...whole.grads.keys()]);
        for (const [name, g] of whole.grads) {
          const h = split.grads.get(name)!;
          const scale = Math.max(1e-6, ...g.map(Math.abs));
          let diff = 0;
          g.forEach((x, i) => (diff = Math.max(diff, Math.abs(x - h[i]))));
          expect(diff / scale, `${name} (rows ${rows})`).toBeLessThan(1e-4);
        }
      }
      model.dispose();
    }, 60_000);
  }

  it('one update raises the log-probs of positively advantaged tokens and lowers the negatively advantaged ones (and SFT raises the trace)', async () => {
    // At π_θ = π_old (ratio 1, unclipped) the token-mean surrogate is −(1/N)·Σ A·r, so a small
    // descent step must move Σ logp of row 0 (A = +1) up and of row 1 (A = −1) down; the SFT
    // term −(1/Z)·Σ m·logp must move the masked trace tokens up. Checked through the real path:
    // buildMicroBatchLoss → trainStep (clipping, AdamW) → the model's log-probs again.
    const V = setup.modelConfig.vocab_size;
    const ids = [0, 1].map((k) => Array.from({ length: 12 }, (_, j) => (5 * j + 11 * k + 2) % V));
    const respMask = ids.map((r) => r.slice(1).map((_, c) => (c + 1 >= PROMPT_TOKENS ? 1 : 0)));
    const readLogp = (model: ReturnType<TinySetup['createModel']>, rows: number[][]) =>
      tf.tidy(() => {
        const T = rows[0].length;
        const inputIds = tf.tensor2d(rows, [rows.length, T], 'int32');
        return model.computeTokenLogprobs(inputIds, tf.onesLike(inputIds)).logprobs.arraySync() as number[][];
      });
    const maskedSum = (logp: number[][], mask: number[][], k: number) =>
      logp[k].reduce((a, v, c) => a + v * mask[k][c], 0);
    /** One AdamW step (lr 1e-3, no decay) on the plan's loss; returns the optimizer to dispose. */
    const oneStep = async (model: ReturnType<TinySetup['createModel']>, plan: PromptPlan) => {
      const optimizer = new AdamW(model.params, { weightDecay: 0 });
      await trainStep({
        params: model.params,
        lossFn: () =>
          buildMicroBatchLoss(model, plan, splitMicroBatches([plan], [0], K)[0], {
            clipEps: 0.2,
            lossAgg: 'token-mean',
            klCoef: 0,
          }).total,
        nMicro: 1,
        optimizer,
        maxGradNorm: 1,
        lr: 1e-3,
      });
      return optimizer;
    };
    for (const route of ['x', 'h'] as const) {
      const model = setup.createModel(7);
      const before = readLogp(model, ids);
      const plan: PromptPlan = {
        route: { rl: route, rlWeight: 1, sftWeight: 0, sftMask: 'component' },
        rl: {
          level: 'token',
          ids,
          mask: respMask,
          advantages: respMask.map((r, k) => r.map((m) => m * (k === 0 ? 1 : -1))),
          oldLogprobs: before,
        },
      };
      const optimizer = await oneStep(model, plan);
      const after = readLogp(model, ids);
      expect(maskedSum(after, respMask, 0), `route ${route}: row A = +1`).toBeGreaterThan(
        maskedSum(before, respMask, 0),
      );
      expect(maskedSum(after, respMask, 1), `route ${route}: row A = −1`).toBeLessThan(maskedSum(before, respMask, 1));
      optimizer.dispose();
      model.dispose();
    }
    const model = setup.createModel(7);
    const sftMask = [respMask[0]];
    const before = readLogp(model, [ids[0]]);
    const plan: PromptPlan = {
      route: { rl: null, rlWeight: 0, sftWeight: 1, sftMask: 'component' },
      sft: { ids: ids[0], mask: sftMask[0] },
    };
    const optimizer = await oneStep(model, plan);
    expect(maskedSum(readLogp(model, [ids[0]]), sftMask, 0)).toBeGreaterThan(maskedSum(before, sftMask, 0));
    optimizer.dispose();
    model.dispose();
  }, 60_000);

  it('two whole steps report the same metrics with microBatchRows = 1 as with = K', async () => {
    // Step 2 has π_ref ≠ π_θ, so its KL term (token-mean over the prompt's K rows) is > 0.
    const run = async (microBatchRows: number) => {
      const trainer = createTrainer({
        recipe: 'pact',
        batchPrompts: 1,
        maxTurns: 1,
        pact: { anchorProb: 0 },
        klCoef: 0.1,
        microBatchRows,
      });
      const m = [await trainer.step(), await trainer.step()];
      trainer.model.dispose();
      trainer.dispose();
      return m.map(stripTiming);
    };
    const whole = await run(2);
    const split = await run(1);
    expect(whole[1].kl).toBeGreaterThan(0);
    whole.forEach((w, s) => {
      expect(Object.keys(split[s])).toEqual(Object.keys(w));
      for (const [key, v] of Object.entries(w)) {
        if (typeof v === 'number' && !Number.isNaN(v)) expect(split[s][key], `step ${s + 1} ${key}`).toBeCloseTo(v, 5);
        else expect(split[s][key], `step ${s + 1} ${key}`).toEqual(v);
      }
    });
  }, 120_000);
});
