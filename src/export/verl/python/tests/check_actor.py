"""PACT's actor step inside VeRL's real DataParallelPPOActor, on CPU, against the same step
computed independently from the pieces check_fixtures.py checks against the TypeScript core.

VeRL's verl/workers/actor/dp_actor.py and base.py are loaded by path with their heavy imports
stubbed (FSDP, flash-attn, ulysses, DTensor: none is reached with use_remove_padding false on one
CPU rank); logprobs_from_logits / entropy_from_logits / append_to_dict are VeRL's own, taken from
torch_functional.py / py_functional.py by syntax tree; core_algos.py is VeRL's (check_fixtures.py).
pact_verl.actor.install() patches the stubbed verl.workers.actor as register.py does in a launch,
and the actor is built from that module attribute. Around it: a tiny float64 causal LM (2 layers,
vocabulary 61) that honours left padding through attention_mask and position_ids, a word tokenizer,
and a hand-built DataProto-like batch in VeRL's layout (left-padded prompts, right-padded multi-turn
responses whose tool-response tokens have response_mask 0, one uid per prompt's K rollouts).

Per scenario (fixtures from src/export/verl/actorStep.test.ts: the run's pact options as exported,
real expert traces, the run's loss settings) it returns, for the actor and for the reference:
π_old and π_ref as compute_log_prob reads them, each mini-batch's (1/|B|) Σ_i L_i, and the LM head's
gradient at each optimizer step. The reference reads every row on its own, unpadded, with the model
called directly, builds the rows with actor.trace_conditioned_row / component_sft_row / route and
the loss with algos.pact_prompt_loss / pact_minibatch_loss on whole prompts, and steps SGD by hand.

usage: python3 check_actor.py VERL_ROOT PACKAGE_PARENT FIXTURES.json
"""

import ast
import contextlib
import copy
import importlib.util
import json
import os
import re
import sys
import tempfile
import types
import zlib

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_fixtures import load_core_algos  # noqa: E402

torch.set_default_dtype(torch.float64)

VOCAB = 61
PAD = 0


# ---------------------------------------------------------------- VeRL's actor, loaded by path


class FakeDataProto:
    """The part of verl.DataProto the actor uses: batch (tensors), non_tensor_batch (numpy), meta_info."""

    def __init__(self, batch, non_tensor_batch=None, meta_info=None):
        self.batch = dict(batch)
        self.non_tensor_batch = dict(non_tensor_batch or {})
        self.meta_info = dict(meta_info or {})

    def __len__(self):
        return next(iter(self.batch.values())).shape[0]

    def select(self, batch_keys=None, non_tensor_batch_keys=None, **_):
        b = {k: self.batch[k] for k in (batch_keys or self.batch.keys())}
        n = {k: self.non_tensor_batch[k] for k in (non_tensor_batch_keys or [])}
        return FakeDataProto(b, n, self.meta_info)

    def split(self, size):
        return [
            FakeDataProto({k: v[s : s + size] for k, v in self.batch.items()},
                          {k: v[s : s + size] for k, v in self.non_tensor_batch.items()}, self.meta_info)
            for s in range(0, len(self), size)
        ]

    def to(self, device):
        return self


def _functions(path, names, ns):
    tree = ast.parse(open(path).read())
    wanted = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    exec(compile(ast.Module(body=wanted, type_ignores=[]), path, "exec"), ns)
    return {n: ns[n] for n in names}


def _module(name, **attrs):
    m = sys.modules.get(name) or types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


