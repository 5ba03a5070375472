"""The app's advantage estimators and PACT's loss, registered into VeRL by name.

``register_all(core_algos)`` takes VeRL's ``verl.trainer.ppo.core_algos`` module (imported
normally in a VeRL job; loaded by path in the tests) and registers:

- advantage estimators (``register_adv_est``), each reading turn t of a response as the t-th
  maximal run of ``response_mask == 1`` (VeRL's multi-turn loop masks tool responses with 0)
  and r_t as the sum of ``token_level_rewards`` over that run (the reward manager
  ``pact_turn`` puts r_t on the run's last token):
    ``pact_matchtir_sum``  A = A^g + A^ℓ (PACT App. B; the app's default ``advantageCombine: 'sum'``)
    ``pact_matchtir_mean`` A = (A^g + A^ℓ)/2 (MatchTIR's released code)
    ``pact_turn_grpo``     r_{k,t} z-scored over the group's rollouts that have a turn t (FTRL)
    ``pact_grpo``          GRPO on Σ_t r_t, broadcast to every turn (grpo, toolrl)
- the policy loss ``pact`` (``register_policy_loss``): the app's clipped surrogate
  −min(r·A, clip(r, 1−ε_low, 1+ε_high)·A) without VeRL's dual clip, aggregated with VeRL's
  ``agg_loss``. Read under c^h = [x; h*] (actor.py puts π_old(c^h) and π_θ(c^h) in
  ``old_log_prob`` / ``log_prob``) it is L^h_RL; read under x it is L^x_RL.

``pact_prompt_loss`` / ``pact_minibatch_loss`` compose one prompt's
L_i = w_rl·(L_RL + klCoef·KL) + w_sft·L_SFT and the mini-batch mean (1/|B|) Σ_i L_i exactly as the
app's trainer does (recipes/train/tfLosses.ts computePromptLossTerms, train/policyUpdate.ts).
"""

from __future__ import annotations

import math
from collections import OrderedDict

import torch

_REGISTERED: dict = {}


# ---------------------------------------------------------------- turns and group statistics


def response_turns(mask_row) -> list[tuple[int, int]]:
    """[start, end) of each maximal run of mask == 1 (one assistant turn each)."""
    runs, start = [], -1
    values = [float(x) for x in mask_row]
    for n in range(len(values) + 1):
        is_in = n < len(values) and values[n] > 0
        if is_in and start < 0:
            start = n
        if not is_in and start >= 0:
            runs.append((start, n))
            start = -1
    return runs


def group_stats(values: list[float]) -> tuple[float, float]:
    """core/advantages.ts computeGroupStats: mean and unbiased std summed left to right; a group of one: (0, 1)."""
    n = len(values)
    if n == 1:
        return 0.0, 1.0
    mean = 0.0
    for x in values:
        mean += x
    mean /= n
    sq = 0.0
    for x in values:
        sq += (x - mean) * (x - mean)
    return mean, math.sqrt(sq / (n - 1))


def group_advantages(rewards: list[float], eps=1e-6, scale_by_std=True) -> list[float]:
    mean, std = group_stats(rewards)
    return [(r - mean) / (std + eps) if scale_by_std else r - mean for r in rewards]


def discounted_returns(rewards: list[float], gamma: float) -> list[float]:
    out, nxt = [0.0] * len(rewards), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        nxt = rewards[t] + gamma * nxt
        out[t] = nxt
    return out


def z_score_by_turn(values: list[list[float]], eps=1e-6) -> list[list[float]]:
    max_turns = max([0] + [len(r) for r in values])
    out = [[0.0] * len(r) for r in values]
    for t in range(max_turns):
        ks = [k for k, r in enumerate(values) if t < len(r)]
        mean, std = group_stats([values[k][t] for k in ks])
        for k in ks:
            out[k][t] = (values[k][t] - mean) / (std + eps)
    return out


def turn_advantages(group: list[list[float]], gamma=0.9, combine="sum", eps=1e-6) -> list[list[float]]:
    """MatchTIR's dual-level advantages of one group: turn rewards [K][T_k] → [K][T_k]."""
    returns = [discounted_returns(r, gamma) for r in group]
    totals = []
    for r in group:
        s = 0.0
        for x in r:
            s += x
        totals.append(s)
    glob = group_advantages(totals, eps)
    local = z_score_by_turn(returns, eps)
    w = 0.5 if combine == "mean" else 1.0
    return [[w * (glob[k] + a) for a in row] for k, row in enumerate(local)]


