/**
 * AdamW (Loshchilov & Hutter, ICLR 2019, Algorithm 2) in the exact form of `torch.optim.AdamW`
 * (PyTorch 1.13 `_single_tensor_adamw`), so a run matches a PyTorch reference:
 *   t ← t + 1
 *   p ← p · (1 − lr · wd)                       (decoupled decay, skipped for no-decay params)
 *   m ← β1 · m + (1 − β1) · g
 *   v ← β2 · v + (1 − β2) · g²
 *   p ← p − (lr / (1 − β1ᵗ)) · m / (√v / √(1 − β2ᵗ) + ε)
 *
 * Simplifications: no amsgrad, no maximize, no foreach/fused variants, float32 only;
 * m and v are allocated eagerly at construction (2 extra copies of every trainable
 * parameter), so the tensor count stays constant from the first step on.
 *
 * Per-parameter step counts and the exported state: docs/model.md.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { NamedArray, ParamMap, TensorMap } from './types';

export interface AdamWConfig {
  /** β1, the first-moment decay. Default 0.9. */
  beta1?: number;
  /** β2, the second-moment decay. Default 0.999 (PyTorch's default; LLM recipes often use 0.95). */
  beta2?: number;
  /** ε added to √v̂. Default 1e-8. */
  eps?: number;
  /** Decoupled weight-decay coefficient wd. Default 0.01 (PyTorch's default). */
  weightDecay?: number;
  /** Parameters for which this returns true get no weight decay (norms, biases). Default: none. */
  isNoDecay?: (name: string) => boolean;
}

/** A common no-decay predicate: RMSNorm/LayerNorm weights (`*norm.weight`) and biases. */
export function isNormOrBias(name: string): boolean {
  return /norm\.weight$/.test(name) || /\.bias$/.test(name);
}

interface SlotState {
  param: tf.Variable;
  m: tf.Variable;
  v: tf.Variable;
  step: number;
  isDecayed: boolean;
}

/** A non-trainable float32 Variable of zeros shaped like `like`; the temporary it starts from is freed. */
function createZeroVariable(like: tf.Tensor): tf.Variable {
  const zeros = tf.zerosLike(like);
  const v = tf.variable(zeros, false);
  zeros.dispose();
  return v;
}

export class AdamW {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  private readonly slots = new Map<string, SlotState>();
  private isDisposed = false;

  constructor(params: ParamMap, config: AdamWConfig = {}) {
    this.beta1 = config.beta1 ?? 0.9;
    this.beta2 = config.beta2 ?? 0.999;
    this.eps = config.eps ?? 1e-8;
    this.weightDecay = config.weightDecay ?? 0.01;
    checkInRange('AdamWConfig.beta1', this.beta1, 0, 1, true);
    checkInRange('AdamWConfig.beta2', this.beta2, 0, 1, true);
    checkInRange('AdamWConfig.eps', this.eps, 0, Infinity, false);
    checkInRange('AdamWConfig.weightDecay', this.weightDecay, 0, Infinity, false);
    if (params.size === 0) throw new Error('AdamW: the params map is empty: nothing to optimise');
    const isNoDecay = config.isNoDecay ?? (() => false);
    for (const [name, param] of params) {
      if (!(param instanceof tf.Variable)) {
        throw new Error(`AdamW: param "${name}" is not a tf.Variable (optimised tensors must be Variables)`);
      }
      if (param.dtype !== 'float32') {
        throw new Error(`AdamW: param "${name}" has dtype ${param.dtype}; only float32 is supported`);
      }
      this.slots.set(name, {
        param,
        m: createZeroVariable(param),
        v: createZeroVariable(param),
        step: 0,
        isDecayed: !isNoDecay(name),
      });
    }
  }

  /** Names of the parameters this optimiser updates, in insertion order. */
  get paramNames(): string[] {
    return [...this.slots.keys()];
  }

  /** Bytes of `exportState`'s arrays without reading them: per parameter m and v (float32) and its step. */
  get stateBytes(): number {
    let bytes = 0;
    for (const slot of this.slots.values()) bytes += 4 * (2 * slot.param.size + 1);
    return bytes;
  }

  /** The step counter t of one parameter (0 before its first update). */
  stepOf(name: string): number {
    return this.getSlot(name).step;
  }

  /**
   * Applies one AdamW update with learning rate `lr` to every parameter that has a
   * gradient in `grads` (keyed by parameter name; grads shaped like their parameter).
   * Parameters without a gradient are skipped (PyTorch: `p.grad is None`).
   * Does not dispose `grads`.
   */
  applyGradients(grads: TensorMap, lr: number): void {
    if (this.isDisposed) throw new Error('AdamW: applyGradients called after dispose()');
    checkInRange('AdamW.applyGradients lr', lr, 0, Infinity, false);
    for (const [name, grad] of grads) {
      const slot = this.slots.get(name);
      if (slot === undefined) {
        throw new Error(`AdamW: gradient for unknown param "${name}" (known: ${this.describeNames()})`);
      }
      if (!tf.util.arraysEqual(grad.shape, slot.param.shape)) {
        throw new Error(
          `AdamW: gradient for "${name}" has shape [${grad.shape}] but the param has shape [${slot.param.shape}]`,
        );
      }
    }
    for (const [name, grad] of grads) {
      const slot = this.slots.get(name)!;
      slot.step += 1;
      const t = slot.step;
      const biasCorrection1 = 1 - this.beta1 ** t;
      const biasCorrection2Sqrt = Math.sqrt(1 - this.beta2 ** t);
      const stepSize = lr / biasCorrection1;
      const decayFactor = slot.isDecayed ? 1 - lr * this.weightDecay : 1;
      tf.tidy(() => {
        const m = tf.add(tf.mul(slot.m, this.beta1), tf.mul(grad, 1 - this.beta1));
        const v = tf.add(tf.mul(slot.v, this.beta2), tf.mul(tf.square(grad), 1 - this.beta2));
        const denom = tf.add(tf.div(tf.sqrt(v), biasCorrection2Sqrt), this.eps);
        const decayed = decayFactor === 1 ? slot.param : tf.mul(slot.param, decayFactor);
        slot.param.assign(tf.sub(decayed, tf.mul(tf.div(m, denom), stepSize)));
        slot.m.assign(m);
        slot.v.assign(v);
      });
    }
  }

