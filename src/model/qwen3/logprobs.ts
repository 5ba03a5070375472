/**
 * Log-probabilities of given next tokens, log p(ids[t+1] | ids[≤t]), for a batch —
 * the quantity every loss of the project needs (SFT's −log p, the PPO/GRPO ratio
 * π_θ/π_old of PACT's objective, KL terms) — plus optional per-position entropy.
 *
 * Memory: the LM head, log-sum-exp, target logit and entropy are one custom-gradient
 * op that walks the positions in chunks, so no [B, T, V] logits or probabilities are
 * ever held (the backward pass recomputes each chunk's logits):
 *   z = h Wᵀ,  lse = log Σ_v e^{z_v},  logp = z_target − lse,  p = e^{z − lse}
 *   ent = lse − Σ p z
 *   ∂logp/∂z = onehot(target) − p,    ∂ent/∂z = −p ⊙ (z − Σ p z)
 *   ∂/∂h = ∂z · W,   ∂/∂W = ∂zᵀ · h   (summed over chunks)
 * When the LM-head weight is a frozen Variable (LoRA training), its gradient is not
 * computed at all.
 */
import * as tf from './tf';
import type { Qwen3Config } from './config';
import { DEFAULT_MAX_CHUNK_ELEMENTS } from './layers';
import type { ParamMap } from './linear';
import { matMulTransposeA, matMulTransposeB } from './matmul';
import { runQwen3Decoder, type ForwardOptions } from './model';
import { gatherShardedRows, getLmHeadShards, type VocabShards } from './vocabShards';
import { computeEngineTokenLogprobs, isEngineActive } from './engineBridge';
import { getActiveEngineSession } from './engineSession';

export interface TokenLogprobOptions extends ForwardOptions {
  /** Also return the entropy of the next-token distribution at each position. */
  withEntropy?: boolean;
  /** Largest [positions, V] block held at once (default 4 Mi floats = 16 MB). */
  maxChunkElements?: number;
}

export interface TokenLogprobs {
  /** [B, T−1]: log p(ids[t+1] | ids[≤t]); 0 where targetMask is 0. */
  logprobs: tf.Tensor2D;
  /** [B, T−1]: mask[t] · mask[t+1] (both the context token and the target are real). */
  targetMask: tf.Tensor2D;
  /** [B, T−1]: entropy (nats) of p(· | ids[≤t]); 0 where targetMask is 0. Present with withEntropy. */
  entropy?: tf.Tensor2D;
}

/**
 * Chunked LM head + log-softmax at given targets, differentiable in hidden and weight.
 * hidden [N, H], weight [V, H] (or its row shards, vocabShards.ts), targets [N] int32
 * → [N, K] with column 0 = log p(target) and, when withEntropy (K = 2), column 1 = entropy.
 */
