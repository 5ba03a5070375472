/**
 * LoRA: low-rank adapters on the linear projections of a frozen base (Hu et al., "LoRA:
 * Low-Rank Adaptation of Large Language Models", 2021, Eq. 3 and §4.1):
 *
 *   y = x Wᵀ + (α / r) · (x Aᵀ) Bᵀ,   A [r, in], B [out, r], W [out, in] frozen
 *
 * Initialisation as Hugging Face PEFT: A ~ U(−1/√in, 1/√in) (kaiming_uniform with a = √5),
 * B = 0, so the adapted model equals the base at step 0.
 *
 * Simplifications: no LoRA dropout, no rsLoRA / DoRA scaling, one rank and alpha for all
 * targets; the random init uses tfjs's seeded generator (seeded by `seed` and the adapted
 * weight's name), not the project's RNG.
 *
 * What the file does and the trainable names: docs/model.md.
 */
import * as tf from '@tensorflow/tfjs-core';
import { LORA_TARGETS, LORA_TARGET_SUFFIX, nameLoraWeights, type LoraTarget } from './loraNames';
import type { LoraMap, ParamMap } from './types';

export { LORA_TARGETS, LORA_TARGET_SUFFIX, nameLoraWeights, type LoraTarget } from './loraNames';

export interface LoraConfig {
  /** Adapter rank r (≥ 1, at most min(in, out) of every adapted weight). */
  rank: number;
  /** Scaling numerator α; scale = α / r. */
  alpha: number;
  /** Which projections to adapt. */
  targetModules: LoraTarget[];
  /** Seed of the A initialisation. */
  seed: number;
}

export interface CreatedLora {
  /** Adapters keyed by the adapted weight's name, as `applyLinear` expects. */
  lora: LoraMap;
  /** The Variables to optimise (A and B of every adapter), by PEFT-style name. */
  trainable: ParamMap;
}

/** Creates LoRA adapters for every weight of `params` whose name matches a target module. */
export function createLora(params: ReadonlyMap<string, tf.Tensor>, config: LoraConfig): CreatedLora {
  const { rank, alpha, targetModules, seed } = config;
  if (!Number.isInteger(rank) || rank < 1) throw new Error(`LoraConfig.rank must be an integer ≥ 1, got ${rank}`);
  if (typeof alpha !== 'number' || !Number.isFinite(alpha) || alpha <= 0) {
    throw new Error(`LoraConfig.alpha must be a finite number > 0, got ${alpha}`);
  }
  if (!Number.isInteger(seed)) throw new Error(`LoraConfig.seed must be an integer, got ${seed}`);
  if (!Array.isArray(targetModules) || targetModules.length === 0) {
    throw new Error(`LoraConfig.targetModules must be a non-empty list of ${LORA_TARGETS.join(', ')}`);
  }
  targetModules.forEach((target, i) => {
    if (!(LORA_TARGETS as readonly string[]).includes(target)) {
      throw new Error(
        `LoraConfig.targetModules[${i}] = ${JSON.stringify(target)} is not a target module; valid: ${LORA_TARGETS.join(', ')}`,
      );
    }
  });
  const suffixes = targetModules.map((t) => `.${LORA_TARGET_SUFFIX[t]}`);
  const targetNames = [...params.keys()].filter((name) => suffixes.some((s) => name.endsWith(s)));
  if (targetNames.length === 0) {
    throw new Error(
      `createLora: no weight matches the target modules ${targetModules.join(', ')} (expected names ending in ${suffixes.join(', ')})`,
    );
  }
  for (const name of targetNames) {
    const shape = params.get(name)!.shape;
    if (shape.length !== 2) throw new Error(`createLora: weight "${name}" has shape [${shape}], expected [out, in]`);
    if (rank > Math.min(shape[0], shape[1])) {
      throw new Error(`LoraConfig.rank ${rank} exceeds min(out, in) of "${name}" [${shape}]`);
    }
  }

  const scale = alpha / rank;
  const lora: LoraMap = new Map();
  const trainable: ParamMap = new Map();
  for (const name of targetNames) {
    const [outDim, inDim] = params.get(name)!.shape;
    const bound = 1 / Math.sqrt(inDim); // kaiming_uniform(a=√5) bound: gain √(1/3) · √(3 / in)
    // Seeded by (seed, weight name): an adapter's init does not depend on which other targets exist.
    const A = tf.tidy(() => tf.variable(tf.randomUniform([rank, inDim], -bound, bound, 'float32', `${seed}/${name}`)));
    const B = tf.tidy(() => tf.variable(tf.zeros([outDim, rank]))); // tidy: the zeros tensor itself is not kept
    lora.set(name, { A, B, scale });
    const names = nameLoraWeights(name);
    trainable.set(names.a, A);
    trainable.set(names.b, B);
  }
  return { lora, trainable };
}

/**
 * The weights with every adapter merged in: W' = W + scale · B A (B [out, r] · A [r, in] =
 * [out, in]) for adapted names, a clone of W for the others. All returned tensors are new
 * (clones share storage until either side changes) and belong to the caller.
 */
export function mergeLora(params: ReadonlyMap<string, tf.Tensor>, lora: LoraMap): Map<string, tf.Tensor> {
  for (const [name, { A, B, scale }] of lora) {
    const weight = params.get(name);
    if (weight === undefined) throw new Error(`mergeLora: adapter for "${name}" but no such weight in params`);
    const [outDim, inDim] = weight.shape;
    if (
      A.shape.length !== 2 ||
      B.shape.length !== 2 ||
      A.shape[1] !== inDim ||
      B.shape[0] !== outDim ||
      A.shape[0] !== B.shape[1]
    ) {
      throw new Error(
        `mergeLora: adapter for "${name}" has A [${A.shape}] and B [${B.shape}], incompatible with the weight [${weight.shape}]`,
      );
    }
    if (!Number.isFinite(scale)) throw new Error(`mergeLora: adapter for "${name}" has a non-finite scale ${scale}`);
  }
  const merged = new Map<string, tf.Tensor>();
  for (const [name, weight] of params) {
    const adapter = lora.get(name);
    merged.set(
      name,
      tf.tidy(() =>
        adapter === undefined
          ? tf.clone(weight)
          : tf.add(weight, tf.mul(tf.matMul(adapter.B, adapter.A), adapter.scale)),
      ),
    );
  }
  return merged;
}

/**
 * Marks every Variable of `params` trainable or frozen. Freezing the base for LoRA is not
 * needed for correctness (only A and B are differentiated and optimised) but it is for
 * speed: the model's custom-gradient ops (embedding, chunked LM head) skip the weight
 * gradient of a frozen (trainable = false) Variable.
 */
export function setParamsTrainable(params: ReadonlyMap<string, tf.Variable>, isTrainable: boolean): void {
  for (const v of params.values()) v.trainable = isTrainable;
}

/** Frees the A and B Variables of every adapter. */
export function disposeLora(lora: LoraMap): void {
  for (const { A, B } of lora.values()) {
    A.dispose();
    B.dispose();
  }
}

/**
 * Frozen copies of every adapter (non-trainable Variables sharing storage until the live ones
 * change, as snapshotParams): π_old for a LoRA run is the base with these. Free with disposeLora.
 */
export function snapshotLora(lora: LoraMap): LoraMap {
  const copy: LoraMap = new Map();
  for (const [name, { A, B, scale }] of lora) {
    if (A.isDisposed || B.isDisposed) throw new Error(`snapshotLora: the adapter of "${name}" is disposed`);
    copy.set(name, { A: tf.variable(A, false), B: tf.variable(B, false), scale });
  }
  return copy;
}
