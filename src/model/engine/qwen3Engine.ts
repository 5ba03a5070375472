/**
 * Qwen3 on the CPU engine: the same decoder as src/model/qwen3 (Hugging Face
 * `modeling_qwen3.py`: RMSNorm, q/k norm before rotate-half RoPE, GQA causal attention,
 * SwiGLU MLP, tied or untied LM head), written as explicit forward and backward passes
 * over float32 buffers in WebAssembly memory (the llm.c way) instead of a graph of tfjs
 * ops: every product is one SIMD kernel call, attention never holds a T×T matrix
 * (FlashAttention-2's online softmax and recomputation), and rows are packed back to back
 * with no padding.
 *   forward(rows)  → log p(ids[t+1] | ids[≤t]) and the entropy per position, optionally
 *                    keeping the activations; backward(ctx, ∂logp, ∂entropy) → gradients.
 *   extend(cache)  → appends tokens to KV-cache slots (prefill and decode are the same
 *                    call) and returns the next-token logits of each slot.
 * LoRA (Hu et al. 2021, Eq. 3): y = x Wᵀ + s·(x Aᵀ) Bᵀ on the adapted linears.
 * Simplifications: float32 only; one thread.
 */
import type { Qwen3Config } from '../qwen3/config';
import { getEngineRuntime, type EngineRuntime } from './runtime';
import { WeightCache, type EngineParams, type EngineTensor } from './weights';
import type { KernelCall } from './threads';

const F = 4;
/** Products smaller than this run on the calling thread (a dispatch costs tens of µs). */
const PARALLEL_FLOPS = 4e6;

/** Names of one layer's tensors. */
function layerNames(i: number) {
  const p = `model.layers.${i}`;
  return {
    inNorm: `${p}.input_layernorm.weight`,
    postNorm: `${p}.post_attention_layernorm.weight`,
    qNorm: `${p}.self_attn.q_norm.weight`,
    kNorm: `${p}.self_attn.k_norm.weight`,
    q: `${p}.self_attn.q_proj.weight`,
    k: `${p}.self_attn.k_proj.weight`,
    v: `${p}.self_attn.v_proj.weight`,
    o: `${p}.self_attn.o_proj.weight`,
    gate: `${p}.mlp.gate_proj.weight`,
    up: `${p}.mlp.up_proj.weight`,
    down: `${p}.mlp.down_proj.weight`,
  };
}

const EMBED = 'model.embed_tokens.weight';
const FINAL_NORM = 'model.norm.weight';
const LM_HEAD = 'lm_head.weight';

/** Gradient names of a LoRA adapter's matrices. */
export function loraGradName(weight: string, part: 'A' | 'B'): string {
  return `${weight}|${part}`;
}

interface LayerActs {
  x: number;
  rstd1: number;
  xn1: number;
  qraw: number;
  rstdq: number;
  q: number;
  kraw: number;
  rstdk: number;
  k: number;
  v: number;
  kt: number;
  o: number;
  lse: number;
  hmid: number;
  rstd2: number;
  xn2: number;
  g: number;
  u: number;
  a: number;
  /** LoRA: s·(x Aᵀ) [N, r] per adapted linear. */
  lora: Map<string, number>;
}

/** Rows shorter than this share no prefix (the copies would cost more than they save). */
const MIN_SHARED_PREFIX = 16;

/** A run of tokens computed together: a shared prefix (row −1) or one row's tokens after it. */
interface Segment {
  /** First token in the packed batch. */
  off: number;
  len: number;
  /** Position of its first token. */
  pos0: number;
  /** Index of the segment its tokens also attend to (the shared prefix), or −1. */
  parent: number;
  row: number;
}

interface BatchPlan {
  /** Tokens every row shares (0: no sharing). */
  prefix: number;
  segments: Segment[];
  N: number;
  lengths: number[];
}

/** LM-head items: hidden row index, target, and the (row, column) outputs each feeds. */
interface HeadPlan {
  hidden: Int32Array;
  target: Int32Array;
  outs: number[][];
}

interface KeyView {
  kt: number;
  ldkt: number;
  v: number;
  k: number;
  Tk: number;
  temps: number[];
}

/** What a forward keeps for its backward. */
export interface ForwardContext {
  params: EngineParams;
  pinned: EngineTensor[];
  plan: BatchPlan;
  head: HeadPlan;
  ids: number;
  pos: number;
  layers: LayerActs[];
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
}

/** One KV-cache slot: keys as [nKv][D][cap] planes and values as [cap][nKv·D] rows, per layer. */
export interface KvSlot {
  tokens: number[];
  cap: number;
  kt: number[];
  v: number[];
}

/** Where the engine's time went (wall milliseconds and tokens), for the benchmark. */
export interface EngineStats {
  forwardMs: number;
  forwardTokens: number;
  backwardMs: number;
  backwardTokens: number;
  /** extend() calls that append more than one token to some slot (prompts, observations). */
  prefillMs: number;
  prefillTokens: number;
  /** extend() calls of one token per slot (decoding). */
  decodeMs: number;
  decodeTokens: number;
}

export function createEngineStats(): EngineStats {
  return {
    forwardMs: 0,
    forwardTokens: 0,
    backwardMs: 0,
    backwardTokens: 0,
    prefillMs: 0,
    prefillTokens: 0,
    decodeMs: 0,
    decodeTokens: 0,
  };
}

export class Qwen3Engine {
  readonly rt: EngineRuntime;
  /** Cumulative; reset it by assigning createEngineStats(). */
  stats: EngineStats = createEngineStats();
  readonly weights: WeightCache;
  private readonly H: number;
  private readonly D: number;
  private readonly nH: number;
  private readonly nKv: number;
  private readonly I: number;
  private readonly V: number;
  private readonly QD: number;
  private readonly KD: number;
  private readonly scale: number;
  // RoPE angle tables [positions, D/2]; grown on demand past max_position_embeddings.
  private cos = 0;
  private sin = 0;
  private ropePositions = 0;
  private readonly work: number;
  private readonly headChunk: number;