  /**
   * The optimiser state as plain arrays: for each parameter `<name>.exp_avg` (m),
   * `<name>.exp_avg_sq` (v), both shaped like the parameter, and `<name>.step` (shape []).
   */
  async exportState(): Promise<NamedArray[]> {
    const out: NamedArray[] = [];
    const reads: Promise<void>[] = [];
    for (const [name, slot] of this.slots) {
      const shape = [...slot.param.shape];
      const mEntry: NamedArray = { name: `${name}.exp_avg`, shape, data: new Float32Array(0) };
      const vEntry: NamedArray = { name: `${name}.exp_avg_sq`, shape: [...shape], data: new Float32Array(0) };
      out.push(mEntry, vEntry, { name: `${name}.step`, shape: [], data: Float32Array.of(slot.step) });
      reads.push(slot.m.data().then((d) => void (mEntry.data = Float32Array.from(d as Float32Array))));
      reads.push(slot.v.data().then((d) => void (vEntry.data = Float32Array.from(d as Float32Array))));
    }
    await Promise.all(reads);
    return out;
  }

  /**
   * Restores a state exported by `exportState` (this or another optimiser over params
   * with the same names and shapes). Every parameter must have its three entries;
   * unknown entries are an error. Validates everything before changing anything.
   */
  importState(state: NamedArray[]): void {
    const byName = new Map<string, NamedArray>();
    for (const entry of state) {
      if (byName.has(entry.name)) throw new Error(`AdamW.importState: duplicate entry "${entry.name}"`);
      byName.set(entry.name, entry);
    }
    const expected = new Set<string>();
    for (const [name, slot] of this.slots) {
      for (const suffix of ['exp_avg', 'exp_avg_sq'] as const) {
        const key = `${name}.${suffix}`;
        expected.add(key);
        checkEntry(byName.get(key), key, slot.param.shape);
      }
      const stepKey = `${name}.step`;
      expected.add(stepKey);
      checkEntry(byName.get(stepKey), stepKey, []);
      const step = byName.get(stepKey)!.data[0];
      if (!Number.isInteger(step) || step < 0) {
        throw new Error(`AdamW.importState: "${stepKey}" must be a non-negative integer, got ${step}`);
      }
    }
    for (const key of byName.keys()) {
      if (!expected.has(key)) {
        throw new Error(`AdamW.importState: unknown entry "${key}" (params: ${this.describeNames()})`);
      }
    }
    for (const [name, slot] of this.slots) {
      const shape = slot.param.shape;
      tf.tidy(() => {
        slot.m.assign(tf.tensor(byName.get(`${name}.exp_avg`)!.data, shape, 'float32'));
        slot.v.assign(tf.tensor(byName.get(`${name}.exp_avg_sq`)!.data, shape, 'float32'));
      });
      slot.step = byName.get(`${name}.step`)!.data[0];
    }
  }

  /** Frees m and v. The parameters themselves belong to the caller and are kept. */
  dispose(): void {
    if (this.isDisposed) return;
    for (const slot of this.slots.values()) {
      slot.m.dispose();
      slot.v.dispose();
    }
    this.isDisposed = true;
  }

  private getSlot(name: string): SlotState {
    const slot = this.slots.get(name);
    if (slot === undefined) throw new Error(`AdamW: unknown param "${name}" (known: ${this.describeNames()})`);
    return slot;
  }

  private describeNames(): string {
    const names = this.paramNames;
    return names.length <= 8 ? names.join(', ') : `${names.slice(0, 8).join(', ')}, … (${names.length} in all)`;
  }
}

function checkInRange(field: string, value: number, lo: number, hi: number, isHiOpen: boolean): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < lo || (isHiOpen ? value >= hi : value > hi)) {
    throw new Error(`${field} must be a finite number in [${lo}, ${hi}${isHiOpen ? ')' : ']'}, got ${value}`);
  }
}

function checkEntry(entry: NamedArray | undefined, key: string, shape: readonly number[]): void {
  if (entry === undefined) throw new Error(`AdamW.importState: missing entry "${key}"`);
  if (!tf.util.arraysEqual(entry.shape, [...shape])) {
    throw new Error(`AdamW.importState: "${key}" has shape [${entry.shape}], expected [${shape}]`);
  }
  const size = shape.reduce((a, b) => a * b, 1);
  if (!(entry.data instanceof Float32Array) || entry.data.length !== size) {
    throw new Error(
      `AdamW.importState: "${key}" data must be a Float32Array of ${size} values, got ${entry.data?.length ?? 'none'}`,
    );
  }
}
