"""Registers PACT's pieces into a running VeRL: the advantage estimators and the ``pact`` policy
loss (algos.py), the ``pact_turn`` reward manager and the ``pact_tool_agent`` loop."""

import verl.trainer.ppo.core_algos as core_algos

from .algos import register_all

register_all(core_algos)

from . import reward_manager  # noqa: E402,F401  (registers pact_turn)

try:
    from . import agent_loop  # noqa: F401  (registers pact_tool_agent)
except ImportError:
    pass
