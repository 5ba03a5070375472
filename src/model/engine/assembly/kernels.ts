// The CPU engine's compute kernels (AssemblyScript → WebAssembly with 128-bit SIMD).
// Compiled by scripts/buildKernels.mjs into src/model/engine/kernelsWasm.ts (and kernelsWasmRelaxed.ts); the
// TypeScript side (src/model/engine/) owns the memory and calls these with byte offsets.
// Conventions: float32 row-major matrices; `ld*` are row strides in floats; `acc` ≠ 0
// adds into the output instead of overwriting it. No allocation, no runtime: every
// buffer (scratch included) is passed in.
//
// One file per family (this file is the module's entry and only re-exports them):
//   simd.ts       vector helpers and e^x on 4 lanes
//   gemm.ts       gemm, gemmPacked (B packed in panels), packTranspose, gemmTN (A's columns packed
//                 in a scratch), gemmTNScratchFloats, transpose
//   attention.ts  attnFwd, attnBwd (one head, flash attention), attnScratchFloats; attnDecode (one
//                 token, a KV head's query heads, two passes), attnDecodeScratchFloats
//   rowKernels.ts rmsnormFwd/Bwd, rope, swigluFwd/Bwd, axpy, embedFwd/Bwd, sumSquares, expRows
//   lmHead.ts     lmHeadRows, lmHeadGradRows
//   sampler.ts    sampleRows (next-token draws as generate.ts's sampler makes them), expFdlibm (and
//                 expFdlibmRows, its two-lane form on an array, for tests)
//   peak.ts       maddPeak, streamSum (the core's SIMD128 multiply-add rate and read rate, for pact bench)
export { gemm, gemmPacked, packTranspose, gemmTN, gemmTNScratchFloats, transpose } from './gemm';
export { attnScratchFloats, attnFwd, attnBwd, attnDecodeScratchFloats, attnDecode } from './attention';
export { rmsnormFwd, rmsnormBwd, rope, swigluFwd, swigluBwd, axpy, embedFwd, embedBwd } from './rowKernels';
export { lmHeadRows, lmHeadGradRows } from './lmHead';
export { sumSquares, expRows } from './rowKernels';
export { sampleRows, expFdlibm, expFdlibmRows } from './sampler';
export { maddPeak, streamSum } from './peak';
