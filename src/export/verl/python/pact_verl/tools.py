"""The tasks' tools for VeRL: each call answered by the app's own code (RolloutEnv's schema
check, then the task's JavaScript stub in the app's executor) through one Node subprocess
(tool_server.mjs beside this file), so a tool answers in VeRL exactly as in the app."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import threading
from typing import Any, Optional
from uuid import uuid4

TOOL_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tool_server.mjs")


class NodeToolServer:
    """A `node tool_server.mjs` subprocess: one JSON request a line, one answer a line."""

    def __init__(self, script: str = TOOL_SERVER, node: str = "node"):
        self._proc = subprocess.Popen(
            [node, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1
        )
        self._lock = threading.Lock()
        self._ids = itertools.count()

    def call(self, name: str, arguments: Any, tools: list, implementations: dict) -> tuple[bool, str]:
        with self._lock:
            rid = next(self._ids)
            request = {"id": rid, "name": name, "arguments": arguments, "tools": tools, "implementations": implementations}
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


def run_python_tool(source: str, name: str, arguments: dict) -> tuple[bool, str]:
    """FTRL-style Python tools (a function named like the tool): run in a fresh namespace.
    Departure: the app runs them in Pyodide; here they run in this interpreter."""
    namespace: dict = {}
    try:
        exec(compile(source, f"<tool {name}>", "exec"), namespace)
        value = namespace[name](**arguments)
    except Exception as e:  # noqa: BLE001 - a tool error is an observation
        return False, f"an error occured when call {name}: {e}"
    return True, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def answer_call(name: str, arguments: Any, tools: list, implementations: dict) -> tuple[bool, str]:
    impl = implementations.get(name) if isinstance(implementations, dict) else None
    if impl and impl.get("language") == "python":
        return run_python_tool(impl["source"], name, arguments)
    return shared_server().call(name, arguments, tools, implementations)


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
            create_kwargs = kwargs.get("create_kwargs", {}) or {}
            self._instances[instance_id] = create_kwargs
            return instance_id, ToolResponse()

        async def execute(self, instance_id: str, parameters: dict, **kwargs):
            task = self._instances.get(instance_id, {})
            _, output = answer_call(self.name, parameters, task.get("tools", []), task.get("implementations", {}))
            return ToolResponse(text=output), 0.0, {}

        async def release(self, instance_id: str, **kwargs) -> None:
            self._instances.pop(instance_id, None)

except ImportError:  # the tests run without VeRL installed
    PactStubTool = None