  constructor(
    readonly config: Qwen3Config,
    rt: EngineRuntime = getEngineRuntime(),
  ) {
    const c = config;
    if (c.head_dim % 8 !== 0) throw new Error(`engine: head_dim ${c.head_dim} must be a multiple of 8`);
    if (c.hidden_size % 4 !== 0 || c.intermediate_size % 4 !== 0) {
      throw new Error('engine: hidden_size and intermediate_size must be multiples of 4');
    }
    this.rt = rt;
    this.H = c.hidden_size;
    this.D = c.head_dim;
    this.nH = c.num_attention_heads;
    this.nKv = c.num_key_value_heads;
    this.I = c.intermediate_size;
    this.V = c.vocab_size;
    this.QD = this.nH * this.D;
    this.KD = this.nKv * this.D;
    this.scale = 1 / Math.sqrt(this.D);
    this.weights = new WeightCache(rt, engineWeightCacheBytes(c));
    this.ensureRope(c.max_position_embeddings);
    this.work = rt.alloc(rt.k.attnScratchFloats(this.D));
    this.headChunk = Math.max(4, Math.floor((1 << 20) / this.V / 4) * 4);
  }

  /**
   * RoPE tables for `positions` positions (as computeHostRopeTables: angle p·θ^(−2j/D) in
   * double). Rows past max_position_embeddings (PACT's [x; h*; τ] rows can be) get positions
   * the weights never saw, as on the tfjs graph, which computes RoPE for any position.
   */
  private ensureRope(positions: number): void {
    if (positions <= this.ropePositions) return;
    const P = Math.max(positions, 2 * this.ropePositions);
    const half = this.D / 2;
    const cos = new Float32Array(P * half);
    const sin = new Float32Array(P * half);
    for (let p = 0; p < P; p++) {
      for (let j = 0; j < half; j++) {
        const angle = p * (1 / Math.pow(this.config.rope_theta, (2 * j) / this.D));
        cos[p * half + j] = Math.cos(angle);
        sin[p * half + j] = Math.sin(angle);
      }
    }
    if (this.ropePositions > 0) {
      this.rt.release(this.cos);
      this.rt.release(this.sin);
    }
    this.cos = this.rt.allocFrom(cos);
    this.sin = this.rt.allocFrom(sin);
    this.ropePositions = P;
  }

  private get k() {
    return this.rt.k;
  }

  /** Every tensor of a parameter set that a pass reads (pinned for a pending backward). */
  private listTensors(P: EngineParams): EngineTensor[] {
    const out: EngineTensor[] = [P.get(EMBED), P.get(FINAL_NORM)];
    if (!this.config.tie_word_embeddings) out.push(P.get(LM_HEAD));
    for (let i = 0; i < this.config.num_hidden_layers; i++)
      for (const name of Object.values(layerNames(i))) out.push(P.get(name));
    for (const ad of P.lora?.values() ?? []) out.push(ad.A, ad.B);
    return out;
  }

  private head(P: EngineParams): EngineTensor {
    return P.get(this.config.tie_word_embeddings ? EMBED : LM_HEAD);
  }

  // ------------------------------------------------------------------ threads

  /** C (+)= A·B (kernels.gemm), split over the runtime's threads by rows, or by columns for few rows. */
  private mm(
    a: number,
    lda: number,
    b: number,
    ldb: number,
    c: number,
    ldc: number,
    M: number,
    N: number,
    K: number,
    acc: number,
  ): void {
    const T = this.rt.threads;
    if (T === 1 || 2 * M * N * K < PARALLEL_FLOPS) {
      this.k.gemm(a, lda, b, ldb, c, ldc, M, N, K, acc);
      return;
    }
    const tasks: KernelCall[][] = [];
    if (M >= 8 * T) {
      const step = Math.ceil(M / (2 * T) / 4) * 4;
      for (let i0 = 0; i0 < M; i0 += step)
        tasks.push([['gemm', a + i0 * lda * F, lda, b, ldb, c + i0 * ldc * F, ldc, Math.min(step, M - i0), N, K, acc]]);
    } else {
      const step = Math.max(8, Math.ceil(N / (2 * T) / 8) * 8);
      for (let j0 = 0; j0 < N; j0 += step)
        tasks.push([['gemm', a, lda, b + j0 * F, ldb, c + j0 * F, ldc, M, Math.min(step, N - j0), K, acc]]);
    }
    this.rt.parallel(tasks);
  }

  /** C (+)= Aᵀ·B (kernels.gemmTN, A stored [K, M]), split over the threads by rows of C. */
  private mmTN(
    a: number,
    lda: number,
    b: number,
    ldb: number,
    c: number,
    ldc: number,
    M: number,
    N: number,
    K: number,
    acc: number,
  ): void {
    const T = this.rt.threads;
    if (T === 1 || 2 * M * N * K < PARALLEL_FLOPS || M < 8) {
      this.k.gemmTN(a, lda, b, ldb, c, ldc, M, N, K, acc);
      return;
    }
    const step = Math.ceil(M / (2 * T) / 4) * 4;
    const tasks: KernelCall[][] = [];
    for (let i0 = 0; i0 < M; i0 += step)
      tasks.push([['gemmTN', a + i0 * F, lda, b, ldb, c + i0 * ldc * F, ldc, Math.min(step, M - i0), N, K, acc]]);
    this.rt.parallel(tasks);
  }

  /** Scratch buffers for `n` attention calls that may run at once (one each). */
  private allocWork(n: number): number[] {
    const floats = this.k.attnScratchFloats(this.D);
    return Array.from({ length: n }, () => this.rt.alloc(floats));
  }

  /** Runs a rows-wise kernel (lmHeadRows, lmHeadGradRows) over `rows` rows in slices, one task each. */
  private sliceRows(rows: number, slice: (r0: number, count: number) => KernelCall): void {
    const T = this.rt.threads;
    const step = T === 1 ? rows : Math.max(1, Math.ceil(rows / (2 * T)));
    const tasks: KernelCall[][] = [];
    for (let r0 = 0; r0 < rows; r0 += step) tasks.push([slice(r0, Math.min(step, rows - r0))]);
    this.rt.parallel(tasks);
  }

  // ------------------------------------------------------------------ building blocks

