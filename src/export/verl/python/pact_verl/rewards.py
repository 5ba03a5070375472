"""Rewards of the app's tool-use recipes, ported line by line from the TypeScript core:

- ``parse_turn``: the calls and the answer of one assistant turn (envs/toolCallParser.ts);
- ``turn_rewards``: MatchTIR hard credit, all calls of the non-answer turns matched at once
  against the gold calls (core/matching.ts, Hungarian or MatchTIR's greedy), r_t = mean r(p)
  of a turn's calls, F1(answer) on the answer turn (core/rewards.ts);
- ``ftrl_reward``: FTRL's compute_solve_f1 per turn (core/ftrlReward.ts);
- ``toolrl_reward``: ToolRL's reward, rule 'matchtir' (MatchTIR's compute_toolrl) by default
  or 'toolrl' (core/toolrlReward.ts).
Plain Python, no torch: the reward manager (reward_manager.py) calls these per rollout.
"""

from __future__ import annotations

import json
import math
import re

# ---------------------------------------------------------------- JSON values, as JavaScript sees them


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str):
    """JSON.parse: NaN / Infinity are not JSON."""
    return json.loads(text, parse_constant=_reject_constant)


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def is_json_equal(a, b) -> bool:
    """core/matching.ts isJsonEqual: numbers by value (1 == 1.0), "1" != 1, true != 1."""
    if _is_number(a) and _is_number(b):
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(is_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        return all(k in b and is_json_equal(a[k], b[k]) for k in a)
    return False


# ---------------------------------------------------------------- parsing one assistant turn

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"

# JavaScript's String.prototype.trim whitespace set.
_JS_WS = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_trim(s: str) -> str:
    return s.strip(_JS_WS)


def parse_tool_call_json(inner: str):
    """The call of one <tool_call> block, or None when it is malformed."""
    trimmed = js_trim(inner)
    if not trimmed:
        return None
    try:
        value = parse_json(trimmed)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or "name" not in value:
        return None
    name = value["name"]
    if not isinstance(name, str) or not js_trim(name):
        return None
    if "arguments" not in value or not isinstance(value["arguments"], dict):
        return None
    return {"name": name, "arguments": value["arguments"]}


def parse_turn(text: str) -> dict:
    """{'calls': [well-formed calls in order], 'answer': str | None} of one assistant turn."""
    s = text
    calls: list[dict] = []
    answer = None
    pos = 0
    first_close = s.find(THINK_CLOSE)
    if first_close >= 0:
        head = s[:first_close]
        if THINK_OPEN not in head and CALL_OPEN not in head and ANSWER_OPEN not in head:
            pos = first_close + len(THINK_CLOSE)
    while pos < len(s):
        tag, at = "", -1
        for candidate in (THINK_OPEN, CALL_OPEN, ANSWER_OPEN):
            i = s.find(candidate, pos)
            if i >= 0 and (at < 0 or i < at):
                at, tag = i, candidate
        if at < 0:
            break
        inner = at + len(tag)
        if tag == THINK_OPEN:
            close = s.find(THINK_CLOSE, inner)
            pos = len(s) if close < 0 else close + len(THINK_CLOSE)
        elif tag == CALL_OPEN:
            close = s.find(CALL_CLOSE, inner)
            reopen = s.find(CALL_OPEN, inner)
            if close < 0 or (0 <= reopen < close):
                pos = reopen if reopen >= 0 and (close < 0 or reopen < close) else len(s)
            else:
                call = parse_tool_call_json(s[inner:close])
                if call is not None:
                    calls.append(call)
                pos = close + len(CALL_CLOSE)
        else:
            close = s.find(ANSWER_CLOSE, inner)
            if close < 0:
                pos = len(s)
            else:
                if answer is None:
                    answer = js_trim(s[inner:close])
                pos = close + len(ANSWER_CLOSE)
    return {"calls": calls, "answer": answer}


# ---------------------------------------------------------------- MatchTIR matching


def score_argument_keys(pred_keys, gold_keys) -> float:
    a, b = set(pred_keys), set(gold_keys)
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def tool_call_similarity(pred: dict, gold: dict) -> float:
    """S_ab of PACT App. B."""
    if pred["name"].lower() != gold["name"].lower():
        return 0.0
    pred_args, gold_args = pred["arguments"], gold["arguments"]
    key_score = score_argument_keys(list(pred_args), list(gold_args))
    exact = sum(1 for k in gold_args if k in pred_args and is_json_equal(pred_args[k], gold_args[k]))
    return (1 + key_score + exact) / (2 + len(gold_args))


def _assign_min_cost(n: int, m: int, cost) -> list[int]:
    """core/hungarian.ts assignMinCost: shortest augmenting paths with potentials, same scan order."""
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    p = [0] * (m + 1)
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = [math.inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = p[j0]
            delta = math.inf
            j1 = 0
            for j in range(1, m + 1):
                if used[j]:
                    continue
                reduced = cost(i0 - 1, j - 1) - u[i0] - v[j]
                if reduced < minv[j]:
                    minv[j] = reduced
                    way[j] = j0
                if minv[j] < delta:
                    delta = minv[j]
                    j1 = j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    col_of_row = [-1] * n
    for j in range(1, m + 1):
        if p[j] != 0:
            col_of_row[p[j] - 1] = j - 1
    return col_of_row


def match_hungarian(weights: list[list[float]]) -> list:
    n_rows = len(weights)
    if n_rows == 0:
        return []
    n_cols = len(weights[0])
    if n_cols == 0:
        return [None] * n_rows
    transposed = n_rows > n_cols
    n, m = (n_cols, n_rows) if transposed else (n_rows, n_cols)

    def gain(i, j):
        return max(0.0, weights[j][i] if transposed else weights[i][j])

    col_of_row = _assign_min_cost(n, m, lambda i, j: -gain(i, j))
    result = [None] * n_rows
    for i in range(n):
        j = col_of_row[i]
        row, col = (j, i) if transposed else (i, j)
        if weights[row][col] > 0:
            result[row] = col
    return result


def match_greedy(scores: list[list[float]]) -> list:
    """MatchTIR's released greedy matcher (stable sort: ties pred-major, then gold order)."""
    pairs = [(pred, gold, score) for pred, row in enumerate(scores) for gold, score in enumerate(row)]
    pairs.sort(key=lambda x: -x[2])
    assignment = [None] * len(scores)
    used = set()
    for pred, gold, score in pairs:
        if score > 0 and assignment[pred] is None and gold not in used:
            assignment[pred] = gold
            used.add(gold)
    return assignment


MATCHING_METHODS = {"hungarian": match_hungarian, "greedy": match_greedy}


def match_tool_calls(preds, golds, method="hungarian", unmatched_penalty=0.0):
    scores = [[tool_call_similarity(p, g) for g in golds] for p in preds]
    raw = MATCHING_METHODS[method](scores)
    assignment = [j if j is not None and scores[i][j] > 0 else None for i, j in enumerate(raw)]
    rewards = [0.0 - unmatched_penalty if j is None else scores[i][j] for i, j in enumerate(assignment)]
    return assignment, rewards


# ---------------------------------------------------------------- answer F1 and turn rewards

_ASCII_PUNCT = re.compile(r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]")
_JS_SPLIT_WS = re.compile("[" + re.escape(_JS_WS) + "]+")


def tokenize_answer_words(text: str) -> list[str]:
    return [w for w in _JS_SPLIT_WS.split(_ASCII_PUNCT.sub(" ", text.lower())) if w]


def answer_f1(pred: str, gold: str) -> float:
    pw, gw = set(tokenize_answer_words(pred)), set(tokenize_answer_words(gold))
    if not pw or not gw:
        return 0.0
    shared = len(pw & gw)
    if shared == 0:
        return 0.0
    precision, recall = shared / len(pw), shared / len(gw)
    return (2 * precision * recall) / (precision + recall)


def turn_rewards(turns: list[dict], gold_calls: list[dict], gold_answer: str, method="hungarian", unmatched_penalty=0.0):
    """r_t per turn (core/rewards.ts turnRewards). ``turns``: [{'calls': [...], 'answer': str | None}]."""
    is_matched = [t.get("answer") is None for t in turns]
    all_calls = [c for t, m in zip(turns, is_matched) if m for c in t["calls"]]
    _, rewards = match_tool_calls(all_calls, gold_calls, method, unmatched_penalty)
    out, offset = [], 0
    for t, m in zip(turns, is_matched):
        if t.get("answer") is not None:
            out.append(answer_f1(t["answer"], gold_answer))
            continue
        r = rewards[offset : offset + len(t["calls"])] if m else []
        offset += len(t["calls"]) if m else 0
        total = 0.0
        for x in r:
            total += x
        out.append(0.0 if not r else total / len(r))
    return out


def matchtir_turn_rewards(turn_texts: list[str], ground_truth: dict, method="hungarian", unmatched_penalty=0.0):
    """The app's scoreMatchTir rewards of one rollout from its assistant turn texts."""
    turns = [parse_turn(t) for t in turn_texts]
    return turn_rewards(turns, ground_truth.get("gold_calls") or [], ground_truth["answer"], method, unmatched_penalty)


# ---------------------------------------------------------------- FTRL compute_solve_f1


def _normalize_verify(text: str) -> str:
    return js_trim(text.lower().replace(",", ""))


def answer_verify(output: str, gold: str) -> bool:
    hay = _normalize_verify(output)
    return all(_normalize_verify(piece) in hay for piece in gold.split(", "))


def ftrl_reward(turns: list[dict], unsolved_set: dict, answer: str) -> list[float]:
    """r_t per turn; ``turns``: [{'text': str, 'calls': [{'name', 'output'}]}] (core/ftrlReward.ts)."""
    remaining = {name: list(answers) for name, answers in unsolved_set.items()}

    def count():
        return sum(len(a) for a in remaining.values())

    n_expected = count()
    out = []
    for turn in turns:
        unsolved_before = count()
        solve_rate = 1.0 if n_expected == 0 else 1 - unsolved_before / n_expected
        solved = []
        for call in turn["calls"]:
            answers = remaining.get(call["name"])
            k = -1
            if answers is not None:
                k = next((i for i, a in enumerate(answers) if answer_verify(call["output"], a)), -1)
            if k >= 0:
                answers.pop(k)
            solved.append(1 if k >= 0 else 0)
        if turn["calls"]:
            out.append((2 * sum(solved)) / (len(turn["calls"]) + 1))
            continue
        content = js_trim(turn["text"])
        content = js_trim(re.sub(r"(?:<\|endoftext\|>|<\|im_end\|>)$", "", content))
        if content == "":
            out.append(-0.5)
        elif "<tool_call>" in content or "</tool_call>" in content or "<tool_parsed_response>" in content:
            out.append(-0.3)
        elif _normalize_verify(answer) in _normalize_verify(content):
            out.append(1 / (1 + unsolved_before))
        elif solve_rate == 1:
            out.append(0.5)
        else:
            out.append(0.0)
    return out


# ---------------------------------------------------------------- ToolRL


def score_multiset_overlap(a: list, b: list) -> float:
    if len(a) == len(b) and all(x == y for x, y in zip(a, b)):
        return 1.0
    if not a or not b:
        return 0.0
    counts: dict = {}
    for x in a:
        counts[x] = counts.get(x, 0) + 1
    shared = 0
    for x in b:
        if counts.get(x, 0) > 0:
            shared += 1
            counts[x] -= 1
    return shared / (len(a) + len(b) - shared)


def toolrl_correctness(preds: list[dict], golds: list[dict]) -> float:
    name_score = score_multiset_overlap([g["name"] for g in golds], [p["name"] for p in preds])
    max_match, match, used = 1, name_score, set()
    for gold in golds:
        gold_keys = list(gold["arguments"])
        max_match += 1 + len(gold_keys)
        best, best_index = 0, -1
        for i, pred in enumerate(preds):
            if i in used or pred["name"] != gold["name"]:
                continue
            param = score_multiset_overlap(gold_keys, list(pred["arguments"]))
            value = sum(
                1 for k in gold_keys if k in pred["arguments"] and is_json_equal(pred["arguments"][k], gold["arguments"][k])
            )
            if param + value > best:
                best, best_index = param + value, i
        if best_index >= 0:
            used.add(best_index)
            match += best
    identical = len(preds) == len(golds) and all(
        p["name"] == g["name"] and is_json_equal(p["arguments"], g["arguments"]) for p, g in zip(preds, golds)
    )
    return 3.0 if identical else (6 * match) / max_match - 3


_CALL_TURN = re.compile(r"^\s*<think>[\s\S]*?</think>\s*(?:<tool_call>[\s\S]*?</tool_call>\s*)+$")
_ANSWER_TURN = re.compile(r"^\s*<think>[\s\S]*?</think>\s*<answer>[\s\S]*?</answer>\s*$")


def classify_toolrl_turn(text: str):
    body = text[: -len("<|im_end|>")] if text.endswith("<|im_end|>") else text
    if body.count("<think>") != 1 or body.count("</think>") != 1:
        return None
    if _ANSWER_TURN.match(body) and body.count("<answer>") == 1 and body.count("<tool_call>") == 0:
        return "answer"
    if _CALL_TURN.match(body) and body.count("<answer>") == 0:
        return "call"
    return None


def toolrl_format_reward(turn_texts: list[str]) -> int:
    if not turn_texts:
        return 0
    last = len(turn_texts) - 1
    return int(all(classify_toolrl_turn(t) == ("answer" if i == last else "call") for i, t in enumerate(turn_texts)))


def toolrl_reward(turn_texts: list[str], gold_calls: list[dict], rule: str = "matchtir") -> float:
    preds = [c for t in turn_texts for c in parse_turn(t)["calls"]]
    if rule == "matchtir":
        return 0.0 if not preds else toolrl_correctness(preds, gold_calls)
    if rule != "toolrl":
        raise ValueError(f"unknown toolrl rule {rule!r}")
    return toolrl_format_reward(turn_texts) + toolrl_correctness(preds, gold_calls)
