#!/usr/bin/env python3
"""PyTorch side of `pact bench` (src/cli/commands/bench.ts): the same Qwen3 shapes and the
same measurements, so the TypeScript/tfjs numbers can be read as ratios, with the BLAS that
PyTorch ran on named (a ratio against a reference BLAS says nothing).

A float32 Qwen3 in plain torch, written like scripts/reference/qwen3_reference.py (which
follows Hugging Face modeling_qwen3.py: RMSNorm, q_norm/k_norm on head_dim before RoPE,
rotate-half RoPE, GQA by repeat_kv, SwiGLU, tied or untied LM head) but in float32 and
with a KV cache, since that file computes in float64 for fixtures.

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
      [--gemm-n 1024] [--iters 1] [--torch-threads K]
CONFIG is a Hugging Face config.json file or its JSON text inline. Cases, each for every
--config (gemm once):
  gemm    a dense n×n×n float32 matmul (torch.mm), best of 5 after a warm-up: GFLOP/s.
  decode  greedy decode with a preallocated KV cache (written in place, attention over the
          current length only): batch B, a P-token random context prefilled in one forward,
          then N new tokens one step at a time; per-step cost at the start and end of decode.
  train   one training step at B×T of the reference Qwen3 (qwen3_reference.py, float32, eager
          T×T attention with an additive mask): forward, mean next-token cross-entropy over all
          positions, backward, clip to norm 1, AdamW; one warm-up step, then the mean of
          --iters; achieved GFLOP/s from the matmul FLOP count below, and as a fraction of gemm.
Output: one JSON object on stdout
  {"mode": "real", "torch", "python", "device", "threads", "torch_threads", "blas": BLAS,
   "gemm": {"n", "gflops", "gflops_median", "seconds_best"},
   "decode": [{"name", "batch", "context", "new_tokens", "prefill_s", "decode_s",
      "decode_tokens_per_s", "ms_per_step", "ms_per_step_first", "ms_per_step_last", "tokens_per_s"}],
   "train": [{"name", "batch", "seq", "params", "step_s", "tokens_per_s", "loss", "flops",
      "gflops", "fraction_of_gemm"}]}
  BLAS = {"kind": "openblas"|"mkl"|"reference"|"cublas"|"unknown", "library", "loaded",
      "alternative", "torch_blas_info", "openblas_threads", "gemm_gflops", "is_reference", "why"}
  is_reference: the loaded BLAS (or /etc/alternatives/libblas.so.3) is Debian's reference
  BLAS (/usr/lib/x86_64-linux-gnu/blas/), or the kind is unknown and the CPU gemm reads under
  20 GFLOP/s. A caller must then refuse to print a ratio. `why` says what decided it.
Train FLOPs (matmuls only; backward = 2× forward): 3·B·T·[L·(2H·(nh+2nkv)·d + 2·nh·d·H
  + 6·H·I + 4·nh·d·T) + 2·H·V] (H hidden, I intermediate, L layers, d head_dim, V vocab; the
  attention term counts the full T×T product, as computed).
"""
import argparse
import ctypes
import json
import os
import platform
import re
import sys
import time

import torch
from torch import nn
import torch.nn.functional as F


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


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, d = c["hidden_size"], c["head_dim"]
        self.nh, self.nkv, self.d = c["num_attention_heads"], c["num_key_value_heads"], d
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
            k, v = cache["k"][:, :, : start + T], cache["v"][:, :, : start + T]
        elif cache is not None:
            if cache.get("k") is not None:
                k = torch.cat((cache["k"], k), dim=2)
                v = torch.cat((cache["v"], v), dim=2)
            cache["k"], cache["v"] = k, v
        S = k.shape[2]
        rep = self.nh // self.nkv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        scores = torch.matmul(q, k.transpose(2, 3)) * (self.d ** -0.5)
        if T > 1:
            causal = torch.ones(T, S, dtype=torch.bool, device=x.device).tril(S - T)
            scores = scores.masked_fill(~causal, torch.finfo(scores.dtype).min)
        a = torch.matmul(F.softmax(scores, dim=-1), v).transpose(1, 2).reshape(B, T, -1)
        x = x + self.o_proj(a)
        y = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y))


