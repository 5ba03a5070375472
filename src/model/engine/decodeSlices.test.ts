// A decode step on several threads runs each slice of slots' whole forward as one task
// (decode.ts forwardSlices): the same logits and KV caches, bit for bit, as one thread, on 1, 2
// and 3 threads, with slots of different lengths, odd batches, GQA and one item (no split); a
// step is one dispatch; a qwen3-nano step's tasks fit the threads' task table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '../qwen3/tf';
import { selectBackend } from '../backend';
import { Qwen3Model, type Qwen3Config } from '../qwen3';
import { getQwen3Preset } from '../qwen3/config';
import { toEngineParams } from '../qwen3/engineBridge';
import { createLora, disposeLora } from '../qwen3/train';
import { decodeSlices } from './decode';
import { KT_TILE, type KvSlot } from './kvCache';
import { Qwen3Engine } from './qwen3Engine';
import { EngineRuntime } from './runtime';
import { TASK_KERNELS, TASK_TABLE_SLOTS, taskSlots, type KernelCall, type TaskKernel } from './threads';
import type { EngineParams } from './weights';
import { SMALL_GQA_CONFIG } from './smallConfig';

const CONFIG = SMALL_GQA_CONFIG;

const ids = (n: number, seed: number, V = CONFIG.vocab_size) =>
  Array.from({ length: n }, (_, i) => (i * 37 + seed * 101 + ((i * i) % 13)) % V);

/**
 * An engine on `threads` threads whose dispatches (rt.parallel and rt.parallelBeside calls) are
 * counted, their posted tasks kept, and the calls that ran on the calling thread beside them counted.
 */
async function engineOn(config: Qwen3Config, threads: number) {
  const rt = new EngineRuntime(16 << 20, threads > 1);
  if (threads > 1) await rt.startThreads(threads);
  expect(rt.threads).toBe(threads);
  const dispatches: (readonly (readonly KernelCall[])[])[] = [];
  const beside: number[] = [];
  const parallel = rt.parallel.bind(rt);
  rt.parallel = (tasks) => {
    dispatches.push(tasks);
    parallel(tasks);
  };
  const parallelBeside = rt.parallelBeside.bind(rt);
  rt.parallelBeside = (tasks, local) => {
    dispatches.push(tasks);
    // Count the kernel calls the calling thread runs meanwhile (its slice reads rt.k).
    const saved = rt.k;
    const exports = saved as unknown as Record<string, (...args: number[]) => number>;
    let calls = 0;
    const counted: Record<string, unknown> = {};
    for (const name of Object.keys(exports))
      counted[name] = (...args: number[]) => {
        if (TASK_KERNELS.includes(name as TaskKernel)) calls++;
        return exports[name](...args);
      };
    rt.k = counted as unknown as typeof saved;
    try {
      parallelBeside(tasks, local);
    } finally {
      rt.k = saved;
      beside.push(calls);
    }
  };
  return { rt, engine: new Qwen3Engine(config, rt), dispatches, beside };
}

/** The cached keys (the first `length` positions of each head's kᵀ tiles) and values of a slot, every layer. */
function readSlot(rt: EngineRuntime, config: Qwen3Config, slot: KvSlot): number[][] {
  const D = config.head_dim;
  const KD = config.num_key_value_heads * D;
  const n = slot.tokens.length;
  const out: number[][] = [];
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const kt: number[] = [];
    const all = rt.read(slot.kt[i], KD * slot.cap);
    for (let g = 0; g < config.num_key_value_heads; g++)
      for (let d = 0; d < D; d++)
        for (let j = 0; j < n; j++)
          kt.push(all[g * D * slot.cap + Math.floor(j / KT_TILE) * KT_TILE * D + d * KT_TILE + (j % KT_TILE)]);
    out.push(kt, Array.from(rt.read(slot.v[i], n * KD)));
  }
  return out;
}

type Step = { slots: number[]; tokens: number[][] };

