#!/usr/bin/env python3
"""PyTorch side of `npm run bench` (src/cli/commands/bench.ts): the same Qwen3 shapes and
the same measurements, so the TypeScript/tfjs numbers can be read as ratios.

A float32 Qwen3 in plain torch, written like scripts/reference/qwen3_reference.py (which
follows Hugging Face modeling_qwen3.py: RMSNorm, q_norm/k_norm on head_dim before RoPE,
rotate-half RoPE, GQA by repeat_kv, SwiGLU, tied or untied LM head) but in float32 and
with a KV cache, since that file computes in float64 for fixtures.

Input: a JSON spec on stdin
  {"threads": 1, "cases": [{"name": "qwen3-nano", "config": {...HF config...},
     "train": {"batch": B, "seq": T, "iters": n}, "gen": {"batch": B, "prompt": P, "new": N, "iters": n}}]}
Output: one JSON object on stdout
  {"torch": version, "threads": t, "results": [{"name", "train_tokens_per_s",
     "gen_cache_tokens_per_s", "gen_nocache_tokens_per_s"}]}
Timings: one untimed warm-up, then the mean over `iters`. Training = forward + backward
of the mean next-token loss + torch.optim.AdamW step (same as trainStep: clip to norm 1).
"""
import json
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
        if cache is not None:
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
            causal = torch.ones(T, S, dtype=torch.bool).tril(S - T)
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
        pos = torch.arange(start, start + T, dtype=torch.float32)
        freqs = torch.outer(pos, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        x = self.embed_tokens(ids)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, None if caches is None else caches[i])
        x = self.norm(x)
        w = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        return x @ w.t()


def time_mean(fn, iters):
    fn()  # warm-up
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters


def bench_case(case):
    c = case["config"]
    torch.manual_seed(0)
    model = Qwen3(c)
    V = c["vocab_size"]
    out = {"name": case["name"]}
    tr = case["train"]
    ids = torch.randint(0, V, (tr["batch"], tr["seq"]))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)

    def train_step():
        logits = model(ids)  # all T positions, as the tfjs side computes them
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), ids[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    out["train_tokens_per_s"] = tr["batch"] * tr["seq"] / time_mean(train_step, tr["iters"])
    g = case["gen"]
    prompt = torch.randint(0, V, (g["batch"], g["prompt"]))

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
    out["gen_cache_tokens_per_s"] = new_tokens / time_mean(gen_cache, g["iters"])
    out["gen_nocache_tokens_per_s"] = new_tokens / time_mean(gen_nocache, g["iters"])
    return out


def main():
    spec = json.load(sys.stdin)
    threads = int(spec.get("threads", 1))
    torch.set_num_threads(threads)
    results = [bench_case(case) for case in spec["cases"]]
    json.dump({"torch": torch.__version__, "threads": threads, "results": results}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
