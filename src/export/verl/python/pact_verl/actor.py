"""PACT's actor extension: the rows the app's trainer builds per prompt (recipes/train/promptPlan.ts,
recipes/train/privilegedContext.ts), from token ids, for VeRL's actor to read log-probs on.

- ``encode_trace``: h* as ids + tags, each exported span tokenized on its own (encodeTaggedSpans);
- ``trace_conditioned_row``: c^h = [x; h*; <|im_start|>assistant\\n] followed by the rollout's
  response τ, and where τ starts: π_old(c^h) and π_θ(c^h) are the log-probs of τ's tokens read on
  this row (the L^h ratio); π_old(x) stays the rollout's own;
- ``component_sft_row``: (x; h*) with m_{i,n}(s), unrevealed reasoning removed by default;
- ``route``: the prompt's route from its exported gate and the run's objective.
The loss over these rows is algos.pact_prompt_loss.

- ``make_pact_actor(DataParallelPPOActor, core_algos)``: VeRL's FSDP actor with PACT's step
  (PACT Algorithm 1, lines 8–18), installed by register.py in place of VeRL's class:
  ``compute_log_prob`` reads π_old(τ | c^h) for the rollouts of L^h prompts (the actor, before the
  update, with the old weights; VeRL stores it as ``old_log_probs``) and, with ``kl_context: trace``,
  π_ref(τ | c^h) (the reference actor, as ``ref_log_prob``); ``update_policy`` computes, per prompt
  of a PPO mini-batch, L_i = w_rl·(L_RL + klCoef·KL) + w_sft·L_SFT with algos.pact_prompt_loss
  (L^x: the rollouts as sampled; L^h: the same rollouts re-read under c^h with the same advantages;
  the SFT row (x; h*) with m(s); the KL on the RL rows, or with ``kl_context: prompt`` on the
  rollouts as sampled) and steps on (1/|B|) Σ_i L_i, as the app's trainer
  (recipes/train/policyUpdate.ts, microBatches.ts). docs/verl-export.md has the details."""

from __future__ import annotations

import json
import os
from collections import OrderedDict

from .schedules import build_component_sft_row

ASSISTANT_HEADER = "<|im_start|>assistant\n"


def encode_trace(tokenizer_encode, expert_trace_json: str, components=None):
    trace = json.loads(expert_trace_json)
    comps = components or {"reasoning": True, "toolCalls": True, "toolResponses": True}
    ids, tags = [], []
    for span in trace["spans"]:
        kind = span["tag"]["kind"]
        if (kind == "reasoning" and not comps["reasoning"]) or (kind == "tool_call" and not comps["toolCalls"]) or (
            kind == "observation" and not comps["toolResponses"]
        ):
            continue
        for token in tokenizer_encode(span["text"]):
            ids.append(token)
            tags.append(dict(span["tag"]))
    return ids, tags, trace


def trace_conditioned_row(prompt_ids, response_ids, trace_ids, header_ids):
    context = list(prompt_ids) + list(trace_ids) + list(header_ids)
    return {"ids": context + list(response_ids), "response_start": len(context)}


def component_sft_row(prompt_ids, trace_ids, trace_tags, trace, step, schedule):
    prompt_tags = [{"kind": "prompt", "turn": -1}] * len(prompt_ids)
    return build_component_sft_row(
        len(prompt_ids), list(prompt_ids) + list(trace_ids), prompt_tags + trace_tags, trace["prefix_chunk_counts"], step, schedule
    )


def route(gate: int, has_trace: bool, objective: str, beta_sft: float) -> dict:
    """recipes/methods/pact.ts routePrompts for one prompt whose gate was drawn."""
    z = gate if has_trace else 1
    if z == 1:
        return {"rl": "x", "rl_weight": 1.0, "sft_weight": 0.0, "gate": 1}
    is_trace = objective in ("Lh", "Lh+SFT")
    has_sft = objective in ("Lx+SFT", "Lh+SFT")
    return {"rl": "h" if is_trace else "x", "rl_weight": 1.0, "sft_weight": beta_sft if has_sft else 0.0, "gate": 0}