class Qwen3(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([Layer(c) for _ in range(c["num_hidden_layers"])])
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.lm_head = None if c["tie_word_embeddings"] else nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        d = c["head_dim"]
        self.inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, ids, start=0, caches=None):
        T = ids.shape[1]
        pos = torch.arange(start, start + T, dtype=torch.float32, device=ids.device)
        freqs = torch.outer(pos, self.inv_freq.to(ids.device))
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        x = self.embed_tokens(ids)
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


REFERENCE_BLAS_DIR = "/usr/lib/x86_64-linux-gnu/blas/"
REFERENCE_GEMM_GFLOPS = 20.0


def loaded_blas_libraries():
    """Shared libraries of this process that look like a BLAS or LAPACK (Linux /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "/" in line}
    except OSError:
        return []
    keys = ("blas", "lapack", "mkl", "blis", "atlas")
    return sorted(p for p in paths if any(k in os.path.basename(p).lower() for k in keys))


def openblas_libraries():
    """ctypes handles of the loaded libraries that export OpenBLAS's own API."""
    out = []
    for path in loaded_blas_libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        if hasattr(lib, "openblas_set_num_threads") and hasattr(lib, "openblas_get_config"):
            out.append((path, lib))
    return out


def set_threads(threads, blas_threads=None):
    """torch's intra-op threads, and OpenBLAS's own pool (default: the same count) where torch's
    BLAS is OpenBLAS; None leaves a setting as it is."""
    if threads is not None:
        torch.set_num_threads(threads)
    torch.mm(torch.ones(2, 2), torch.ones(2, 2))  # loads the BLAS library, so it can be found
    blas_threads = threads if blas_threads is None else blas_threads
    if blas_threads is not None:
        for _, lib in openblas_libraries():
            lib.openblas_set_num_threads(blas_threads)


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


def describe_blas(device, gemm_gflops):
    """Which BLAS PyTorch runs on, and whether it is a reference BLAS (see the header)."""
    config = torch.__config__.show()
    m = re.search(r"BLAS_INFO=([^,\s]+)", config)
    info = m.group(1) if m else None
    alt = None
    for name in ("/etc/alternatives/libblas.so.3-x86_64-linux-gnu", "/etc/alternatives/libblas.so.3"):
        if os.path.exists(name):
            alt = os.path.realpath(name)
            break
    loaded = loaded_blas_libraries()
    out = {"torch_blas_info": info, "alternative": alt, "loaded": loaded, "gemm_gflops": gemm_gflops,
           "library": None, "openblas_threads": None}
    openblas = openblas_libraries()
    if device.type == "cuda":
        out.update(kind="cublas", is_reference=False, why="CUDA matmuls run on cuBLAS")
        return out
    if openblas:
        lib = openblas[0][1]
        lib.openblas_get_config.restype = ctypes.c_char_p
        out["library"] = lib.openblas_get_config().decode()
        out["openblas_threads"] = lib.openblas_get_num_threads()
        out.update(kind="openblas", is_reference=False, why=f"OpenBLAS is loaded ({openblas[0][0]})")
    elif "MKL" in config and "MKL not found" not in torch.__config__.parallel_info() or any("mkl" in p for p in loaded):
        out.update(kind="mkl", is_reference=False, why="torch runs on Intel MKL")
    elif any(p.startswith(REFERENCE_BLAS_DIR) for p in loaded) or (not loaded and alt and alt.startswith(REFERENCE_BLAS_DIR)):
        where = next((p for p in loaded if p.startswith(REFERENCE_BLAS_DIR)), alt)
        out.update(kind="reference", is_reference=True,
                   why=f"the reference BLAS is loaded ({where}): install libopenblas0-pthread")
    else:
        slow = gemm_gflops < REFERENCE_GEMM_GFLOPS
        out.update(kind="unknown", is_reference=slow,
                   why=f"unknown BLAS; the {'gemm reads under' if slow else 'gemm reads at least'} {REFERENCE_GEMM_GFLOPS:g} GFLOP/s")
    return out


