#!/usr/bin/env python3
"""PyTorch side of `pact bench` (src/cli/commands/bench.ts): the same Qwen3 shapes and the
same measurements, so the TypeScript/tfjs numbers can be read as ratios, with the BLAS that
PyTorch ran on named (a ratio against a reference BLAS says nothing).

A float32 Qwen3 in plain torch, written like scripts/reference/qwen3_reference.py (which
follows Hugging Face modeling_qwen3.py: RMSNorm, q_norm/k_norm on head_dim before RoPE,
rotate-half RoPE, SwiGLU, tied or untied LM head) but in float32 and with a KV cache, since
that file computes in float64 for fixtures.

The baseline is PyTorch as a competent user of the installed version would write it (the
"fair" baseline, the default): causal attention that computes only the scores a query can see
(no T × T matrix under a mask), the query heads of a KV head grouped as a view of K and V (no
repeat_kv copy), and decode from a preallocated KV cache under torch.inference_mode().
Attention ("attention" in the output, with "attention_why"):
  sdpa      torch ≥ 2.0: F.scaled_dot_product_attention(is_causal=True), GQA by enable_gqa
            (torch ≥ 2.5) or K/V expanded views; used after it matches the chunked path on a
            small case at start-up.
  chunked   otherwise (torch 1.13): query chunks of --attn-chunk (256) rows, each against the
            keys up to the chunk's end, the diagonal block masked: about half of T × T computed
            (training keeps each chunk's probabilities for the backward, as any unfused
            attention does; inference holds one chunk × T block per head at a time).
--baseline textbook keeps the earlier baseline, for reading the figures measured with it:
repeat_kv copies of K and V for every query head, the whole T × T score matrix under a
[B, 1, T, T] additive mask (training through qwen3_reference.py), decode under no_grad that
copies the cache's K and V per query head at every step. `bench_torch.py --check` compares the
fair model with qwen3_reference.py in float64 (log-probs, loss, cached decode; JSON out).

Threads: torch.set_num_threads(N) and, where PyTorch's BLAS is OpenBLAS (Debian links torch
to the system libblas.so.3), openblas_set_num_threads(N), which torch does not set itself.
--torch-threads K sets torch's intra-op threads apart: on the 2 busy cores of the development
machine, 2 intra-op threads ran a training step several times slower than 1 (OpenMP's spinning
threads starved each other), while OpenBLAS's 2 threads helped.

Mode 1, `npm run bench` (no arguments): a JSON spec on stdin ("device" optional, default cpu)
  {"threads": 1, "device": "cpu", "cases": [{"name": "qwen3-nano", "config": {...HF config...},
     "train": {"batch": B, "seq": T, "iters": n}, "gen": {"batch": B, "prompt": P, "new": N, "iters": n}}]}
Output: one JSON object on stdout
  {"torch": version, "threads": t, "blas": BLAS, "results": [{"name", "train_tokens_per_s",
     "gen_cache_tokens_per_s", "gen_nocache_tokens_per_s"}]}
Timings: one untimed warm-up, then the mean over `iters`. Training = forward + backward
of the mean next-token loss + torch.optim.AdamW step (same as trainStep: clip to norm 1).

Mode 2, the real shapes (`--real`):
  bench_torch.py --real --config NAME=CONFIG [--config NAME=CONFIG ...] [--threads N]
      [--cases gemm,decode,train] [--device cpu|cuda] [--decode 8x1024+576] [--train 8x1536]
      [--gemm-n 1024] [--iters 1] [--torch-threads K] [--baseline fair|textbook] [--attn-chunk 256]
CONFIG is a Hugging Face config.json file or its JSON text inline. Cases, each for every
--config (gemm once):
  gemm    a dense n×n×n float32 matmul (torch.mm), best of 5 after a warm-up: GFLOP/s.
  decode  greedy decode with a preallocated KV cache (written in place, attention over the
          current length only, under inference_mode): batch B, a P-token random context
          prefilled in one forward, then N new tokens one step at a time; per-step cost at the
          start and end of decode.
  train   one float32 training step at B×T of the baseline's model: forward, mean next-token
          cross-entropy over all positions, backward, clip to norm 1, AdamW; one warm-up step,
          then the mean of --iters; achieved GFLOP/s from the matmul FLOP count below (full and
          causal), and as a fraction of gemm.
Output: one JSON object on stdout
  {"mode": "real", "torch", "python", "device", "cpu" (/proc/cpuinfo model name), "threads",
   "torch_threads", "baseline", "attention", "attention_why", "attention_chunk", "blas": BLAS,
   "gemm": {"n", "gflops", "gflops_median", "seconds_best"},
   "decode": [{"name", "batch", "context", "new_tokens", "prefill_s", "decode_s",
      "decode_tokens_per_s", "ms_per_step", "ms_per_step_first", "ms_per_step_last", "tokens_per_s"}],
   "train": [{"name", "batch", "seq", "params", "step_s", "tokens_per_s", "loss", "flops",
      "gflops", "fraction_of_gemm", "flops_causal", "gflops_causal"}]}
  BLAS = {"kind": "openblas"|"mkl"|"reference"|"cublas"|"unknown", "library" (openblas_get_config),
      "kernel" (openblas_get_corename, e.g. Haswell), "loaded", "alternative", "torch_blas_info",
      "torch_cpu_capability", "threadpoolctl" (when installed), "openblas_threads",
      "gemm_gflops", "is_reference", "why"}
  is_reference: the loaded BLAS (or /etc/alternatives/libblas.so.3) is Debian's reference
  BLAS (/usr/lib/x86_64-linux-gnu/blas/), or the kind is unknown and the CPU gemm reads under
  20 GFLOP/s. A caller must then refuse to print a ratio. `why` says what decided it.
Train FLOPs (matmuls only; backward = 2× forward): 3·B·T·[L·(2H·(nh+2nkv)·d + 2·nh·d·H
  + 6·H·I + 4·nh·d·T) + 2·H·V] (H hidden, I intermediate, L layers, d head_dim, V vocab; the
  attention term counts the full T×T product, as the textbook baseline computes it).
  flops_causal: the same with 2·nh·d·(T + 1) for the attention term (each query against the
  keys it sees, (T + 1)/2 on average), the least any causal implementation computes.
"""
import argparse
import json
import os
import platform
import re
import sys
import time

