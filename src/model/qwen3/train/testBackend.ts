/**
 * Test helper: tfjs-core with the cpu backend and every gradient registered
 * (tfjs-core alone lacks the gradient registrations; see ../tf.ts).
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-core/dist/register_all_gradients';

export async function useCpuBackend(): Promise<void> {
  await tf.setBackend('cpu');
  await tf.ready();
}

/** Reads a tensor into a plain number array (tests only). */
export async function readArray(t: tf.Tensor): Promise<number[]> {
  return Array.from(await t.data());
}