  /** y (+)= x Wᵀ (+ s·(x Aᵀ) Bᵀ) for x [N, in]; returns the LoRA activation s·(x Aᵀ) to keep, if any. */
  private linear(
    P: EngineParams,
    name: string,
    x: number,
    N: number,
    y: number,
    acc: number,
    keep: boolean,
  ): number | undefined {
    const w = P.get(name);
    const [outDim, inDim] = w.shape;
    this.mm(x, inDim, this.weights.ptrT(w), outDim, y, outDim, N, outDim, inDim, acc);
    const ad = P.lora?.get(name);
    if (!ad) return undefined;
    const r = ad.A.shape[0];
    const t = this.rt.alloc(N * r);
    this.mm(x, inDim, this.weights.ptrT(ad.A), r, t, r, N, r, inDim, 0); // [N, r]
    this.k.axpy(t, t, N * r, ad.scale, 0);
    this.mm(t, r, this.weights.ptrT(ad.B), outDim, y, outDim, N, outDim, r, 1);
    if (keep) return t;
    this.rt.release(t);
    return undefined;
  }

  /** dx (+)= dy W (+ LoRA), and the weight gradients asked for in `grads`. */
  private linearBackward(
    P: EngineParams,
    name: string,
    x: number,
    dy: number,
    N: number,
    dx: number,
    accDx: number,
    grads: GradBuffers,
    loraT: number | undefined,
  ): void {
    const w = P.get(name);
    const [outDim, inDim] = w.shape;
    this.mm(dy, outDim, this.weights.ptr(w), inDim, dx, inDim, N, inDim, outDim, accDx);
    const gW = grads.get(name, outDim * inDim);
    if (gW) this.mmTN(dy, outDim, x, inDim, gW, inDim, outDim, inDim, N, 1);
    const ad = P.lora?.get(name);
    if (!ad) return;
    if (loraT === undefined) throw new Error(`engine: no LoRA activation kept for ${name}`);
    const r = ad.A.shape[0];
    const gB = grads.get(loraGradName(name, 'B'), outDim * r);
    if (gB) this.mmTN(dy, outDim, loraT, r, gB, r, outDim, r, N, 1);
    const dt = this.rt.alloc(N * r);
    this.mm(dy, outDim, this.weights.ptr(ad.B), r, dt, r, N, r, outDim, 0);
    this.k.axpy(dt, dt, N * r, ad.scale, 0);
    const gA = grads.get(loraGradName(name, 'A'), r * inDim);
    if (gA) this.mmTN(dt, r, x, inDim, gA, inDim, r, inDim, N, 1);
    this.mm(dt, r, this.weights.ptr(ad.A), inDim, dx, inDim, N, inDim, r, 1);
    this.rt.release(dt);
  }

  private rmsnorm(P: EngineParams, name: string, x: number, rows: number, n: number, y: number, rstd: number): void {
    this.k.rmsnormFwd(x, n, this.weights.ptr(P.get(name)), y, n, rstd, rows, n, this.config.rms_norm_eps);
  }

  /** Copies head columns of k [N, nKv·D] (or v) into [nKv][D][ld] planes, columns [col0, col0 + N). */
  private toPlanes(src: number, N: number, planes: number, ld: number, col0: number): void {
    for (let g = 0; g < this.nKv; g++)
      this.k.transpose(src + g * this.D * F, this.KD, planes + (g * this.D * ld + col0) * F, ld, N, this.D);
  }

  // ------------------------------------------------------------------ training rows

  /**
   * How a batch is laid out: with a shared prefix (the K rollouts of a prompt share its
   * tokens x, the K trace-conditioned rows share [x; h*]) the prefix is one segment computed
   * once and each row keeps only its suffix; otherwise each row is its own segment.
   */
  private planSegments(rows: readonly ArrayLike<number>[]): BatchPlan {
    const lengths = rows.map((r) => r.length);
    let prefix = 0;
    if (rows.length >= 2) {
      const shortest = Math.min(...lengths);
      prefix = shortest - 1;
      for (let b = 1; b < rows.length && prefix > 0; b++) {
        let i = 0;
        while (i < prefix && rows[b][i] === rows[0][i]) i++;
        prefix = i;
      }
      if (prefix < MIN_SHARED_PREFIX) prefix = 0;
    }
    const segments: Segment[] = [];
    let N = 0;
    if (prefix > 0) {
      segments.push({ off: 0, len: prefix, pos0: 0, parent: -1, row: -1 });
      N = prefix;
    }
    rows.forEach((_, b) => {
      const len = lengths[b] - prefix;
      segments.push({ off: N, len, pos0: prefix, parent: prefix > 0 ? 0 : -1, row: b });
      N += len;
    });
    return { prefix, segments, N, lengths };
  }

  /** Bytes of activations a forward with `keep` holds for rows of these lengths sharing `prefix` tokens. */
  activationBytes(lengths: readonly number[], prefix: number): number {
    return engineActivationBytes(
      this.config,
      lengths.reduce((s, L) => s + L - prefix, prefix),
    );
  }

  /** LM-head positions: hidden row, target id, and the outputs (row, column) it feeds. */
  private planHead(rows: readonly ArrayLike<number>[], plan: BatchPlan): HeadPlan {
    const hidden: number[] = [];
    const target: number[] = [];
    const outs: number[][] = []; // per item: [row0, col0, row1, col1, …]
    const P = plan.prefix;
    if (P > 0) {
      for (let t = 0; t < P - 1; t++) {
        hidden.push(t);
        target.push(rows[0][t + 1]);
        outs.push(rows.flatMap((_, b) => [b, t]));
      }
    }
    for (const s of plan.segments) {
      if (s.row < 0) continue;
      const row = rows[s.row];
      for (let t = Math.max(0, P - 1); t < row.length - 1; t++) {
        hidden.push(t < P ? t : s.off + t - P);
        target.push(row[t + 1]);
        outs.push([s.row, t]);
      }
    }
    return { hidden: Int32Array.from(hidden), target: Int32Array.from(target), outs };
  }

