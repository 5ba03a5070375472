/**
 * The one entry point for every linear projection of the Qwen3 model, with an
 * optional LoRA adapter (Hu et al. 2021, "LoRA", Eq. 3: h = W₀x + BAx, scaled by α/r).
 *
 *   y = x Wᵀ + scale · (x Aᵀ) Bᵀ,   W [out, in] (PyTorch layout), A [r, in], B [out, r]
 *
 * Qwen3 linear layers have no bias. The LoRA map is keyed by the adapted weight's
 * Hugging Face name (`model.layers.0.self_attn.q_proj.weight`); the training code
 * (src/model/qwen3/train) creates and merges adapters against this contract.
 */
import * as tf from './tf';
import { applyMatMulWeightT } from './matmul';

export interface LoraAdapter {
  /** [r, in] */
  A: tf.Variable;
  /** [out, r] */
  B: tf.Variable;
  /** alpha / r */
  scale: number;
}

export type LoraMap = Map<string, LoraAdapter>;

export type ParamMap = Map<string, tf.Variable>;

/** A parameter by Hugging Face name, or a clear error naming it. */
export function getParam(params: ParamMap, name: string): tf.Variable {
  const v = params.get(name);
  if (!v) throw new Error(`missing parameter '${name}'`);
  return v;
}

/**
 * Applies the linear layer `name` to x [..., in] → [..., out]. With `lora` holding an
 * adapter for `name`, adds scale · (x Aᵀ) Bᵀ.
 */
export function applyLinear(x: tf.Tensor, name: string, params: ParamMap, lora?: LoraMap): tf.Tensor {
  const w = getParam(params, name); // [out, in]
  const [outDim, inDim] = w.shape;
  const lead = x.shape.slice(0, -1);
  if (x.shape[x.shape.length - 1] !== inDim) {
    throw new Error(`applyLinear(${name}): input last dim ${x.shape[x.shape.length - 1]} != weight in-dim ${inDim}`);
  }
  return tf.tidy(() => {
    const x2 = x.reshape([-1, inDim]) as tf.Tensor2D; // [N, in]
    let y = applyMatMulWeightT(x2, w as tf.Tensor2D); // [N, out]
    const adapter = lora?.get(name);
    if (adapter) {
      const xa = applyMatMulWeightT(x2, adapter.A as tf.Tensor2D); // [N, r]
      const xab = applyMatMulWeightT(xa, adapter.B as tf.Tensor2D); // [N, out]
      y = y.add(xab.mul(adapter.scale));
    }
    return y.reshape([...lead, outDim]);
  });
}
