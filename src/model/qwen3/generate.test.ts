// Generation: KV cache ≡ full recomputation (token for token), behaviour log-probs ≡
// computeTokenLogprobs, hand-computed top-p sampling, stops, input errors, and the
// leak test (two forward/backward passes and two generation calls leave
// tf.memory().numTensors unchanged).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from './tf';
import { selectBackend } from '../backend';
import { createRng } from '../../core/rng';
import type { Qwen3Config } from './config';
import { generateQwen3, generateQwen3WithoutCache, sampleFromLogits } from './generate';
import { computeTokenLogprobs } from './logprobs';
import { runEngineGradients } from './engineSession';
import { getEngineEnabled, setEngineEnabled } from './engineBridge';
import { graphRowBytes, prefillRowsPerChunk } from './graphBuffers';
import { disposeParams, initQwen3Params } from './model';
import type { ParamMap } from './linear';
import { packTokenRows } from './batch';

const CONFIG: Qwen3Config = {
  vocab_size: 96,
  hidden_size: 32,
  intermediate_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 8,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: false,
  max_position_embeddings: 256,
  initializer_range: 0.3, // large weights: peaked, input-dependent distributions
};
const PROMPTS = [
  [1, 2, 3],
  [10, 20, 30, 40, 50, 60, 70, 80, 90],
  [5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23],
];

let params: ParamMap;
beforeAll(async () => {
  await selectBackend('cpu');
  params = initQwen3Params(CONFIG, 7);
});
afterAll(() => disposeParams(params));

describe('sampleFromLogits', () => {
  it('truncates to the top-p set and samples by inverse CDF', () => {
    // probs [0.5, 0.3, 0.2] from logits log p; topP 0.6 keeps {0, 1} (0.5 < 0.6 ≤ 0.8),
    // renormalised 0.625 / 0.375. u = 0.7 → target 0.7 · 0.8 = 0.56 ≥ 0.5 → token 1.
    const z = [Math.log(0.5), Math.log(0.3), Math.log(0.2)];
    const s = sampleFromLogits(z, 1, 0.6, () => 0.7);
    expect(s.token).toBe(1);
    expect(s.logprob).toBeCloseTo(Math.log(0.3), 10);
    expect(s.samplingLogprob).toBeCloseTo(Math.log(0.375), 10);
    // u = 0.6 → target 0.48 < 0.5 → token 0.
    expect(sampleFromLogits(z, 1, 0.6, () => 0.6).token).toBe(0);
    // No truncation: u = 0.85 → cumulative 0.5, 0.8, 1.0 → token 2, sampling p = 0.2.
    const t = sampleFromLogits(z, 1, 1, () => 0.85);
    expect(t.token).toBe(2);
    expect(t.samplingLogprob).toBeCloseTo(Math.log(0.2), 10);
  });

  it('applies temperature to the sampling distribution only', () => {
    // T = 0.5 squares the probabilities: [0.25, 0.09, 0.04] / 0.38.
    const z = [Math.log(0.5), Math.log(0.3), Math.log(0.2)];
    const s = sampleFromLogits(z, 0.5, 1, () => 0.99);
    expect(s.token).toBe(2);
    expect(s.samplingLogprob).toBeCloseTo(Math.log(0.04 / 0.38), 10);
    expect(s.logprob).toBeCloseTo(Math.log(0.2), 10);
  });

  it('is greedy at temperature 0 and needs a random source otherwise', () => {
    expect(sampleFromLogits([0.1, 2, -1], 0, 1).token).toBe(1);
    expect(() => sampleFromLogits([0.1, 2, -1], 1, 1)).toThrow(/opts.random/);
  });
  it('never picks an id at or past the vocabulary limit, and keeps the log-prob over the whole row', () => {
    // probs [0.2, 0.1, 0.7] over V = 3; limit 2 (id 2 has no token): greedy picks 0, not 2.
    const z = [Math.log(0.2), Math.log(0.1), Math.log(0.7)];
    const g = sampleFromLogits(z, 0, 1, undefined, 2);
    expect(g.token).toBe(0);
    expect(g.logprob).toBeCloseTo(Math.log(0.2), 12); // the model's own, over all 3 ids
    // Sampling among {0, 1}: renormalised 2/3, 1/3. u = 0.7 → target 0.7 · 0.3 = 0.21 ≥ 0.2 → id 1.
    const s = sampleFromLogits(z, 1, 1, () => 0.7, 2);
    expect(s.token).toBe(1);
    expect(s.logprob).toBeCloseTo(Math.log(0.1), 12);
    expect(s.samplingLogprob).toBeCloseTo(Math.log(1 / 3), 12);
    for (let k = 0; k < 50; k++) expect(sampleFromLogits(z, 1, 1, () => k / 50, 2).token).toBeLessThan(2);
    // limit = V is the plain path, bit for bit.
    expect(sampleFromLogits(z, 1, 1, () => 0.7, 3)).toEqual(sampleFromLogits(z, 1, 1, () => 0.7));
    expect(() => sampleFromLogits(z, 1, 1, () => 0.7, 0)).toThrow(/vocabLimit must be an integer in \[1, 3\]/);
  });
});

