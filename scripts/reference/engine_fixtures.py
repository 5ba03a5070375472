#!/usr/bin/env python3
"""PyTorch float64 fixtures for the CPU engine (src/model/engine) at realistic head sizes and
lengths: head_dim 128 and 64, GQA and MQA, an untied LM head over several of the engine's
LM-head chunks, a T = 1,024 batch, ragged rows (right- and left-padded), rows sharing a
prefix, and greedy KV-cache decoding. Read by src/model/engine/qwen3EngineReference.test.ts.

The model is scripts/reference/qwen3_reference.py's Qwen3ForCausalLM (HF modeling_qwen3.py in
plain torch, float64). To keep the committed fixtures small, the weights are NOT stored: both
sides compute them from a counter-based hash (lowbias32 of the element index, salted by the
case seed and the FNV-1a hash of the tensor name), exactly in float32:
  u    = (hash >> 8) / 2^24 · 2 − 1                   (exact: 24 bits)
  w    = float32(u · sqrt(3 / fan_in))   for matrices (fan_in = shape[1]; variance 1/fan_in)
  norm = float32(1 + 0.1 · u)            for RMSNorm weights
The TypeScript test rebuilds them (weightsFromHash) and checks the per-tensor sums stored
under scalars "wsum:<name>" before comparing anything.

Stored per case NAME (NAME.json manifest + NAME.bin float32, the format of
qwen3_reference.write_case): rows (the token rows unpadded, back to back) and row_lengths;
token_logprobs and entropy (row b's L_b − 1 values, rows back to back); scalars loss (mean
next-token NLL), objective, entropy_coef, left_padded (the side the test pads the batch on),
min_greedy_margin, wsum:<name>; grad:<p>
for EVERY parameter p of the objective
    J = (−Σ logp + entropy_coef · Σ entropy) / #targets     (sums over valid targets)
and greedy_prompt:i, greedy:i (8–12 greedy tokens by full float64 recomputation per step)
and greedy_logprobs:i (log-softmax of each chosen token). Every greedy step's top-1 / top-2
logit margin is asserted ≥ MIN_MARGIN, so float32 cannot flip an argmax.

Usage: /usr/bin/python3 scripts/reference/engine_fixtures.py [--out DIR]
(default src/model/engine/fixtures/).
"""
import argparse
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qwen3_reference import DTYPE, Qwen3ForCausalLM, position_ids_from_mask, write_case  # noqa: E402

MIN_MARGIN = 2e-3
ENTROPY_COEF = 0.1
MASK32 = 0xFFFFFFFF


def fnv1a(name):
    h = 0x811C9DC5
    for ch in name.encode("ascii"):
        h ^= ch
        h = (h * 0x01000193) & MASK32
    return h


def hash_u32(salt, n):
    """lowbias32((i + salt · 0x9E3779B9) mod 2^32) for i < n, as uint64 holding 32-bit values."""
    x = (np.arange(n, dtype=np.uint64) + np.uint64((salt * 0x9E3779B9) & MASK32)) & np.uint64(MASK32)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x7FEB352D)) & np.uint64(MASK32)
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x846CA68B)) & np.uint64(MASK32)
    x ^= x >> np.uint64(16)
    return x


def hash_uniform(salt, n):
    return (hash_u32(salt, n) >> np.uint64(8)).astype(np.float64) / 16777216.0 * 2.0 - 1.0


def hash_weights(model, seed):
    """Sets every parameter from the hash (see the header); returns {name: float64 sum}."""
    sums = {}
    with torch.no_grad():
        for name, p in model.named_parameters():
            u = hash_uniform((seed ^ fnv1a(name)) & MASK32, p.numel())
            if p.dim() == 1:
                w = (1.0 + 0.1 * u).astype(np.float32)
            else:
                w = (u * math.sqrt(3.0 / p.shape[1])).astype(np.float32)
            p.copy_(torch.from_numpy(w.astype(np.float64)).view(p.shape))
            sums[name] = float(w.astype(np.float64).sum())
    return sums


def random_ids(seed, n, vocab):
    return [int(v) for v in hash_u32((seed * 7919 + 17) & MASK32, n) % np.uint64(vocab)]


def pad_rows(rows, side):
    T = max(len(r) for r in rows)
    ids, mask = [], []
    for r in rows:
        pad = T - len(r)
        if side == "right":
            ids.append(r + [0] * pad)
            mask.append([1] * len(r) + [0] * pad)
        else:
            ids.append([0] * pad + r)
            mask.append([0] * pad + [1] * len(r))
    return ids, mask


def greedy(model, prompt, n_new, margins=None):
    ids = list(prompt)
    logprobs = []
    with torch.no_grad():
        for _ in range(n_new):
            x = torch.tensor([ids])
            mask = torch.ones_like(x)
            z = model(x, mask, position_ids_from_mask(mask))[0, -1]
            top = torch.topk(z, 2).values
            margin = float(top[0] - top[1])
            if margins is not None:
                margins.append(margin)
            if margin < MIN_MARGIN:
                raise SystemExit(f"greedy step {len(ids) - len(prompt)}: top-2 margin {margin:.2e} < {MIN_MARGIN}")
            tok = int(z.argmax())
            logprobs.append(float(torch.log_softmax(z, -1)[tok]))
            ids.append(tok)
    return ids[len(prompt) :], logprobs


