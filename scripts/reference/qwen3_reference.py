#!/usr/bin/env python3
"""Independent PyTorch reference for the TypeScript Qwen3 (src/model/qwen3).

Written from Hugging Face transformers' `models/qwen3/modeling_qwen3.py` (Qwen3RMSNorm,
Qwen3RotaryEmbedding, rotate_half, apply_rotary_pos_emb, repeat_kv,
eager_attention_forward, Qwen3Attention with q_norm/k_norm on head_dim before RoPE,
Qwen3MLP, Qwen3DecoderLayer, Qwen3Model, Qwen3ForCausalLM) in plain torch, since
transformers is not installed. Computation runs in float64 so the fixtures measure the
TypeScript float32 error against (nearly) exact values; weights are stored as float32
and cast up.

Positions follow HF `generate`: position_ids = cumsum(attention_mask) - 1, and 1 at
padding. The attention mask is causal + key padding, additive with finfo.min as in HF.

Fixtures (written to src/model/qwen3/fixtures/ by default): for each case NAME,
  NAME.json  manifest {config, tensors: [{name, shape, offset, length}], scalars}
  NAME.bin   all tensors as little-endian float32, concatenated (offset/length in floats)
Tensors: weights by HF name; input_ids, attention_mask, position_ids; logits [B,T,V];
token_logprobs, target_mask, entropy [B,T-1]; grad:<weight name> of the mean
next-token loss over valid targets; greedy:<i> generation of a prompt.

Each case is also written as a Hugging Face model folder NAME/ (config.json +
model.safetensors, F32, tied models without lm_head.weight) for the weights loader and
`pact score`; the safetensors writer is a few lines here (no safetensors package).

Usage: /usr/bin/python3 scripts/reference/qwen3_reference.py [--out DIR]
"""
import argparse
import json
import math
import os

import numpy as np
import torch
from torch import nn

DTYPE = torch.float64


class Qwen3RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size, dtype=DTYPE))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class Qwen3RotaryEmbedding(nn.Module):
    def __init__(self, config):
        super().__init__()
        dim = config["head_dim"]
        base = config["rope_theta"]
        # HF: 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(DTYPE) / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].to(DTYPE)
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def eager_attention_forward(query, key, value, attention_mask, scaling, num_key_value_groups):
    key_states = repeat_kv(key, num_key_value_groups)
    value_states = repeat_kv(value, num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask[:, :, :, : key_states.shape[-2]]
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=DTYPE).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value_states)
    return attn_output.transpose(1, 2).contiguous()


class Qwen3Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        h, d = config["hidden_size"], config["head_dim"]
        self.head_dim = d
        self.num_key_value_groups = config["num_attention_heads"] // config["num_key_value_heads"]
        self.scaling = d ** -0.5
        self.q_proj = nn.Linear(h, config["num_attention_heads"] * d, bias=False, dtype=DTYPE)
        self.k_proj = nn.Linear(h, config["num_key_value_heads"] * d, bias=False, dtype=DTYPE)
        self.v_proj = nn.Linear(h, config["num_key_value_heads"] * d, bias=False, dtype=DTYPE)
        self.o_proj = nn.Linear(config["num_attention_heads"] * d, h, bias=False, dtype=DTYPE)
        self.q_norm = Qwen3RMSNorm(d, eps=config["rms_norm_eps"])  # unlike olmo, only on the head dim!
        self.k_norm = Qwen3RMSNorm(d, eps=config["rms_norm_eps"])

    def forward(self, hidden_states, position_embeddings, attention_mask):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_norm(self.q_proj(hidden_states).view(hidden_shape)).transpose(1, 2)
        key_states = self.k_norm(self.k_proj(hidden_states).view(hidden_shape)).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
        attn_output = eager_attention_forward(
            query_states, key_states, value_states, attention_mask, self.scaling, self.num_key_value_groups
        )
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output)


