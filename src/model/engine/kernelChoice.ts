/**
 * Which build of the CPU engine's kernels a run asks for, and whether this runtime can run it:
 * the names a config may give (TrainConfig.engineKernels), the relaxed-SIMD probe and the
 * fallback with its reason. No kernels here (the page reads it to offer the choice); the
 * runtime that runs them is runtime.ts. What the builds do to the bits: docs/engine.md.
 */

/**
 * The builds, default first: `simd`, plain SIMD128 (a product and a sum, each rounded), and
 * `fma`, relaxed SIMD's f32x4.relaxed_madd in every vector multiply-add (one rounding where the
 * CPU fuses). Each gives the same bits on any thread count; not each other's.
 */
export const KERNEL_VARIANTS = ['simd', 'fma'] as const;

export type KernelVariant = (typeof KERNEL_VARIANTS)[number];

/** (v128, v128, v128) → v128 = f32x4.relaxed_madd: a module that validates only where relaxed SIMD runs. */
const RELAXED_SIMD_PROBE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
  ...[0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b], // types: (v128, v128, v128) → v128
  ...[0x03, 0x02, 0x01, 0x00], // functions: one of type 0
  ...[0x0a, 0x0d, 0x01, 0x0b, 0x00], // code: one body of 11 bytes, no locals
  ...[0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, 0x85, 0x02, 0x0b], // local.get 0, 1, 2; f32x4.relaxed_madd; end
]);

let relaxedSimd: boolean | undefined;

/** Whether this runtime runs relaxed SIMD (Chromium: yes; Node 20: only with --experimental-wasm-relaxed-simd). */
export function hasRelaxedSimd(): boolean {
  relaxedSimd ??=
    typeof WebAssembly === 'object' &&
    typeof WebAssembly.validate === 'function' &&
    WebAssembly.validate(RELAXED_SIMD_PROBE);
  return relaxedSimd;
}

/**
 * Relaxed SIMD where the runtime keeps it behind a V8 flag (Node 20) that a running process can
 * still set before it compiles a module: `pact` does so at start (bin/pact.mjs, with Node's
 * v8.setFlagsFromString), so `--fma` runs without starting node with the flag. Whether relaxed
 * SIMD runs now; nothing is set where it already did.
 */
export function enableRelaxedSimd(setFlags: (flags: string) => void): boolean {
  if (hasRelaxedSimd()) return true;
  setFlags('--experimental-wasm-relaxed-simd');
  relaxedSimd = undefined;
  return hasRelaxedSimd();
}

/** Why `fma` cannot run here, in the words of the runtime at hand (Node, or a browser). */
export function describeMissingRelaxedSimd(): string {
  const isNode = typeof process !== 'undefined' && process.versions?.node !== undefined;
  return isNode
    ? 'relaxed SIMD is unavailable in this runtime (Node 20: bin/pact.mjs turns it on; elsewhere start node with --experimental-wasm-relaxed-simd)'
    : "relaxed SIMD is unavailable in this browser's WebAssembly (Chromium-based browsers have it from version 114)";
}

/** The kernels a request gets: `fma` only where relaxed SIMD validates; else `simd` and a warning saying why. */
export function chooseKernels(asked: KernelVariant): { kernels: KernelVariant; warning?: string } {
  if (asked === 'simd' || hasRelaxedSimd()) return { kernels: asked };
  return { kernels: 'simd', warning: `fma: ${describeMissingRelaxedSimd()}; the engine runs the plain SIMD kernels` };
}
