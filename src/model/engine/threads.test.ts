// The engine on 1 and on 3 threads (worker_threads on a shared memory) gives the same bits:
// log-probs, entropies and gradients of rows that share a prefix and rows that do not, and
// the logits of a prefill and of decode steps. Tasks write disjoint memory, so the split
// never changes an operation's order.
import { afterAll, beforeAll, expect, it } from 'vitest';
import '../qwen3/tf';
import { selectBackend } from '../backend';
import { Qwen3Model, type Qwen3Config } from '../qwen3';
import { toEngineParams } from '../qwen3/engineBridge';
import { Qwen3Engine } from './qwen3Engine';
import { EngineRuntime } from './runtime';

const CONFIG: Qwen3Config = {
  vocab_size: 301,
  hidden_size: 64,
  intermediate_size: 96,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 1024,
  initializer_range: 0.1,
};

const ids = (n: number, seed: number) => Array.from({ length: n }, (_, i) => (i * 37 + seed * 101) % CONFIG.vocab_size);

let model: Qwen3Model;
let single: Qwen3Engine;
let threaded: Qwen3Engine;
let threadedRt: EngineRuntime;

beforeAll(async () => {
  await selectBackend('cpu');
  model = Qwen3Model.fromConfig(CONFIG, 4);
  single = new Qwen3Engine(CONFIG, new EngineRuntime(16 << 20));
  threadedRt = new EngineRuntime(16 << 20, true);
  await threadedRt.startThreads(3);
  expect(threadedRt.threads).toBe(3);
  threaded = new Qwen3Engine(CONFIG, threadedRt);
});
afterAll(() => model.dispose());

function run(engine: Qwen3Engine, rows: number[][]) {
  const P = toEngineParams(model.params);
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
  return { f, grads, prefill, decode };
}

it('gives the same bits on 1 and on 3 threads', () => {
  const prefix = ids(300, 1);
  const rows = [
    [...prefix, ...ids(250, 2)],
    [...prefix, ...ids(90, 3)],
    [...prefix, ...ids(400, 4)],
  ];
  for (const batch of [rows, [ids(333, 5), ids(200, 6)]]) {
    const a = run(single, batch);
    const b = run(threaded, batch);
    a.f.logprobs.forEach((r, i) => expect(Array.from(b.f.logprobs[i])).toEqual(Array.from(r)));
    a.f.entropy!.forEach((r, i) => expect(Array.from(b.f.entropy![i])).toEqual(Array.from(r)));
    for (const [name, g] of a.grads) expect(Array.from(b.grads.get(name)!), name).toEqual(Array.from(g));
    expect(Array.from(b.prefill)).toEqual(Array.from(a.prefill));
    a.decode.forEach((z, t) => expect(Array.from(b.decode[t])).toEqual(Array.from(z)));
  }
}, 120_000);

// Four query heads per KV head: the backward's task for one KV head holds four attention calls
// (4 × 29 numbers), more than an even share of the shared table (the browser's numerics check
// once failed on it with "a task has too many calls").
it('gives the same bits with four query heads per KV head', async () => {
  const config: Qwen3Config = { ...CONFIG, num_attention_heads: 8, num_key_value_heads: 2, head_dim: 8 };
  const m = Qwen3Model.fromConfig(config, 5);
  const rt = new EngineRuntime(16 << 20, true);
  await rt.startThreads(3);
  try {
    const P = toEngineParams(m.params);
    const rows = [ids(120, 7), ids(64, 8)];
    const results = [new Qwen3Engine(config, new EngineRuntime(16 << 20)), new Qwen3Engine(config, rt)].map(
      (engine) => {
        const f = engine.forward(P, rows, { withEntropy: true, keep: true });
        const grads = engine.backward(
          f.ctx!,
          f.logprobs.map((r) => r.map((_, i) => Math.cos(i))),
          null,
          new Set(m.params.keys()),
        );
        return { lp: f.logprobs.map((r) => Array.from(r)), grads: [...grads].map(([n, g]) => [n, Array.from(g)]) };
      },
    );
    expect(results[1]).toEqual(results[0]);
    expect(results[0].grads.length).toBeGreaterThan(0);
  } finally {
    m.dispose();
  }
}, 120_000);
