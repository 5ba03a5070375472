/**
 * One Qwen3 decoder layer, forward and backward side by side (llm.c's habit), used by
 * training and by decode alike:
 *
 *   xn1 = RMSNorm(x)                       q, k, v = xn1 Wqᵀ, xn1 Wkᵀ, xn1 Wvᵀ   (+ LoRA)
 *   q, k = RoPE(RMSNorm_q(q)), RoPE(RMSNorm_k(k))   per head
 *   o = attention(q, k, v)                  (the caller's: packed segments, or KV-cache slots)
 *   hmid = x + o Woᵀ                        xn2 = RMSNorm(hmid)
 *   out = hmid + (silu(xn2 Wgᵀ) ⊙ xn2 Wuᵀ) Wdᵀ
 *
 * The forward writes every intermediate into the buffers of `LayerActs`. Training gives each
 * layer buffers of its own and keeps them for the backward; decode passes one set of scratch
 * buffers for every layer, some shared (the norms' rstd, xn1 and xn2, g and a: nothing reads
 * them again), and `out` = x. Only attention differs between the two, so it is a callback.
 */
import { F, type EngineCore } from './core';
import type { GradBuffers } from './gradBuffers';
import { swigluBwdCall, swigluFwdCall } from './kernelCalls';
import { sliceElements } from './threadSplit';
import { linearBackward, linearForward, rmsnormForward } from './linear';
import { layerNames } from './names';
import type { EngineParams } from './weights';

/** One layer's input and intermediates over N packed tokens (pointers; shapes per buffer). */
export interface LayerActs {
  /** [N, H] the layer's input. */
  x: number;
  /** [N] and [N, H]: the input norm. */
  rstd1: number;
  xn1: number;
  /** [N, nH·D] q before its norm, [N·nH] that norm's rstd, and q after norm and RoPE. */
  qraw: number;
  rstdq: number;
  q: number;
  /** The same for k, [N, nKv·D]. */
  kraw: number;
  rstdk: number;
  k: number;
  /** [N, nKv·D] */
  v: number;
  /** [nKv][D][N] planes of k (training's attention reads keys this way; 0 in decode). */
  kt: number;
  /** [N, nH·D] attention output. */
  o: number;
  /** [nH][N] log-sum-exp of each query's scores (training; 0 in decode). */
  lse: number;
  /** [N, H] x + o Woᵀ. */
  hmid: number;
  /** [N] and [N, H]: the post-attention norm. */
  rstd2: number;
  xn2: number;
  /** [N, I] gate, up and silu(g) ⊙ u. */
  g: number;
  u: number;
  a: number;
  /** LoRA: s·(x Aᵀ) [N, r] per adapted linear (training keeps them). */
  lora: Map<string, number>;
}

const ACT_BUFFERS = [
  'rstd1',
  'xn1',
  'qraw',
  'rstdq',
  'q',
  'kraw',
  'rstdk',
  'k',
  'v',
  'kt',
  'o',
  'lse',
  'hmid',
  'rstd2',
  'xn2',
  'g',
  'u',
  'a',
] as const;

/** Fresh buffers for one layer of a training forward over N tokens, with input x. */
export function allocLayerActs(e: EngineCore, x: number, N: number): LayerActs {
  const { rt, H, QD, KD, I, nH, nKv } = e;
  return {
    x,
    rstd1: rt.alloc(N),
    xn1: rt.alloc(N * H),
    qraw: rt.alloc(N * QD),
    rstdq: rt.alloc(N * nH),
    q: rt.alloc(N * QD),
    kraw: rt.alloc(N * KD),
    rstdk: rt.alloc(N * nKv),
    k: rt.alloc(N * KD),
    v: rt.alloc(N * KD),
    kt: rt.alloc(N * KD),
    o: rt.alloc(N * QD),
    lse: rt.alloc(N * nH),
    hmid: rt.alloc(N * H),
    rstd2: rt.alloc(N),
    xn2: rt.alloc(N * H),
    g: rt.alloc(N * I),
    u: rt.alloc(N * I),
    a: rt.alloc(N * I),
    lora: new Map(),
  };
}

/** Frees a layer's activations (its input x too when `withInput`). */
export function releaseLayerActs(e: EngineCore, a: LayerActs, withInput: boolean): void {
  const rt = e.rt;
  for (const key of ACT_BUFFERS) {
    if (a[key] !== 0) rt.release(a[key]);
    a[key] = 0;
  }
  for (const t of a.lora.values()) rt.release(t);
  a.lora.clear();
  if (withInput && a.x !== 0) {
    rt.release(a.x);
    a.x = 0;
  }
}

/**
 * Layer i forward over N tokens at positions `pos` (int32 [N]): from a.x to `out` [N, H]
 * (out may be a.x: x is last read before the MLP writes out). `attend(a)` fills a.o from
 * a.q, a.k, a.v. With `keep`, LoRA activations stay in a.lora for the backward.
 */
