/**
 * A lean decode timer (not a test): qwen3-nano with random weights, B rows of CTX random
 * tokens prefilled, then N sampled tokens; prints ms per decode step. Environment: T (engine
 * threads), B, CTX, N, V (vocabulary; default the preset's), FMA=1 (the fma kernels; Node 20 needs
 * --experimental-wasm-relaxed-simd), DRAWS=js (draw the tokens in
 * JavaScript from the logits read back, as before the kernel sampler; the same tokens). Used for
 * bench/2026-12-03-decode-slices.txt and bench/2026-12-04-kernel-draws.txt; `npm run bench` has
 * the decode case beside PyTorch.
 *   T=2 B=8 CTX=1024 N=300 node --import tsx scripts/decodeTimer.ts
 */
import { prepareTfjs } from '../src/cli/commands/score';
async function main() {
  await prepareTfjs('wasm', { threads: Number(process.env.T ?? 1), isFma: process.env.FMA === '1' });
  const { getQwen3Preset } = await import('../src/model/qwen3/config');
  const { Qwen3Model } = await import('../src/model/qwen3/index');
  const { setKernelDrawsEnabled } = await import('../src/model/qwen3/engineBridge');
  setKernelDrawsEnabled(process.env.DRAWS !== 'js');
  const c = { ...getQwen3Preset('qwen3-nano') };
  if (process.env.V) c.vocab_size = Number(process.env.V);
  const model = Qwen3Model.fromConfig(c, 0);
  const V = c.vocab_size;
  let s = 5;
  const ids = (n: number) => Array.from({ length: n }, () => ((s = (s * 1103515245 + 12345) % 2147483648), s % V));
  const B = Number(process.env.B ?? 8);
  const CTX = Number(process.env.CTX ?? 1024);
  const prompts = Array.from({ length: B }, () => ids(CTX));
  let rng = 1;
  const random = () => ((rng = (Math.imul(rng, 1664525) + 1013904223) >>> 0), rng / 2 ** 32);
  await model.generate(
    prompts.map((p) => p.slice(0, 32)),
    { maxNewTokens: 4, temperature: 1, random },
  );
  const N = Number(process.env.N ?? 300);
  let draws = 0;
  let tDec = 0;
  const r2 = () => {
    if (draws++ === 0) tDec = performance.now();
    return random();
  };
  const rows = await model.generate(prompts, { maxNewTokens: N, temperature: 1, random: r2 });
  const ms = (performance.now() - tDec) / (N - 1);
  // A digest of every drawn token and log-prob (float64 bits), to compare two builds' bits.
  const { createHash } = await import('node:crypto');
  const digest = createHash('sha256');
  for (const r of rows) digest.update(new Int32Array(r.tokens)).update(new Float64Array(r.logprobs));
  console.log(
    `decode B=${B} ctx=${CTX} V=${V} T=${process.env.T ?? 1} draws=${process.env.DRAWS === 'js' ? 'js' : 'kernel'} kernels=${process.env.FMA === '1' ? 'fma' : 'simd'} ` +
      `${ms.toFixed(2)} ms/step ${((B * 1000) / ms).toFixed(0)} tok/s; tokens and log-probs ${digest.digest('hex').slice(0, 12)}`,
  );
  process.exit(0);
}
main();