def parse_config_arg(text):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise SystemExit(f"--config {text!r}: expected NAME=FILE.json or NAME={{...}}")
    if value.lstrip().startswith("{"):
        return name, json.loads(value)
    with open(value) as f:
        return name, json.load(f)


def count_train_flops(c, B, T):
    """Matmul FLOPs of one training step (the formula in the header)."""
    H, I, L, d, V = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"], c["head_dim"], c["vocab_size"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    per_token = L * (2 * H * (nh + 2 * nkv) * d + 2 * nh * d * H + 6 * H * I + 4 * nh * d * T) + 2 * H * V
    return 3 * B * T * per_token


def bench_decode(name, c, batch, context, new_tokens, device):
    """Greedy decode with a preallocated cache: prefill, then one token per step (see header)."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    torch.manual_seed(0)
    model = Qwen3(c).to(device).eval()
    V = c["vocab_size"]
    prompt = torch.randint(0, V, (batch, context), device=device)
    cap = context + new_tokens

    def new_caches():
        shape = (batch, c["num_key_value_heads"], cap, c["head_dim"])
        return [{"cap": cap, "len": 0, "k": torch.zeros(shape, device=device), "v": torch.zeros(shape, device=device)}
                for _ in model.layers]

    @torch.no_grad()
    def run(n_new):
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


def bench_train(name, c, batch, seq, iters, device, gemm_gflops):
    """One training step of the reference Qwen3 in float32 (see header)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import qwen3_reference as ref

    ref.DTYPE = torch.float32
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    if device.type == "cuda":
        # The reference builds its causal mask with torch.ones in forward: make that the GPU.
        if not hasattr(torch, "set_default_device"):
            raise SystemExit("--device cuda for the train case needs torch ≥ 2.0 (torch.set_default_device)")
        torch.set_default_device(device)
    torch.manual_seed(0)
    model = ref.Qwen3ForCausalLM(c).to(device)
    for p in model.parameters():
        if p.dim() == 2:
            torch.nn.init.normal_(p, std=0.02)
    V = c["vocab_size"]
    ids = torch.randint(0, V, (batch, seq), device=device)
    mask = torch.ones(batch, seq, dtype=torch.long, device=device)
    pos = ref.position_ids_from_mask(mask)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    losses = []

    def step():
        logits = model(ids, mask, pos)  # [B, T, V]
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
    gflops = flops / step_s / 1e9
    return {
        "name": name, "batch": batch, "seq": seq, "params": sum(p.numel() for p in model.parameters()),
        "step_s": step_s, "tokens_per_s": batch * seq / step_s, "loss": losses[-1], "flops": flops,
        "gflops": gflops, "fraction_of_gemm": gflops / gemm_gflops if gemm_gflops else None,
    }


def parse_shape(text, pattern, flag):
    m = re.fullmatch(pattern, text)
    if not m:
        raise SystemExit(f"{flag} {text!r} does not match {pattern}")
    return [int(g) for g in m.groups()]


def main_real(argv):
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
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch.cuda.is_available() is False")
    set_threads(args.torch_threads or args.threads, args.threads)
    gemm = time_gemm(args.gemm_n, device)
    out = {
        "mode": "real", "torch": torch.__version__, "python": platform.python_version(),
        "device": f"cuda ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else "cpu",
        "threads": args.threads, "torch_threads": torch.get_num_threads(),
        "blas": describe_blas(device, gemm["gflops"]), "gemm": gemm, "decode": [], "train": [],
    }
    if device.type == "cuda":
        out["cuda_allow_tf32"] = torch.backends.cuda.matmul.allow_tf32
    if "decode" in cases:
        B, P, N = parse_shape(args.decode, r"(\d+)x(\d+)\+(\d+)", "--decode")
        for name, c in configs:
            out["decode"].append(bench_decode(name, c, B, P, N, device))
    if "train" in cases:
        B, T = parse_shape(args.train, r"(\d+)x(\d+)", "--train")
        for name, c in configs:
            out["train"].append(bench_train(name, c, B, T, args.iters, device, gemm["gflops"]))
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


def main():
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
