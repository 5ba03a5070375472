// The engine on 1, 2 and 3 threads (worker_threads on a shared memory) gives the same bits:
// log-probs, entropies and gradients of rows that share a prefix and rows that do not, and
// the logits of a prefill and of decode steps; and the same peak of engine memory. Tasks write disjoint memory, so the split
// never changes an operation's order.
// With PACT_FMA=1 under relaxed SIMD (kernelsFma.test.ts runs this file so) every runtime runs
// the fused multiply-add kernels, and a last test measures them against the plain ones.
import { afterAll, beforeAll, expect, it } from 'vitest';
import '../qwen3/tf';
import { selectBackend } from '../backend';
import { Qwen3Model, type Qwen3Config } from '../qwen3';
import { toEngineParams } from '../qwen3/engineBridge';
import { Qwen3Engine } from './qwen3Engine';
import { EngineRuntime, type KernelVariant } from './runtime';
import { SMALL_GQA_CONFIG } from './smallConfig';

const KERNELS: KernelVariant = process.env.PACT_FMA === '1' ? 'fma' : 'simd';

const CONFIG = SMALL_GQA_CONFIG;

const ids = (n: number, seed: number) => Array.from({ length: n }, (_, i) => (i * 37 + seed * 101) % CONFIG.vocab_size);

let model: Qwen3Model;
let single: Qwen3Engine;
/** The engine on 2 and on 3 threads. */
let threaded: Qwen3Engine[];

beforeAll(async () => {
  await selectBackend('cpu');
  model = Qwen3Model.fromConfig(CONFIG, 4);
  single = new Qwen3Engine(CONFIG, new EngineRuntime(16 << 20, false, KERNELS));
  threaded = [];
  for (const threads of [2, 3]) {
    const rt = new EngineRuntime(16 << 20, true, KERNELS);
    await rt.startThreads(threads);
    expect(rt.threads).toBe(threads);
    threaded.push(new Qwen3Engine(CONFIG, rt));
  }
});
afterAll(() => model.dispose());

function run(engine: Qwen3Engine, rows: number[][]) {
  const P = toEngineParams(model.params);
  const live = engine.rt.allocatedBytes;
  engine.rt.resetPeak();
  const f = engine.forward(P, rows, { withEntropy: true, keep: true });
  const g = f.logprobs.map((r) => r.map((_, i) => Math.sin(i)));
  const grads = engine.backward(
    f.ctx!,
    g,
    f.entropy!.map((r) => r.map(() => 0.1)),
    new Set(model.params.keys()),
  );
  const slot = engine.createSlot(64);
  const prefill = engine.extend(P, [{ slot, tokens: rows[0].slice(0, 200) }]);
  const decode = [1, 2, 3].map((t) => engine.extend(P, [{ slot, tokens: [t] }]));
  engine.freeSlot(slot);
  // The engine's peak above what it held before: a run records it, and it must not depend on the threads.
  return { f, grads, prefill, decode, peak: engine.rt.peakAllocatedBytes - live };
}

const prefix = ids(300, 1);
/** Rows that share a prefix, then rows that do not. */
const BATCHES = [
  [
    [...prefix, ...ids(250, 2)],
    [...prefix, ...ids(90, 3)],
    [...prefix, ...ids(400, 4)],
  ],
  [ids(333, 5), ids(200, 6)],
];

it(`gives the same bits on 1, 2 and 3 threads (${KERNELS} kernels)`, () => {
  for (const batch of BATCHES) {
    const a = run(single, batch);
    for (const engine of threaded) {
      const b = run(engine, batch);
      a.f.logprobs.forEach((r, i) => expect(Array.from(b.f.logprobs[i])).toEqual(Array.from(r)));
      a.f.entropy!.forEach((r, i) => expect(Array.from(b.f.entropy![i])).toEqual(Array.from(r)));
      for (const [name, g] of a.grads) expect(Array.from(b.grads.get(name)!), name).toEqual(Array.from(g));
      expect(Array.from(b.prefill)).toEqual(Array.from(a.prefill));
      a.decode.forEach((z, t) => expect(Array.from(b.decode[t])).toEqual(Array.from(z)));
      expect(b.peak, 'engine peak bytes').toBe(a.peak);
    }
  }
}, 120_000);