export function layerForward(
  e: EngineCore,
  P: EngineParams,
  i: number,
  a: LayerActs,
  N: number,
  pos: number,
  out: number,
  attend: (a: LayerActs) => void,
  keep: boolean,
): void {
  const { rt, weights, rope, H, QD, KD, I, D, nH, nKv } = e;
  const k = rt.k;
  const eps = e.config.rms_norm_eps;
  const n = layerNames(i);
  const keepLora = (name: string, t: number | undefined) => {
    if (t !== undefined) a.lora.set(name, t);
  };
  rmsnormForward(e, P, n.inNorm, a.x, N, H, a.xn1, a.rstd1);
  keepLora(n.q, linearForward(e, P, n.q, a.xn1, N, a.qraw, 0, keep));
  keepLora(n.k, linearForward(e, P, n.k, a.xn1, N, a.kraw, 0, keep));
  keepLora(n.v, linearForward(e, P, n.v, a.xn1, N, a.v, 0, keep));
  k.rmsnormFwd(a.qraw, D, weights.ptr(P.get(n.qNorm)), a.q, D, a.rstdq, N * nH, D, eps);
  k.rmsnormFwd(a.kraw, D, weights.ptr(P.get(n.kNorm)), a.k, D, a.rstdk, N * nKv, D, eps);
  k.rope(a.q, QD, N, nH, D, pos, rope.cos, rope.sin, 1);
  k.rope(a.k, KD, N, nKv, D, pos, rope.cos, rope.sin, 1);
  attend(a);
  keepLora(n.o, linearForward(e, P, n.o, a.o, N, a.hmid, 0, keep));
  k.axpy(a.x, a.hmid, N * H, 1, 1);
  rmsnormForward(e, P, n.postNorm, a.hmid, N, H, a.xn2, a.rstd2);
  keepLora(n.gate, linearForward(e, P, n.gate, a.xn2, N, a.g, 0, keep));
  keepLora(n.up, linearForward(e, P, n.up, a.xn2, N, a.u, 0, keep));
  sliceElements(rt, N * I, (i0, n) => swigluFwdCall({ g: a.g + i0 * F, u: a.u + i0 * F, a: a.a + i0 * F, n }));
  keepLora(n.down, linearForward(e, P, n.down, a.a, N, out, 0, keep));
  k.axpy(a.hmid, out, N * H, 1, 1);
}

/**
 * Layer i backward: dx [N, H] holds ∂L/∂out on entry and ∂L/∂x on return; the weight (and
 * LoRA) gradients asked for add into `grads`. `attendBackward` adds ∂q, ∂k, ∂v (zeroed
 * [N, QD], [N, KD], [N, KD]) from ∂o.
 */
export function layerBackward(
  e: EngineCore,
  P: EngineParams,
  i: number,
  a: LayerActs,
  dx: number,
  N: number,
  pos: number,
  grads: GradBuffers,
  attendBackward: (a: LayerActs, dO: number, dq: number, dk: number, dv: number) => void,
): void {
  const { rt, weights, rope, H, QD, KD, I, D, nH, nKv } = e;
  const k = rt.k;
  const n = layerNames(i);
  // MLP: out = hmid + down(silu(gate(xn2)) ⊙ up(xn2)).
  const da = rt.alloc(N * I);
  linearBackward(e, P, n.down, a.a, dx, N, da, 0, grads, a.lora.get(n.down));
  const dg = rt.alloc(N * I);
  const du = rt.alloc(N * I);
  sliceElements(rt, N * I, (i0, n) =>
    swigluBwdCall({ g: a.g + i0 * F, u: a.u + i0 * F, da: da + i0 * F, dg: dg + i0 * F, du: du + i0 * F, n }),
  );
  rt.release(da);
  const dxn2 = rt.alloc(N * H);
  linearBackward(e, P, n.gate, a.xn2, dg, N, dxn2, 0, grads, a.lora.get(n.gate));
  linearBackward(e, P, n.up, a.xn2, du, N, dxn2, 1, grads, a.lora.get(n.up));
  rt.release(dg);
  rt.release(du);
  const gPost = grads.get(n.postNorm, H) ?? 0;
  k.rmsnormBwd(a.hmid, H, weights.ptr(P.get(n.postNorm)), dxn2, H, a.rstd2, dx, H, gPost, N, H, 1);
  rt.release(dxn2);
  // Attention: hmid = x + o_proj(attn(rope(norm(q)), rope(norm(k)), v)).
  const dO = rt.alloc(N * QD);
  linearBackward(e, P, n.o, a.o, dx, N, dO, 0, grads, a.lora.get(n.o));
  const dq = rt.allocZeroed(N * QD);
  const dk = rt.allocZeroed(N * KD);
  const dv = rt.allocZeroed(N * KD);
  attendBackward(a, dO, dq, dk, dv);
  rt.release(dO);
  k.rope(dq, QD, N, nH, D, pos, rope.cos, rope.sin, -1);
  k.rope(dk, KD, N, nKv, D, pos, rope.cos, rope.sin, -1);
  const dqraw = rt.alloc(N * QD);
  const dkraw = rt.alloc(N * KD);
  const gqNorm = grads.get(n.qNorm, D) ?? 0;
  const gkNorm = grads.get(n.kNorm, D) ?? 0;
  k.rmsnormBwd(a.qraw, D, weights.ptr(P.get(n.qNorm)), dq, D, a.rstdq, dqraw, D, gqNorm, N * nH, D, 0);
  k.rmsnormBwd(a.kraw, D, weights.ptr(P.get(n.kNorm)), dk, D, a.rstdk, dkraw, D, gkNorm, N * nKv, D, 0);
  rt.release(dq);
  rt.release(dk);
  const dxn1 = rt.alloc(N * H);
  linearBackward(e, P, n.q, a.xn1, dqraw, N, dxn1, 0, grads, a.lora.get(n.q));
  linearBackward(e, P, n.k, a.xn1, dkraw, N, dxn1, 1, grads, a.lora.get(n.k));
  linearBackward(e, P, n.v, a.xn1, dv, N, dxn1, 1, grads, a.lora.get(n.v));
  rt.release(dqraw);
  rt.release(dkraw);
  rt.release(dv);
  const gIn = grads.get(n.inNorm, H) ?? 0;
  k.rmsnormBwd(a.x, H, weights.ptr(P.get(n.inNorm)), dxn1, H, a.rstd1, dx, H, gIn, N, H, 1);
  rt.release(dxn1);
}
