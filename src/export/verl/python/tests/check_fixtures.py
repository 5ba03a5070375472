"""Reads fixtures written by src/export/verl/verlParity.test.ts, computes the same quantities with
the exported Python glue registered into VeRL's real core_algos (loaded by path, its heavy imports
stubbed), and prints the Python side's numbers as JSON for the test to compare.

usage: python3 check_fixtures.py VERL_ROOT PACKAGE_PARENT FIXTURES.json
"""

import ast
import importlib.util
import json
import sys
import types

import torch

torch.set_default_dtype(torch.float64)


def load_core_algos(verl_root: str):
    """verl/trainer/ppo/core_algos.py with its imports stubbed; masked_sum / masked_mean are VeRL's
    own functions, taken from verl/utils/torch_functional.py by its syntax tree."""

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    for pkg in ("verl", "verl.trainer", "verl.trainer.ppo", "verl.workers"):
        module(pkg, __path__=[])
    tf_src = open(f"{verl_root}/verl/utils/torch_functional.py").read()
    wanted = [n for n in ast.parse(tf_src).body if isinstance(n, ast.FunctionDef) and n.name in ("masked_sum", "masked_mean")]
    tf_ns = {"torch": torch, "Optional": None}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "torch_functional.py", "exec"), tf_ns)
    verl_F = module("verl.utils.torch_functional", masked_sum=tf_ns["masked_sum"], masked_mean=tf_ns["masked_mean"])
    module("verl.utils", __path__=[], as_torch_index=None, group_mean_std=None, torch_functional=verl_F)
    module("verl.utils.import_utils", deprecated=lambda *a, **k: (lambda f: f))

    class AlgoConfig(dict):
        pass

    class ActorConfig(dict):
        pass

    module("verl.trainer.config", AlgoConfig=AlgoConfig)
    module("verl.workers.config", ActorConfig=ActorConfig)
    spec = importlib.util.spec_from_file_location("verl.trainer.ppo.core_algos", f"{verl_root}/verl/trainer/ppo/core_algos.py")
    core = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = core
    spec.loader.exec_module(core)
    return core


def t(x):
    return torch.tensor(x, dtype=torch.float64)