// Four query heads per KV head: the backward's task for one KV head holds four attention calls
// (4 × 29 numbers), more than an even share of the shared table (the browser's numerics check
// once failed on it with "a task has too many calls").
it('gives the same bits with four query heads per KV head', async () => {
  const config: Qwen3Config = { ...CONFIG, num_attention_heads: 8, num_key_value_heads: 2, head_dim: 8 };
  const m = Qwen3Model.fromConfig(config, 5);
  const rt = new EngineRuntime(16 << 20, true, KERNELS);
  await rt.startThreads(3);
  try {
    const P = toEngineParams(m.params);
    const rows = [ids(120, 7), ids(64, 8)];
    const results = [
      new Qwen3Engine(config, new EngineRuntime(16 << 20, false, KERNELS)),
      new Qwen3Engine(config, rt),
    ].map((engine) => {
      const f = engine.forward(P, rows, { withEntropy: true, keep: true });
      const grads = engine.backward(
        f.ctx!,
        f.logprobs.map((r) => r.map((_, i) => Math.cos(i))),
        null,
        new Set(m.params.keys()),
      );
      return { lp: f.logprobs.map((r) => Array.from(r)), grads: [...grads].map(([n, g]) => [n, Array.from(g)]) };
    });
    expect(results[1]).toEqual(results[0]);
    expect(results[0].grads.length).toBeGreaterThan(0);
  } finally {
    m.dispose();
  }
}, 120_000);

/** max |a − b| over every entry of the row lists, and that over max |a| (the gradients' measure). */
function compareRows(a: ArrayLike<number>[], b: ArrayLike<number>[]): { abs: number; rel: number; changed: number } {
  let abs = 0;
  let scale = 0;
  let changed = 0;
  a.forEach((row, i) => {
    for (let j = 0; j < row.length; j++) {
      abs = Math.max(abs, Math.abs(row[j] - b[i][j]));
      scale = Math.max(scale, Math.abs(row[j]));
      if (!Object.is(row[j], b[i][j])) changed++;
    }
  });
  return { abs, rel: abs / scale, changed };
}

// The fma kernels against the plain ones (the default numerics) on the same rows: other bits where
// the CPU fuses, the same numbers within float32 error. The bounds are qwen3EngineReference.test.ts's
// (log-probs and entropies 5e-5; each gradient 1e-4 of its largest entry), which both meet against
// float64; the logits get the gradients' relative bound.
it.runIf(KERNELS === 'fma')(
  'fma kernels agree with the plain ones within float32 error',
  () => {
    const plain = new Qwen3Engine(CONFIG, new EngineRuntime(16 << 20));
    const worst = { logprob: 0, entropy: 0, grad: 0, logits: 0, changed: 0, values: 0 };
    for (const batch of BATCHES) {
      const a = run(plain, batch);
      const b = run(single, batch);
      const lp = compareRows(a.f.logprobs, b.f.logprobs);
      const ent = compareRows(a.f.entropy!, b.f.entropy!);
      const logits = compareRows([a.prefill, ...a.decode], [b.prefill, ...b.decode]);
      worst.logprob = Math.max(worst.logprob, lp.abs);
      worst.entropy = Math.max(worst.entropy, ent.abs);
      worst.logits = Math.max(worst.logits, logits.rel);
      worst.changed += lp.changed;
      worst.values += a.f.logprobs.reduce((n, r) => n + r.length, 0);
      for (const [name, g] of a.grads) worst.grad = Math.max(worst.grad, compareRows([g], [b.grads.get(name)!]).rel);
    }
    console.log(
      `fma vs plain kernels: log-probs max |Δ| ${worst.logprob.toExponential(2)} (${worst.changed} of ${worst.values} ` +
        `differ in bits), entropies ${worst.entropy.toExponential(2)}, gradients ${worst.grad.toExponential(2)} and ` +
        `logits ${worst.logits.toExponential(2)} of the tensor's largest entry`,
    );
    expect(worst.logprob).toBeLessThan(5e-5);
    expect(worst.entropy).toBeLessThan(5e-5);
    expect(worst.grad).toBeLessThan(1e-4);
    expect(worst.logits).toBeLessThan(1e-4);
  },
  120_000,
);