def _load_by_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_dp_actor(verl_root):
    core = load_core_algos(verl_root)
    tf = _functions(
        f"{verl_root}/verl/utils/torch_functional.py",
        ["gather_from_labels", "logprobs_from_logits", "logprobs_from_logits_v2", "entropy_from_logits",
         "entropy_from_logits_with_chunking", "masked_sum", "masked_mean"],
        {"torch": torch, "F": F, "Optional": None, "FLAH_ATTN_CROSS_ENTROPY_LOSS_AVAILABLE": False,
         "NPU_CROSS_ENTROPY_LOSS_AVAILABLE": False},
    )
    _module("verl.utils.torch_functional", **tf)
    _module("verl", DataProto=FakeDataProto)
    _module("verl.utils.device", get_device_id=lambda: "cpu", get_device_name=lambda: "cpu")

    def unreachable(*_a, **_k):
        raise AssertionError("not reached on one CPU rank without remove-padding")

    _module("verl.utils.attention_utils", index_first_axis=unreachable, pad_input=unreachable, rearrange=unreachable,
            unpad_input=unreachable)
    _module("verl.utils.fsdp_utils", FSDPModule=type("FSDPModule", (), {}), fsdp2_clip_grad_norm_=unreachable)

    class GPUMemoryLogger:
        def __init__(self, *a, **k):
            pass

        def __call__(self, fn):
            return fn

    _module("verl.utils.profiler", GPUMemoryLogger=GPUMemoryLogger)
    _module("verl.utils.py_functional", **_functions(f"{verl_root}/verl/utils/py_functional.py", ["append_to_dict"], {}))
    _module("verl.utils.seqlen_balancing", prepare_dynamic_batch=unreachable, restore_dynamic_batch=unreachable)
    _load_by_path("verl.utils.torch_dtypes", f"{verl_root}/verl/utils/torch_dtypes.py")
    _module("verl.utils.ulysses", gather_outputs_and_unpad=unreachable, ulysses_pad=unreachable,
            ulysses_pad_and_slice_inputs=unreachable)
    # Debian's torch 1.13 under Python 3.11 cannot import torch.distributed.fsdp; 1.13 has no torch.distributed.tensor.
    _module("torch.distributed.fsdp", FullyShardedDataParallel=type("FullyShardedDataParallel", (), {}))
    _module("torch.distributed.tensor", DTensor=type("DTensor", (), {}))
    # torch 1.13's CPU autocast raises for a float32 dtype where later versions warn and disable it:
    # the actor's autocast(dtype=param_dtype) is a no-op here, as it is for float32 weights on CPU.
    real_autocast = torch.autocast

    def autocast(device_type, dtype=None, **k):
        if device_type == "cpu" and dtype != torch.bfloat16:
            return contextlib.nullcontext()
        return real_autocast(device_type, dtype=dtype, **k)

    torch.autocast = autocast
    actor_pkg = _module("verl.workers.actor", __path__=[])
    base = _load_by_path("verl.workers.actor.base", f"{verl_root}/verl/workers/actor/base.py")
    actor_pkg.BasePPOActor = base.BasePPOActor
    dp = _load_by_path("verl.workers.actor.dp_actor", f"{verl_root}/verl/workers/actor/dp_actor.py")
    actor_pkg.DataParallelPPOActor = dp.DataParallelPPOActor
    return core, dp.DataParallelPPOActor


# ---------------------------------------------------------------- a tiny causal LM and a tokenizer


class TinyLM(torch.nn.Module):
    """Pre-LN transformer, learned positions read from position_ids, keys masked by attention_mask."""

    def __init__(self, vocab=VOCAB, d=16, layers=2, heads=2, max_pos=4096):
        super().__init__()
        self.heads = heads
        self.tok = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Embedding(max_pos, d)
        self.blocks = torch.nn.ModuleList(
            torch.nn.ModuleDict({"ln1": torch.nn.LayerNorm(d), "qkv": torch.nn.Linear(d, 3 * d), "out": torch.nn.Linear(d, d),
                                 "ln2": torch.nn.LayerNorm(d), "up": torch.nn.Linear(d, 2 * d), "down": torch.nn.Linear(2 * d, d)})
            for _ in range(layers)
        )
        self.ln = torch.nn.LayerNorm(d)
        self.lm_head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids, attention_mask=None, position_ids=None, use_cache=False, **_):
        b, t = input_ids.shape
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if position_ids is None:
            position_ids = torch.arange(t).expand(b, t)
        h = self.tok(input_ids) + self.pos(position_ids)
        allowed = torch.ones(t, t, dtype=torch.bool).tril()[None] & attention_mask[:, None, :].bool()  # [B, T, T]
        bias = torch.where(allowed, 0.0, -1e30)[:, None]  # [B, 1, T, T]
        d = h.shape[-1]
        dh = d // self.heads
        for blk in self.blocks:
            q, k, v = blk["qkv"](blk["ln1"](h)).split(d, dim=-1)
            q, k, v = (z.view(b, t, self.heads, dh).transpose(1, 2) for z in (q, k, v))
            att = torch.softmax(q @ k.transpose(-1, -2) / dh**0.5 + bias, dim=-1)
            h = h + blk["out"]((att @ v).transpose(1, 2).reshape(b, t, d))
            h = h + blk["down"](F.gelu(blk["up"](blk["ln2"](h))))
        return types.SimpleNamespace(logits=self.lm_head(self.ln(h)))


