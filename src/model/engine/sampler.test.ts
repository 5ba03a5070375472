// The engine's sampler (assembly/sampler.ts, sampling.ts, decode.ts runExtendSampled) against
// generate.ts's JavaScript sampler, which every rollout so far drew with: fdlibm's e^x equal to
// Math.exp bit for bit; sampleRows' tokens and log-probs equal to sampleFromLogits' (Object.is)
// over ties, −∞ and NaN logits, a vocabulary limit, greedy rows and draws at the ends of [0, 1);
// a decode step's draws on 1, 2 and 3 threads equal to the logits' draws in JavaScript; and
// generate with kernel draws equal to generate with JavaScript draws.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../backend';
import { Qwen3Model } from '../qwen3';
import { releaseEngineCache, setKernelDrawsEnabled, toEngineParams } from '../qwen3/engineBridge';
import { sampleFromLogits } from '../qwen3/generate';
import { Qwen3Engine } from './qwen3Engine';
import { EngineRuntime } from './runtime';
import { readDrawn, SAMPLE_OUT } from './sampling';
import { SMALL_GQA_CONFIG } from './smallConfig';

const rt = new EngineRuntime(16 << 20);

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0), s / 2 ** 32);
}

/** e^x's test arguments: the sampler's (a logit minus a row maximum), the whole range, tiny values and the edges. */
function expArguments(): number[] {
  const random = lcg(7);
  const f = new Float32Array(2);
  const xs: number[] = [];
  for (let i = 0; i < 200_000; i++) {
    f[0] = (random() - 0.8) * 60; // a logit
    f[1] = random() * 12; // a row maximum
    xs.push(f[0] - f[1]);
  }
  for (let i = 0; i < 100_000; i++) xs.push((random() * 2 - 1) * 760);
  for (let i = 0; i < 20_000; i++) xs.push((random() * 2 - 1) * 2 ** -(random() * 40));
  xs.push(0, -0, 1, -1, 0.5 * Math.LN2, -0.5 * Math.LN2, 1.5 * Math.LN2, -1.5 * Math.LN2, 2 ** -28, -(2 ** -29));
  xs.push(709.78, 709.79, 710, -745.1, -745.2, -746, -708.5, -1e-300, Infinity, -Infinity, NaN, Number.MIN_VALUE);
  return xs;
}

/** x and its neighbours up to `ulps` float64 steps either way, at both signs. */
function around(x: number, ulps: number): number[] {
  const f = new Float64Array(1);
  const b = new BigInt64Array(f.buffer);
  const out: number[] = [];
  for (const sign of [1, -1]) {
    f[0] = sign * x;
    const at = b[0];
    for (let d = -ulps; d <= ulps; d++) {
      b[0] = at + BigInt(d);
      out.push(f[0]);
    }
  }
  return out;
}

/** Where an e^x differs from Math.exp: how many, and the first. */
function expMismatches(xs: readonly number[], got: ArrayLike<number>): [number, string] {
  let count = 0;
  let first = '';
  xs.forEach((x, i) => {
    if (!Object.is(got[i], Math.exp(x)) && count++ === 0) first = `e^${x}: ${got[i]} against Math.exp's ${Math.exp(x)}`;
  });
  return [count, first];
}

describe('expFdlibm', () => {
  it('is Math.exp bit for bit: the sampler’s arguments, the whole range, tiny values and the edges', () => {
    const xs = expArguments();
    const [count, first] = expMismatches(
      xs,
      xs.map((x) => rt.k.expFdlibm(x)),
    );
    expect(count, first).toBe(0);
  });

  // The two-lane form sampleRows runs: every lane is Math.exp's, whichever range each lane of a
  // pair is in, and a pair with a lane fdlibm treats apart (tiny, huge, 1, ±∞, NaN) beside one it
  // does not. The lane boundaries (0.5·ln2 and 1.5·ln2 as fdlibm tests them, 2⁻²⁸, 704, 1) are
  // taken with their neighbours a few float64 steps either side.
  it('in two lanes (expFdlibmRows) is Math.exp bit for bit, alone and beside every edge case', () => {
    const xs = expArguments();
    const edges = [0x3fd62e4300000000n, 0x3ff0a2b200000000n, 0x3e30000000000000n].map(
      (bits) => new Float64Array(new BigInt64Array([bits]).buffer)[0],
    );
    for (const x of [...edges, 704, 1, 0.5 * Math.LN2, 1.5 * Math.LN2]) xs.push(...around(x, 40));
    const specials = [0, -0, 1, 2 ** -29, -(2 ** -30), 704, -704.5, -745.2, 710, Infinity, -Infinity, NaN];
    const random = lcg(11);
    // Each special in the first lane and in the second, beside an ordinary argument.
    for (const sp of specials) for (let i = 0; i < 8; i++) xs.push(sp, -random() * 30, -random() * 30, sp);
    const shuffled = xs
      .map((x) => [random(), x])
      .sort((a, b) => a[0] - b[0])
      .map(([, x]) => x);
    for (const arguments_ of [xs, shuffled, xs.slice(1)]) {
      const n = arguments_.length;
      const x = rt.alloc(2 * n);
      const out = rt.alloc(2 * n);
      new Float64Array(rt.memory.buffer, x, n).set(arguments_);
      try {
        rt.k.expFdlibmRows(x, n, out);
        const [count, first] = expMismatches(arguments_, new Float64Array(rt.memory.buffer, out, n));
        expect(count, first).toBe(0);
      } finally {
        rt.release(x);
        rt.release(out);
      }
    }
  });
});

