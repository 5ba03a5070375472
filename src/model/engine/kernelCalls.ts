/**
 * Typed builders of the kernel calls that tasks carry to worker threads (threads.ts sends a
 * call as [kernel, ...numbers]). Each builder takes named arguments and lays them out in the
 * order of the kernel's AssemblyScript signature, recorded in KERNEL_PARAMS;
 * kernelCalls.test.ts holds that list to the signatures in assembly/ and to the compiled
 * module's arities, so a kernel whose parameters change cannot be called with a stale layout.
 */
import type { KernelCall, TaskKernel } from './threads';

/** Each task kernel's parameters, in signature order (pointers are byte offsets, `ld*` row strides in floats). */
export const KERNEL_PARAMS = {
  gemm: ['a', 'lda', 'b', 'ldb', 'c', 'ldc', 'M', 'N', 'K', 'acc'],
  gemmTN: ['a', 'lda', 'b', 'ldb', 'c', 'ldc', 'M', 'N', 'K', 'acc', 'work'],
  attnFwd: [
    'q',
    'ldq',
    'kt',
    'ldkt',
    'ktTile',
    'v',
    'ldv',
    'o',
    'ldo',
    'lse',
    'ldlse',
    'Tq',
    'qPos0',
    'qStep',
    'Tk',
    'D',
    'scale',
    'work',
  ],
  attnBwd: [
    'q',
    'ldq',
    'k',
    'ldk',
    'kt',
    'ldkt',
    'vt',
    'ldvt',
    'o',
    'ldo',
    'dO',
    'lddo',
    'lse',
    'ldlse',
    'dq',
    'lddq',
    'dk',
    'lddk',
    'dv',
    'lddv',
    'Tq',
    'qPos0',
    'Tk',
    'D',
    'scale',
    'work',
  ],
  rmsnormFwd: ['x', 'ldx', 'w', 'y', 'ldy', 'rstd', 'rows', 'n', 'eps'],
  swigluFwd: ['g', 'u', 'a', 'n'],
  swigluBwd: ['g', 'u', 'da', 'dg', 'du', 'n'],
  lmHeadRows: ['z', 'rows', 'V', 'targets', 'out'],
  lmHeadGradRows: ['z', 'rows', 'V', 'targets', 'lse', 'gLogp', 'gEnt'],
  transpose: ['src', 'lds', 'dst', 'ldd', 'rows', 'cols'],
  rope: ['x', 'ld', 'T', 'nHeads', 'D', 'pos', 'cos', 'sin', 'sign'],
  axpy: ['x', 'y', 'n', 'alpha', 'acc'],
  embedFwd: ['ids', 'n', 'table', 'H', 'out'],
  gemmPacked: ['a', 'lda', 'b', 'c', 'ldc', 'M', 'N', 'K', 'acc'],
  attnDecode: ['q', 'ldq', 'kt', 'ldkt', 'ktTile', 'v', 'ldv', 'o', 'ldo', 'G', 'Tk', 'D', 'scale', 'work'],
  sampleRows: ['z', 'rows', 'V', 'limit', 'u', 'work', 'out'],
} as const satisfies Record<TaskKernel, readonly string[]>;

/** The named arguments of a task kernel. */
export type KernelArgs<K extends TaskKernel> = { readonly [P in (typeof KERNEL_PARAMS)[K][number]]: number };

/** A call of `kernel` with its arguments laid out in signature order. */
export function kernelCall<K extends TaskKernel>(kernel: K, args: KernelArgs<K>): KernelCall {
  const names: readonly string[] = KERNEL_PARAMS[kernel];
  const call: KernelCall = [kernel];
  for (const name of names) call.push((args as Record<string, number>)[name]);
  return call;
}

/** C[M,N] (+)= A[M,K]·B[K,N]. */
export const gemmCall = (args: KernelArgs<'gemm'>) => kernelCall('gemm', args);
/** C[M,N] (+)= A[M,K]·B[K,N] with B packed in panels of 8 columns (WeightCache.ptrPacked). */
export const gemmPackedCall = (args: KernelArgs<'gemmPacked'>) => kernelCall('gemmPacked', args);
/** C[M,N] (+)= Aᵀ·B with A stored [K, M]. */
export const gemmTNCall = (args: KernelArgs<'gemmTN'>) => kernelCall('gemmTN', args);
/** One head's causal attention (query i at position qPos0 + i·qStep reads keys ≤ its position). */
export const attnFwdCall = (args: KernelArgs<'attnFwd'>) => kernelCall('attnFwd', args);
/** One new token's attention for the G query heads of one KV head over keys j < Tk (decode). */
export const attnDecodeCall = (args: KernelArgs<'attnDecode'>) => kernelCall('attnDecode', args);
/** Backward of attnFwdCall for one head; dq, dk, dv accumulate. */
export const attnBwdCall = (args: KernelArgs<'attnBwd'>) => kernelCall('attnBwd', args);
/** Per row of logits: log p(target), entropy, lse into out [rows, 3]. */
export const lmHeadRowsCall = (args: KernelArgs<'lmHeadRows'>) => kernelCall('lmHeadRows', args);
/** Per row of logits, in place: z → ∂/∂z of gLogp·logp + gEnt·entropy. */
export const lmHeadGradRowsCall = (args: KernelArgs<'lmHeadGradRows'>) => kernelCall('lmHeadGradRows', args);
/** Per row of logits, the next token drawn as generate.ts's sampler draws it (assembly/sampler.ts). */
export const sampleRowsCall = (args: KernelArgs<'sampleRows'>) => kernelCall('sampleRows', args);
/** y (+)= alpha·x over n floats; with alpha 1 and acc 0 an exact copy (x·1 rounds to x). */
export const axpyCall = (args: KernelArgs<'axpy'>) => kernelCall('axpy', args);
/** a = silu(g)·u over n floats (n a multiple of 4). */
export const swigluFwdCall = (args: KernelArgs<'swigluFwd'>) => kernelCall('swigluFwd', args);
/** dg, du of swigluFwdCall from da over n floats (n a multiple of 4). */
export const swigluBwdCall = (args: KernelArgs<'swigluBwd'>) => kernelCall('swigluBwd', args);
/** Per row: y = x·rstd ⊙ w, rstd = 1/√(mean x² + eps). */
export const rmsnormFwdCall = (args: KernelArgs<'rmsnormFwd'>) => kernelCall('rmsnormFwd', args);
/** out[t] = table[ids[t]], rows of H (ids int32). */
export const embedFwdCall = (args: KernelArgs<'embedFwd'>) => kernelCall('embedFwd', args);