class WordTokenizer:
    """Words, punctuation and whitespace runs, each hashed into the vocabulary (1…VOCAB−1)."""

    def encode(self, text, add_special_tokens=False):
        return [1 + zlib.crc32(w.encode()) % (VOCAB - 1) for w in re.findall(r"\w+|[^\w\s]|\s+", text)]


# ---------------------------------------------------------------- the batch, in VeRL's layout


def build_batch(fx, gen):
    """Prompts × K rollouts: left-padded x, right-padded responses of 1–3 turns with tool-response
    runs (response_mask 0), per-token advantages on the policy tokens, one uid per prompt."""
    K = fx["rollouts"]
    rows = []
    for i, p in enumerate(fx["prompts"]):
        x = torch.randint(1, VOCAB, (int(torch.randint(5, 10, (1,), generator=gen)),), generator=gen).tolist()
        info = {"pact_gate": p["gate"], "expert_trace": p["trace"], "step": p["step"], "position": i,
                "lambda_a": 0.0, "prefix_level": -1}
        for _ in range(K):
            resp, mask = [], []
            n_turns = int(torch.randint(1, 4, (1,), generator=gen))
            for t in range(n_turns):
                n = int(torch.randint(2, 6, (1,), generator=gen))
                resp += torch.randint(1, VOCAB, (n,), generator=gen).tolist()
                mask += [1] * n
                if t < n_turns - 1:
                    n_obs = int(torch.randint(1, 4, (1,), generator=gen))
                    resp += torch.randint(1, VOCAB, (n_obs,), generator=gen).tolist()
                    mask += [0] * n_obs
            adv = [float(torch.randn((), generator=gen)) * m for m in mask]
            rows.append({"x": x, "resp": resp, "mask": mask, "adv": adv, "uid": f"u{i}", "info": info, "prompt": i})
    P = max(len(r["x"]) for r in rows)
    R = max(len(r["resp"]) for r in rows)
    n = len(rows)
    prompts = torch.full((n, P), PAD, dtype=torch.long)
    responses = torch.full((n, R), PAD, dtype=torch.long)
    attn = torch.zeros((n, P + R), dtype=torch.long)
    response_mask = torch.zeros((n, R))
    advantages = torch.zeros((n, R))
    for k, r in enumerate(rows):
        prompts[k, P - len(r["x"]):] = torch.tensor(r["x"])
        attn[k, P - len(r["x"]):P] = 1
        responses[k, : len(r["resp"])] = torch.tensor(r["resp"])
        attn[k, P : P + len(r["resp"])] = 1
        response_mask[k, : len(r["mask"])] = torch.tensor(r["mask"], dtype=torch.float64)
        advantages[k, : len(r["adv"])] = torch.tensor(r["adv"])
    batch = {
        "prompts": prompts,
        "responses": responses,
        "input_ids": torch.cat([prompts, responses], dim=1),
        "attention_mask": attn,
        "position_ids": torch.clip(torch.cumsum(attn, dim=-1) - 1, min=0),
        "response_mask": response_mask,
        "advantages": advantages,
    }
    non_tensor = {"uid": np.array([r["uid"] for r in rows], dtype=object),
                  "extra_info": np.array([r["info"] for r in rows], dtype=object)}
    return rows, batch, non_tensor, R