export function computeChunkedTargetLogprobs(
  hidden: tf.Tensor2D,
  weight: tf.Tensor2D | VocabShards,
  targets: tf.Tensor1D,
  withEntropy: boolean,
  maxChunkElements = DEFAULT_MAX_CHUNK_ELEMENTS,
): tf.Tensor2D {
  const shards: VocabShards =
    weight instanceof tf.Tensor ? { weights: [weight], offsets: [0], vocabSize: weight.shape[0] } : weight;
  const nShards = shards.weights.length;
  const [N] = hidden.shape;
  const V = shards.vocabSize;
  const chunk = Math.max(1, Math.min(N, Math.floor(maxChunkElements / V)));
  const isWeightFrozen = shards.weights.every((w) => w instanceof tf.Variable && !w.trainable);
  const withWeights = (ws: tf.Tensor2D[]): VocabShards => ({ weights: ws, offsets: shards.offsets, vocabSize: V });

  // z = h Wᵀ over all shards: [c, V].
  const computeLogits = (h: tf.Tensor2D, ws: tf.Tensor2D[]): tf.Tensor2D =>
    ws.length === 1
      ? matMulTransposeB(h, ws[0])
      : (tf.concat(
          ws.map((w) => matMulTransposeB(h, w)),
          1,
        ) as tf.Tensor2D);

  // Forward of one chunk: [c, K] (no gradient recorded: runs inside the custom op).
  const runChunkForward = (h: tf.Tensor2D, ws: tf.Tensor2D[], t: tf.Tensor1D): tf.Tensor2D =>
    tf.tidy(() => {
      const z = computeLogits(h, ws); // [c, V]
      const lse = tf.logSumExp(z, 1); // [c]
      const wt = gatherShardedRows(t, withWeights(ws), (w, local) => tf.gather(w, local) as tf.Tensor2D); // [c, H]: W[target]
      const zt = tf.sum(h.mul(wt), 1); // [c]: z at the target
      const cols = [zt.sub(lse)];
      if (withEntropy) {
        const p = tf.exp(z.sub(lse.reshape([-1, 1]))); // [c, V]
        cols.push(lse.sub(tf.sum(p.mul(z), 1)));
      }
      return tf.stack(cols, 1) as tf.Tensor2D; // [c, K]
    });

  // Gradient of one chunk: [∂h [c, H]] or [∂h, ∂W_0 [V_0, H], ∂W_1, …].
  const runChunkBackward = (h: tf.Tensor2D, ws: tf.Tensor2D[], t: tf.Tensor1D, dy: tf.Tensor2D): tf.Tensor2D[] =>
    tf.tidy(() => {
      const z = computeLogits(h, ws); // [c, V]
      const lse = tf.logSumExp(z, 1, true); // [c, 1]
      const p = tf.exp(z.sub(lse)); // [c, V]
      const gLp = dy.slice([0, 0], [-1, 1]); // [c, 1]
      let dz = tf.oneHot(t, V).toFloat().sub(p).mul(gLp); // [c, V]
      if (withEntropy) {
        const gEnt = dy.slice([0, 1], [-1, 1]); // [c, 1]
        const ez = tf.sum(p.mul(z), 1, true); // [c, 1]: Σ p z
        dz = dz.sub(p.mul(z.sub(ez)).mul(gEnt));
      }
      const dzParts = ws.map(
        (w, k) => (ws.length === 1 ? dz : dz.slice([0, shards.offsets[k]], [-1, w.shape[0]])) as tf.Tensor2D,
      ); // [c, V_k]
      const dh = tf.addN(dzParts.map((d, k) => tf.matMul(d, ws[k]))) as tf.Tensor2D; // [c, H]
      if (isWeightFrozen) return [dh];
      return [dh, ...dzParts.map((d) => matMulTransposeA(d, h))]; // ∂W_k = dz_kᵀ h   [V_k, H]
    });

  const runForward = (h: tf.Tensor2D, ws: tf.Tensor2D[]): tf.Tensor2D => {
    const parts: tf.Tensor2D[] = [];
    for (let s = 0; s < N; s += chunk) {
      const c = Math.min(chunk, N - s);
      parts.push(tf.tidy(() => runChunkForward(h.slice([s, 0], [c, -1]), ws, targets.slice([s], [c]))));
    }
    const out = parts.length === 1 ? parts[0] : (tf.concat(parts, 0) as tf.Tensor2D);
    if (parts.length > 1) parts.forEach((t) => t.dispose());
    return out;
  };

  const runBackward = (dy: tf.Tensor2D, h: tf.Tensor2D, ws: tf.Tensor2D[], t: tf.Tensor1D): tf.Tensor[] => {
    const dhParts: tf.Tensor2D[] = [];
    let dwAcc: tf.Tensor2D[] | null = null;
    for (let s = 0; s < N; s += chunk) {
      const c = Math.min(chunk, N - s);
      const [dh, ...dws] = tf.tidy(() =>
        runChunkBackward(h.slice([s, 0], [c, -1]), ws, t.slice([s], [c]), dy.slice([s, 0], [c, -1])),
      );
      dhParts.push(dh);
      if (isWeightFrozen) continue;
      if (dwAcc === null) dwAcc = dws;
      else {
        const next: tf.Tensor2D[] = dwAcc.map((acc, k) => acc.add(dws[k]) as tf.Tensor2D);
        tf.dispose([...dwAcc, ...dws]);
        dwAcc = next;
      }
    }
    const dh = dhParts.length === 1 ? dhParts[0] : (tf.concat(dhParts, 0) as tf.Tensor2D);
    if (dhParts.length > 1) dhParts.forEach((t) => t.dispose());
    return isWeightFrozen ? [dh] : [dh, ...dwAcc!];
  };

  // Inputs of the custom op: hidden, plus the weight shards unless they are frozen.
  const inputs: tf.Tensor[] = isWeightFrozen ? [hidden] : [hidden, ...shards.weights];
  const op = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const save = args[args.length - 1] as tf.GradSaveFunc;
    const hIn = args[0] as tf.Tensor2D;
    const ws = isWeightFrozen ? shards.weights : (args.slice(1, 1 + nShards) as tf.Tensor2D[]);
    save([hIn, ...ws, targets]);
    return {
      value: runForward(hIn, ws),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        runBackward(
          dy as tf.Tensor2D,
          saved[0] as tf.Tensor2D,
          saved.slice(1, 1 + nShards) as tf.Tensor2D[],
          saved[1 + nShards] as tf.Tensor1D,
        ),
    };
  });
  return op(...inputs) as tf.Tensor2D;
}

