/**
 * Matrix products shaped for speed on every backend. tfjs-wasm's BatchMatMul is
 * 10–60× slower when asked to transpose an operand (measured here on the nano preset:
 * [1016, 4096]ᵀ·[1016, 192] took 4 s, the same product with the operand transposed
 * explicitly first took ~70 ms), and tfjs's built-in matMul gradient uses exactly
 * those transposed products. So the products here transpose explicitly (O(size)) and
 * carry a custom gradient that does the same.
 */
import * as tf from './tf';

/** aᵀ · b for a [N, K], b [N, M] → [K, M], with an explicit transpose. No gradient wiring. */
export function matMulTransposeA(a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => tf.matMul(tf.transpose(a), b) as tf.Tensor2D);
}

/** a · bᵀ for a [N, K], b [M, K] → [N, M], with an explicit transpose. No gradient wiring. */
export function matMulTransposeB(a: tf.Tensor2D, b: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => tf.matMul(a, tf.transpose(b)) as tf.Tensor2D);
}

/**
 * x · wᵀ for x [N, K], w [M, K] → [N, M] (a linear layer, PyTorch weight layout),
 * differentiable with ∂x = dy · w and ∂w = dyᵀ · x, both without transposed-operand
 * kernels. A frozen Variable w (trainable = false) gets no gradient computed.
 */
export function applyMatMulWeightT(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  const isFrozen = w instanceof tf.Variable && !w.trainable;
  if (isFrozen) {
    const op = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      const xIn = args[0] as tf.Tensor2D;
      (args[1] as tf.GradSaveFunc)([w]);
      return {
        value: matMulTransposeB(xIn, w),
        gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.matMul(dy as tf.Tensor2D, saved[0] as tf.Tensor2D),
      };
    });
    return op(x) as tf.Tensor2D;
  }
  const op = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const xIn = args[0] as tf.Tensor2D;
    const wIn = args[1] as tf.Tensor2D;
    (args[2] as tf.GradSaveFunc)([xIn, wIn]);
    return {
      value: matMulTransposeB(xIn, wIn),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => [
        tf.matMul(dy as tf.Tensor2D, saved[1] as tf.Tensor2D), // ∂x = dy · w   [N, K]
        matMulTransposeA(dy as tf.Tensor2D, saved[0] as tf.Tensor2D), // ∂w = dyᵀ · x   [M, K]
      ],
    };
  });
  return op(x, w) as tf.Tensor2D;
}

/** Swaps the last two axes of a rank-4 tensor. */
function transposeLast2(x: tf.Tensor4D): tf.Tensor4D {
  return tf.transpose(x, [0, 1, 3, 2]);
}

/**
 * Batched a · b (or a · bᵀ with `isTransposeB`) over rank-4 tensors
 * a [B, H, M, K], b [B, H, K, N] (or [B, H, N, K]) → [B, H, M, N], differentiable with
 * gradients that use explicit transposes only (see header):
 *   C = A B:   ∂A = dC · Bᵀ,  ∂B = Aᵀ · dC
 *   C = A Bᵀ:  ∂A = dC · B,   ∂B = dCᵀ · A
 */
export function applyBatchMatMul(a: tf.Tensor4D, b: tf.Tensor4D, isTransposeB: boolean): tf.Tensor4D {
  const op = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const aIn = args[0] as tf.Tensor4D;
    const bIn = args[1] as tf.Tensor4D;
    (args[2] as tf.GradSaveFunc)([aIn, bIn]);
    return {
      value: tf.matMul(aIn, isTransposeB ? transposeLast2(bIn) : bIn) as tf.Tensor4D,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [A, B] = saved as tf.Tensor4D[];
        const dC = dy as tf.Tensor4D;
        if (isTransposeB) return [tf.matMul(dC, B), tf.matMul(transposeLast2(dC), A)];
        return [tf.matMul(dC, transposeLast2(B)), tf.matMul(transposeLast2(A), dC)];
      },
    };
  });
  return op(a, b) as tf.Tensor4D;
}