def _group_indices(index) -> "OrderedDict":
    groups: OrderedDict = OrderedDict()
    for i, uid in enumerate(list(index)):
        groups.setdefault(uid, []).append(i)
    return groups


def _per_turn_estimator(per_group_fn):
    """An estimator over VeRL's tensors from a function of one group's turn rewards [K][T_k]."""

    def estimator(token_level_rewards, response_mask, index=None, config=None, **_):
        bs = token_level_rewards.shape[0]
        if index is None:
            index = list(range(bs))
        gamma = 0.9
        if config is not None:
            g = config.get("gamma", None) if hasattr(config, "get") else getattr(config, "gamma", None)
            if g is not None:
                gamma = float(g)
        rewards = token_level_rewards.detach().double().cpu()
        mask = response_mask.detach().double().cpu()
        turns = [response_turns(mask[i].tolist()) for i in range(bs)]
        turn_r = []
        for i in range(bs):
            row = [float(rewards[i, a:b].sum().item()) for a, b in turns[i]]
            turn_r.append(row if row else [0.0])  # no turn: one 0-reward turn, as the app's scoreMatchTir
        adv = torch.zeros_like(rewards)
        for rows in _group_indices(index).values():
            out = per_group_fn([turn_r[i] for i in rows], gamma)
            for i, a_row in zip(rows, out):
                for (a, b), value in zip(turns[i], a_row):
                    adv[i, a:b] = value
        adv = adv.to(dtype=token_level_rewards.dtype, device=token_level_rewards.device)
        return adv, adv

    return estimator


def _broadcast_outcome(group, gamma, scale_by_std=True):
    totals = []
    for r in group:
        s = 0.0
        for x in r:
            s += x
        totals.append(s)
    adv = group_advantages(totals, scale_by_std=scale_by_std)
    return [[adv[k]] * len(r) for k, r in enumerate(group)]


ESTIMATORS = {
    "pact_matchtir_sum": _per_turn_estimator(lambda g, gamma: turn_advantages(g, gamma, "sum")),
    "pact_matchtir_mean": _per_turn_estimator(lambda g, gamma: turn_advantages(g, gamma, "mean")),
    "pact_turn_grpo": _per_turn_estimator(lambda g, gamma: z_score_by_turn(g)),
    "pact_grpo": _per_turn_estimator(lambda g, gamma: _broadcast_outcome(g, gamma, True)),
    "pact_drgrpo": _per_turn_estimator(lambda g, gamma: _broadcast_outcome(g, gamma, False)),
}


# ---------------------------------------------------------------- the policy loss


def _cfg(config, name, default=None):
    if config is None:
        return default
    value = config.get(name, default) if hasattr(config, "get") else getattr(config, name, default)
    return default if value is None else value


def make_policy_loss(core_algos):
    def compute_policy_loss_pact(
        old_log_prob,
        log_prob,
        advantages,
        response_mask,
        loss_agg_mode: str = "token-mean",
        config=None,
        rollout_is_weights=None,
    ):
        clip = _cfg(config, "clip_ratio", 0.2)
        low = _cfg(config, "clip_ratio_low", clip)
        high = _cfg(config, "clip_ratio_high", clip)
        ratio = torch.exp(log_prob - old_log_prob)
        clipped = torch.clamp(ratio, 1 - low, 1 + high)
        loss1, loss2 = -ratio * advantages, -clipped * advantages
        pg_losses = torch.maximum(loss1, loss2)  # = −min(r·A, clip(r)·A)
        if rollout_is_weights is not None:
            pg_losses = pg_losses * rollout_is_weights
        batch_info = dict(_cfg(config, "global_batch_info", {}) or {})
        if loss_agg_mode == "seq-mean-token-sum-norm" and "loss_scale_factor" not in batch_info:
            # The app divides by (rows × the longest row), VeRL by its scale factor alone.
            batch_info["loss_scale_factor"] = response_mask.shape[0] * response_mask.shape[-1]
        pg_loss = core_algos.agg_loss(
            loss_mat=pg_losses, loss_mask=response_mask, loss_agg_mode=loss_agg_mode, **batch_info
        )
        verl_F = core_algos.verl_F
        metrics = {
            "actor/pg_clipfrac": verl_F.masked_mean(torch.gt(loss2, loss1).float(), response_mask).detach().item(),
            "actor/ppo_kl": verl_F.masked_mean(old_log_prob - log_prob, response_mask).detach().item(),
        }
        return pg_loss, metrics

    return compute_policy_loss_pact