/** A script of extend calls over 5 slots: a prefill, decode steps of 5, 3 and 1 slots, a mixed call, more decode. */
function script(): Step[] {
  const steps: Step[] = [];
  const lengths = [7, 62, 1, 65, 12];
  steps.push({ slots: [0, 1, 2, 3, 4], tokens: lengths.map((n, j) => ids(n, j + 1)) });
  const decode = (slots: number[], s: number) =>
    steps.push({ slots, tokens: slots.map((j) => [(j * 53 + s * 29) % CONFIG.vocab_size]) });
  for (let s = 0; s < 4; s++) decode([0, 1, 2, 3, 4], s); // slot 1 grows past 64 positions
  for (let s = 4; s < 7; s++) decode([4, 1, 2], s);
  decode([3], 7);
  steps.push({ slots: [2, 0, 3], tokens: [ids(9, 11), [5], ids(3, 12)] });
  for (let s = 8; s < 11; s++) decode([0, 1, 2, 3, 4], s);
  decode([1, 3], 11);
  return steps;
}

function runScript(engine: Qwen3Engine, rt: EngineRuntime, P: EngineParams, dispatches: unknown[]) {
  const slots = Array.from({ length: 5 }, () => engine.createSlot(64));
  const logits: number[][] = [];
  const perStep: number[] = [];
  for (const step of script()) {
    const before = dispatches.length;
    const z = engine.extend(
      P,
      step.slots.map((j, t) => ({ slot: slots[j], tokens: step.tokens[t] })),
    );
    perStep.push(dispatches.length - before);
    logits.push(Array.from(z));
  }
  const caches = slots.map((s) => readSlot(rt, CONFIG, s));
  for (const s of slots) engine.freeSlot(s);
  return { logits, caches, perStep };
}

