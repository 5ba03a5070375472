"""Composes an exported config/pact_trainer.yaml the way its `defaults: [ppo_trainer, _self_]`
asks Hydra to, against the VeRL snapshot's own composed ppo_trainer config, with OmegaConf alone
(Hydra is not installed here and Debian does not package it).

VeRL commits `verl/trainer/config/_generated_ppo_trainer.yaml`: ppo_trainer.yaml with its defaults
list already composed by Hydra (VeRL's CI regenerates it and fails when it is stale), so it is the
`ppo_trainer` entry of our defaults list. Hydra then merges `_self_` (the exported file, less its
`hydra:` and `defaults:` keys) over it and sets struct mode on the result. Merging adds keys
silently, so a misspelt VeRL key would be carried as a new key VeRL never reads: this script
lists every leaf path of the exported file that VeRL's composed config lacks, resolves the merged
config's interpolations (`${pact}` in reward_kwargs), and prints the values VeRL's trainer would read.

usage: check_compose.py VERL_CONFIG_DIR EXPORTED_YAML  → JSON on stdout
"""
import json
import sys

from omegaconf import OmegaConf


def leaf_paths(node, prefix=""):
    if OmegaConf.is_dict(node):
        out = []
        for key in node.keys():
            out += leaf_paths(node._get_node(key), f"{prefix}.{key}" if prefix else str(key))
        return out
    return [prefix]


def first_missing(base, path):
    """The shortest prefix of `path` that `base` lacks, or None."""
    node = base
    parts = path.split(".")
    for i, part in enumerate(parts):
        if not OmegaConf.is_dict(node) or part not in node:
            return ".".join(parts[: i + 1])
        node = node._get_node(part)
    return None


def main():
    verl_config_dir, exported = sys.argv[1], sys.argv[2]
    base = OmegaConf.load(verl_config_dir + "/_generated_ppo_trainer.yaml")
    run = OmegaConf.load(exported)
    defaults = OmegaConf.to_container(run.defaults) if "defaults" in run else []
    body = OmegaConf.masked_copy(run, [k for k in run.keys() if k not in ("hydra", "defaults")])
    missing = sorted({m for m in (first_missing(base, p) for p in leaf_paths(body)) if m is not None})
    merged = OmegaConf.merge(base, body)
    OmegaConf.set_struct(merged, True)
    resolved = OmegaConf.to_container(merged, resolve=True)
    print(json.dumps({"defaults": defaults, "not_in_verl": missing, "config": resolved}))


if __name__ == "__main__":
    main()