import openblas_core

openblas_core.ensure_openblas_kernel()  # before torch loads OpenBLAS (openblas_core.py's header)

import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from blas_info import (  # noqa: E402,F401 (set_threads: pretrain_torch.py calls bench_torch.set_threads)
    REFERENCE_BLAS_DIR, REFERENCE_GEMM_GFLOPS, cpu_model, describe_blas, loaded_blas_libraries,
    openblas_libraries, set_threads,
)


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


ATTENTION_CHUNK = 256


def attend_textbook(q, k, v):
    """The earlier baseline (kept as --baseline textbook): K and V copied for every query head
    (repeat_interleave) and the whole T × S score matrix under a mask."""
    T, S = q.shape[2], k.shape[2]
    rep = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(rep, dim=1)
    v = v.repeat_interleave(rep, dim=1)
    scores = torch.matmul(q, k.transpose(2, 3)) * (q.shape[-1] ** -0.5)
    if T > 1:
        causal = torch.ones(T, S, dtype=torch.bool, device=q.device).tril(S - T)
        scores = scores.masked_fill(~causal, torch.finfo(scores.dtype).min)
    return torch.matmul(F.softmax(scores, dim=-1), v)


def attend_chunked(q, k, v, chunk=None):
    """Causal attention by query chunks. q [B, nh, T, d] are the last T of S positions; k, v
    [B, nkv, S, d]. The g = nh / nkv query heads of a KV head are one view [B, nkv, g·c, d]
    of the chunk's queries (no copy of K or V); a chunk ending at position p reads keys [0, p]
    only, so the scores computed are ≈ half of T × S, with a mask on the chunk's diagonal block."""
    chunk = chunk or ATTENTION_CHUNK
    B, nh, T, d = q.shape
    nkv, S = k.shape[1], k.shape[2]
    g = nh // nkv
    off = S - T
    scale = d ** -0.5
    q5 = q.reshape(B, nkv, g, T, d)
    outs = []
    for t0 in range(0, T, chunk):
        t1 = min(T, t0 + chunk)
        c, end = t1 - t0, off + t1
        qc = q5[:, :, :, t0:t1].reshape(B, nkv, g * c, d)
        s = torch.matmul(qc, k[:, :, :end].transpose(2, 3)).mul_(scale)  # [B, nkv, g·c, end]
        if c > 1:  # query off + t0 + i sees keys ≤ off + t0 + i
            mask = torch.ones(c, end, dtype=torch.bool, device=q.device).triu_(off + t0 + 1)
            s.view(B, nkv, g, c, end).masked_fill_(mask, float("-inf"))
        outs.append(torch.matmul(torch.softmax(s, dim=-1), v[:, :, :end]).view(B, nkv, g, c, d))
    o = outs[0] if len(outs) == 1 else torch.cat(outs, dim=3)
    return o.view(B, nh, T, d)


