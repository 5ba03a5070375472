"""The ``pact_turn`` reward manager: per-turn rewards placed on each turn's last token.

VeRL's multi-turn agent loop marks the policy's tokens with response_mask = 1 and the tool
responses with 0, so turn t of a response is the t-th run of 1s. Each run is decoded on its
own (the assistant text of that turn) and scored as the app scores it (rewards.py):
  matchtir    r_t of MatchTIR hard credit, on the last token of turn t (pact, matchtir)
  ftrl        compute_solve_f1 per turn; the tool outputs are read back from the tool responses
  toolrl      ToolRL's reward (rule pact.toolrl_rule) on the last policy token
  outcome_f1  F1(answer, gold) on the last policy token (grpo)
The advantage estimators of algos.py read the turns and their rewards back from these tensors.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

import torch

from . import rewards as R
from .algos import response_turns

_TOOL_RESPONSE = re.compile(r"<tool_response>\n([\s\S]*?)\n</tool_response>")


def score_turns(kind: str, turn_texts: list[str], observations: list[str], ground_truth: dict, options: dict) -> list[float]:
    """Per-turn rewards (matchtir, ftrl) or [0, …, 0, R] (outcome kinds) of one rollout."""
    if kind == "matchtir":
        return R.matchtir_turn_rewards(
            turn_texts, ground_truth, options.get("matching", "hungarian"), options.get("unmatched_penalty", 0.0)
        )
    if kind == "ftrl":
        outputs = [o for block in observations for o in _TOOL_RESPONSE.findall(block)]
        turns, k = [], 0
        for text in turn_texts:
            calls = []
            for call in R.parse_turn(text)["calls"]:
                calls.append({"name": call["name"], "output": outputs[k] if k < len(outputs) else ""})
                k += 1
            turns.append({"text": text, "calls": calls})
        return R.ftrl_reward(turns, ground_truth.get("unsolved_set") or {}, ground_truth["answer"])
    if kind == "toolrl":
        total = R.toolrl_reward(turn_texts, ground_truth.get("gold_calls") or [], options.get("toolrl_rule", "matchtir"))
    elif kind == "outcome_f1":
        answer = next((p["answer"] for p in map(R.parse_turn, turn_texts) if p["answer"] is not None), "")
        total = R.answer_f1(answer, ground_truth["answer"])
    else:
        raise ValueError(f"unknown pact reward {kind!r}")
    return [0.0] * (len(turn_texts) - 1) + [total] if turn_texts else [total]


try:
    from verl import DataProto
    from verl.workers.reward_manager import register
    from verl.workers.reward_manager.abstract import AbstractRewardManager
except ImportError:  # the tests run without VeRL
    AbstractRewardManager = object

    def register(_name):
        return lambda cls: cls


@register("pact_turn")
class PactTurnRewardManager(AbstractRewardManager):
    def __init__(self, tokenizer, num_examine=0, compute_score=None, reward_fn_key="data_source", **kwargs):
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        pact = kwargs.get("pact") or {}
        self.kind = pact.get("reward", "matchtir")
        self.options = dict(pact)

    def __call__(self, data, return_dict: bool = False):
        reward_tensor = torch.zeros_like(data.batch["responses"], dtype=torch.float32)
        extra = defaultdict(list)
        for i in range(len(data)):
            item = data[i]
            response = item.batch["responses"]
            mask = item.batch["response_mask"] if "response_mask" in item.batch else None
            prompt_len = item.batch["prompts"].shape[-1]
            valid = int(item.batch["attention_mask"][prompt_len:].sum())
            mask_row = mask[:valid].tolist() if mask is not None else [1] * valid
            turns = response_turns(mask_row)
            texts = [self.tokenizer.decode(response[a:b], skip_special_tokens=False) for a, b in turns]
            gaps = [self.tokenizer.decode(response[b:a2], skip_special_tokens=False) for (_, b), (a2, _) in zip(turns, turns[1:])]
            ground_truth = json.loads(item.non_tensor_batch["reward_model"]["ground_truth"])
            rewards = score_turns(self.kind, texts, gaps, ground_truth, self.options)
            for (a, b), r in zip(turns, rewards):
                reward_tensor[i, b - 1] += r
            if not turns and valid > 0:
                reward_tensor[i, valid - 1] += rewards[-1]
            extra["pact_reward"].append(float(sum(rewards)))
        return {"reward_tensor": reward_tensor, "reward_extra_info": extra} if return_dict else reward_tensor
