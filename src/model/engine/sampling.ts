/**
 * The JavaScript half of the engine's sampler (assembly/sampler.ts sampleRows): what a decode
 * step asks for (one uniform draw per slot, or greedy) and how a row of the kernel's output
 * becomes the token and its two log-probs. The kernel does the per-vocabulary work (maxima,
 * e^x sums, the inverse CDF) in float64 with fdlibm's e^x; the two logarithms here are Math.log,
 * as generate.ts's sampleFromLogits takes them, so a draw is that function's bit for bit.
 */

/** float64 values per row of sampleRows' output: token, m, s, sh, e of the token, its logit. */
export const SAMPLE_OUT = 6;

export interface SampleRequest {
  /** Per slot, a uniform draw in [0, 1) (temperature 1, top-p 1), or −1 for the greedy choice. */
  draws: ArrayLike<number>;
  /** Only ids below this can be drawn; the log-prob is still over all V. */
  limit: number;
}

export interface DrawnToken {
  token: number;
  /** log softmax(z)[token] over all V. */
  logprob: number;
  /** log-prob under the distribution drawn from (the first `limit` ids); 0 when greedy. */
  samplingLogprob: number;
}

/** Row j of sampleRows' output as the token and its log-probs (sampleFromLogits' arithmetic). */
export function readDrawn(out: Float64Array, j: number, isGreedy: boolean): DrawnToken {
  const o = j * SAMPLE_OUT;
  const [token, m, s, sh, p, zToken] = [out[o], out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5]];
  const lse = m + Math.log(s);
  return { token, logprob: zToken - lse, samplingLogprob: isGreedy ? 0 : Math.log(p / sh) };
}