def torch_at_least(major, minor):
    m = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (major, minor)


def attend_sdpa(q, k, v, chunk=None):
    """torch ≥ 2.0: F.scaled_dot_product_attention, is_causal=True (a fused kernel where the
    build has one); GQA by enable_gqa (torch ≥ 2.5) or K/V expanded as views over the group.
    A causal block that does not start at key 0 (T > 1 after a cache) goes by chunks."""
    B, nh, T, d = q.shape
    nkv, S = k.shape[1], k.shape[2]
    if T > 1 and T != S:
        return attend_chunked(q, k, v, chunk)
    if nh == nkv:
        return F.scaled_dot_product_attention(q, k, v, is_causal=T > 1)
    if torch_at_least(2, 5):
        return F.scaled_dot_product_attention(q, k, v, is_causal=T > 1, enable_gqa=True)
    g = nh // nkv
    k5 = k[:, :, None].expand(B, nkv, g, S, d)
    v5 = v[:, :, None].expand(B, nkv, g, S, d)
    o = F.scaled_dot_product_attention(q.reshape(B, nkv, g, T, d), k5, v5, is_causal=T > 1)
    return o.reshape(B, nh, T, d)


ATTENTION = {"textbook": attend_textbook, "chunked": attend_chunked, "sdpa": attend_sdpa}


def choose_attention(baseline):
    """(name, why): textbook when asked; else sdpa where torch has it and it agrees with the
    chunked path on a small causal GQA case, chunked otherwise."""
    if baseline == "textbook":
        return "textbook", "--baseline textbook: repeat_kv copies and a masked T × S score matrix"
    if not hasattr(F, "scaled_dot_product_attention"):
        return "chunked", (f"torch {torch.__version__} has no scaled_dot_product_attention: "
                           f"query chunks of {ATTENTION_CHUNK}")
    try:
        gen = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(2, n, 7, 8, generator=gen) for n in (4, 2, 2))
        err = max(float((attend_sdpa(q, k, v) - attend_chunked(q, k, v, 3)).abs().max()),
                  float((attend_sdpa(q[:, :, -1:], k, v) - attend_chunked(q[:, :, -1:], k, v, 3)).abs().max()))
        if err > 1e-4:
            return "chunked", f"scaled_dot_product_attention disagreed with the chunked path ({err:.1e})"
    except Exception as e:  # noqa: BLE001 (a build without the kernel: say why, run chunked)
        return "chunked", f"scaled_dot_product_attention failed ({type(e).__name__}: {e})"
    gqa = ", enable_gqa" if torch_at_least(2, 5) else ", K/V expanded views"
    return "sdpa", "F.scaled_dot_product_attention(is_causal=True)" + gqa