describe('generateQwen3', () => {
  it('greedy with the preallocated KV cache equals greedy by full recomputation, token for token', async () => {
    const opts = { maxNewTokens: 12, temperature: 0, promptBucket: 8, cacheLength: 48 };
    const cached = await generateQwen3(params, CONFIG, PROMPTS, opts);
    const recomputed = await generateQwen3WithoutCache(params, CONFIG, PROMPTS, opts);
    expect(cached.map((r) => r.tokens)).toEqual(recomputed.map((r) => r.tokens));
    for (let b = 0; b < PROMPTS.length; b++) {
      expect(cached[b].tokens).toHaveLength(12);
      cached[b].logprobs.forEach((lp, i) => expect(Math.abs(lp - recomputed[b].logprobs[i])).toBeLessThan(1e-4));
    }
    // The rows do not all produce the same continuation (the model depends on its input).
    expect(new Set(cached.map((r) => r.tokens.join(','))).size).toBeGreaterThan(1);
  });

  it('returns behaviour log-probs equal to computeTokenLogprobs of prompt + completion (temperature 1 model)', async () => {
    const rng = createRng('generate-test');
    const rows = await generateQwen3(params, CONFIG, PROMPTS, {
      maxNewTokens: 10,
      temperature: 0.8,
      topP: 0.9,
      random: () => rng.next(),
    });
    for (let b = 0; b < PROMPTS.length; b++) {
      const seq = [...PROMPTS[b], ...rows[b].tokens];
      const { inputIds, attentionMask } = packTokenRows([seq]);
      const out = computeTokenLogprobs(params, CONFIG, inputIds, attentionMask);
      const lp = await out.logprobs.data();
      tf.dispose([inputIds, attentionMask, out.logprobs, out.targetMask]);
      const completion = Array.from(lp).slice(PROMPTS[b].length - 1); // predictions of the new tokens
      expect(completion).toHaveLength(rows[b].tokens.length);
      completion.forEach((v, i) => expect(Math.abs(v - rows[b].logprobs[i])).toBeLessThan(1e-4));
      rows[b].samplingLogprobs.forEach((v) => expect(v).toBeLessThanOrEqual(0));
    }
  });

  it('is reproducible from the seed of the random source', async () => {
    const run = (seed: string) => {
      const rng = createRng(seed);
      return generateQwen3(params, CONFIG, PROMPTS, { maxNewTokens: 6, temperature: 1, random: () => rng.next() });
    };
    const [a, b] = [await run('s1'), await run('s1')];
    expect(a.map((r) => r.tokens)).toEqual(b.map((r) => r.tokens));
  });

  it('stops at a stop id sequence or a stop string, keeping the stop in the tokens', async () => {
    const base = await generateQwen3(params, CONFIG, [PROMPTS[1]], { maxNewTokens: 12, temperature: 0 });
    const tokens = base[0].tokens;
    // Stop ids: the pair tokens[3], tokens[4]; expected end = first occurrence of the pair.
    const seq = [tokens[3], tokens[4]];
    let end = 1;
    while (!(tokens[end - 1] === seq[0] && tokens[end] === seq[1])) end++;
    const byIds = await generateQwen3(params, CONFIG, [PROMPTS[1]], {
      maxNewTokens: 12,
      temperature: 0,
      stopTokenIds: [seq],
    });
    expect(byIds[0].tokens).toEqual(tokens.slice(0, end + 1));
    expect(byIds[0].finishReason).toBe('stop');
    expect(byIds[0].stop).toBe(seq.join(','));
    // Stop string: decode = one letter per id; stop at the first occurrence of decode(tokens[5..6]).
    const decode = (ids: number[]) => ids.map((i) => String.fromCharCode(65 + (i % 58))).join('');
    const stopText = decode(tokens.slice(5, 7));
    const charEnd = decode(tokens).indexOf(stopText) + 2; // tokens up to this index
    const byText = await generateQwen3(params, CONFIG, [PROMPTS[1]], {
      maxNewTokens: 12,
      temperature: 0,
      stopStrings: [stopText],
      decode,
    });
    expect(byText[0].tokens).toEqual(tokens.slice(0, charEnd));
    expect(byText[0].stop).toBe(stopText);
    expect(base[0].finishReason).toBe('length');
  });

  it('rejects bad input with the position of the problem', async () => {
    await expect(
      generateQwen3(
        params,
        CONFIG,
        [
          [1, 2],
          [3, 999],
        ],
        { maxNewTokens: 2, temperature: 0 },
      ),
    ).rejects.toThrow(/prompts\[1\]\[1\] = 999/);
    await expect(
      generateQwen3(params, CONFIG, [[1, 2]], { maxNewTokens: 2, temperature: 0, cacheLength: 8, promptBucket: 8 }),
    ).rejects.toThrow(/cacheLength 8/);
    await expect(generateQwen3(params, CONFIG, [[1, 2]], { maxNewTokens: 2, stopStrings: ['x'] })).rejects.toThrow(
      /decode/,
    );
  });

  it('caps the new tokens at the fixed cache length', async () => {
    // 9-token prompt → 16 slots; cacheLength 20 leaves 4 slots → at most 5 tokens (the last is not fed back).
    const rows = await generateQwen3(params, CONFIG, [PROMPTS[1]], {
      maxNewTokens: 50,
      temperature: 0,
      cacheLength: 20,
    });
    expect(rows[0].tokens).toHaveLength(5);
    expect(rows[0].finishReason).toBe('length');
  });
});

