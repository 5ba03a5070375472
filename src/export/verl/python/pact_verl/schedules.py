"""PACT's SFT supervision (core/schedules.ts, core/masks.ts, recipes/train/privilegedContext.ts
buildSftMaskAtStep / buildComponentSftRow): λa(s), the reasoning prefix level of step s, and the
component-aware mask m_{i,n}(s) read from the token tags of [x; h*]. Steps are s = 1..T.
A tag is a dict {'kind', 'turn', 'segment'?} as the exporter writes it for each span of h*."""

from __future__ import annotations

import math

MAX_PREFIX_LEVEL = 4


def tool_call_scale(step: float, start: float, end: float, horizon: float) -> float:
    """λa(s) = start − (start − end)·min(s/S, 1)."""
    return start - (start - end) * min(step / horizon, 1)


def reasoning_prefix_level(step: float, horizon: float, start_level=MAX_PREFIX_LEVEL, end_level=0) -> int:
    n_stages = start_level - end_level + 1
    if horizon <= 1:
        return end_level if step >= 1 else start_level
    stage = min(max(0, math.floor((n_stages * (step - 1)) / (horizon - 1))), n_stages - 1)
    return start_level - stage


def token_keep_fraction(step: float, horizon: float) -> float:
    return 1 - min(step / horizon, 1)


def reasoning_supervision(name: str, step: float, horizon: float) -> tuple[str, float]:
    if name == "segment":
        return ("prefix-level", reasoning_prefix_level(step, horizon))
    if name == "fixed":
        return ("prefix-level", MAX_PREFIX_LEVEL)
    if name == "token":
        return ("token-fraction", token_keep_fraction(step, horizon))
    if name == "none":
        return ("prefix-level", 0)
    raise ValueError(f"unknown reasoning schedule {name!r}")


def tool_call_supervision(name: str, step: float, horizon: float, start: float, end: float) -> tuple[str, float]:
    if name == "scale":
        return ("scale", tool_call_scale(step, start, end, horizon))
    if name == "fixed":
        return ("scale", start)
    if name == "token":
        return ("token-fraction", token_keep_fraction(step, horizon))
    if name == "none":
        return ("scale", 0.0)
    raise ValueError(f"unknown tool-call schedule {name!r}")


def _is_safe_reasoning(tag, counts) -> bool:
    return tag["kind"] == "reasoning" and tag["segment"] < counts[tag["turn"]][MAX_PREFIX_LEVEL]


def _keep_leading(mask, groups, fraction):
    for indices in groups:
        n_keep = math.floor(fraction * len(indices) + 1e-9)
        for k in range(n_keep):
            mask[indices[k]] = 1


def _group_by_turn(tags, is_member) -> list[list[int]]:
    by_turn: dict[int, list[int]] = {}
    for n, tag in enumerate(tags):
        if is_member(tag):
            by_turn.setdefault(tag["turn"], []).append(n)
    return list(by_turn.values())


def _find_runs(tags, is_member) -> list[list[int]]:
    runs, start = [], -1
    for n in range(len(tags) + 1):
        is_in = n < len(tags) and is_member(tags[n])
        if start >= 0 and (not is_in or tags[n]["turn"] != tags[start]["turn"]):
            runs.append(list(range(start, n)))
            start = -1
        if is_in and start < 0:
            start = n
    return runs


def build_component_mask(tags, counts, reasoning: tuple[str, float], tool_call: tuple[str, float]) -> list[float]:
    mask = [0] * len(tags)
    kind, value = reasoning
    if kind == "prefix-level":
        for n, tag in enumerate(tags):
            if tag["kind"] == "reasoning" and tag["segment"] < counts[tag["turn"]][int(value)]:
                mask[n] = 1
    else:
        _keep_leading(mask, _group_by_turn(tags, lambda t: _is_safe_reasoning(t, counts)), value)
    kind, value = tool_call
    if kind == "scale":
        for n, tag in enumerate(tags):
            if tag["kind"] == "tool_call":
                mask[n] = value
    else:
        _keep_leading(mask, _find_runs(tags, lambda t: t["kind"] == "tool_call"), value)
    return mask


def build_full_token_mask(tags, counts, fraction: float) -> list[float]:
    mask = [0] * len(tags)
    groups = _group_by_turn(tags, lambda t: t["kind"] == "tool_call" or _is_safe_reasoning(t, counts))
    _keep_leading(mask, groups, fraction)
    return mask


def build_sft_mask_at_step(tags, counts, step: float, schedule: dict) -> dict:
    """{'mask', 'lambda_a', 'prefix_level'} of recipes/train/privilegedContext.ts buildSftMaskAtStep.

    ``schedule``: reasoningSchedule, toolCallSchedule, fullTokenAnneal, toolCallScaleStart,
    toolCallScaleEnd, annealHorizon (the run's pact options, as the exporter writes them)."""
    horizon = schedule["annealHorizon"]
    trace_tags = [
        t if 0 <= t["turn"] < len(counts) else {**t, "kind": "control" if t["kind"] == "reasoning" else t["kind"]}
        for t in tags
    ]
    if schedule.get("fullTokenAnneal"):
        fraction = token_keep_fraction(step, horizon)
        return {"mask": build_full_token_mask(trace_tags, counts, fraction), "lambda_a": fraction, "prefix_level": math.nan}
    reasoning = reasoning_supervision(schedule["reasoningSchedule"], step, horizon)
    tool_call = tool_call_supervision(
        schedule["toolCallSchedule"], step, horizon, schedule["toolCallScaleStart"], schedule["toolCallScaleEnd"]
    )
    return {
        "mask": build_component_mask(trace_tags, counts, reasoning, tool_call),
        "lambda_a": tool_call[1],
        "prefix_level": reasoning[1] if reasoning[0] == "prefix-level" else MAX_PREFIX_LEVEL * reasoning[1],
    }


def build_component_sft_row(prompt_len: int, ids, tags, counts, step: float, schedule: dict) -> dict:
    """The SFT row (x; h*) and its mask (buildComponentSftRow): with prefixReveal 'remove' (the
    default) the reasoning tokens the mask leaves out are not in the row either."""
    built = build_sft_mask_at_step(tags, counts, step, schedule)
    mask = built["mask"]
    if schedule.get("prefixReveal", "remove") == "mask":
        return {"ids": list(ids), "tags": list(tags), **built}
    keep = [n < prompt_len or t["kind"] != "reasoning" or mask[n] > 0 for n, t in enumerate(tags)]
    return {
        "ids": [x for x, k in zip(ids, keep) if k],
        "tags": [x for x, k in zip(tags, keep) if k],
        "mask": [x for x, k in zip(mask, keep) if k],
        "lambda_a": built["lambda_a"],
        "prefix_level": built["prefix_level"],
    }