  /**
   * Keys and values a segment attends to, as attnFwd reads them: its own (columns of the batch
   * planes), or its parent's followed by its own, copied into `tmp` ([nKv][D][Tk] planes and
   * [Tk][KD] rows, plus key rows for the backward).
   */
  private gatherKeys(a: LayerActs, plan: BatchPlan, s: Segment, withRows: boolean): KeyView {
    const { rt, KD, D, nKv } = this;
    const N = plan.N;
    if (s.parent < 0) {
      return { kt: a.kt + s.off * F, ldkt: N, v: a.v + s.off * KD * F, k: a.k + s.off * KD * F, Tk: s.len, temps: [] };
    }
    const p = plan.segments[s.parent];
    const Tk = p.len + s.len;
    const kt = rt.alloc(KD * Tk);
    const v = rt.alloc(KD * Tk);
    const f32 = rt.f32;
    for (let r = 0; r < nKv * D; r++) {
      const src = (a.kt >> 2) + r * N;
      f32.copyWithin((kt >> 2) + r * Tk, src + p.off, src + p.off + p.len);
      f32.copyWithin((kt >> 2) + r * Tk + p.len, src + s.off, src + s.off + s.len);
    }
    f32.copyWithin(v >> 2, (a.v >> 2) + p.off * KD, (a.v >> 2) + (p.off + p.len) * KD);
    f32.copyWithin((v >> 2) + p.len * KD, (a.v >> 2) + s.off * KD, (a.v >> 2) + (s.off + s.len) * KD);
    const temps = [kt, v];
    let k = 0;
    if (withRows) {
      k = rt.alloc(KD * Tk);
      f32.copyWithin(k >> 2, (a.k >> 2) + p.off * KD, (a.k >> 2) + (p.off + p.len) * KD);
      f32.copyWithin((k >> 2) + p.len * KD, (a.k >> 2) + s.off * KD, (a.k >> 2) + (s.off + s.len) * KD);
      temps.push(k);
    }
    return { kt, ldkt: Tk, v, k, Tk, temps };
  }