def register_all(core_algos) -> None:
    """Registers the estimators and the ``pact`` loss into VeRL's registries (idempotent)."""
    key = id(core_algos)
    if key in _REGISTERED:
        return
    for name, fn in ESTIMATORS.items():
        core_algos.register_adv_est(name)(fn)
    core_algos.register_policy_loss("pact")(make_policy_loss(core_algos))
    _REGISTERED[key] = True


# ---------------------------------------------------------------- PACT's per-prompt objective


def sft_loss(log_prob, mask):
    """−Σ m·log π / Σ m of one row (PACT Eq. sft-loss); None when Σ m = 0."""
    z = mask.sum()
    if float(z) == 0:
        return None
    return -(torch.where(mask > 0, log_prob * mask, torch.zeros_like(log_prob))).sum() / z


def pact_prompt_loss(core_algos, prompt: dict, cfg: dict):
    """L_i of one prompt, as the app's trainer builds it.

    prompt: {'rl_weight', 'sft_weight', 'rl': {log_prob, old_log_prob, advantages, mask, ref_log_prob?} | None,
             'kl': {log_prob, ref_log_prob, mask} | None (L^h with klContext 'prompt': the rollouts under x),
             'sft': {log_prob, mask} | None}
    cfg: {'clip_ratio_low', 'clip_ratio_high', 'kl_coef', 'loss_agg_mode'}.
    When 'rl' / 'kl' are a chunk of the prompt's rows, their optional 'batch_info' holds the whole
    prompt's normalisers (actor.batch_info: VeRL's agg_loss keywords) and the result is the chunk's
    share of L_i (microBatches.ts); the shares of all chunks add up to L_i.
    """
    rl, kl_rows, sft = prompt.get("rl"), prompt.get("kl"), prompt.get("sft")
    first = next(p for p in (rl, kl_rows, sft, {"log_prob": torch.zeros(())}) if p is not None)["log_prob"]
    total = torch.zeros((), dtype=torch.float64, device=first.device)
    loss_fn = core_algos.get_policy_loss_fn("pact")
    w_rl = prompt.get("rl_weight", 1.0)

    def token_mean_info(part):
        info = part.get("batch_info") or {}
        return {"batch_num_tokens": info["batch_num_tokens"]} if "batch_num_tokens" in info else {}

    if rl is not None:
        actor_cfg = {"clip_ratio": cfg["clip_ratio_low"], "clip_ratio_low": cfg["clip_ratio_low"],
                     "clip_ratio_high": cfg["clip_ratio_high"], "global_batch_info": dict(rl.get("batch_info") or {})}
        pg, _ = loss_fn(rl["old_log_prob"], rl["log_prob"], rl["advantages"], rl["mask"], cfg["loss_agg_mode"], actor_cfg)
        term = pg
        if cfg["kl_coef"] > 0 and kl_rows is None and rl.get("ref_log_prob") is not None:
            kl = core_algos.kl_penalty(rl["log_prob"], rl["ref_log_prob"], "low_var_kl")
            term = term + cfg["kl_coef"] * core_algos.agg_loss(kl, rl["mask"], "token-mean", **token_mean_info(rl))
        total = total + w_rl * term
    if kl_rows is not None and cfg["kl_coef"] > 0:
        kl = core_algos.kl_penalty(kl_rows["log_prob"], kl_rows["ref_log_prob"], "low_var_kl")
        total = total + cfg["kl_coef"] * w_rl * core_algos.agg_loss(kl, kl_rows["mask"], "token-mean", **token_mean_info(kl_rows))
    if sft is not None and prompt.get("sft_weight", 0) > 0:
        s = sft_loss(sft["log_prob"], sft["mask"])
        if s is not None:
            total = total + prompt["sft_weight"] * s
    return total


def pact_minibatch_loss(core_algos, prompts: list[dict], cfg: dict):
    """(1/|B|) Σ_i L_i over a PPO mini-batch of prompts (train/policyUpdate.ts)."""
    return sum((pact_prompt_loss(core_algos, p, cfg) for p in prompts), torch.zeros((), dtype=torch.float64)) / len(
        prompts
    )