def make_case(name, config, rows, side, prompts, seed):
    model = Qwen3ForCausalLM(config)
    sums = hash_weights(model, seed)
    ids_list, mask_list = pad_rows(rows, side)
    ids = torch.tensor(ids_list)
    mask = torch.tensor(mask_list)
    logits = model(ids, mask, position_ids_from_mask(mask))
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    target_mask = (mask[:, :-1] * mask[:, 1:]).to(DTYPE)
    token_logprobs = logp.gather(-1, ids[:, 1:, None])[..., 0]
    entropy = -(logp.exp() * logp).sum(-1)
    count = target_mask.sum()
    loss = -(token_logprobs * target_mask).sum() / count
    objective = loss + ENTROPY_COEF * (entropy * target_mask).sum() / count
    objective.backward()

    # Rows unpadded and back to back (the test pads them again with packTokenRows); per-row
    # outputs likewise: row b's L_b − 1 values, rows concatenated.
    valid = target_mask.bool()
    tensors = {
        "rows": torch.tensor([t for r in rows for t in r], dtype=DTYPE),
        "row_lengths": torch.tensor([len(r) for r in rows], dtype=DTYPE),
        "token_logprobs": token_logprobs[valid].detach(),
        "entropy": entropy[valid].detach(),
    }
    for pname, p in model.named_parameters():  # tied: lm_head.weight is embed_tokens.weight, listed once
        tensors["grad:" + pname] = p.grad.detach()
    scalars = {
        "loss": float(loss),
        "objective": float(objective),
        "entropy_coef": ENTROPY_COEF,
        "seed": seed,
        "left_padded": int(side == "left"),
    }
    scalars.update({"wsum:" + k: v for k, v in sums.items()})
    margins = []
    for i, (prompt, n_new) in enumerate(prompts):
        toks, lps = greedy(model, prompt, n_new, margins)
        tensors[f"greedy_prompt:{i}"] = torch.tensor(prompt, dtype=DTYPE)
        tensors[f"greedy:{i}"] = torch.tensor(toks, dtype=DTYPE)
        tensors[f"greedy_logprobs:{i}"] = torch.tensor(lps, dtype=DTYPE)
    scalars["min_greedy_margin"] = min(margins)
    return scalars, tensors


def main():
    parser = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "..", "src", "model", "engine", "fixtures"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)

    # The engine's LM-head chunk is max(4, ⌊2^20 / V / 4⌋·4) items (positions with a target):
    # V = 2,048 → 512, V = 1,024 → 1,024. Both cases span more than two chunks.
    #
    # 1. head_dim 128, GQA 4/2, untied, one layer, hidden 8; rows of 1,024, 700 and 37 tokens,
    #    right-padded: 1,023 + 699 + 36 = 1,758 targets = 4 chunks of 512, over which
    #    lm_head.weight's gradient accumulates. Greedy from 1,000- and 517-token prompts.
    long_cfg = {
        "vocab_size": 2048,
        "hidden_size": 8,
        "intermediate_size": 16,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": False,
        "max_position_embeddings": 2048,
    }
    V = long_cfg["vocab_size"]
    long_rows = [random_ids(1, 1024, V), random_ids(2, 700, V), random_ids(3, 37, V)]
    long_prompts = [(long_rows[0][:1000], 12), (long_rows[1][:517], 12)]

    # 2. head_dim 64, MQA 4/1, tied, two layers, hidden 16; three rows sharing a 160-token
    #    prefix (1,160, 920 and 720 tokens), left-padded: 159 + 1,000 + 760 + 560 = 2,479 LM-head
    #    items (the prefix's once) = 3 chunks of 1,024. Greedy: three prompts on the prefix (the
    #    third repeats the first), then each extended by its tokens and a 5-token observation
    #    (the engine reuses the cached rows).
    mqa_cfg = {
        "vocab_size": 1024,
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 64,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "tie_word_embeddings": True,
        "max_position_embeddings": 2048,
    }
    V = mqa_cfg["vocab_size"]
    prefix = random_ids(10, 160, V)
    suffixes = [random_ids(11, 1000, V), random_ids(12, 760, V), random_ids(13, 560, V)]
    mqa_rows = [prefix + s for s in suffixes]
    assert len({r[160] for r in mqa_rows}) == 3  # the rows share exactly 160 tokens
    turn1 = [prefix + suffixes[0][:40], prefix + suffixes[1][:20], prefix + suffixes[0][:40]]

    cases = [
        ("engine_d128_gqa_untied_long", long_cfg, long_rows, "right", long_prompts, 101),
        ("engine_d64_mqa_tied_prefix", mqa_cfg, mqa_rows, "left", None, 202),
    ]
    for name, config, rows, side, prompts, seed in cases:
        if prompts is None:
            # Turn 1, then turn 2 = turn-1 prompt + its greedy tokens + an observation.
            model = Qwen3ForCausalLM(config)
            hash_weights(model, seed)
            first = [greedy(model, p, 10)[0] for p in turn1]
            obs = [random_ids(30 + b, 5, V) for b in range(3)]
            turn2 = [p + g + o for p, g, o in zip(turn1, first, obs)]
            prompts = [(p, 10) for p in turn1] + [(p, 8) for p in turn2]
        scalars, tensors = make_case(name, config, rows, side, prompts, seed)
        write_case(args.out, name, config, scalars, tensors)
        size = os.path.getsize(os.path.join(args.out, name + ".bin"))
        print(f"{name}: loss {scalars['loss']:.6f}, objective {scalars['objective']:.6f}, {size} bytes")


if __name__ == "__main__":
    main()