/** sampleRows on `rows` rows of logits z [rows, V]: the DrawnTokens, via readDrawn. */
function drawInKernel(z: Float32Array, rows: number, V: number, limit: number, draws: number[]) {
  const zp = rt.allocFrom(z);
  const up = rt.alloc(2 * rows);
  const work = rt.alloc(2 * limit);
  const out = rt.alloc(2 * SAMPLE_OUT * rows);
  try {
    new Float64Array(rt.memory.buffer, up, rows).set(draws);
    rt.k.sampleRows(zp, rows, V, limit, up, work, out);
    const result = new Float64Array(rt.memory.buffer, out, rows * SAMPLE_OUT).slice();
    return draws.map((u, r) => readDrawn(result, r, u < 0));
  } finally {
    for (const p of [zp, up, work, out]) rt.release(p);
  }
}

describe('sampleRows', () => {
  const cases: {
    V: number;
    limit: number;
    what: string;
    fill: (z: Float32Array, r: number, random: () => number) => void;
  }[] = [
    { V: 7, limit: 7, what: 'a small vocabulary', fill: (z, _, rnd) => z.forEach((_, i) => (z[i] = rnd() * 8 - 4)) },
    {
      V: 1022,
      limit: 1022,
      what: 'the warm start’s 1,022 ids, peaked',
      fill: (z, r, rnd) => z.forEach((_, i) => (z[i] = (rnd() * 2 - 1) * 6 + (i === 17 * r ? 25 : 0))),
    },
    {
      V: 4096,
      limit: 4000,
      what: 'a limit below V (ids past the tokenizer)',
      fill: (z, r, rnd) => z.forEach((_, i) => (z[i] = (rnd() * 2 - 1) * 5 + (i >= 4000 && r === 1 ? 40 : 0))),
    },
    {
      V: 301,
      limit: 301,
      what: 'ties at the maximum, −∞ entries and a spread past e^x’s underflow',
      fill: (z, _, rnd) =>
        z.forEach((_, i) => (z[i] = i % 50 === 3 ? 9 : i % 7 === 0 ? -Infinity : i % 11 === 0 ? -900 : rnd() * 4)),
    },
    {
      V: 64,
      limit: 60,
      what: 'a row with a NaN logit',
      fill: (z, r, rnd) => z.forEach((_, i) => (z[i] = r === 0 && i === 5 ? NaN : rnd() * 3)),
    },
  ];
  for (const { V, limit, what, fill } of cases) {
    it(`draws sampleFromLogits' tokens and log-probs bit for bit: ${what} (V ${V}, limit ${limit})`, () => {
      const random = lcg(V + limit);
      const rows = 6;
      const z = new Float32Array(rows * V);
      for (let r = 0; r < rows; r++) fill(z.subarray(r * V, (r + 1) * V), r, random);
      // Uniform draws, greedy rows (−1), and the ends of [0, 1).
      const draws = [random(), -1, 0, 1 - 2 ** -53, random(), -1];
      const got = drawInKernel(z, rows, V, limit, draws);
      for (let r = 0; r < rows; r++) {
        const row = z.subarray(r * V, (r + 1) * V);
        const want =
          draws[r] < 0
            ? sampleFromLogits(row, 0, 1, undefined, limit)
            : sampleFromLogits(row, 1, 1, () => draws[r], limit);
        expect(Object.is(got[r].token, want.token), `row ${r} token ${got[r].token} vs ${want.token}`).toBe(true);
        expect(Object.is(got[r].logprob, want.logprob), `row ${r} logprob ${got[r].logprob} vs ${want.logprob}`).toBe(
          true,
        );
        expect(
          Object.is(got[r].samplingLogprob, want.samplingLogprob),
          `row ${r} samplingLogprob ${got[r].samplingLogprob} vs ${want.samplingLogprob}`,
        ).toBe(true);
        expect(got[r].token).toBeLessThan(limit);
      }
    });
  }

  it('a draw lands where the inverse CDF puts it (hand-computed on 3 ids)', () => {
    // z = [0, ln 2, 0]: weights 1, 2, 1 of 4; CDF 0.25, 0.75, 1.
    const z = Float32Array.from([0, Math.log(2), 0]);
    const pick = (u: number) => drawInKernel(z, 1, 3, 3, [u])[0];
    expect([0.1, 0.24, 0.26, 0.74, 0.76, 0.99].map((u) => pick(u).token)).toEqual([0, 0, 1, 1, 2, 2]);
    expect(pick(0.5).samplingLogprob).toBeCloseTo(Math.log(0.5), 6);
    expect(pick(0.9).logprob).toBeCloseTo(Math.log(0.25), 6);
  });
});