# ---------------------------------------------------------------- PACT's actor step inside VeRL

OPTIONS_ENV = "PACT_VERL_OPTIONS"


def load_options() -> dict:
    """The run's ``pact`` section (+ rollout_n, tokenizer_path) that main_ppo.py puts in the
    environment of every Ray worker; {} when absent (then the actor is VeRL's own)."""
    raw = os.environ.get(OPTIONS_ENV, "")
    return json.loads(raw) if raw else {}


def prompt_route(extra_info: dict, options: dict) -> dict:
    """A row's route: PACT's gate for ``recipe: pact``, L^x for every other recipe."""
    if options.get("recipe") != "pact":
        return {"rl": "x", "rl_weight": 1.0, "sft_weight": 0.0, "gate": 1}
    has_trace = bool(extra_info.get("expert_trace"))
    return route(int(extra_info.get("pact_gate", 1)), has_trace, options.get("objective", "Lh+SFT"), float(options.get("beta_sft", 0)))


def sft_schedule(options: dict) -> dict:
    """The schedule dict of schedules.build_sft_mask_at_step from the YAML's snake_case keys."""
    return {
        "reasoningSchedule": options.get("reasoning_schedule", "segment"),
        "toolCallSchedule": options.get("tool_call_schedule", "scale"),
        "fullTokenAnneal": bool(options.get("full_token_anneal", False)),
        "toolCallScaleStart": float(options.get("tool_call_scale_start", 0.8)),
        "toolCallScaleEnd": float(options.get("tool_call_scale_end", 0.2)),
        "annealHorizon": float(options.get("anneal_horizon", 1)),
        "prefixReveal": options.get("prefix_reveal", "remove"),
    }


def batch_info(mask) -> dict:
    """A prompt's normalisers for VeRL's agg_loss, so that each chunk of its rows is its share
    (microBatches.ts AggregationTotals): Σ mask, rows with Σ mask > 0, rows × width."""
    return {
        "batch_num_tokens": float(mask.sum().item()),
        "global_batch_size": float((mask.sum(-1) > 0).sum().item()),
        "loss_scale_factor": mask.shape[0] * mask.shape[-1],
    }


def _position_ids(attention_mask):
    """VeRL's compute_position_id_with_mask."""
    import torch

    return torch.clip(torch.cumsum(attention_mask, dim=-1) - 1, min=0, max=None)


