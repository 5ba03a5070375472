"""The tasks' tools for VeRL: each call answered by the app's own code (RolloutEnv's schema
check, then the task's JavaScript stub in the app's executor, or an FTRL task's Python source
in a fresh `python -I` process with the app's Python runtime, its environment empty, its
working folder a new empty one, CPU/memory/file-size/process rlimits and the row's time
limit) through one Node subprocess (tool_server.mjs beside this file), so a tool answers in
VeRL exactly as in the app. The Python process is a process boundary, not the app's Pyodide
sandbox: a tool can read what the user running VeRL can read (docs/verl-export.md)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from typing import Any, Optional
from uuid import uuid4

TOOL_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tool_server.mjs")


class NodeToolServer:
    """A `node tool_server.mjs` subprocess: one JSON request a line, one answer a line."""

    def __init__(self, script: str = TOOL_SERVER, node: str = "node", python: Optional[str] = None):
        # FTRL's Python tools run under this interpreter (each call its own `python -I` process).
        python = python or os.environ.get("PACT_VERL_TOOL_PYTHON") or sys.executable or "python3"
        self._proc = subprocess.Popen(
            [node, script, "--python", python],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._lock = threading.Lock()
        self._ids = itertools.count()

    def call(
        self, name: str, arguments: Any, tools: list, implementations: dict, timeout_ms: Optional[int] = None
    ) -> tuple[bool, str]:
        with self._lock:
            rid = next(self._ids)
            request = {"id": rid, "name": name, "arguments": arguments, "tools": tools, "implementations": implementations}
            if timeout_ms is not None and timeout_ms > 0:
                request["timeout_ms"] = int(timeout_ms)
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            answer = json.loads(self._proc.stdout.readline())
        if answer.get("id") != rid:
            raise RuntimeError(f"tool server answered request {answer.get('id')} for {rid}")
        return bool(answer["ok"]), answer["output"]

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait(timeout=10)


_SERVER: Optional[NodeToolServer] = None


def shared_server() -> NodeToolServer:
    global _SERVER
    if _SERVER is None or _SERVER._proc.poll() is not None:
        _SERVER = NodeToolServer()
    return _SERVER


def answer_call(
    name: str, arguments: Any, tools: list, implementations: dict, timeout_ms: Optional[int] = None
) -> tuple[bool, str]:
    """One call as the app answers it; `timeout_ms` is the row's extra_info.tool_timeout_ms
    (absent: the app's 2000 ms for JavaScript stubs)."""
    return shared_server().call(name, arguments, tools, implementations, timeout_ms)


try:  # the VeRL tool class, where VeRL is installed
    from verl.tools.base_tool import BaseTool
    from verl.tools.schemas import ToolResponse

    class PactStubTool(BaseTool):
        """A task tool. create(create_kwargs={'tools': [...], 'implementations': {...}}) binds the
        task's schemas and stubs (the pact_tool_agent loop passes its row's); execute answers as the app."""

        def __init__(self, config: dict, tool_schema):
            super().__init__(config, tool_schema)
            self._instances: dict = {}

        async def create(self, instance_id: Optional[str] = None, **kwargs):
            instance_id = instance_id or str(uuid4())
            create_kwargs = kwargs.get("create_kwargs", {}) or {}  # tools, implementations, timeout_ms
            self._instances[instance_id] = create_kwargs
            return instance_id, ToolResponse()

        async def execute(self, instance_id: str, parameters: dict, **kwargs):
            task = self._instances.get(instance_id, {})
            _, output = answer_call(
                self.name, parameters, task.get("tools", []), task.get("implementations", {}), task.get("timeout_ms")
            )
            return ToolResponse(text=output), 0.0, {}

        async def release(self, instance_id: str, **kwargs) -> None:
            self._instances.pop(instance_id, None)

except ImportError:  # the tests run without VeRL installed
    PactStubTool = None