class Qwen3MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        h, i = config["hidden_size"], config["intermediate_size"]
        self.gate_proj = nn.Linear(h, i, bias=False, dtype=DTYPE)
        self.up_proj = nn.Linear(h, i, bias=False, dtype=DTYPE)
        self.down_proj = nn.Linear(i, h, bias=False, dtype=DTYPE)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class Qwen3DecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self_attn = Qwen3Attention(config)
        self.mlp = Qwen3MLP(config)
        self.input_layernorm = Qwen3RMSNorm(config["hidden_size"], eps=config["rms_norm_eps"])
        self.post_attention_layernorm = Qwen3RMSNorm(config["hidden_size"], eps=config["rms_norm_eps"])

    def forward(self, hidden_states, attention_mask, position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, position_embeddings, attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states


class Qwen3Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config["vocab_size"], config["hidden_size"], dtype=DTYPE)
        self.layers = nn.ModuleList([Qwen3DecoderLayer(config) for _ in range(config["num_hidden_layers"])])
        self.norm = Qwen3RMSNorm(config["hidden_size"], eps=config["rms_norm_eps"])
        self.rotary_emb = Qwen3RotaryEmbedding(config)

    def forward(self, input_ids, attention_mask, position_ids):
        hidden_states = self.embed_tokens(input_ids)
        b, t = input_ids.shape
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        allowed = causal[None, None, :, :] & attention_mask.bool()[:, None, None, :]
        mask = torch.zeros(b, 1, t, t, dtype=DTYPE).masked_fill(~allowed, torch.finfo(DTYPE).min)
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states, mask, position_embeddings)
        return self.norm(hidden_states)


class Qwen3ForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = Qwen3Model(config)
        self.lm_head = nn.Linear(config["hidden_size"], config["vocab_size"], bias=False, dtype=DTYPE)
        if config["tie_word_embeddings"]:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, input_ids, attention_mask, position_ids):
        return self.lm_head(self.model(input_ids, attention_mask, position_ids))


def position_ids_from_mask(attention_mask):
    position_ids = attention_mask.long().cumsum(-1) - 1
    return position_ids.masked_fill(attention_mask == 0, 1)


def randomize(model, gen):
    """Weights ~ N(0, 1/fan_in) (visible attention patterns), norms ~ 1 + 0.1·N(0,1)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen, dtype=DTYPE))
            else:
                p.copy_(torch.randn(p.shape, generator=gen, dtype=DTYPE) / math.sqrt(p.shape[1]))
            # Round to float32 so the stored weights are exactly the ones used.
            p.copy_(p.to(torch.float32).to(DTYPE))


def greedy_generate(model, prompt, n_new):
    ids = list(prompt)
    for _ in range(n_new):
        x = torch.tensor([ids])
        mask = torch.ones_like(x)
        logits = model(x, mask, position_ids_from_mask(mask))
        ids.append(int(logits[0, -1].argmax()))
    return ids[len(prompt):]


def make_case(name, config, input_ids, attention_mask, grad_names, greedy_prompts, seed):
    gen = torch.Generator().manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    randomize(model, gen)
    ids = torch.tensor(input_ids)
    mask = torch.tensor(attention_mask)
    pos = position_ids_from_mask(mask)
    logits = model(ids, mask, pos)  # [B, T, V]
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    target = ids[:, 1:]
    token_logprobs = logp.gather(-1, target[..., None])[..., 0]  # [B, T-1]
    target_mask = (mask[:, :-1] * mask[:, 1:]).to(DTYPE)
    entropy = -(logp.exp() * logp).sum(-1)
    loss = -(token_logprobs * target_mask).sum() / target_mask.sum()
    loss.backward()

    tensors = {}
    named = dict(model.named_parameters())  # tied: lm_head.weight is not listed twice
    for pname, p in named.items():
        tensors[pname] = p.detach()
    if not config["tie_word_embeddings"]:
        tensors["lm_head.weight"] = model.lm_head.weight.detach()
    tensors["input_ids"] = ids.to(DTYPE)
    tensors["attention_mask"] = mask.to(DTYPE)
    tensors["position_ids"] = pos.to(DTYPE)
    tensors["logits"] = logits.detach()
    tensors["token_logprobs"] = (token_logprobs * target_mask).detach()
    tensors["target_mask"] = target_mask
    tensors["entropy"] = (entropy * target_mask).detach()
    for g in grad_names:
        tensors["grad:" + g] = named[g].grad.detach()
    scalars = {"loss": float(loss)}
    with torch.no_grad():
        for i, prompt in enumerate(greedy_prompts):
            tensors[f"greedy_prompt:{i}"] = torch.tensor(prompt["ids"], dtype=DTYPE)
            tensors[f"greedy:{i}"] = torch.tensor(greedy_generate(model, prompt["ids"], prompt["new"]), dtype=DTYPE)
    return scalars, tensors


def write_case(out_dir, name, config, scalars, tensors):
    manifest = {"config": config, "scalars": scalars, "tensors": []}
    chunks = []
    offset = 0
    for tname, t in tensors.items():
        arr = t.to(torch.float64).numpy().astype("<f4").ravel()
        manifest["tensors"].append({"name": tname, "shape": list(t.shape), "offset": offset, "length": int(arr.size)})
        chunks.append(arr)
        offset += arr.size
    with open(os.path.join(out_dir, name + ".bin"), "wb") as f:
        f.write(np.concatenate(chunks).astype("<f4").tobytes())
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


def write_safetensors(path, tensors):
    """Safetensors: u64 LE header length, JSON header (8-byte aligned), raw F32 LE data."""
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    offset = 0
    for name, t in tensors.items():
        data = t.to(torch.float64).numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read_safetensors(path):
    """Reads back what write_safetensors wrote (a self-check of the format)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + start : 8 + n + end], dtype="<f4").reshape(info["shape"])
    return out


