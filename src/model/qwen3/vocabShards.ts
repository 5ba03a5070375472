/**
 * Row-sharded vocabulary matrices (the embedding and an untied LM head, [V, H]) for
 * WebGPU adapters whose maxStorageBufferBindingSize is smaller than the tensor
 * (Qwen3-0.6B's embedding is 151936 · 1024 · 4 B = 622 MB; many GPUs bind at most
 * 128–256 MB). A sharded matrix is stored in the parameter map as
 * `model.embed_tokens.weight#shard0`, `#shard1`, … (rows [offset_k, offset_k + V_k)) in
 * place of the single name; every reader of these matrices goes through
 * getVocabShards, so unsharded maps (cpu, wasm, small models) behave exactly as before.
 *
 * Embedding of a sharded table: Σ_k gather(W_k, clip(id − offset_k)) · [id ∈ shard k].
 * Logits: concat_k(h · W_kᵀ) along the vocabulary.
 */
import * as tf from './tf';
import type { ParamMap } from './linear';
import { applyMatMulWeightT } from './matmul';

export const SHARD_MARK = '#shard';

/** The only tensors that may be sharded (their readers are shard-aware). */
export const VOCAB_MATRIX_NAMES: readonly string[] = ['model.embed_tokens.weight', 'lm_head.weight'];

export interface VocabShards {
  /** [V_k, H] each, in row order. */
  weights: tf.Tensor2D[];
  /** First vocabulary row of each shard. */
  offsets: number[];
  vocabSize: number;
}

export function formatShardName(name: string, index: number): string {
  return `${name}${SHARD_MARK}${index}`;
}

/** The matrix `name` as shards: the single tensor when unsharded. */
export function getVocabShards(params: ParamMap, name: string): VocabShards {
  const single = params.get(name);
  if (single) return { weights: [single as tf.Tensor2D], offsets: [0], vocabSize: single.shape[0] };
  const weights: tf.Tensor2D[] = [];
  const offsets: number[] = [];
  let rows = 0;
  for (let k = 0; params.has(formatShardName(name, k)); k++) {
    const w = params.get(formatShardName(name, k)) as tf.Tensor2D;
    offsets.push(rows);
    weights.push(w);
    rows += w.shape[0];
  }
  if (weights.length === 0) throw new Error(`missing parameter '${name}'`);
  return { weights, offsets, vocabSize: rows };
}

/** The LM-head matrix as shards: `lm_head.weight`, or the embedding when tied. */
export function getLmHeadShards(params: ParamMap, isTied: boolean): VocabShards {
  return getVocabShards(params, isTied ? 'model.embed_tokens.weight' : 'lm_head.weight');
}

/** Rows per shard so that one shard of `cols` float32 columns fits in maxBytes. */
export function computeRowsPerShard(cols: number, maxBytes: number): number {
  const rows = Math.floor(maxBytes / (4 * cols));
  if (rows < 1) throw new Error(`a single row of ${cols} floats exceeds the ${maxBytes}-byte buffer limit`);
  return rows;
}

/**
 * Σ_k gather(W_k, clip(ids − offset_k)) · [ids ∈ shard k] for flat ids [N] (int32)
 * → [N, H]. `gatherRows(table, localIds)` does the per-shard lookup (differentiable or
 * not, as the caller needs).
 */
export function gatherShardedRows(
  ids: tf.Tensor1D,
  shards: VocabShards,
  gatherRows: (table: tf.Tensor2D, localIds: tf.Tensor1D) => tf.Tensor2D,
): tf.Tensor2D {
  if (shards.weights.length === 1) return gatherRows(shards.weights[0], ids);
  return tf.tidy(() => {
    let sum: tf.Tensor2D | null = null;
    shards.weights.forEach((w, k) => {
      const rows = w.shape[0];
      // In float32 (exact for ids < 2²⁴): tfjs-wasm's ClipByValue mishandles int32.
      const local = ids.toFloat().sub(shards.offsets[k]) as tf.Tensor1D;
      const inShard = tf.logicalAnd(local.greaterEqual(0), local.less(rows)).toFloat().reshape([-1, 1]); // [N, 1]
      const part = gatherRows(w, tf.clipByValue(local, 0, rows - 1).toInt() as tf.Tensor1D).mul(inShard) as tf.Tensor2D;
      sum = sum === null ? part : (sum.add(part) as tf.Tensor2D);
    });
    return sum!;
  });
}

/** Logits h [N, H] · Wᵀ → [N, V] over all shards (differentiable). */
export function computeShardedLogits(h: tf.Tensor2D, shards: VocabShards): tf.Tensor2D {
  if (shards.weights.length === 1) return applyMatMulWeightT(h, shards.weights[0]);
  return tf.tidy(
    () =>
      tf.concat(
        shards.weights.map((w) => applyMatMulWeightT(h, w)),
        1,
      ) as tf.Tensor2D,
  );
}

/** A host copy of a parameter map with shards merged back under their HF names (for export). */
export async function readParamsToHost(
  params: ParamMap,
): Promise<Map<string, { shape: number[]; data: Float32Array }>> {
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  const parts = new Map<string, Array<{ index: number; shape: number[]; data: Float32Array }>>();
  for (const [name, v] of params) {
    const data = (await v.data()) as Float32Array;
    const mark = name.lastIndexOf(SHARD_MARK);
    if (mark < 0) {
      out.set(name, { shape: [...v.shape], data: data.slice() });
      continue;
    }
    const base = name.slice(0, mark);
    const list = parts.get(base) ?? [];
    list.push({ index: Number(name.slice(mark + SHARD_MARK.length)), shape: [...v.shape], data });
    parts.set(base, list);
  }
  for (const [base, list] of parts) {
    list.sort((a, b) => a.index - b.index);
    const rows = list.reduce((n, p) => n + p.shape[0], 0);
    const cols = list[0].shape[1];
    const data = new Float32Array(rows * cols);
    let at = 0;
    for (const p of list) {
      data.set(p.data, at);
      at += p.data.length;
    }
    out.set(base, { shape: [rows, cols], data });
  }
  return out;
}