def make_pact_actor(base, core_algos):
    """The subclass of VeRL's DataParallelPPOActor ``base`` that runs PACT's step."""
    import torch

    from .algos import pact_prompt_loss

    class PactDataParallelPPOActor(base):
        def __init__(self, config, actor_module, actor_optimizer=None, pact_options=None, tokenizer=None):
            super().__init__(config, actor_module, actor_optimizer)
            self.pact = load_options() if pact_options is None else dict(pact_options)
            self._pact_tokenizer = tokenizer
            self._pact_traces: dict = {}

        # ---- rows

        @property
        def pact_enabled(self) -> bool:
            return bool(self.pact)

        def _tokenizer(self):
            if self._pact_tokenizer is None:
                from verl.utils import hf_tokenizer
                from verl.utils.fs import copy_to_local

                path = copy_to_local(self.pact["tokenizer_path"])
                self._pact_tokenizer = hf_tokenizer(path, trust_remote_code=bool(self.pact.get("trust_remote_code")))
            return self._pact_tokenizer

        def _encode(self, text: str) -> list:
            return list(self._tokenizer().encode(text, add_special_tokens=False))

        def _trace(self, extra_info: dict, components=None):
            """h* of a row as (ids, tags, trace), tokenized span by span (cached per trace)."""
            key = (extra_info["expert_trace"], json.dumps(components, sort_keys=True))
            if key not in self._pact_traces:
                self._pact_traces[key] = encode_trace(self._encode, extra_info["expert_trace"], components)
            return self._pact_traces[key]

        def _prompt_ids(self, input_ids, attention_mask, response_length: int, k: int) -> list:
            p = input_ids.shape[1] - response_length
            return input_ids[k, :p][attention_mask[k, :p].bool()].tolist()

        def _trace_inputs(self, batch: dict, extra_infos, rows: list, pad_token_id: int) -> dict:
            """The rows re-read under c^h = [x; h*; <|im_start|>assistant\n]: left-padded contexts,
            then the rollout's response tensor unchanged, so log-prob column j is τ's token j."""
            responses = batch["responses"][rows]
            r_len = responses.shape[1]
            header = self._encode(ASSISTANT_HEADER)
            components = self.pact.get("trace_components")
            contexts = []
            for k in rows:
                x = self._prompt_ids(batch["input_ids"], batch["attention_mask"], r_len, k)
                trace_ids, _, _ = self._trace(extra_infos[k], components)
                row = trace_conditioned_row(x, [], trace_ids, header)
                contexts.append(row["ids"][: row["response_start"]])
            width = max(len(c) for c in contexts)
            device = responses.device
            ctx = torch.full((len(rows), width), pad_token_id, dtype=responses.dtype, device=device)
            ctx_mask = torch.zeros((len(rows), width), dtype=batch["attention_mask"].dtype, device=device)
            for j, c in enumerate(contexts):
                ctx[j, width - len(c):] = torch.tensor(c, dtype=responses.dtype, device=device)
                ctx_mask[j, width - len(c):] = 1
            attention_mask = torch.cat([ctx_mask, batch["attention_mask"][rows, -r_len:]], dim=1)
            return {
                "input_ids": torch.cat([ctx, responses], dim=1),
                "attention_mask": attention_mask,
                "position_ids": _position_ids(attention_mask),
                "responses": responses,
            }

        def _sft_inputs(self, batch: dict, extra_info: dict, k: int):
            """The SFT row (x; h*) with m(s) (prefixReveal 'remove': unrevealed reasoning left out),
            as model inputs whose 'responses' are tokens 1…N−1, and its mask in those columns."""
            r_len = batch["responses"].shape[1]
            x = self._prompt_ids(batch["input_ids"], batch["attention_mask"], r_len, k)
            trace_ids, trace_tags, trace = self._trace(extra_info)
            row = component_sft_row(x, trace_ids, trace_tags, trace, extra_info["step"], sft_schedule(self.pact))
            mask = row["mask"][1:]
            if not any(m > 0 for m in mask):
                return None
            device = batch["responses"].device
            ids = torch.tensor([row["ids"]], dtype=batch["responses"].dtype, device=device)
            ones = torch.ones_like(ids, dtype=batch["attention_mask"].dtype)
            inputs = {"input_ids": ids, "attention_mask": ones, "position_ids": _position_ids(ones), "responses": ids[:, 1:]}
            return inputs, torch.tensor([mask], dtype=torch.float64, device=device)

        def _reads_trace(self, extra_info: dict) -> bool:
            return prompt_route(extra_info, self.pact)["rl"] == "h"

        # ---- π_old(c^h), π_ref(c^h)

        def compute_log_prob(self, data, calculate_entropy: bool = False):
            out = super().compute_log_prob(data, calculate_entropy=calculate_entropy)
            if not self.pact_enabled or "extra_info" not in data.non_tensor_batch:
                return out
            is_ref = self.actor_optimizer is None
            if is_ref and self.pact.get("kl_context", "prompt") != "trace":
                return out  # π_ref where the KL reads it: on the rollouts as sampled
            extra_infos = data.non_tensor_batch["extra_info"]
            rows = [k for k in range(len(extra_infos)) if self._reads_trace(extra_infos[k])]
            if not rows:
                return out
            from verl.utils.device import get_device_id

            micro = int(data.meta_info.get("micro_batch_size") or len(rows))
            temperature = data.meta_info["temperature"]
            pad_token_id = data.meta_info.get("pad_token_id", 0)
            batch = {k: data.batch[k] for k in ("input_ids", "attention_mask", "responses")}
            log_probs = out["log_probs"].clone()
            self.actor_module.eval()
            for start in range(0, len(rows), micro):
                chunk = rows[start : start + micro]
                inputs = self._trace_inputs(batch, extra_infos, chunk, pad_token_id)
                inputs = {k: v.to(get_device_id()) for k, v in inputs.items()}
                with torch.no_grad():
                    lp = self._forward_micro_batch(inputs, temperature=temperature)["log_probs"]
                log_probs[chunk] = lp.to(log_probs.device, log_probs.dtype)
            out["log_probs"] = log_probs
            return out

        # ---- the update: (1/|B|) Σ_i L_i per mini-batch

        def _loss_config(self) -> dict:
            c = self.config
            clip = c.get("clip_ratio", 0.2)
            kl_coef = float(c.kl_loss_coef) if c.use_kl_loss else 0.0
            if kl_coef > 0 and c.get("kl_loss_type", "low_var_kl") != "low_var_kl":
                raise ValueError("pact actor: the app's KL penalty is k3 (kl_loss_type: low_var_kl)")
            return {
                "clip_ratio_low": c.get("clip_ratio_low", None) or clip,
                "clip_ratio_high": c.get("clip_ratio_high", None) or clip,
                "kl_coef": kl_coef,
                "loss_agg_mode": c.loss_agg_mode,
            }

        def update_policy(self, data):
            if not self.pact_enabled:
                return super().update_policy(data)
            if self.config.get("entropy_coeff", 0):
                raise ValueError("pact actor: the app's loss has no entropy bonus (entropy_coeff must be 0)")
            if "rollout_is_weights" in data.batch.keys():
                raise ValueError("pact actor: rollout importance weights are not part of the app's loss")
            from verl.utils.device import get_device_id

            self.actor_module.train()
            temperature = data.meta_info["temperature"]
            pad_token_id = data.meta_info.get("pad_token_id", 0)
            cfg = self._loss_config()
            keys = ["responses", "response_mask", "input_ids", "attention_mask", "position_ids", "old_log_probs", "advantages"]
            if cfg["kl_coef"] > 0:
                keys.append("ref_log_prob")
            data = data.select(batch_keys=keys, non_tensor_batch_keys=["extra_info", "uid"])
            micro = self.config.get("ppo_micro_batch_size_per_gpu", None)
            n_rollouts = int(self.pact.get("rollout_n", 0) or 0)
            metrics: dict = {}

            def add(name, value):
                metrics.setdefault(name, []).append(value)

            for _ in range(self.config.ppo_epochs):
                for mini_batch in data.split(self.config.ppo_mini_batch_size):
                    batch = {k: v.to(get_device_id()) for k, v in mini_batch.batch.items()}
                    extra_infos = mini_batch.non_tensor_batch["extra_info"]
                    groups: OrderedDict = OrderedDict()
                    for k, uid in enumerate(mini_batch.non_tensor_batch["uid"]):
                        groups.setdefault(uid, []).append(k)
                    if n_rollouts and any(len(g) != n_rollouts for g in groups.values()):
                        raise ValueError(
                            "pact actor: a mini-batch holds part of a prompt's rollouts (group sizes "
                            f"{[len(g) for g in groups.values()]}, rollout.n {n_rollouts}); keep trainer.balance_batch "
                            "false and ppo_mini_batch_size a multiple of the prompts per GPU"
                        )
                    n_prompts = len(groups)
                    self.actor_optimizer.zero_grad()
                    total, n_h, n_sft = 0.0, 0, 0
                    for rows in groups.values():
                        loss = self._prompt_step(batch, extra_infos, rows, cfg, n_prompts, micro, temperature, pad_token_id)
                        total += loss["loss"]
                        n_h += loss["h"]
                        n_sft += loss["sft"]
                    grad_norm = self._optimizer_step()
                    add("actor/pact_loss", total)
                    add("actor/pg_loss", total)
                    add("actor/grad_norm", float(grad_norm.detach().item()) if torch.is_tensor(grad_norm) else float(grad_norm))
                    add("pact/lh_prompts", n_h)
                    add("pact/sft_rows", n_sft)
                    add("pact/prompts", n_prompts)
            self.actor_optimizer.zero_grad()
            return metrics

        def _prompt_step(self, batch, extra_infos, rows, cfg, n_prompts, micro, temperature, pad_token_id) -> dict:
            """Backward of L_i / |B| for one prompt, chunk by chunk (each chunk its share of L_i
            under the prompt's normalisers): its RL rows, its KL rows, its SFT row."""
            info = extra_infos[rows[0]]
            r = prompt_route(info, self.pact)
            under_h = r["rl"] == "h"
            kl_on_x = under_h and cfg["kl_coef"] > 0 and self.pact.get("kl_context", "prompt") == "prompt"
            size = int(micro or len(rows))
            chunks = [rows[s : s + size] for s in range(0, len(rows), size)]
            mask = batch["response_mask"][rows]
            rl_info = batch_info(mask)
            total = 0.0

            def backward(part) -> None:
                nonlocal total
                loss = pact_prompt_loss(core_algos, part, cfg) / n_prompts
                if loss.requires_grad:
                    loss.backward()
                total += float(loss.detach().item())

            def forward(inputs, temp):
                return self._forward_micro_batch(inputs, temperature=temp)["log_probs"]

            if r["rl"] is not None and r["rl_weight"] > 0 and rl_info["batch_num_tokens"] > 0:
                for chunk in chunks:
                    if under_h:
                        inputs = self._trace_inputs(batch, extra_infos, chunk, pad_token_id)
                    else:
                        inputs = {k: batch[k][chunk] for k in ("input_ids", "attention_mask", "position_ids", "responses")}
                    lp = forward(inputs, temperature)
                    rl = {
                        "log_prob": lp,
                        "old_log_prob": batch["old_log_probs"][chunk],
                        "advantages": batch["advantages"][chunk],
                        "mask": batch["response_mask"][chunk],
                        "batch_info": rl_info,
                    }
                    if cfg["kl_coef"] > 0 and not kl_on_x:
                        rl["ref_log_prob"] = batch["ref_log_prob"][chunk]
                    backward({"rl_weight": r["rl_weight"], "sft_weight": 0.0, "rl": rl})
                if kl_on_x:
                    for chunk in chunks:
                        inputs = {k: batch[k][chunk] for k in ("input_ids", "attention_mask", "position_ids", "responses")}
                        kl = {
                            "log_prob": forward(inputs, temperature),
                            "ref_log_prob": batch["ref_log_prob"][chunk],
                            "mask": batch["response_mask"][chunk],
                            "batch_info": rl_info,
                        }
                        backward({"rl_weight": r["rl_weight"], "sft_weight": 0.0, "rl": None, "kl": kl})
            has_sft = False
            if r["sft_weight"] > 0:
                built = self._sft_inputs(batch, info, rows[0])
                if built is not None:
                    inputs, sft_mask = built
                    lp = forward(inputs, 1.0)  # L_SFT reads π_θ itself, not the sampling temperature
                    backward({"rl_weight": 0.0, "sft_weight": r["sft_weight"], "rl": None, "sft": {"log_prob": lp, "mask": sft_mask}})
                    has_sft = True
            return {"loss": total, "h": int(under_h), "sft": int(has_sft)}

    PactDataParallelPPOActor.__name__ = "PactDataParallelPPOActor"
    PactDataParallelPPOActor.__qualname__ = "PactDataParallelPPOActor"
    return PactDataParallelPPOActor


def install(core_algos) -> type:
    """Puts the PACT actor in place of VeRL's DataParallelPPOActor where the FSDP worker looks it
    up (``from verl.workers.actor import DataParallelPPOActor`` inside ``init_model``), for the
    actor and the reference policy alike. Returns the class."""
    import verl.workers.actor as actor_pkg

    base = actor_pkg.DataParallelPPOActor
    if getattr(base, "_pact", False):
        return base
    cls = make_pact_actor(base, core_algos)
    cls._pact = True
    actor_pkg.DataParallelPPOActor = cls
    return cls