describe('generateQwen3 on the tfjs graph, the prompt rows in chunks (graphBuffers.ts)', () => {
  it('a row of T tokens costs its largest tensor: heads·T², T·intermediate or T·hidden floats', () => {
    // 4 heads: at 16 tokens 4·256 = 1,024 floats of scores, 16·64 = 1,024 of MLP, 16·32 = 512 of hidden.
    expect(graphRowBytes(CONFIG, 16)).toBe(4 * 1024);
    expect(graphRowBytes(CONFIG, 32)).toBe(4 * 4 * 32 * 32); // the scores grow as T²
    expect(graphRowBytes(CONFIG, 8)).toBe(4 * 8 * 64); // the MLP, at short rows
    expect(prefillRowsPerChunk(CONFIG, 16, 8192)).toBe(2);
    expect(prefillRowsPerChunk(CONFIG, 16, 8191)).toBe(1);
    expect(prefillRowsPerChunk(CONFIG, 16, 1)).toBe(1); // never 0: one row over the budget is refused before a run
  });

  it('gives the same tokens and log-probs bit for bit as one forward over every row, leaking nothing', async () => {
    const was = getEngineEnabled();
    setEngineEnabled(false);
    try {
      const prompts = [...PROMPTS, [4, 4, 4], [30, 31]];
      const run = (prefillBytes: number) => {
        const rng = createRng('chunked-prefill');
        const o = { maxNewTokens: 8, temperature: 1, promptBucket: 8, prefillBytes, random: () => rng.next() };
        return generateQwen3(params, CONFIG, prompts, o);
      };
      const whole = await run(Infinity);
      const before = tf.memory().numTensors;
      // slots = 24 (the longest prompt, 17, rounded to 8): 4·max(4·576, 24·64, 24·32) = 9,216 bytes a row
      for (const rowsAtOnce of [1, 2, 3]) {
        const chunked = await run(rowsAtOnce * 9216);
        expect(chunked.map((r) => r.tokens)).toEqual(whole.map((r) => r.tokens));
        expect(chunked.map((r) => r.logprobs)).toEqual(whole.map((r) => r.logprobs));
      }
      expect(tf.memory().numTensors).toBe(before);
      expect(new Set(whole.map((r) => r.tokens.join(','))).size).toBeGreaterThan(1);
    } finally {
      setEngineEnabled(was);
    }
  });
});

describe('memory', () => {
  it('two forward/backward passes and two generation calls leave numTensors unchanged', async () => {
    const step = async () => {
      const { inputIds, attentionMask } = packTokenRows([
        [1, 2, 3, 4, 5],
        [6, 7, 8],
      ]);
      const { value, grads } = runEngineGradients(() =>
        tf.variableGrads(() =>
          tf.tidy(() => {
            const out = computeTokenLogprobs(params, CONFIG, inputIds, attentionMask, {
              withEntropy: true,
              maxChunkElements: 3 * 96,
            });
            return out.logprobs.sum().neg().add(out.entropy!.sum().mul(0.01)) as tf.Scalar;
          }),
        ),
      );
      await value.data();
      tf.dispose([value, inputIds, attentionMask, ...Object.values(grads)]);
    };
    const generate = () => {
      const rng = createRng(1);
      return generateQwen3(params, CONFIG, PROMPTS, { maxNewTokens: 5, temperature: 1, random: () => rng.next() });
    };
    const before = tf.memory().numTensors; // no warm-up: the first calls must not leak either
    await step();
    await step();
    await generate();
    await generate();
    expect(tf.memory().numTensors).toBe(before);
  });
});
