"""``pact_tool_agent``: VeRL's ToolAgentLoop with the app's per-task tools. The prompt shows the
task's own tool schemas (extra_info.tools, as the app's RolloutEnv renders them), and every
call is answered by the task's own stub (extra_info.implementations) through tools.answer_call.
Untested here (VeRL's agent loop needs a rollout server); the answers themselves are tested."""

from __future__ import annotations

import json

from verl.experimental.agent_loop.agent_loop import register
from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop
from verl.tools.schemas import ToolResponse

from .tools import answer_call


@register("pact_tool_agent")
class PactToolAgentLoop(ToolAgentLoop):
    async def run(self, sampling_params, **kwargs):
        extra = kwargs.get("extra_info") or {}
        self._pact_tools = json.loads(extra.get("tools") or "[]")
        self._pact_impls = json.loads(extra.get("implementations") or "{}")
        self.tool_schemas = self._pact_tools
        return await super().run(sampling_params, **kwargs)

    async def _call_tool(self, tool_call, tools_kwargs, agent_data):
        try:
            args = json.loads(tool_call.arguments)
        except Exception as e:  # noqa: BLE001
            return ToolResponse(text=f"error: the <tool_call> block is not valid JSON ({e})"), 0.0, {}
        _, output = answer_call(tool_call.name, args, self._pact_tools, self._pact_impls)
        return ToolResponse(text=output), 0.0, {}
