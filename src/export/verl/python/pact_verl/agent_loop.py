"""``pact_tool_agent``: VeRL's ToolAgentLoop with the app's per-task tools. The prompt shows the
task's own tool schemas (extra_info.tools, as the app's RolloutEnv renders them), and every
call is answered by the task's own stub (extra_info.implementations) through tools.answer_call,
within the row's time limit (extra_info.tool_timeout_ms).

Tested (src/export/verl/agentLoop.test.ts, python/tests/check_agent_loop.py) inside the VeRL
snapshot's own agent_loop.py / tool_agent_loop.py / hermes parser, loaded by path with Ray, Hydra,
transformers and the rollout replicas stubbed: built as AgentLoopWorker builds it from the exported
config, run on scripted policy turns through AsyncLLMServerManager over a fake server, with a
character tokenizer whose chat template is Qwen3-shaped. The AgentLoopOutput shows the row's tool
schemas, answers every call as RolloutEnv does, masks tool responses 0 and policy tokens 1, and
stops at max_assistant_turns (the run's maxTurns). Found there: VeRL's hermes parser drops a
<tool_call> block that is not JSON (the app answers it with an error observation; a turn with no
other call ends the episode), so the JSON error branch below is reached only with a parser that
passes arguments through unparsed (gpt-oss), and its text is not the app's.
Not tested: Ray workers, a real rollout server (vLLM/SGLang), a real tokenizer and chat template."""

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
        self._pact_timeout_ms = extra.get("tool_timeout_ms")
        self.tool_schemas = self._pact_tools
        return await super().run(sampling_params, **kwargs)

    async def _call_tool(self, tool_call, tools_kwargs, agent_data):
        try:
            args = json.loads(tool_call.arguments)
        except Exception as e:  # noqa: BLE001
            return ToolResponse(text=f"error: the <tool_call> block is not valid JSON ({e})"), 0.0, {}
        _, output = answer_call(tool_call.name, args, self._pact_tools, self._pact_impls, self._pact_timeout_ms)
        return ToolResponse(text=output), 0.0, {}