def main():
    verl_root, package_parent, fixtures_path = sys.argv[1:4]
    sys.path.insert(0, package_parent)
    from pact_verl import algos, rewards, rng, schedules, tools
    from pact_verl.actor import component_sft_row, encode_trace, route
    from pact_verl.reward_manager import score_turns

    core = load_core_algos(verl_root)
    algos.register_all(core)
    fx = json.load(open(fixtures_path))
    out = {}

    # Rewards: the reward manager's per-turn scoring of the same assistant turn texts.
    out["rewards"] = [
        score_turns(case["kind"], case["turnTexts"], case.get("observations", []), case["groundTruth"], case["options"])
        for case in fx.get("rewards", [])
    ]

    # The reward manager's __call__ on a batch laid out as VeRL's agent loop leaves it: each
    # response = turn, observation, turn, … (one character = one token here), response_mask 1 on
    # the turns' tokens, the prompt left of it, padding right; the tokenizer decodes ids to text.
    from pact_verl.reward_manager import PactTurnRewardManager

    class CharTokenizer:
        def decode(self, ids, skip_special_tokens=False):
            return "".join(chr(int(i)) for i in ids)

    class Item:
        def __init__(self, batch, non_tensor_batch):
            self.batch, self.non_tensor_batch = batch, non_tensor_batch

    class Batch(list):
        pass

    out["manager"] = []
    for case in fx.get("manager", []):
        prompt = [ord(c) for c in "<prompt>"]
        width = max(sum(len(x) for x in turns_and_gaps) for turns_and_gaps in case["responses"]) + 5
        items, rows = Batch(), []
        for pieces in case["responses"]:
            ids, mask = [], []
            for k, piece in enumerate(pieces):
                ids += [ord(c) for c in piece]
                mask += [1 if k % 2 == 0 else 0] * len(piece)
            pad = width - len(ids)
            resp = torch.tensor(ids + [0] * pad)
            rows.append(resp)
            items.append(Item(
                {
                    "responses": resp,
                    "response_mask": torch.tensor(mask + [0] * pad),
                    "prompts": torch.tensor(prompt),
                    "attention_mask": torch.tensor([1] * len(prompt) + [1] * len(ids) + [0] * pad),
                },
                {"reward_model": {"ground_truth": json.dumps(case["groundTruth"])}},
            ))
        items.batch = {"responses": torch.stack(rows)}
        m = PactTurnRewardManager(tokenizer=CharTokenizer(), num_examine=0, pact=case["options"])
        out["manager"].append(m(items).tolist())

    # Advantages: VeRL's registry → our estimator, on token-level rewards laid out as VeRL does.
    out["advantages"] = []
    for case in fx.get("advantages", []):
        fn = core.get_adv_estimator_fn(case["estimator"])
        adv, _ = fn(
            token_level_rewards=t(case["tokenRewards"]),
            response_mask=t(case["responseMask"]),
            index=case["index"],
            config={"gamma": case["gamma"]},
        )
        out["advantages"].append(adv.tolist())

    # Losses: VeRL's registry → the pact loss, and the per-prompt / mini-batch objective.
    out["policyLoss"] = []
    for case in fx.get("policyLoss", []):
        fn = core.get_policy_loss_fn("pact")
        cfg = {"clip_ratio": case["clipLow"], "clip_ratio_low": case["clipLow"], "clip_ratio_high": case["clipHigh"], "global_batch_info": {}}
        loss, metrics = fn(t(case["oldLogp"]), t(case["logp"]), t(case["advantages"]), t(case["mask"]), case["mode"], cfg)
        out["policyLoss"].append({"loss": loss.item(), "clipfrac": metrics["actor/pg_clipfrac"]})
    if "kl" in fx:
        out["klK3"] = core.kl_penalty(t(fx["kl"]["logp"]), t(fx["kl"]["refLogp"]), "low_var_kl").tolist()

    def tensors(d):
        return None if d is None else {k: t(v) for k, v in d.items()}

    prompts = [
        {
            "rl_weight": p["rlWeight"],
            "sft_weight": p["sftWeight"],
            "rl": tensors(p.get("rl")),
            "kl": tensors(p.get("kl")),
            "sft": tensors(p.get("sft")),
        }
        for p in fx.get("objective", {}).get("prompts", [])
    ]
    if prompts:
        ocfg = fx["objective"]["config"]
        out["promptLosses"] = [algos.pact_prompt_loss(core, p, ocfg).item() for p in prompts]
        out["minibatchLoss"] = algos.pact_minibatch_loss(core, prompts, ocfg).item()

    # SFT rows and schedules.
    out["sft"] = []
    for case in fx.get("sft", []):
        trace_ids, trace_tags, trace = encode_trace(lambda text: [ord(c) for c in text], case["exportedTrace"])
        row = component_sft_row(case["promptIds"], trace_ids, trace_tags, trace, case["step"], case["schedule"])
        out["sft"].append({"ids": row["ids"], "mask": row["mask"], "lambdaA": row["lambda_a"],
                           "prefixLevel": None if row["prefix_level"] != row["prefix_level"] else row["prefix_level"]})
    out["schedules"] = [
        {"lambdaA": schedules.tool_call_scale(s, c["start"], c["end"], c["horizon"]),
         "level": schedules.reasoning_prefix_level(s, c["horizon"])}
        for c in fx.get("schedules", []) for s in c["steps"]
    ]

    # Gates, data order, routes.
    out["gates"] = [rng.sample_step_gates(g["seed"], g["step"], g["n"], g["q"]) for g in fx.get("gates", [])]
    out["epochOrders"] = [rng.epoch_order(e["seed"], e["n"], e["epoch"]) for e in fx.get("epochOrders", [])]
    out["routes"] = [route(r["gate"], r["hasTrace"], r["objective"], r["betaSft"]) for r in fx.get("routes", [])]

    # Tools: the exported tool server, through the Python client.
    if fx.get("tools"):
        server = tools.NodeToolServer(script=fx["tools"]["server"], python=fx["tools"].get("python"))
        out["tools"] = [
            list(server.call(c["name"], c["arguments"], c["tools"], c["implementations"], c.get("timeout_ms")))
            for c in fx["tools"]["calls"]
        ]
        server.close()

    # Exported rows: the gate each train row carries, recomputed from the seed.
    if fx.get("exportedRows"):
        e = fx["exportedRows"]
        rows = [json.loads(line) for line in open(e["trainJson"]) if line.strip()]
        out["exportedGates"] = [
            rng.sample_step_gates(e["seed"], r["extra_info"]["step"], e["batchPrompts"], e["q"])[r["extra_info"]["position"]]
            for r in rows
        ]
        out["exportedRowGates"] = [r["extra_info"]["pact_gate"] for r in rows]

    print(json.dumps(out))


if __name__ == "__main__":
    main()