class Layer(nn.Module):
    def __init__(self, c, attention="chunked", chunk=None):
        super().__init__()
        h, d = c["hidden_size"], c["head_dim"]
        self.nh, self.nkv, self.d = c["num_attention_heads"], c["num_key_value_heads"], d
        self.attention, self.chunk = attention, chunk
        self.q_proj = nn.Linear(h, self.nh * d, bias=False)
        self.k_proj = nn.Linear(h, self.nkv * d, bias=False)
        self.v_proj = nn.Linear(h, self.nkv * d, bias=False)
        self.o_proj = nn.Linear(self.nh * d, h, bias=False)
        self.q_norm = RMSNorm(d, c["rms_norm_eps"])
        self.k_norm = RMSNorm(d, c["rms_norm_eps"])
        self.input_layernorm = RMSNorm(h, c["rms_norm_eps"])
        self.post_attention_layernorm = RMSNorm(h, c["rms_norm_eps"])
        i = c["intermediate_size"]
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x, cos, sin, cache=None):
        B, T, _ = x.shape
        y = self.input_layernorm(x)
        q = self.q_norm(self.q_proj(y).view(B, T, self.nh, self.d)).transpose(1, 2)
        k = self.k_norm(self.k_proj(y).view(B, T, self.nkv, self.d)).transpose(1, 2)
        v = self.v_proj(y).view(B, T, self.nkv, self.d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if cache is not None and "cap" in cache:
            # Preallocated cache [B, nkv, cap, d]: this step's keys written in place at
            # [start, start + T), attention over the first start + T positions only.
            start = cache["len"]
            cache["k"][:, :, start : start + T] = k
            cache["v"][:, :, start : start + T] = v
            cache["len"] = start + T
            # Slices of the cache: [B, nkv, S, d] views whose (B, nkv) dims merge, read in place.
            k, v = cache["k"][:, :, : start + T], cache["v"][:, :, : start + T]
        elif cache is not None:
            if cache.get("k") is not None:
                k = torch.cat((cache["k"], k), dim=2)
                v = torch.cat((cache["v"], v), dim=2)
            cache["k"], cache["v"] = k, v
        else:
            # [B, nkv, T, d] contiguous once, so that no chunk's product copies K or V.
            k, v = k.contiguous(), v.contiguous()
        if self.attention == "textbook":
            a = attend_textbook(q, k, v)
        else:
            a = ATTENTION[self.attention](q, k, v, self.chunk)
        x = x + self.o_proj(a.transpose(1, 2).reshape(B, T, -1))
        y = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y))


class Qwen3(nn.Module):
    def __init__(self, c, attention="chunked", chunk=None):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([Layer(c, attention, chunk) for _ in range(c["num_hidden_layers"])])
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.lm_head = None if c["tie_word_embeddings"] else nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        d = c["head_dim"]
        # RoPE angles in float64 (as the reference), cast to the activations' dtype.
        self.inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, ids, start=0, caches=None):
        T = ids.shape[1]
        pos = torch.arange(start, start + T, dtype=torch.float64, device=ids.device)
        freqs = torch.outer(pos, self.inv_freq.to(ids.device))
        emb = torch.cat((freqs, freqs), dim=-1)
        x = self.embed_tokens(ids)
        cos, sin = emb.cos().to(x.dtype)[None, None], emb.sin().to(x.dtype)[None, None]
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, None if caches is None else caches[i])
        x = self.norm(x)
        w = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        return x @ w.t()


def time_mean(fn, iters, device=torch.device("cpu")):
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    fn()  # warm-up
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - t0) / iters


def bench_case(case, device=torch.device("cpu")):
    c = case["config"]
    torch.manual_seed(0)
    model = Qwen3(c).to(device)
    V = c["vocab_size"]
    out = {"name": case["name"]}
    tr = case["train"]
    ids = torch.randint(0, V, (tr["batch"], tr["seq"]), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)

    def train_step():
        logits = model(ids)  # all T positions, as the tfjs side computes them
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    out["train_tokens_per_s"] = tr["batch"] * tr["seq"] / time_mean(train_step, tr["iters"], device)
    g = case["gen"]
    prompt = torch.randint(0, V, (g["batch"], g["prompt"]), device=device)

    @torch.no_grad()
    def gen_cache():
        caches = [dict() for _ in model.layers]
        logits = model(prompt, 0, caches)
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        for s in range(g["new"] - 1):
            logits = model(nxt, g["prompt"] + s, caches)
            nxt = logits[:, -1].argmax(-1, keepdim=True)

    @torch.no_grad()
    def gen_nocache():
        seq = prompt
        for _ in range(g["new"]):
            nxt = model(seq)[:, -1].argmax(-1, keepdim=True)
            seq = torch.cat((seq, nxt), dim=1)

    new_tokens = g["batch"] * g["new"]
    out["gen_cache_tokens_per_s"] = new_tokens / time_mean(gen_cache, g["iters"], device)
    out["gen_nocache_tokens_per_s"] = new_tokens / time_mean(gen_nocache, g["iters"], device)
    return out