def write_model_folder(out_dir, name, config, tensors):
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    hf_config = dict(config, architectures=["Qwen3ForCausalLM"], model_type="qwen3", hidden_act="silu",
                     attention_bias=False, torch_dtype="float32")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(hf_config, f, indent=1)
        f.write("\n")
    weights = {k: v for k, v in tensors.items() if k.startswith("model.") or k == "lm_head.weight"}
    path = os.path.join(folder, "model.safetensors")
    write_safetensors(path, weights)
    back = read_safetensors(path)
    assert set(back) == set(weights)
    for k, v in weights.items():
        assert np.array_equal(back[k], v.numpy().astype("<f4")), k


BASE = {
    "vocab_size": 64,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,  # num_attention_heads * head_dim = 64 != hidden_size, as in Qwen3-0.6B
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "max_position_embeddings": 128,
}

# A padded batch: a full row, a left-padded row (3 pads), a right-padded row (2 pads).
INPUT_IDS = [
    [5, 17, 42, 8, 63, 1, 29, 30, 11, 7],
    [0, 0, 0, 9, 14, 3, 55, 21, 40, 2],
    [33, 6, 18, 61, 12, 4, 27, 50, 0, 0],
]
ATTENTION_MASK = [
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    [0, 0, 0, 1, 1, 1, 1, 1, 1, 1],
    [1, 1, 1, 1, 1, 1, 1, 1, 0, 0],
]


def main():
    parser = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "..", "src", "model", "qwen3", "fixtures"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    cases = [
        (
            "qwen3_gqa_untied",
            dict(BASE),
            [
                "model.embed_tokens.weight",
                "model.layers.0.self_attn.q_proj.weight",
                "model.layers.1.self_attn.q_norm.weight",
                "model.layers.0.mlp.down_proj.weight",
                "lm_head.weight",
            ],
            11,
        ),
        (
            "qwen3_mqa_tied",
            dict(BASE, num_key_value_heads=1, tie_word_embeddings=True, rope_theta=1000000.0, head_dim=8),
            [
                "model.embed_tokens.weight",
                "model.layers.1.self_attn.q_proj.weight",
                "model.layers.0.self_attn.q_norm.weight",
                "model.layers.1.mlp.down_proj.weight",
                "model.layers.0.self_attn.k_norm.weight",
            ],
            12,
        ),
    ]
    prompts = [{"ids": [5, 17, 42, 8], "new": 8}, {"ids": [9, 14, 3, 55, 21, 40, 2], "new": 8}]
    for name, config, grads, seed in cases:
        scalars, tensors = make_case(name, config, INPUT_IDS, ATTENTION_MASK, grads, prompts, seed)
        write_case(args.out, name, config, scalars, tensors)
        write_model_folder(args.out, name, config, tensors)
        print(f"{name}: loss {scalars['loss']:.6f}, {len(tensors)} tensors")


if __name__ == "__main__":
    main()