describe('decode split by slots over threads', () => {
  let model: Qwen3Model;

  beforeAll(async () => {
    await selectBackend('cpu');
    model = Qwen3Model.fromConfig(CONFIG, 3);
  });
  afterAll(() => model.dispose());

  it('slices a batch evenly, in multiples of 4 where that costs at most a row', () => {
    expect(decodeSlices(8, 2)).toEqual([
      [0, 4],
      [4, 4],
    ]);
    expect(decodeSlices(8, 3)).toEqual([
      [0, 4],
      [4, 4],
    ]);
    expect(decodeSlices(5, 2)).toEqual([
      [0, 4],
      [4, 1],
    ]);
    expect(decodeSlices(5, 3)).toEqual([
      [0, 2],
      [2, 2],
      [4, 1],
    ]);
    expect(decodeSlices(3, 2)).toEqual([
      [0, 2],
      [2, 1],
    ]);
    expect(decodeSlices(12, 2)).toEqual([
      [0, 6],
      [6, 6],
    ]);
    expect(decodeSlices(16, 3)).toEqual([
      [0, 6],
      [6, 5],
      [11, 5],
    ]);
    expect(decodeSlices(1, 2)).toEqual([[0, 1]]);
    for (let items = 1; items <= 40; items++)
      for (let threads = 2; threads <= 5; threads++) {
        const s = decodeSlices(items, threads);
        expect(s.length).toBeLessThanOrEqual(Math.min(threads, items));
        if (items > 1) expect(s.length).toBeGreaterThan(1);
        let r0 = 0;
        for (const [first, n] of s) {
          expect(first).toBe(r0);
          expect(n).toBeGreaterThan(0);
          r0 += n;
        }
        expect(r0).toBe(items);
      }
  });

  /** The script on 1, 2 and 3 threads: the same bits, and one dispatch per decode step of several slots. */
  async function expectSameOnThreads(P: EngineParams) {
    const runs = [];
    for (const threads of [1, 2, 3]) {
      const { rt, engine, dispatches } = await engineOn(CONFIG, threads);
      runs.push({ threads, ...runScript(engine, rt, P, dispatches) });
    }
    const [one, ...many] = runs;
    const steps = script();
    for (const r of many) {
      r.logits.forEach((z, s) => expect(z, `step ${s} on ${r.threads} threads`).toEqual(one.logits[s]));
      r.caches.forEach((c, j) => expect(c, `slot ${j} on ${r.threads} threads`).toEqual(one.caches[j]));
      steps.forEach((step, s) => {
        const isDecode = step.tokens.every((t) => t.length === 1);
        // A decode step of several slots is one dispatch; one slot, or a prefill, goes the usual way
        // (attention is dispatched once per layer, at least).
        if (isDecode && step.slots.length > 1) expect(r.perStep[s], `step ${s}`).toBe(1);
        else expect(r.perStep[s], `step ${s}`).toBeGreaterThanOrEqual(CONFIG.num_hidden_layers);
      });
    }
    // The script's logits are finite numbers, and a cache is not all zeros.
    expect(one.logits.flat().every(Number.isFinite)).toBe(true);
    expect(one.caches[1][0].some((x) => x !== 0)).toBe(true);
    return one.logits;
  }

  it('gives the logits and KV caches of one thread, bit for bit, on 2 and 3 threads, in one dispatch a step', async () => {
    await expectSameOnThreads(toEngineParams(model.params));
  }, 120_000);

  it('does so with LoRA adapters (their temporaries freed only after the step has run)', async () => {
    const { lora, trainable } = createLora(model.params, {
      rank: 4,
      alpha: 8,
      targetModules: ['q', 'v', 'down'],
      seed: 5,
    });
    for (const [name, v] of trainable) if (name.includes('lora_B')) v.assign(tf.mul(tf.onesLike(v), 0.05));
    try {
      const withLora = await expectSameOnThreads(toEngineParams(model.params, lora));
      const base = await expectSameOnThreads(toEngineParams(model.params));
      expect(withLora[1]).not.toEqual(base[1]);
    } finally {
      disposeLora(lora);
    }
  }, 120_000);

  it('takes a qwen3-nano decode step of 8 slots in one dispatch of tasks that fit the task table', async () => {
    const config = getQwen3Preset('qwen3-nano');
    const nano = Qwen3Model.fromConfig(config, 1);
    try {
      const P = toEngineParams(nano.params);
      const logits: number[][] = [];
      let tasks: readonly (readonly KernelCall[])[] = [];
      let besideCalls = 0;
      for (const threads of [1, 2]) {
        const { rt, engine, dispatches, beside } = await engineOn(config, threads);
        const slots = Array.from({ length: 8 }, () => engine.createSlot(128));
        engine.extend(
          P,
          slots.map((slot, j) => ({ slot, tokens: ids(20 + 3 * j, j, config.vocab_size) })),
        );
        const before = dispatches.length;
        const bytes = rt.allocatedBytes;
        logits.push(
          Array.from(
            engine.extend(
              P,
              slots.map((slot, j) => ({ slot, tokens: [j + 1] })),
            ),
          ),
        );
        expect(rt.allocatedBytes, 'every scratch buffer of the step is freed').toBe(bytes);
        if (threads === 2) {
          expect(dispatches.length - before).toBe(1);
          tasks = dispatches[dispatches.length - 1];
          besideCalls = beside[beside.length - 1];
        }
        for (const s of slots) engine.freeSlot(s);
      }
      expect(logits[1]).toEqual(logits[0]);
      // Slots 0–3 go to the worker as one recorded task; slots 4–7 run on the calling thread
      // meanwhile: the same kernel calls, unrecorded.
      expect(tasks.length).toBe(1);
      expect(besideCalls).toBe(tasks[0].length);
      const sizes = tasks.map((t) => taskSlots(t));
      console.log(
        `qwen3-nano decode step of 8 slots on 2 threads: 1 posted task of ${tasks[0].length} kernel calls ` +
          `(${sizes[0]} task-table slots; the table holds ${TASK_TABLE_SLOTS}), ${besideCalls} calls on the calling thread`,
      );
      // Both run at once only if one batch holds them: a task too long for the table would run alone.
      expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(TASK_TABLE_SLOTS);
    } finally {
      nano.dispose();
    }
  }, 120_000);
});