def time_gemm(n, device, repeats=5):
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    torch.mm(a, b)
    sync()
    seconds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.mm(a, b)
        sync()
        seconds.append(time.perf_counter() - t0)
    seconds.sort()
    flops = 2.0 * n ** 3
    return {"n": n, "gflops": flops / seconds[0] / 1e9, "gflops_median": flops / seconds[len(seconds) // 2] / 1e9,
            "seconds_best": seconds[0]}


def parse_config_arg(text):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise SystemExit(f"--config {text!r}: expected NAME=FILE.json or NAME={{...}}")
    if value.lstrip().startswith("{"):
        return name, json.loads(value)
    with open(value) as f:
        return name, json.load(f)


def count_train_flops(c, B, T, causal=False):
    """Matmul FLOPs of one training step (the formula in the header). causal: the attention
    products over the keys each query sees, (T + 1) / 2 on average instead of T."""
    H, I, L, d, V = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"], c["head_dim"], c["vocab_size"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    attention = 2 * nh * d * (T + 1) if causal else 4 * nh * d * T
    per_token = L * (2 * H * (nh + 2 * nkv) * d + 2 * nh * d * H + 6 * H * I + attention) + 2 * H * V
    return 3 * B * T * per_token


def bench_decode(name, c, batch, context, new_tokens, device, attention="chunked"):
    """Greedy decode with a preallocated cache: prefill, then one token per step (see header)."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    torch.manual_seed(0)
    model = Qwen3(c, attention).to(device).eval()
    V = c["vocab_size"]
    prompt = torch.randint(0, V, (batch, context), device=device)
    cap = context + new_tokens

    def new_caches():
        shape = (batch, c["num_key_value_heads"], cap, c["head_dim"])
        return [{"cap": cap, "len": 0, "k": torch.zeros(shape, device=device), "v": torch.zeros(shape, device=device)}
                for _ in model.layers]

    def run(n_new):
        # The textbook baseline ran under no_grad; the fair one under inference_mode.
        with (torch.no_grad() if attention == "textbook" else torch.inference_mode()):
            return run_steps(n_new)

    def run_steps(n_new):
        caches = new_caches()
        sync()
        t0 = time.perf_counter()
        nxt = model(prompt, 0, caches)[:, -1].argmax(-1, keepdim=True)  # [B, 1]
        sync()
        step_times = []
        for s in range(n_new - 1):
            t = time.perf_counter()
            nxt = model(nxt, context + s, caches)[:, -1].argmax(-1, keepdim=True)
            sync()
            step_times.append(time.perf_counter() - t)
        return time.perf_counter() - t0, step_times

    run(min(new_tokens, 8))  # warm-up
    total, steps = run(new_tokens)
    decode_s = sum(steps)
    window = max(1, min(64, len(steps) // 4))
    return {
        "name": name, "batch": batch, "context": context, "new_tokens": new_tokens,
        "prefill_s": total - decode_s, "decode_s": decode_s,
        "decode_tokens_per_s": batch * len(steps) / decode_s if decode_s > 0 else None,
        "ms_per_step": 1000 * decode_s / max(1, len(steps)),
        "ms_per_step_first": 1000 * sum(steps[:window]) / window,
        "ms_per_step_last": 1000 * sum(steps[-window:]) / window,
        "tokens_per_s": batch * new_tokens / total,
    }


def bench_train(name, c, batch, seq, iters, device, gemm_gflops, attention="chunked"):
    """One training step in float32 (see header): the fair model (Qwen3 above, `attention`), or
    for --baseline textbook the reference Qwen3 (qwen3_reference.py, eager T×T attention)."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    torch.manual_seed(0)
    if attention == "textbook":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import qwen3_reference as ref

        ref.DTYPE = torch.float32
        if device.type == "cuda":
            # The reference builds its causal mask with torch.ones in forward: make that the GPU.
            if not hasattr(torch, "set_default_device"):
                raise SystemExit("--device cuda for the textbook train case needs torch ≥ 2.0 "
                                 "(torch.set_default_device)")
            torch.set_default_device(device)
        model = ref.Qwen3ForCausalLM(c).to(device)
        for p in model.parameters():
            if p.dim() == 2:
                torch.nn.init.normal_(p, std=0.02)
    else:
        model = Qwen3(c, attention).to(device)
    V = c["vocab_size"]
    ids = torch.randint(0, V, (batch, seq), device=device)
    if attention == "textbook":
        mask = torch.ones(batch, seq, dtype=torch.long, device=device)
        pos = ref.position_ids_from_mask(mask)
        forward = lambda: model(ids, mask, pos)  # noqa: E731
    else:
        forward = lambda: model(ids)  # noqa: E731
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    losses = []

    def step():
        logits = forward()  # [B, T, V]
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sync()
        losses.append(float(loss))

    step()  # warm-up
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    step_s = (time.perf_counter() - t0) / iters
    flops = count_train_flops(c, batch, seq)
    flops_causal = count_train_flops(c, batch, seq, causal=True)
    gflops = flops / step_s / 1e9
    return {
        "name": name, "batch": batch, "seq": seq, "params": sum(p.numel() for p in model.parameters()),
        "step_s": step_s, "tokens_per_s": batch * seq / step_s, "loss": losses[-1], "flops": flops,
        "gflops": gflops, "fraction_of_gemm": gflops / gemm_gflops if gemm_gflops else None,
        "flops_causal": flops_causal, "gflops_causal": flops_causal / step_s / 1e9,
    }


def parse_shape(text, pattern, flag):
    m = re.fullmatch(pattern, text)
    if not m:
        raise SystemExit(f"{flag} {text!r} does not match {pattern}")
    return [int(g) for g in m.groups()]


def self_check():
    """The fair baseline against the reference (qwen3_reference.py), both in float64 on a small
    GQA/MQA, tied/untied config: the log-probs and loss of a full forward with query chunks of
    3 (several chunks, masked diagonal blocks), and greedy decode from the preallocated cache
    (a prefill in two pieces, the second not starting at key 0, then one token per step) against
    the reference's full forward. Every attention path this torch has, plus scaled_dot_product_
    attention emulated in plain torch (so its plumbing is checked on torch 1.13 too). JSON out."""
    global torch_at_least
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import qwen3_reference as ref

    def emulated_sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        if enable_gqa:
            k = k.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3)
            v = v.repeat_interleave(q.shape[-3] // v.shape[-3], dim=-3)
        s = torch.matmul(q, k.transpose(-2, -1)) * (scale or q.shape[-1] ** -0.5)
        if is_causal:  # top-left aligned, as torch's
            s = s.masked_fill(torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).triu(1), float("-inf"))
        return torch.matmul(torch.softmax(s, -1), v)

    torch.set_default_dtype(torch.float64)
    out = {"attention": [], "cases": []}
    impls = ["chunked", "textbook"] + (["sdpa"] if hasattr(F, "scaled_dot_product_attention") else [])
    real_sdpa = getattr(F, "scaled_dot_product_attention", None)
    base = {"vocab_size": 48, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
            "num_attention_heads": 4, "head_dim": 8, "rms_norm_eps": 1e-6, "rope_theta": 10000.0}
    for nkv, tied in [(2, False), (1, True)]:
        c = dict(base, num_key_value_heads=nkv, tie_word_embeddings=tied)
        gen = torch.Generator().manual_seed(nkv)
        reference = ref.Qwen3ForCausalLM(c)
        ref.randomize(reference, gen)
        ids = torch.randint(0, c["vocab_size"], (2, 11), generator=gen)
        mask = torch.ones_like(ids)
        with torch.no_grad():
            ref_logits = reference(ids, mask, ref.position_ids_from_mask(mask))
        ref_logp = torch.log_softmax(ref_logits[:, :-1], -1).gather(-1, ids[:, 1:, None])[..., 0]
        for impl in impls + ["sdpa-emulated", "sdpa-emulated-gqa"]:
            name = "sdpa" if impl.startswith("sdpa") else impl
            model = Qwen3(c, name, chunk=3)
            sd = {k.replace("model.", "").replace("self_attn.", "").replace("mlp.", ""): v
                  for k, v in reference.state_dict().items()}
            if tied:
                sd.pop("lm_head.weight", None)
            missing = model.load_state_dict(sd, strict=False)
            unexpected = [k for k in missing.unexpected_keys if k != "lm_head.weight"]
            assert not missing.missing_keys and not unexpected, missing
            real_at_least = torch_at_least
            if impl.startswith("sdpa-emulated"):
                F.scaled_dot_product_attention = emulated_sdpa
                if impl == "sdpa-emulated-gqa":  # the enable_gqa call of torch ≥ 2.5
                    torch_at_least = lambda major, minor: True  # noqa: E731
            try:
                with torch.no_grad():
                    logits = model(ids)
                    logp = torch.log_softmax(logits[:, :-1], -1).gather(-1, ids[:, 1:, None])[..., 0]
                    caches = [{"cap": 11, "len": 0, "k": torch.zeros(2, nkv, 11, 8), "v": torch.zeros(2, nkv, 11, 8)}
                              for _ in model.layers]
                    dec = [model(ids[:, :4], 0, caches), model(ids[:, 4:7], 4, caches)]
                    dec += [model(ids[:, t : t + 1], t, caches) for t in range(7, 11)]
                    dec_err = float((torch.cat(dec, 1) - ref_logits).abs().max())
            finally:
                torch_at_least = real_at_least
                if impl.startswith("sdpa-emulated"):
                    if real_sdpa is None:
                        del F.scaled_dot_product_attention
                    else:
                        F.scaled_dot_product_attention = real_sdpa
            out["cases"].append({
                "attention": impl, "num_key_value_heads": nkv, "tied": tied,
                "logprob_max_err": float((logp - ref_logp).abs().max()),
                "loss_err": abs(float(-logp.mean()) - float(-ref_logp.mean())),
                "decode_logit_max_err": dec_err,
                "logprob_scale": float(ref_logp.abs().max()),
            })
    out["attention"] = impls + ["sdpa-emulated", "sdpa-emulated-gqa"]
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


