/**
 * Qwen3 building blocks as in Hugging Face `modeling_qwen3.py`: RMSNorm
 * (Zhang & Sennrich 2019, Eq. 4: x / sqrt(mean(x²) + ε) · g), the SwiGLU MLP
 * (Shazeer 2020, Eq. 6: down(silu(gate(x)) ⊙ up(x))), and the token embedding.
 *
 * The embedding's forward is a row gather; its gradient is written by hand as
 * oneHot(ids)ᵀ · dy in chunks of positions, because tfjs-wasm lacks the
 * UnsortedSegmentSum kernel that tf.gather's gradient needs. No [N, V]
 * one-hot bigger than `maxChunkElements` is ever built.
 */
import * as tf from './tf';
import { applyLinear, getParam, type LoraMap, type ParamMap } from './linear';
import { matMulTransposeA } from './matmul';
import { gatherShardedRows, type VocabShards } from './vocabShards';

/** RMSNorm over the last dimension: x [..., H], weight [H]. */
export function applyRmsNorm(x: tf.Tensor, weight: tf.Tensor, eps: number): tf.Tensor {
  return tf.tidy(() => {
    const variance = tf.mean(tf.square(x), -1, true); // [..., 1]
    return x.mul(tf.rsqrt(variance.add(eps))).mul(weight);
  });
}

/** SiLU(x) = x · sigmoid(x). */
export function applySilu(x: tf.Tensor): tf.Tensor {
  return tf.tidy(() => x.mul(tf.sigmoid(x)));
}

/** SwiGLU MLP of layer `prefix` (`model.layers.{i}.mlp`): x [..., H] → [..., H]. */
export function applyMlp(x: tf.Tensor, prefix: string, params: ParamMap, lora?: LoraMap): tf.Tensor {
  return tf.tidy(() => {
    const gate = applyLinear(x, `${prefix}.gate_proj.weight`, params, lora); // [..., I]
    const up = applyLinear(x, `${prefix}.up_proj.weight`, params, lora); // [..., I]
    return applyLinear(applySilu(gate).mul(up), `${prefix}.down_proj.weight`, params, lora); // [..., H]
  });
}

/** Elements of the largest one-hot block built by embedding/log-prob gradients (16 MB of float32). */
export const DEFAULT_MAX_CHUNK_ELEMENTS = 4 * 1024 * 1024;

/**
 * Σ_n oneHot(ids_n)ᵀ dy_n: scatters rows of dy [N, H] into a [V, H] table gradient with
 * one-hot blocks of at most maxChunkElements. When the whole [N, V] one-hot does not
 * fit: for V > N (large vocabularies) the vocabulary is cut into row ranges, each
 * computed once and concatenated; otherwise the positions are cut and the [V, H]
 * partial sums added.
 */
export function scatterAddRows(
  ids: tf.Tensor1D,
  dy: tf.Tensor2D,
  vocabSize: number,
  maxChunkElements = DEFAULT_MAX_CHUNK_ELEMENTS,
): tf.Tensor2D {
  const N = ids.shape[0];
  if (N * vocabSize > maxChunkElements && vocabSize > N) {
    const rowsPerChunk = Math.max(1, Math.floor(maxChunkElements / Math.max(1, N)));
    const parts: tf.Tensor2D[] = [];
    for (let v0 = 0; v0 < vocabSize; v0 += rowsPerChunk) {
      const rows = Math.min(rowsPerChunk, vocabSize - v0);
      parts.push(
        tf.tidy(() => {
          // Ids outside [v0, v0 + rows) give an all-zero one-hot row (mask, not oneHot's range rule).
          const local = ids.toFloat().sub(v0); // float32: exact for ids < 2²⁴
          const inRange = tf.logicalAnd(local.greaterEqual(0), local.less(rows)).toFloat().reshape([-1, 1]); // [N, 1]
          const depth = Math.max(2, rows); // tf.oneHot needs depth ≥ 2
          const ohFull = tf.oneHot(tf.clipByValue(local, 0, rows - 1).toInt() as tf.Tensor1D, depth);
          const oh = ohFull.slice([0, 0], [N, rows]).mul(inRange) as tf.Tensor2D; // [N, rows]
          return matMulTransposeA(oh, dy); // [rows, H]
        }),
      );
    }
    const out = parts.length === 1 ? parts[0] : (tf.concat(parts, 0) as tf.Tensor2D);
    if (parts.length > 1) tf.dispose(parts);
    return out;
  }
  const chunk = Math.max(1, Math.min(N, Math.floor(maxChunkElements / vocabSize)));
  let acc: tf.Tensor2D | null = null;
  for (let start = 0; start < N; start += chunk) {
    const size = Math.min(chunk, N - start);
    const part = tf.tidy(() => {
      const oh = tf.oneHot(ids.slice([start], [size]), vocabSize) as tf.Tensor2D; // [c, V]
      return matMulTransposeA(oh, dy.slice([start, 0], [size, -1]) as tf.Tensor2D); // [V, H]
    });
    if (acc === null) acc = part;
    else {
      const next: tf.Tensor2D = acc.add(part);
      acc.dispose();
      part.dispose();
      acc = next;
    }
  }
  return acc ?? tf.zeros([vocabSize, dy.shape[1]]);
}

/**
 * Embedding lookup ids [...] (int32) → [..., H] from table [V, H], differentiable on
 * every backend. When `table` is a frozen Variable (trainable = false) no gradient is
 * built for it.
 */
export function embedTokens(ids: tf.Tensor, table: tf.Tensor): tf.Tensor {
  const [V, H] = table.shape;
  const outShape = [...ids.shape, H];
  const flatIds = tf.tidy(() => ids.toInt().reshape([-1]) as tf.Tensor1D); // [N]
  const isFrozen = table instanceof tf.Variable && !table.trainable;
  let out: tf.Tensor;
  if (isFrozen) {
    out = tf.tidy(() => tf.gather(table, flatIds).reshape(outShape));
  } else {
    const lookup = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      const tableIn = args[0] as tf.Tensor2D;
      (args[1] as tf.GradSaveFunc)([flatIds]);
      return {
        value: tf.gather(tableIn, flatIds) as tf.Tensor, // [N, H]
        gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
          tf.tidy(() => scatterAddRows(saved[0] as tf.Tensor1D, dy as tf.Tensor2D, V)),
      };
    });
    out = tf.tidy(() => (lookup(table) as tf.Tensor).reshape(outShape));
  }
  flatIds.dispose();
  return out;
}

/** Embedding lookup from a possibly row-sharded table (see vocabShards.ts): ids [...] → [..., H]. */
export function embedVocabTokens(ids: tf.Tensor, shards: VocabShards): tf.Tensor {
  if (shards.weights.length === 1) return embedTokens(ids, shards.weights[0]);
  const H = shards.weights[0].shape[1];
  return tf.tidy(() => {
    const flatIds = ids.toInt().reshape([-1]) as tf.Tensor1D; // [N]
    const rows = gatherShardedRows(flatIds, shards, (table, local) => embedTokens(local, table) as tf.Tensor2D); // [N, H]
    return rows.reshape([...ids.shape, H]);
  });
}

/** The LM-head matrix [V, H]: `lm_head.weight`, or the embedding when tied. */
export function getLmHeadWeight(params: ParamMap, isTied: boolean): tf.Variable<tf.Rank.R2> {
  return getParam(params, isTied ? 'model.embed_tokens.weight' : 'lm_head.weight') as tf.Variable<tf.Rank.R2>;
}