  /**
   * Log-probs (and entropies) of packed rows. With `keep`, the activations stay for
   * backward(ctx, …) — release them with release(ctx) if no backward comes.
   */
  forward(
    P: EngineParams,
    rows: readonly ArrayLike<number>[],
    opts: { withEntropy?: boolean; keep?: boolean } = {},
  ): ForwardResult {
    const { rt, k, H, QD, KD, I, D, nH, nKv } = this;
    const keep = opts.keep ?? false;
    rows.forEach((r, b) => {
      if (r.length < 1) throw new Error(`engine.forward: rows[${b}] is empty`);
      this.ensureRope(r.length);
      for (let t = 0; t < r.length; t++) {
        const id = r[t];
        if (!Number.isInteger(id) || id < 0 || id >= this.V)
          throw new Error(`engine.forward: rows[${b}][${t}] = ${id} is not a token id in [0, ${this.V})`);
      }
    });
    const started = performance.now();
    const plan = this.planSegments(rows);
    const { N, segments } = plan;
    const pinned = this.listTensors(P);
    this.weights.pin(pinned);
    const ids = rt.alloc(N);
    const pos = rt.alloc(N);
    {
      const i32 = rt.i32;
      for (const s of segments) {
        const src = rows[s.row < 0 ? 0 : s.row];
        for (let t = 0; t < s.len; t++) {
          i32[(ids >> 2) + s.off + t] = src[s.pos0 + t];
          i32[(pos >> 2) + s.off + t] = s.pos0 + t;
        }
      }
    }
    let x = rt.alloc(N * H);
    k.embedFwd(ids, N, this.weights.ptr(P.get(EMBED)), H, x);
    const layers: LayerActs[] = [];
    const group = nH / nKv;
    for (let i = 0; i < this.config.num_hidden_layers; i++) {
      const n = layerNames(i);
      const a: LayerActs = {
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
      const keepLora = (name: string, t: number | undefined) => {
        if (t !== undefined) a.lora.set(name, t);
      };
      this.rmsnorm(P, n.inNorm, x, N, H, a.xn1, a.rstd1);
      keepLora(n.q, this.linear(P, n.q, a.xn1, N, a.qraw, 0, keep));
      keepLora(n.k, this.linear(P, n.k, a.xn1, N, a.kraw, 0, keep));
      keepLora(n.v, this.linear(P, n.v, a.xn1, N, a.v, 0, keep));
      k.rmsnormFwd(a.qraw, D, this.weights.ptr(P.get(n.qNorm)), a.q, D, a.rstdq, N * nH, D, this.config.rms_norm_eps);
      k.rmsnormFwd(a.kraw, D, this.weights.ptr(P.get(n.kNorm)), a.k, D, a.rstdk, N * nKv, D, this.config.rms_norm_eps);
      k.rope(a.q, QD, N, nH, D, pos, this.cos, this.sin, 1);
      k.rope(a.k, KD, N, nKv, D, pos, this.cos, this.sin, 1);
      this.toPlanes(a.k, N, a.kt, N, 0);
      {
        const views = segments.map((s) => this.gatherKeys(a, plan, s, false));
        const work = this.allocWork(segments.length * nH);
        const tasks: KernelCall[][] = [];
        segments.forEach((s, si) => {
          const keys = views[si];
          for (let h = 0; h < nH; h++) {
            const g = Math.floor(h / group);
            tasks.push([
              [
                'attnFwd',
                a.q + (s.off * QD + h * D) * F,
                QD,
                keys.kt + g * D * keys.ldkt * F,
                keys.ldkt,
                keys.v + g * D * F,
                KD,
                a.o + (s.off * QD + h * D) * F,
                QD,
                a.lse + (h * N + s.off) * F,
                1,
                s.len,
                keys.Tk - s.len,
                1,
                keys.Tk,
                D,
                this.scale,
                work[si * nH + h],
              ],
            ]);
          }
        });
        rt.parallel(tasks);
        for (const p of [...work, ...views.flatMap((v) => v.temps)]) rt.release(p);
      }
      keepLora(n.o, this.linear(P, n.o, a.o, N, a.hmid, 0, keep));
      k.axpy(x, a.hmid, N * H, 1, 1);
      this.rmsnorm(P, n.postNorm, a.hmid, N, H, a.xn2, a.rstd2);
      keepLora(n.gate, this.linear(P, n.gate, a.xn2, N, a.g, 0, keep));
      keepLora(n.up, this.linear(P, n.up, a.xn2, N, a.u, 0, keep));
      k.swigluFwd(a.g, a.u, a.a, N * I);
      const next = rt.alloc(N * H);
      keepLora(n.down, this.linear(P, n.down, a.a, N, next, 0, keep));
      k.axpy(a.hmid, next, N * H, 1, 1);
      if (keep) layers.push(a);
      else this.releaseLayer(a, true);
      x = next;
    }
    const rstdF = rt.alloc(N);
    const xnF = rt.alloc(N * H);
    this.rmsnorm(P, FINAL_NORM, x, N, H, xnF, rstdF);
    const head = this.planHead(rows, plan);
    const items = head.hidden.length;
    const headLse = rt.alloc(Math.max(1, items));
    const logprobs = plan.lengths.map((L) => new Float32Array(Math.max(0, L - 1)));
    const entropy = opts.withEntropy ? plan.lengths.map((L) => new Float32Array(Math.max(0, L - 1))) : undefined;
    this.runHead(P, head, xnF, (j0, c, stats) => {
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
    this.stats.forwardMs += performance.now() - started;
    this.stats.forwardTokens += N;
    if (!keep) {
      this.release(ctx);
      return { logprobs, entropy };
    }
    return { logprobs, entropy, ctx };
  }

  /** Walks the LM-head items in chunks: gathers their hidden rows, z = h Wᵀ, and their stats (logp, entropy, lse). */
  private runHead(
    P: EngineParams,
    head: HeadPlan,
    xnF: number,
    onChunk: (j0: number, count: number, stats: number) => void,
  ): void {
    const { rt, H, V } = this;
    const C = this.headChunk;
    const z = rt.alloc(C * V);
    const stats = rt.alloc(C * 3);
    const h = rt.alloc(C * H);
    const t = rt.alloc(C);
    const headT = this.weights.ptrT(this.head(P));
    try {
      for (let j0 = 0; j0 < head.hidden.length; j0 += C) {
        const c = Math.min(C, head.hidden.length - j0);
        this.gatherHead(head, j0, c, xnF, h, t);
        this.mm(h, H, headT, V, z, V, c, V, H, 0);
        this.sliceRows(c, (r0, n) => ['lmHeadRows', z + r0 * V * F, n, V, t + r0 * F, stats + r0 * 3 * F]);
        onChunk(j0, c, stats);
      }
    } finally {
      for (const p of [z, stats, h, t]) rt.release(p);
    }
  }

  /** Copies the hidden rows and targets of head items [j0, j0 + c) into h [c, H] and t [c]. */
  private gatherHead(head: HeadPlan, j0: number, c: number, xnF: number, h: number, t: number): void {
    const f32 = this.rt.f32;
    const H = this.H;
    for (let r = 0; r < c; r++) {
      const src = (xnF >> 2) + head.hidden[j0 + r] * H;
      f32.copyWithin((h >> 2) + r * H, src, src + H);
    }
    this.rt.i32.set(head.target.subarray(j0, j0 + c), t >> 2);
  }

  /**
   * Gradients of Σ gLogp·logp + Σ gEnt·entropy with respect to the parameters named in
   * `gradNames` (HF names; LoRA matrices as loraGradName(weight, 'A' | 'B')). Releases ctx.
   */
  backward(
    ctx: ForwardContext,
    gLogp: readonly ArrayLike<number>[],
    gEnt: readonly ArrayLike<number>[] | null,
    gradNames: ReadonlySet<string>,
  ): Map<string, Float32Array> {
    if (ctx.isReleased) throw new Error('engine.backward: the forward context was released');
    const { rt, k, H, QD, KD, I, D, nH, nKv, V } = this;
    const P = ctx.params;
    const { plan, head } = ctx;
    const { N, segments } = plan;
    const grads = new GradBuffers(rt, gradNames);
    const started = performance.now();
    try {
      // LM head: dz = ∂/∂z of each item's terms (summed over the rows it feeds), then
      // ∂h = dz W scattered back to the items' hidden rows, and ∂W += dzᵀ h.
      const dxnF = rt.allocZeroed(N * H);
      const C = this.headChunk;
      const z = rt.alloc(C * V);
      const hc = rt.alloc(C * H);
      const dh = rt.alloc(C * H);
      const tc = rt.alloc(C);
      const gl = rt.alloc(C);
      const ge = rt.alloc(C);
      const headW = this.head(P);
      const headT = this.weights.ptrT(headW);
      const headPtr = this.weights.ptr(headW);
      const gHead = grads.get(this.config.tie_word_embeddings ? EMBED : LM_HEAD, V * H);
      for (let j0 = 0; j0 < head.hidden.length; j0 += C) {
        const c = Math.min(C, head.hidden.length - j0);
        this.gatherHead(head, j0, c, ctx.xnF, hc, tc);
        const f32 = rt.f32;
        for (let r = 0; r < c; r++) {
          const o = head.outs[j0 + r];
          let sl = 0;
          let se = 0;
          for (let m = 0; m < o.length; m += 2) {
            sl += gLogp[o[m]][o[m + 1]];
            if (gEnt) se += gEnt[o[m]][o[m + 1]];
          }
          f32[(gl >> 2) + r] = sl;
          f32[(ge >> 2) + r] = se;
        }
        this.mm(hc, H, headT, V, z, V, c, V, H, 0);
        this.sliceRows(c, (r0, n) => [
          'lmHeadGradRows',
          z + r0 * V * F,
          n,
          V,
          tc + r0 * F,
          ctx.headLse + (j0 + r0) * F,
          gl + r0 * F,
          ge + r0 * F,
        ]);
        this.mm(z, V, headPtr, H, dh, H, c, H, V, 0);
        for (let r = 0; r < c; r++) k.axpy(dh + r * H * F, dxnF + head.hidden[j0 + r] * H * F, H, 1, 1);
        if (gHead) this.mmTN(z, V, hc, H, gHead, H, V, H, c, 1);
      }
      for (const p of [z, hc, dh, tc, gl, ge]) rt.release(p);
      const dx = rt.alloc(N * H);
      k.rmsnormBwd(
        ctx.xL,
        H,
        this.weights.ptr(P.get(FINAL_NORM)),
        dxnF,
        H,
        ctx.rstdF,
        dx,
        H,
        grads.get(FINAL_NORM, H) ?? 0,
        N,
        H,
        0,
      );
      rt.release(dxnF);
      const group = nH / nKv;
      for (let i = ctx.layers.length - 1; i >= 0; i--) {
        const a = ctx.layers[i];
        const n = layerNames(i);
        // MLP: xnext = hmid + down(silu(gate(xn2)) ⊙ up(xn2)).
        const da = rt.alloc(N * I);
        this.linearBackward(P, n.down, a.a, dx, N, da, 0, grads, a.lora.get(n.down));
        const dg = rt.alloc(N * I);
        const du = rt.alloc(N * I);
        k.swigluBwd(a.g, a.u, da, dg, du, N * I);
        rt.release(da);
        const dxn2 = rt.alloc(N * H);
        this.linearBackward(P, n.gate, a.xn2, dg, N, dxn2, 0, grads, a.lora.get(n.gate));
        this.linearBackward(P, n.up, a.xn2, du, N, dxn2, 1, grads, a.lora.get(n.up));
        rt.release(dg);
        rt.release(du);
        k.rmsnormBwd(
          a.hmid,
          H,
          this.weights.ptr(P.get(n.postNorm)),
          dxn2,
          H,
          a.rstd2,
          dx,
          H,
          grads.get(n.postNorm, H) ?? 0,
          N,
          H,
          1,
        );
        rt.release(dxn2);
        // Attention: hmid = x + o_proj(attn(rope(norm(q)), rope(norm(k)), v)).
        const dO = rt.alloc(N * QD);
        this.linearBackward(P, n.o, a.o, dx, N, dO, 0, grads, a.lora.get(n.o));
        const dq = rt.allocZeroed(N * QD);
        const dk = rt.allocZeroed(N * KD);
        const dv = rt.allocZeroed(N * KD);
        {
          const prepared = segments.map((s) => {
            const keys = this.gatherKeys(a, plan, s, true);
            const vt = rt.alloc(KD * keys.Tk);
            this.toPlanes(keys.v, keys.Tk, vt, keys.Tk, 0);
            // A segment with a parent writes its keys' gradients to a buffer of its own first.
            const dkS = s.parent < 0 ? dk + s.off * KD * F : rt.allocZeroed(KD * keys.Tk);
            const dvS = s.parent < 0 ? dv + s.off * KD * F : rt.allocZeroed(KD * keys.Tk);
            return { s, keys, vt, dkS, dvS };
          });
          const work = this.allocWork(segments.length * nKv);
          const tasks: KernelCall[][] = [];
          prepared.forEach(({ s, keys, vt, dkS, dvS }, si) => {
            for (let g = 0; g < nKv; g++) {
              // The heads of one KV head add into its dk, dv: one task, in order.
              const calls: KernelCall[] = [];
              for (let h = g * group; h < (g + 1) * group; h++) {
                calls.push([
                  'attnBwd',
                  a.q + (s.off * QD + h * D) * F,
                  QD,
                  keys.k + g * D * F,
                  KD,
                  keys.kt + g * D * keys.ldkt * F,
                  keys.ldkt,
                  vt + g * D * keys.Tk * F,
                  keys.Tk,
                  a.o + (s.off * QD + h * D) * F,
                  QD,
                  dO + (s.off * QD + h * D) * F,
                  QD,
                  a.lse + (h * N + s.off) * F,
                  1,
                  dq + (s.off * QD + h * D) * F,
                  QD,
                  dkS + g * D * F,
                  KD,
                  dvS + g * D * F,
                  KD,
                  s.len,
                  keys.Tk - s.len,
                  keys.Tk,
                  D,
                  this.scale,
                  work[si * nKv + g],
                ]);
              }
              tasks.push(calls);
            }
          });
          rt.parallel(tasks);
          for (const { s, keys, vt, dkS, dvS } of prepared) {
            if (s.parent >= 0) {
              const p = segments[s.parent];
              k.axpy(dkS, dk + p.off * KD * F, p.len * KD, 1, 1);
              k.axpy(dvS, dv + p.off * KD * F, p.len * KD, 1, 1);
              k.axpy(dkS + p.len * KD * F, dk + s.off * KD * F, s.len * KD, 1, 1);
              k.axpy(dvS + p.len * KD * F, dv + s.off * KD * F, s.len * KD, 1, 1);
              rt.release(dkS);
              rt.release(dvS);
            }
            rt.release(vt);
            for (const t of keys.temps) rt.release(t);
          }
          for (const w of work) rt.release(w);
        }
        rt.release(dO);
        k.rope(dq, QD, N, nH, D, ctx.pos, this.cos, this.sin, -1);
        k.rope(dk, KD, N, nKv, D, ctx.pos, this.cos, this.sin, -1);
        const dqraw = rt.alloc(N * QD);
        const dkraw = rt.alloc(N * KD);
        k.rmsnormBwd(
          a.qraw,
          D,
          this.weights.ptr(P.get(n.qNorm)),
          dq,
          D,
          a.rstdq,
          dqraw,
          D,
          grads.get(n.qNorm, D) ?? 0,
          N * nH,
          D,
          0,
        );
        k.rmsnormBwd(
          a.kraw,
          D,
          this.weights.ptr(P.get(n.kNorm)),
          dk,
          D,
          a.rstdk,
          dkraw,
          D,
          grads.get(n.kNorm, D) ?? 0,
          N * nKv,
          D,
          0,
        );
        rt.release(dq);
        rt.release(dk);
        const dxn1 = rt.alloc(N * H);
        this.linearBackward(P, n.q, a.xn1, dqraw, N, dxn1, 0, grads, a.lora.get(n.q));
        this.linearBackward(P, n.k, a.xn1, dkraw, N, dxn1, 1, grads, a.lora.get(n.k));
        this.linearBackward(P, n.v, a.xn1, dv, N, dxn1, 1, grads, a.lora.get(n.v));
        rt.release(dqraw);
        rt.release(dkraw);
        rt.release(dv);
        k.rmsnormBwd(
          a.x,
          H,
          this.weights.ptr(P.get(n.inNorm)),
          dxn1,
          H,
          a.rstd1,
          dx,
          H,
          grads.get(n.inNorm, H) ?? 0,
          N,
          H,
          1,
        );
        rt.release(dxn1);
        this.releaseLayer(a, true); // its input x (the previous layer's output) is not read again
      }
      const gEmb = grads.get(EMBED, V * H);
      if (gEmb) k.embedBwd(ctx.ids, N, dx, H, gEmb);
      rt.release(dx);
      return grads.collect();
    } finally {
      this.stats.backwardMs += performance.now() - started;
      this.stats.backwardTokens += N;
      grads.dispose();
      this.release(ctx);
    }
  }

  /** Frees a layer's activations (its input x too when `withInput`). */
  private releaseLayer(a: LayerActs, withInput: boolean): void {
    const rt = this.rt;
    for (const key of [
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
    ] as const) {
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

  /** Frees what a forward kept (idempotent). */
  release(ctx: ForwardContext): void {
    if (ctx.isReleased) return;
    ctx.isReleased = true;
    for (const a of ctx.layers) this.releaseLayer(a, true);
    for (const p of [ctx.ids, ctx.pos, ctx.xL, ctx.rstdF, ctx.xnF, ctx.headLse]) this.rt.release(p);
    this.weights.unpin(ctx.pinned);
  }

  // ------------------------------------------------------------------ KV cache

  createSlot(capacity: number): KvSlot {
    const cap = Math.max(64, Math.ceil(capacity / 64) * 64);
    const slot: KvSlot = { tokens: [], cap, kt: [], v: [] };
    for (let i = 0; i < this.config.num_hidden_layers; i++) {
      slot.kt.push(this.rt.alloc(this.KD * cap));
      slot.v.push(this.rt.alloc(this.KD * cap));
    }
    return slot;
  }

  freeSlot(slot: KvSlot): void {
    for (const p of [...slot.kt, ...slot.v]) this.rt.release(p);
    slot.kt = [];
    slot.v = [];
    slot.tokens = [];
  }

  /** Bytes one slot of `capacity` positions holds. */
  slotBytes(capacity: number): number {
    return engineSlotBytes(this.config, capacity);
  }

  /** Copies the first `length` cached positions of `src` into `dst` (dst.cap ≥ length). */
  copySlot(src: KvSlot, dst: KvSlot, length: number): void {
    const f32 = this.rt.f32;
    for (let i = 0; i < this.config.num_hidden_layers; i++) {
      for (let row = 0; row < this.KD; row++) {
        const s = (src.kt[i] >> 2) + row * src.cap;
        f32.copyWithin((dst.kt[i] >> 2) + row * dst.cap, s, s + length);
      }
      f32.copyWithin(dst.v[i] >> 2, src.v[i] >> 2, (src.v[i] >> 2) + length * this.KD);
    }
    dst.tokens = src.tokens.slice(0, length);
  }

  /** Grows a slot to hold `needed` positions. */
  private ensureCapacity(slot: KvSlot, needed: number): void {
    if (needed <= slot.cap) return;
    const bigger = this.createSlot(Math.max(needed, slot.cap * 2));
    this.copySlot(slot, bigger, slot.tokens.length);
    const tokens = slot.tokens;
    this.freeSlot(slot);
    Object.assign(slot, bigger, { tokens });
  }

  /**
   * Appends `tokens` to each slot (positions continue from the slot's length), running the
   * decoder over all new tokens together, and returns the next-token logits of each slot
   * after its last new token: [items, V], a copy.
   */
  extend(P: EngineParams, items: readonly { slot: KvSlot; tokens: ArrayLike<number> }[]): Float32Array {
    const { rt, k, H, QD, KD, I, D, nH, nKv, V } = this;
    const started = performance.now();
    const counts = items.map((it) => it.tokens.length);
    if (counts.some((c) => c < 1)) throw new Error('engine.extend: every slot needs at least one new token');
    const offsets: number[] = [];
    let N = 0;
    for (const c of counts) {
      offsets.push(N);
      N += c;
    }
    for (const it of items) {
      const needed = it.slot.tokens.length + it.tokens.length;
      this.ensureRope(needed);
      this.ensureCapacity(it.slot, needed);
    }
    const pinned = this.listTensors(P);
    this.weights.pin(pinned);
    const temps: number[] = [];
    const tmp = (floats: number) => {
      const p = rt.alloc(floats);
      temps.push(p);
      return p;
    };
    try {
      const ids = tmp(N);
      const pos = tmp(N);
      const i32 = rt.i32;
      items.forEach((it, j) => {
        const start = it.slot.tokens.length;
        for (let t = 0; t < counts[j]; t++) {
          const id = it.tokens[t];
          if (!Number.isInteger(id) || id < 0 || id >= V)
            throw new Error(`engine.extend: token ${id} is not in [0, ${V})`);
          i32[(ids >> 2) + offsets[j] + t] = id;
          i32[(pos >> 2) + offsets[j] + t] = start + t;
        }
      });
      const x = tmp(N * H);
      k.embedFwd(ids, N, this.weights.ptr(P.get(EMBED)), H, x);
      const rstd = tmp(N * Math.max(nH, 1));
      const xn = tmp(N * H);
      const q = tmp(N * QD);
      const kb = tmp(N * KD);
      const v = tmp(N * KD);
      const qn = tmp(N * QD);
      const kn = tmp(N * KD);
      const o = tmp(N * QD);
      const g = tmp(N * I);
      const u = tmp(N * I);
      const h2 = tmp(N * H);
      const group = nH / nKv;
      for (let i = 0; i < this.config.num_hidden_layers; i++) {
        const n = layerNames(i);
        this.rmsnorm(P, n.inNorm, x, N, H, xn, rstd);
        this.linear(P, n.q, xn, N, q, 0, false);
        this.linear(P, n.k, xn, N, kb, 0, false);
        this.linear(P, n.v, xn, N, v, 0, false);
        k.rmsnormFwd(q, D, this.weights.ptr(P.get(n.qNorm)), qn, D, rstd, N * nH, D, this.config.rms_norm_eps);
        k.rmsnormFwd(kb, D, this.weights.ptr(P.get(n.kNorm)), kn, D, rstd, N * nKv, D, this.config.rms_norm_eps);
        k.rope(qn, QD, N, nH, D, pos, this.cos, this.sin, 1);
        k.rope(kn, KD, N, nKv, D, pos, this.cos, this.sin, 1);
        const tasks: KernelCall[][] = [];
        items.forEach((it, j) => {
          const s = it.slot;
          const start = s.tokens.length;
          const c = counts[j];
          this.toPlanes(kn + offsets[j] * KD * F, c, s.kt[i], s.cap, start);
          rt.f32.copyWithin((s.v[i] >> 2) + start * KD, (v >> 2) + offsets[j] * KD, (v >> 2) + (offsets[j] + c) * KD);
          if (c === 1) {
            // One token: the `group` query heads of a KV head are adjacent rows at one position.
            for (let gh = 0; gh < nKv; gh++) {
              tasks.push([
                [
                  'attnFwd',
                  qn + (offsets[j] * QD + gh * group * D) * F,
                  D,
                  s.kt[i] + gh * D * s.cap * F,
                  s.cap,
                  s.v[i] + gh * D * F,
                  KD,
                  o + (offsets[j] * QD + gh * group * D) * F,
                  D,
                  0,
                  0,
                  group,
                  start,
                  0,
                  start + 1,
                  D,
                  this.scale,
                  0,
                ],
              ]);
            }
            return;
          }
          for (let h = 0; h < nH; h++) {
            const gh = Math.floor(h / group);
            tasks.push([
              [
                'attnFwd',
                qn + (offsets[j] * QD + h * D) * F,
                QD,
                s.kt[i] + gh * D * s.cap * F,
                s.cap,
                s.v[i] + gh * D * F,
                KD,
                o + (offsets[j] * QD + h * D) * F,
                QD,
                0,
                0,
                c,
                start,
                1,
                start + c,
                D,
                this.scale,
                0,
              ],
            ]);
          }
        });
        // Each call gets its own scratch and log-sum-exp rows (slots 8 and the last).
        const work = this.allocWork(tasks.length);
        const lseRows = Math.max(nH, ...counts);
        const lseAll = rt.alloc(tasks.length * lseRows);
        tasks.forEach(([call], t) => {
          call[9] = lseAll + t * lseRows * F;
          call[10] = 1;
          call[call.length - 1] = work[t];
        });
        rt.parallel(tasks);
        for (const w of work) rt.release(w);
        rt.release(lseAll);
        this.linear(P, n.o, o, N, h2, 0, false);
        k.axpy(x, h2, N * H, 1, 1);
        this.rmsnorm(P, n.postNorm, h2, N, H, xn, rstd);
        this.linear(P, n.gate, xn, N, g, 0, false);
        this.linear(P, n.up, xn, N, u, 0, false);
        k.swigluFwd(g, u, g, N * I);
        this.linear(P, n.down, g, N, x, 0, false);
        k.axpy(h2, x, N * H, 1, 1);
      }
      for (const [j, it] of items.entries()) for (let t = 0; t < counts[j]; t++) it.slot.tokens.push(it.tokens[t]);
      // Logits of each slot's last new token.
      const last = tmp(items.length * H);
      items.forEach((_, j) =>
        rt.f32.copyWithin(
          (last >> 2) + j * H,
          (x >> 2) + (offsets[j] + counts[j] - 1) * H,
          (x >> 2) + (offsets[j] + counts[j]) * H,
        ),
      );
      this.rmsnorm(P, FINAL_NORM, last, items.length, H, xn, rstd);
      const z = tmp(items.length * V);
      this.mm(xn, H, this.weights.ptrT(this.head(P)), V, z, V, items.length, V, H, 0);
      return rt.read(z, items.length * V);
    } finally {
      for (const p of temps) rt.release(p);
      this.weights.unpin(pinned);
      const isDecode = counts.every((c) => c === 1);
      this.stats[isDecode ? 'decodeMs' : 'prefillMs'] += performance.now() - started;
      this.stats[isDecode ? 'decodeTokens' : 'prefillTokens'] += N;
    }
  }
}

/** Zeroed gradient buffers, allocated on first request for the names asked for. */
class GradBuffers {
  private readonly buffers = new Map<string, { ptr: number; floats: number }>();

  constructor(
    private readonly rt: EngineRuntime,
    private readonly names: ReadonlySet<string>,
  ) {}

  /** The buffer of `name` (floats values), or undefined when its gradient is not asked for. */
  get(name: string, floats: number): number | undefined {
    if (!this.names.has(name)) return undefined;
    let b = this.buffers.get(name);
    if (!b) {
      b = { ptr: this.rt.allocZeroed(floats), floats };
      this.buffers.set(name, b);
    }
    return b.ptr;
  }

  collect(): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    for (const [name, b] of this.buffers) out.set(name, this.rt.read(b.ptr, b.floats));
    return out;
  }

  dispose(): void {
    for (const b of this.buffers.values()) this.rt.release(b.ptr);
    this.buffers.clear();
  }
}

/** Bytes of kept activations of a forward over `tokens` packed positions (per layer: 4·H + 3·QD + 4·KD + 3·I + nH + nKv + 2 floats). */
export function engineActivationBytes(c: Qwen3Config, tokens: number): number {
  const H = c.hidden_size;
  const QD = c.num_attention_heads * c.head_dim;
  const KD = c.num_key_value_heads * c.head_dim;
  const perLayer =
    4 * H + 3 * QD + 4 * KD + 3 * c.intermediate_size + c.num_attention_heads + c.num_key_value_heads + 2;
  return F * tokens * (perLayer * c.num_hidden_layers + 2 * H + 4);
}

/** Bytes of one KV-cache slot of `capacity` positions: keys and values, [nKv·D] per position and layer. */
export function engineSlotBytes(c: Qwen3Config, capacity: number): number {
  return 2 * c.num_key_value_heads * c.head_dim * capacity * c.num_hidden_layers * F;
}

/** Bytes of weights the engine keeps resident (a few versions, each with its transposes) before it evicts. */
export function engineWeightCacheBytes(c: Qwen3Config): number {
  return 6 * 4 * countParams(c) + (64 << 20);
}

function countParams(c: Qwen3Config): number {
  const H = c.hidden_size;
  const layer =
    2 * H +
    2 * c.head_dim +
    H * c.num_attention_heads * c.head_dim * 2 +
    H * c.num_key_value_heads * c.head_dim * 2 +
    3 * H * c.intermediate_size;
  return c.vocab_size * H * (c.tie_word_embeddings ? 1 : 2) + c.num_hidden_layers * layer + H;
}

const engines = new Map<string, Qwen3Engine>();

/** The engine of a config (one per distinct config, on the shared runtime). */
export function getQwen3Engine(config: Qwen3Config): Qwen3Engine {
  const key = JSON.stringify(config);
  let e = engines.get(key);
  if (!e) {
    e = new Qwen3Engine(config);
    engines.set(key, e);
  }
  return e;
}

export { countParams as countEngineParams };