# ---------------------------------------------------------------- the reference step


def row_logprobs(model, ids, start, temperature, width):
    """log π(ids[n] | ids[<n]) for n = start…, one unpadded row, at `temperature`, padded with 0 to `width`."""
    logits = model(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long), torch.arange(len(ids))[None]).logits[0]
    lp = torch.log_softmax(logits[start - 1 : len(ids) - 1] / temperature, dim=-1)
    out = lp.gather(-1, torch.tensor(ids[start:])[:, None])[:, 0]
    return torch.cat([out, torch.zeros(width - out.shape[0])])


class Reference:
    def __init__(self, pieces, core, fx, tok):
        self.p, self.core, self.fx, self.tok = pieces, core, fx, tok
        self.header = tok.encode(pieces["ASSISTANT_HEADER"])

    def route(self, info):
        o = self.fx["reference"]
        if o["recipe"] != "pact":
            return {"rl": "x", "rl_weight": 1.0, "sft_weight": 0.0}
        return self.p["route"](info["pact_gate"], bool(info["expert_trace"]), o["objective"], o["betaSft"])

    def trace(self, info, components=None):
        return self.p["encode_trace"](self.tok.encode, info["expert_trace"], components)

    def rl_row(self, r, under_h):
        """(ids, where τ starts): (x; τ) or c^h; τ = the response without its right padding."""
        if not under_h:
            return r["x"] + r["resp"], len(r["x"])
        trace_ids, _, _ = self.trace(r["info"], self.fx["reference"]["traceComponents"])
        row = self.p["trace_conditioned_row"](r["x"], r["resp"], trace_ids, self.header)
        return row["ids"], row["response_start"]

    def reads(self, model, rows, R, temperature, trace_for):
        with torch.no_grad():
            return torch.stack([row_logprobs(model, *self.rl_row(r, trace_for(r)), temperature, R) for r in rows])

    def prompt_loss(self, model, rows, R, old, ref, cfg, temperature, kl_context, all_x=False):
        info = rows[0]["info"]
        rt = {"rl": "x", "rl_weight": 1.0, "sft_weight": 0.0} if all_x else self.route(info)
        under_h = rt["rl"] == "h"
        ks = [r["k"] for r in rows]
        mask = torch.stack([torch.tensor(r["mask"] + [0.0] * (R - len(r["mask"]))) for r in rows])
        lp = torch.stack([row_logprobs(model, *self.rl_row(r, under_h), temperature, R) for r in rows])
        rl = {"log_prob": lp, "old_log_prob": old[ks], "advantages": torch.stack([torch.tensor(r["adv"] + [0.0] * (R - len(r["adv"]))) for r in rows]),
              "mask": mask}
        prompt = {"rl_weight": rt["rl_weight"], "sft_weight": rt["sft_weight"], "rl": rl}
        if cfg["kl_coef"] > 0:
            if under_h and kl_context == "prompt":
                lpx = torch.stack([row_logprobs(model, *self.rl_row(r, False), temperature, R) for r in rows])
                prompt["kl"] = {"log_prob": lpx, "ref_log_prob": ref[ks], "mask": mask}
            else:
                rl["ref_log_prob"] = ref[ks]
        if rt["sft_weight"] > 0:
            trace_ids, tags, trace = self.trace(info)
            row = self.p["component_sft_row"](rows[0]["x"], trace_ids, tags, trace, info["step"], self.fx["reference"]["schedule"])
            ids = row["ids"]
            lps = row_logprobs(model, ids, 1, 1.0, len(ids) - 1)
            prompt["sft"] = {"log_prob": lps[None], "mask": torch.tensor([row["mask"][1:]], dtype=torch.float64)}
        return prompt


