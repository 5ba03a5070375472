"""PACT's actor extension: the rows the app's trainer builds per prompt (recipes/train/promptPlan.ts,
recipes/privilegedContext.ts), from token ids, for VeRL's actor to read log-probs on.

- ``encode_trace``: h* as ids + tags, each exported span tokenized on its own (encodeTaggedSpans);
- ``trace_conditioned_row``: c^h = [x; h*; <|im_start|>assistant\\n] followed by the rollout's
  response τ, and where τ starts: π_old(c^h) and π_θ(c^h) are the log-probs of τ's tokens read on
  this row (the L^h ratio); π_old(x) stays the rollout's own;
- ``component_sft_row``: (x; h*) with m_{i,n}(s), unrevealed reasoning removed by default;
- ``route``: the prompt's route from its exported gate and the run's objective.
The loss over these rows is algos.pact_prompt_loss. Wiring them into VeRL's FSDP actor
(extra forward passes per mini-batch) is not done: see docs/verl-export.md."""

from __future__ import annotations

import json

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
    """recipes/pact.ts routePrompts for one prompt whose gate was drawn."""
    z = gate if has_trace else 1
    if z == 1:
        return {"rl": "x", "rl_weight": 1.0, "sft_weight": 0.0, "gate": 1}
    is_trace = objective in ("Lh", "Lh+SFT")
    has_sft = objective in ("Lx+SFT", "Lh+SFT")
    return {"rl": "h" if is_trace else "x", "rl_weight": 1.0, "sft_weight": beta_sft if has_sft else 0.0, "gate": 0}
