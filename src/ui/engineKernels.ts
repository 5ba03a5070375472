/**
 * The CPU engine's kernels (TrainConfig.engineKernels) as the page words them: the setup
 * field's option labels and hint, why fma cannot run in this browser, and a run's engine in
 * the Runs panel. What the kernels do to the bits: docs/engine.md, "Fused multiply-add".
 */
import type { KernelVariant } from '../model/engine/kernelChoice';

/** The options' words in the setup form and wherever a run's kernels are shown. */
export const KERNEL_LABELS: Record<KernelVariant, string> = {
  simd: 'simd (plain)',
  fma: 'fma (fused)',
};

/** The setup field's one line: what fma buys and what it costs (docs/perf.md's measurement). */
export const KERNELS_HINT =
  "fma: faster on CPUs where a fused multiply-add beats a multiply and an add (Intel Xeons measured 1.2–1.7× training, about 1.3× decode; an AMD Zen 5 gained nothing), other float bits: results differ in the last digits, so a table's rows should all use one setting (wasm, cpu)";

/** Why the fma option is off where the page's WebAssembly does not validate relaxed SIMD. */
export const NO_RELAXED_SIMD_REASON =
  "this browser's WebAssembly has no relaxed SIMD (Chromium-based browsers have it from version 114), which the fma kernels are built on";

/** A run's engine in a few words: "wasm · fma kernels", "webgpu", or '' for a run that never trained. */
export function describeRunEngine(run: { backend?: string; engineKernels?: string }): string {
  if (!run.backend) return '';
  return run.engineKernels ? `${run.backend} · ${run.engineKernels} kernels` : run.backend;
}