def main():
    verl_root, package_parent, fixtures_path = sys.argv[1:4]
    sys.path.insert(0, package_parent)
    fx_all = json.load(open(fixtures_path))
    core, base_cls = load_dp_actor(verl_root)
    from pact_verl import actor as pact_actor
    from pact_verl import algos

    algos.register_all(core)
    installed = pact_actor.install(core)
    import verl.workers.actor as actor_pkg

    assert actor_pkg.DataParallelPPOActor is installed and issubclass(installed, base_cls)
    torch.distributed.init_process_group("gloo", init_method=f"file://{tempfile.mktemp()}", rank=0, world_size=1)
    from omegaconf import OmegaConf

    pieces = {n: getattr(pact_actor, n) for n in ("route", "encode_trace", "trace_conditioned_row", "component_sft_row", "ASSISTANT_HEADER")}
    out = []
    for fx in fx_all["scenarios"]:
        tok = WordTokenizer()
        gen = torch.Generator().manual_seed(fx["seed"])
        torch.manual_seed(fx["seed"])
        rows, batch, non_tensor, R = build_batch(fx, gen)
        for k, r in enumerate(rows):
            r["k"] = k
        K = fx["rollouts"]
        temperature = fx["temperature"]
        lr = fx["lr"]
        actor_cfg = OmegaConf.create({
            **fx["actor"],  # the run's exported actor settings
            "ppo_mini_batch_size": fx["miniBatchPrompts"] * K,  # rows per GPU, as the FSDP worker normalises it
            "ppo_micro_batch_size_per_gpu": fx["microBatchRows"],
            "use_remove_padding": False, "use_fused_kernels": False, "ulysses_sequence_parallel_size": 1,
            "use_dynamic_bsz": False, "use_prefix_grouper": False, "entropy_from_logits_with_chunking": False,
            "entropy_checkpointing": False, "use_torch_compile": False, "calculate_entropy": False,
            "fsdp_config": {"dtype": "fp32"}, "grad_clip": 1e12,
        })
        model0 = TinyLM()
        ref_model = copy.deepcopy(model0)
        with torch.no_grad():
            for p in ref_model.parameters():
                p.add_(0.05 * torch.randn(p.shape, generator=gen))
        module = copy.deepcopy(model0)

        grads, stepped = [], []

        class RecordingSGD(torch.optim.SGD):
            def step(self, closure=None):
                grads.append(module.lm_head.weight.grad.detach().clone())
                stepped.append({n: p.grad.detach().clone() for n, p in module.named_parameters()})
                return super().step(closure)

        opts = fx["options"]
        actor = actor_pkg.DataParallelPPOActor(actor_cfg, module, RecordingSGD(module.parameters(), lr=lr), pact_options=opts, tokenizer=tok)
        ref_actor = actor_pkg.DataParallelPPOActor(actor_cfg, ref_model, None, pact_options=opts, tokenizer=tok)
        meta = {"micro_batch_size": fx["microBatchRows"], "temperature": temperature, "use_dynamic_bsz": False, "pad_token_id": PAD}
        data = FakeDataProto(batch, non_tensor, meta)
        old = actor.compute_log_prob(data)["log_probs"]
        ref = ref_actor.compute_log_prob(data)["log_probs"] if fx["actor"]["use_kl_loss"] else None
        # The weights drift from π_old before this update (as after an earlier mini-batch), so ratios ≠ 1 and clip.
        with torch.no_grad():
            for p in module.parameters():
                p.add_(fx["drift"] * torch.randn(p.shape, generator=gen))
        model1 = copy.deepcopy(module)
        data.batch["old_log_probs"] = old
        if ref is not None:
            data.batch["ref_log_prob"] = ref
        metrics = actor.update_policy(data)

        # ---- the reference
        ref_side = Reference(pieces, core, fx, tok)
        o = fx["reference"]
        kl_context = o["klContext"]
        cfg = {"clip_ratio_low": o["clipEps"], "clip_ratio_high": o["clipEps"], "kl_coef": o["klCoef"], "loss_agg_mode": o["lossAgg"]}
        under_h = lambda r: ref_side.route(r["info"])["rl"] == "h"  # noqa: E731
        old_ref = ref_side.reads(model0, rows, R, temperature, under_h)
        ref_ref = None
        if ref is not None:
            ref_ref = ref_side.reads(ref_model, rows, R, temperature, lambda r: under_h(r) and kl_context == "trace")
        valid = batch["attention_mask"][:, -R:].bool()
        model = model1
        ref_losses, ref_grads, alt = [], [], {"allX": [], "tokenMean": []}
        max_grad_diff = 0.0
        prompts_order = list(range(len(fx["prompts"])))
        for mb, start in enumerate(range(0, len(prompts_order), fx["miniBatchPrompts"])):
            mb_prompts = prompts_order[start : start + fx["miniBatchPrompts"]]
            groups = [[r for r in rows if r["prompt"] == i] for i in mb_prompts]
            model.zero_grad()
            plist = [ref_side.prompt_loss(model, g, R, old_ref, ref_ref, cfg, temperature, kl_context) for g in groups]
            loss = algos.pact_minibatch_loss(core, plist, cfg)
            loss.backward()
            ref_losses.append(loss.item())
            ref_grads.append(model.lm_head.weight.grad.detach().clone())
            for n, p in model.named_parameters():
                max_grad_diff = max(max_grad_diff, (p.grad - stepped[mb][n]).abs().max().item())
            with torch.no_grad():
                alt["allX"].append(algos.pact_minibatch_loss(
                    core, [ref_side.prompt_loss(model, g, R, old_ref, ref_ref, cfg, temperature, kl_context, all_x=True) for g in groups], cfg).item())
                # VeRL's stock aggregation: one agg_loss over the mini-batch's tokens, no per-prompt mean
                pg = [p["rl"] for p in plist]
                mat = {k: torch.cat([x[k] for x in pg]) for k in ("log_prob", "old_log_prob", "advantages", "mask")}
                alt["tokenMean"].append(core.get_policy_loss_fn("pact")(
                    mat["old_log_prob"], mat["log_prob"], mat["advantages"], mat["mask"], cfg["loss_agg_mode"],
                    {"clip_ratio": cfg["clip_ratio_low"], "clip_ratio_low": cfg["clip_ratio_low"], "clip_ratio_high": cfg["clip_ratio_high"]})[0].item())
                for p in model.parameters():
                    p.sub_(lr * p.grad)
            clip = [core.get_policy_loss_fn("pact")(p["rl"]["old_log_prob"], p["rl"]["log_prob"].detach(), p["rl"]["advantages"], p["rl"]["mask"],
                                                     cfg["loss_agg_mode"], {"clip_ratio": cfg["clip_ratio_low"]})[1]["actor/pg_clipfrac"] for p in plist]
            alt.setdefault("clipfrac", []).append(max(clip))

        def rows_list(t):
            return [[float(v) for v, ok in zip(row, m) if ok] for row, m in zip(t, valid)]

        out.append({
            "name": fx["name"],
            "actor": {"old": rows_list(old), "ref": rows_list(ref) if ref is not None else None,
                      "losses": metrics["actor/pact_loss"], "lmHeadGrads": [g.flatten().tolist() for g in grads],
                      "lhPrompts": metrics["pact/lh_prompts"], "sftRows": metrics["pact/sft_rows"], "prompts": metrics["pact/prompts"]},
            "reference": {"old": rows_list(old_ref), "ref": rows_list(ref_ref) if ref_ref is not None else None,
                          "losses": ref_losses, "lmHeadGrads": [g.flatten().tolist() for g in ref_grads]},
            "maxParamGradDiff": max_grad_diff,
            "alternatives": alt,
            "underX": rows_list(ref_side.reads(model0, rows, R, temperature, lambda r: False)),
        })
    torch.distributed.destroy_process_group()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