/**
 * log p(ids[t+1] | ids[≤t]) for every position of a batch.
 * inputIds [B, T] int32, attentionMask [B, T] (1 token, 0 padding) → TokenLogprobs with
 * [B, T−1] tensors. Differentiable inside runEngineGradients(() => tf.variableGrads(…))
 * (engineSession.ts: on the CPU engine that call declares the pass differentiable; the tfjs
 * graph needs only the tape, and accumulateGradients opens both).
 */
export function computeTokenLogprobs(
  params: ParamMap,
  config: Qwen3Config,
  inputIds: tf.Tensor2D,
  attentionMask: tf.Tensor2D,
  opts: TokenLogprobOptions = {},
): TokenLogprobs {
  const [B, T] = inputIds.shape;
  if (T < 2) throw new Error(`computeTokenLogprobs: need at least 2 tokens per row, got T = ${T}`);
  if (isEngineActive(params, config)) {
    const viaEngine = computeEngineTokenLogprobs(params, config, inputIds, attentionMask, {
      lora: opts.lora,
      withEntropy: opts.withEntropy,
      session: getActiveEngineSession(),
    });
    if (viaEngine) return viaEngine;
  }
  const { hidden } = runQwen3Decoder(params, config, inputIds, attentionMask, opts);
  const result = tf.tidy(() => {
    const H = config.hidden_size;
    const h = hidden.slice([0, 0, 0], [B, T - 1, H]).reshape([B * (T - 1), H]) as tf.Tensor2D; // [N, H]
    const targets = inputIds
      .slice([0, 1], [B, T - 1])
      .toInt()
      .reshape([-1]) as tf.Tensor1D; // [N]
    const m = attentionMask.toFloat();
    const targetMask = m.slice([0, 0], [B, T - 1]).mul(m.slice([0, 1], [B, T - 1])) as tf.Tensor2D; // [B, T−1]
    const w = getLmHeadShards(params, config.tie_word_embeddings); // [V, H] in row shards
    const withEntropy = opts.withEntropy ?? false;
    const out = computeChunkedTargetLogprobs(h, w, targets, withEntropy, opts.maxChunkElements); // [N, K]
    const logprobs = out
      .slice([0, 0], [-1, 1])
      .reshape([B, T - 1])
      .mul(targetMask) as tf.Tensor2D;
    const entropy = withEntropy
      ? (out
          .slice([0, 1], [-1, 1])
          .reshape([B, T - 1])
          .mul(targetMask) as tf.Tensor2D)
      : undefined;
    return { logprobs, targetMask, entropy };
  });
  hidden.dispose();
  return result;
}