const CONFIG = SMALL_GQA_CONFIG;

describe('a decode step’s draws in the kernels', () => {
  let model: Qwen3Model;
  beforeAll(async () => {
    await selectBackend('wasm');
    model = Qwen3Model.fromConfig(CONFIG, 5);
  });
  afterAll(() => {
    setKernelDrawsEnabled(true);
    model.dispose();
  });

  for (const threads of [1, 2, 3]) {
    it(`extendSampled on ${threads} thread(s) draws what the logits of extend draw in JavaScript`, async () => {
      const P = toEngineParams(model.params);
      const runtime = new EngineRuntime(16 << 20, threads > 1);
      if (threads > 1) await runtime.startThreads(threads);
      try {
        const run = (sampled: boolean) => {
          const engine = new Qwen3Engine(CONFIG, runtime);
          const slots = [9, 40, 3, 70, 12].map((n, j) => {
            const slot = engine.createSlot(n + 8);
            engine.extend(P, [{ slot, tokens: Array.from({ length: n }, (_, i) => (i * 37 + j * 11) % 301) }]);
            return slot;
          });
          const random = lcg(3);
          const out: { token: number; logprob: number; samplingLogprob: number }[][] = [];
          let fed = [1, 2, 3, 4, 5];
          for (let step = 0; step < 4; step++) {
            const draws = slots.map((_, j) => (j === 2 ? -1 : random())); // slot 2 greedy
            const items = slots.map((slot, j) => ({ slot, tokens: [fed[j]] }));
            const limit = step % 2 === 0 ? 301 : 250;
            let drawn;
            if (sampled) {
              const d = engine.extendSampled(P, items, { draws, limit });
              drawn = draws.map((u, j) => readDrawn(d, j, u < 0));
            } else {
              const z = engine.extend(P, items);
              drawn = draws.map((u, j) =>
                sampleFromLogits(z.subarray(j * 301, (j + 1) * 301), u < 0 ? 0 : 1, 1, () => u, limit),
              );
            }
            out.push(drawn);
            fed = drawn.map((d) => d.token);
          }
          for (const s of slots) engine.freeSlot(s);
          return out;
        };
        const js = run(false);
        const kernel = run(true);
        expect(kernel).toEqual(js);
        // toEqual reads -0 and 0 alike; the log-probs must be the same bits.
        kernel.flat().forEach((d, i) => expect(Object.is(d.logprob, js.flat()[i].logprob)).toBe(true));
      } finally {
        if (threads > 1) await runtime.startThreads(1);
      }
    });
  }

  it('generate draws the same tokens and log-probs with kernel draws as with JavaScript draws', async () => {
    const prompts = [
      [1, 2, 3, 4, 5, 6, 7],
      [9, 8, 7],
      [1, 2, 3, 4, 5, 6, 7],
      [200, 100, 50, 25, 12, 6],
    ];
    const generate = async (kernelDraws: boolean, temperature: number) => {
      setKernelDrawsEnabled(kernelDraws);
      // Each call from an empty cache: a prompt continued from a cached row is computed in other
      // calls (a decode step instead of the prefill), whose logits differ in the last bits.
      releaseEngineCache(model.params, CONFIG);
      const random = lcg(11);
      return model.generate(prompts, { maxNewTokens: 24, temperature, random, vocabLimit: 280, stopTokenIds: [[5]] });
    };
    for (const temperature of [1, 0]) {
      const js = await generate(false, temperature);
      const kernel = await generate(true, temperature);
      expect(kernel).toEqual(js);
      expect(kernel.some((r) => r.tokens.length > 1)).toBe(true);
    }
  });
});