def main_real(argv):
    global ATTENTION_CHUNK
    ap = argparse.ArgumentParser(description="bench_torch.py --real: the real-shape cases (see the header)")
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--config", action="append", default=[], help="NAME=FILE.json or NAME={...}")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--torch-threads", type=int, default=None, help="torch's intra-op threads alone (default --threads)")
    ap.add_argument("--cases", default="gemm,decode,train")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--decode", default="8x1024+576")
    ap.add_argument("--train", default="8x1536")
    ap.add_argument("--gemm-n", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=1)
    ap.add_argument("--baseline", choices=("fair", "textbook"), default="fair")
    ap.add_argument("--attn-chunk", type=int, default=ATTENTION_CHUNK, help="query chunk of the chunked attention")
    args = ap.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in ("gemm", "decode", "train")]
    if unknown:
        raise SystemExit(f"--cases: unknown {unknown}; valid: gemm, decode, train")
    configs = [parse_config_arg(t) for t in args.config]
    if not configs and ("decode" in cases or "train" in cases):
        raise SystemExit("--real needs --config NAME=FILE.json (or NAME={...}) for the decode and train cases")
    if args.threads < 1:
        raise SystemExit("--threads must be ≥ 1")
    if args.attn_chunk < 1:
        raise SystemExit("--attn-chunk must be ≥ 1")
    ATTENTION_CHUNK = args.attn_chunk
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch.cuda.is_available() is False")
    set_threads(args.torch_threads or args.threads, args.threads)
    attention, attention_why = choose_attention(args.baseline)
    gemm = time_gemm(args.gemm_n, device)
    out = {
        "mode": "real", "torch": torch.__version__, "python": platform.python_version(),
        "device": f"cuda ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else "cpu",
        "cpu": cpu_model(), "threads": args.threads, "torch_threads": torch.get_num_threads(),
        "baseline": args.baseline, "attention": attention, "attention_why": attention_why,
        "attention_chunk": ATTENTION_CHUNK,
        "blas": describe_blas(device, gemm["gflops"]), "gemm": gemm, "decode": [], "train": [],
    }
    if device.type == "cuda":
        out["cuda_allow_tf32"] = torch.backends.cuda.matmul.allow_tf32
    if "decode" in cases:
        B, P, N = parse_shape(args.decode, r"(\d+)x(\d+)\+(\d+)", "--decode")
        for name, c in configs:
            out["decode"].append(bench_decode(name, c, B, P, N, device, attention))
    if "train" in cases:
        B, T = parse_shape(args.train, r"(\d+)x(\d+)", "--train")
        for name, c in configs:
            out["train"].append(bench_train(name, c, B, T, args.iters, device, gemm["gflops"], attention))
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


def main():
    if sys.argv[1:] == ["--check"]:
        return self_check()
    if len(sys.argv) > 1:
        return main_real(sys.argv[1:])
    spec = json.load(sys.stdin)
    threads = int(spec.get("threads", 1))
    device = torch.device(spec.get("device", "cpu"))
    set_threads(threads)
    results = [bench_case(case, device) for case in spec["cases"]]
    blas = describe_blas(device, time_gemm(1024, device)["gflops"])
    json.dump({"torch": torch.__version__, "threads": threads, "device": str(device), "blas": blas, "results": results}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
