"""`python -m pact_verl.main_ppo`: VeRL's main_ppo with PACT's pieces registered first, and the
run's ``pact`` options (plus rollout.n and the tokenizer's path) passed to every Ray worker as
$PACT_VERL_OPTIONS, where the PACT actor (actor.py) reads them."""

import json
import os

from . import register  # noqa: F401

import verl.trainer.main_ppo as _verl_main
from omegaconf import OmegaConf, open_dict

from .actor import OPTIONS_ENV

_run_ppo = _verl_main.run_ppo


def pact_options(config) -> dict:
    if "pact" not in config:
        return {}
    options = OmegaConf.to_container(config.pact, resolve=True)
    model = config.actor_rollout_ref.model
    options["rollout_n"] = int(config.actor_rollout_ref.rollout.n)
    options["tokenizer_path"] = model.get("tokenizer_path", None) or model.path
    options["trust_remote_code"] = bool(model.get("trust_remote_code", False))
    return options


def run_ppo(config, *args, **kwargs):
    options = pact_options(config)
    if options:
        value = json.dumps(options)
        os.environ[OPTIONS_ENV] = value
        with open_dict(config):
            OmegaConf.update(config, f"ray_kwargs.ray_init.runtime_env.env_vars.{OPTIONS_ENV}", value, force_add=True)
    return _run_ppo(config, *args, **kwargs)


_verl_main.run_ppo = run_ppo  # VeRL's hydra main calls run_ppo by its module-level name
main = _verl_main.main

if __name__ == "__main__":
    main()
