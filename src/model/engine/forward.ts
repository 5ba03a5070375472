/**
 * The training forward over packed rows: log p(ids[t+1] | ids[≤t]) and the entropy per
 * position, optionally keeping every layer's activations (a ForwardContext) for backward.ts.
 *
 *   ids → embed → x₀ → layer 0 … layer L−1 → x_L → RMSNorm → xnF → LM head items → logp, entropy
 */
import type { EngineCore } from './core';
import { attendSegments } from './attention';
import { allocLayerActs, layerForward, releaseLayerActs, type LayerActs } from './layer';
import { runHead } from './lmHead';
import { rmsnormForward } from './linear';
import { EMBED, FINAL_NORM, listPassTensors } from './names';
import { planHead, planSegments, writeIdsAndPositions, type BatchPlan, type HeadPlan } from './plan';
import type { EngineParams, EngineTensor } from './weights';

/** What a forward keeps for its backward. */
export interface ForwardContext {
  params: EngineParams;
  pinned: EngineTensor[];
  plan: BatchPlan;
  head: HeadPlan;
  /** int32 [N] token ids and positions. */
  ids: number;
  pos: number;
  layers: LayerActs[];
  /** [N, H] the last layer's output, [N] and [N, H] its final norm. */
  xL: number;
  rstdF: number;
  xnF: number;
  /** LM-head log-sum-exp per head item. */
  headLse: number;
  isReleased: boolean;
}

export interface ForwardResult {
  /** Per row, log p(ids[t+1] | ids[≤t]) for t < L − 1. */
  logprobs: Float32Array[];
  /** Per row, the entropy of p(· | ids[≤t]) (when asked). */
  entropy?: Float32Array[];
  ctx?: ForwardContext;
  /** Tokens computed: the rows' lengths, a shared prefix counted once. */
  packedTokens: number;
}

/** Throws unless every row is non-empty and holds token ids of [0, V); grows the RoPE tables to the longest. */
function checkRows(e: EngineCore, rows: readonly ArrayLike<number>[]): void {
  rows.forEach((r, b) => {
    if (r.length < 1) throw new Error(`engine.forward: rows[${b}] is empty`);
    e.rope.ensure(r.length);
    for (let t = 0; t < r.length; t++) {
      const id = r[t];
      if (!Number.isInteger(id) || id < 0 || id >= e.V)
        throw new Error(`engine.forward: rows[${b}][${t}] = ${id} is not a token id in [0, ${e.V})`);
    }
  });
}

/**
 * Log-probs (and entropies) of packed rows. With `keep`, the activations stay in the
 * returned context for backward — free them with releaseForward if no backward comes.
 */
export function runForward(
  e: EngineCore,
  P: EngineParams,
  rows: readonly ArrayLike<number>[],
  opts: { withEntropy?: boolean; keep?: boolean },
): ForwardResult {
  const { rt, H } = e;
  const keep = opts.keep ?? false;
  checkRows(e, rows);
  const plan = planSegments(rows);
  const { N } = plan;
  const pinned = listPassTensors(e.config, P);
  e.weights.pin(pinned);
  const ids = rt.alloc(N);
  const pos = rt.alloc(N);
  writeIdsAndPositions(rt.i32, ids, pos, rows, plan);
  let x = rt.alloc(N * H);
  rt.k.embedFwd(ids, N, e.weights.ptr(P.get(EMBED)), H, x);
  const layers: LayerActs[] = [];
  for (let i = 0; i < e.config.num_hidden_layers; i++) {
    const a = allocLayerActs(e, x, N);
    const next = rt.alloc(N * H);
    layerForward(e, P, i, a, N, pos, next, (acts) => attendSegments(e, acts, plan), keep);
    if (keep) layers.push(a);
    else releaseLayerActs(e, a, true);
    x = next;
  }
  const rstdF = rt.alloc(N);
  const xnF = rt.alloc(N * H);
  rmsnormForward(e, P, FINAL_NORM, x, N, H, xnF, rstdF);
  const head = planHead(rows, plan);
  const items = head.hidden.length;
  const headLse = rt.alloc(Math.max(1, items));
  const logprobs = plan.lengths.map((L) => new Float32Array(Math.max(0, L - 1)));
  const entropy = opts.withEntropy ? plan.lengths.map((L) => new Float32Array(Math.max(0, L - 1))) : undefined;
  runHead(e, P, head, xnF, (j0, c, stats) => {
    const f32 = rt.f32;
    for (let r = 0; r < c; r++) {
      const o = head.outs[j0 + r];
      const lp = f32[(stats >> 2) + r * 3];
      const en = f32[(stats >> 2) + r * 3 + 1];
      for (let m = 0; m < o.length; m += 2) {
        logprobs[o[m]][o[m + 1]] = lp;
        if (entropy) entropy[o[m]][o[m + 1]] = en;
      }
      f32[(headLse >> 2) + j0 + r] = f32[(stats >> 2) + r * 3 + 2];
    }
  });
  const ctx: ForwardContext = {
    params: P,
    pinned,
    plan,
    head,
    ids,
    pos,
    layers,
    xL: x,
    rstdF,
    xnF,
    headLse,
    isReleased: false,
  };
  if (!keep) {
    releaseForward(e, ctx);
    return { logprobs, entropy, packedTokens: N };
  }
  return { logprobs, entropy, ctx, packedTokens: N };
}

/** Frees what a forward kept (idempotent). */
export function releaseForward(e: EngineCore, ctx: ForwardContext): void {
  if (ctx.isReleased) return;
  ctx.isReleased = true;
  for (const a of ctx.layers) releaseLayerActs(e, a, true);
  for (const p of [ctx.ids, ctx.pos, ctx.xL, ctx.rstdF, ctx.xnF, ctx.headLse]) e.rt.release(p);
  e.weights.unpin(ctx.pinned);
}
