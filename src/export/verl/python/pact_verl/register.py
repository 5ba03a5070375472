"""Registers PACT's pieces into a running VeRL: the advantage estimators and the ``pact`` policy
loss (algos.py), the ``pact_turn`` reward manager, the ``pact_tool_agent`` loop, and PACT's actor
step (actor.py: ``verl.workers.actor.DataParallelPPOActor`` becomes the PACT subclass; VeRL has no
config key for the actor class, and its FSDP worker imports the class from that module when it
builds the actor and the reference policy). The actor reads the run's ``pact`` options from
$PACT_VERL_OPTIONS (main_ppo.py sets it); without them it is VeRL's own."""

import sys

import verl.trainer.ppo.core_algos as core_algos

from .algos import register_all

register_all(core_algos)

from . import reward_manager  # noqa: E402,F401  (registers pact_turn)

try:
    from . import agent_loop  # noqa: F401  (registers pact_tool_agent)
except ImportError:
    pass

try:
    from .actor import install

    install(core_algos)
except Exception as e:  # a process that cannot import VeRL's FSDP actor never builds one
    print(f"pact_verl: PACT actor not installed ({e})", file=sys.stderr)
