"""PACT's agent loop (pact_verl/agent_loop.py, PactToolAgentLoop) run inside VeRL's real agent loop code,
on CPU, one episode at a time, with a scripted policy.

VeRL's verl/experimental/agent_loop/agent_loop.py and tool_agent_loop.py are loaded by path, with
tool_parser.py (the hermes parser), utils.py, verl/utils/chat_template.py, verl/utils/rollout_trace.py,
verl/tools/schemas.py (ToolResponse) and verl/interactions/base.py: all VeRL's own. What is stubbed is
only what they import and this run never reaches (ray, hydra's instantiate, transformers, tensordict,
the reward loop, the rollout replicas, the dataset class, the Ray worker group), plus three small
stand-ins for libraries not installed here, each documented where it is defined: pydantic (BaseModel
as a plain record: fields, defaults, nested models from dicts, a `before` validator), `regex` (the
standard `re`, which compiles the hermes pattern the same), cachetools.LRUCache (a dict).
TokenOutput and get_event_loop are VeRL's own code, taken from replica.py / ray_utils.py by syntax
tree. The package under test is the exported one (EXPORT_DIR/pact_verl, with its bundled
tool_server.mjs), so every tool call is answered by the app's code through the Node tool server.

The loop is built as VeRL's AgentLoopWorker builds it: the exported config/pact_trainer.yaml merged
over VeRL's composed ppo_trainer config (as check_compose.py does), config/agent_loops.yaml read into
VeRL's _agent_loop_registry as AgentLoopWorker.__init__ reads it, then VeRL's own
AgentLoopWorker._run_agent_loop instantiates the loop (hydra.utils.instantiate: `_target_` called with
the config's other keys and VeRL's kwargs) and runs it on the row's fields as RLHFDataset.__getitem__
hands them over; only the padding step after run() (_agent_loop_postprocess) is replaced by a capture
of the AgentLoopOutput. The server manager is VeRL's AsyncLLMServerManager over one fake server handle
whose generate returns the scripted turns, tokenized, each ending with <|im_end|> as a Qwen3 server's
would. The tokenizer is a stand-in (TinyChatTokenizer): one token per character, <|im_start|> and
<|im_end|> one token each, and a chat template that renders messages and tools as Qwen3's does for
text (system block with # Tools and <tools>…</tools>, consecutive tool messages in one user turn of
<tool_response> blocks, the generation prompt).

usage: python3 check_agent_loop.py VERL_ROOT FIXTURES.json  → JSON on stdout
"""

import ast
import asyncio
import contextlib
import copy
import importlib
import importlib.util
import json
import re
import sys
import time
import types

# ---------------------------------------------------------------- stand-ins and stubs


def _module(name, **attrs):
    m = sys.modules.get(name) or types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


def _package(name, **attrs):
    return _module(name, __path__=[], **attrs)


def _load_by_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _definitions(path, names, ns):
    """Top-level functions / classes of a VeRL file, executed in `ns` (their module's other imports are not run)."""
    tree = ast.parse(open(path).read())
    wanted = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in names]
    assert sorted(n.name for n in wanted) == sorted(names), f"{path}: {names} not all found"
    exec(compile(ast.Module(body=wanted, type_ignores=[]), path, "exec"), ns)
    return {n: ns[n] for n in names}


def _unreachable(what):
    def f(*_a, **_k):
        raise AssertionError(f"{what}: not reached by one agent loop episode")

    return f


class _FieldInfo:
    def __init__(self, default=None, default_factory=None):
        self.default = default
        self.default_factory = default_factory


class BaseModel:
    """Stand-in for pydantic.BaseModel (pydantic is not installed here; Debian's is v1, VeRL needs v2):
    annotated class attributes are the fields, a missing field without default raises, defaults are
    copied per instance (as pydantic does for mutable defaults), a dict given for a field annotated with
    a model becomes that model (AgentLoopOutput.metrics), unknown keys are ignored (pydantic's default),
    and @model_validator(mode="before") runs on the input first. No type coercion or checking otherwise."""

    def __init__(self, **data):
        for validator in type(self)._before_validators():
            data = validator(data)
        for name, (annotation, default) in type(self)._fields().items():
            if name in data:
                value = data[name]
                if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(value, dict):
                    value = annotation(**value)
            elif isinstance(default, _FieldInfo):
                value = default.default_factory() if default.default_factory else copy.deepcopy(default.default)
            elif default is not _MISSING:
                value = copy.deepcopy(default)
            else:
                raise TypeError(f"{type(self).__name__}: field {name} required")
            object.__setattr__(self, name, value)

    @classmethod
    def _fields(cls):
        fields = {}
        for klass in reversed(cls.__mro__):
            for name, annotation in klass.__dict__.get("__annotations__", {}).items():
                if name == "model_config":
                    continue
                fields[name] = (annotation, klass.__dict__.get(name, _MISSING))
        return fields

    @classmethod
    def _before_validators(cls):
        out = []
        for klass in reversed(cls.__mro__):
            for attr in klass.__dict__.values():
                fn = getattr(attr, "__func__", attr)
                if getattr(fn, "_pydantic_before", False):
                    out.append(lambda data, fn=fn: fn(cls, data))
        return out

    def model_dump(self, exclude_unset=False, exclude_none=False, **_):
        out = {k: getattr(self, k) for k in type(self)._fields()}
        return {k: v for k, v in out.items() if not (exclude_none and v is None)}


_MISSING = object()


def model_validator(mode):
    def decorate(fn):
        target = getattr(fn, "__func__", fn)
        target._pydantic_before = mode == "before"
        return fn

    return decorate


def install_stubs(verl_root):
    _module("pydantic", BaseModel=BaseModel, ConfigDict=dict, Field=_FieldInfo, model_validator=model_validator)
    # VeRL's tool_parser.py uses regex.compile / findall / sub with DOTALL: the same in `re` for its patterns.
    _module("regex", compile=re.compile, findall=re.findall, sub=re.sub, DOTALL=re.DOTALL)
    _module("cachetools", LRUCache=lambda maxsize: {})
    ray = _module("ray", remote=_unreachable("ray.remote"), get=_unreachable("ray.get"), nodes=_unreachable("ray"))
    ray.actor = _module("ray.actor", ActorHandle=type("ActorHandle", (), {}))
    _module("tensordict", TensorDict=_unreachable("TensorDict"))
    _module("transformers", AutoProcessor=object, AutoTokenizer=object)

    def instantiate(config, **kwargs):
        """hydra.utils.instantiate for a flat config: `_target_` imported and called with the config's
        other (non-underscore) keys and the keyword arguments."""
        module, _, attr = config["_target_"].rpartition(".")
        params = {k: v for k, v in dict(config).items() if not k.startswith("_")}
        obj = getattr(importlib.import_module(module), attr)(**params, **kwargs)
        instantiate.made.append(obj)
        return obj

    instantiate.made = []

    hydra = _module("hydra")
    hydra.utils = _module("hydra.utils", instantiate=instantiate)

    for pkg in ["verl", "verl.experimental", "verl.experimental.agent_loop", "verl.utils", "verl.utils.dataset",
                "verl.single_controller", "verl.single_controller.ray", "verl.workers", "verl.workers.rollout",
                "verl.interactions", "verl.interactions.utils", "verl.tools", "verl.tools.utils"]:
        _package(pkg)
    _module("verl.protocol", DataProto=object)
    _module("verl.experimental.reward_loop", RewardLoopWorker=object)
    _module("verl.experimental.agent_loop.prometheus_utils", update_prometheus_config=_unreachable("prometheus"))
    _module("verl.single_controller.ray.base", RayResourcePool=object, RayWorkerGroup=object)
    _module("verl.utils", hf_processor=_unreachable("hf_processor"), hf_tokenizer=_unreachable("hf_tokenizer"))
    _module("verl.utils.dataset.rl_dataset", RLHFDataset=object, get_dataset_class=_unreachable("get_dataset_class"))
    _module("verl.utils.fs", copy_to_local=_unreachable("copy_to_local"))
    _module("verl.utils.model", compute_position_id_with_mask=_unreachable("compute_position_id_with_mask"))
    _module("verl.utils.transferqueue_utils", tqbridge=lambda *a, **k: (lambda fn: fn))
    _module("verl.utils.ray_utils", **_definitions(f"{verl_root}/verl/utils/ray_utils.py", ["get_event_loop"],
                                                   {"asyncio": asyncio}))

    @contextlib.contextmanager
    def simple_timer(name, timing_raw):
        start = time.perf_counter()
        yield
        timing_raw[name] = timing_raw.get(name, 0.0) + time.perf_counter() - start

    _module("verl.utils.profiler", simple_timer=simple_timer)
    from typing import Any, Optional

    replica = _definitions(f"{verl_root}/verl/workers/rollout/replica.py", ["TokenOutput"],
                           {"BaseModel": BaseModel, "Optional": Optional, "Any": Any})
    _module("verl.workers.rollout.replica", get_rollout_replica_class=_unreachable("replica"), **replica)
    _module("verl.interactions.utils.interaction_registry",
            initialize_interactions_from_config=_unreachable("interactions"))
    _module("verl.tools.utils.tool_registry", initialize_tools_from_config=_unreachable("tool_config_path"))

    real = {
        "verl.utils.chat_template": "verl/utils/chat_template.py",
        "verl.utils.rollout_trace": "verl/utils/rollout_trace.py",
        "verl.tools.schemas": "verl/tools/schemas.py",
        "verl.interactions.base": "verl/interactions/base.py",
        "verl.experimental.agent_loop.utils": "verl/experimental/agent_loop/utils.py",
        "verl.experimental.agent_loop.tool_parser": "verl/experimental/agent_loop/tool_parser.py",
        "verl.experimental.agent_loop.agent_loop": "verl/experimental/agent_loop/agent_loop.py",
        "verl.experimental.agent_loop.tool_agent_loop": "verl/experimental/agent_loop/tool_agent_loop.py",
    }
    return {name: _load_by_path(name, f"{verl_root}/{path}") for name, path in real.items()}


# ---------------------------------------------------------------- tokenizer and rollout server stand-ins

IM_START, IM_END = "<|im_start|>", "<|im_end|>"
SPECIAL = {IM_START: 0x110000, IM_END: 0x110001}  # past the last code point: no character collides
SPECIAL_TEXT = {v: k for k, v in SPECIAL.items()}
_SPECIAL_RE = re.compile("(" + "|".join(re.escape(s) for s in SPECIAL) + ")")


class TinyChatTokenizer:
    """One token per character (its code point), <|im_start|> and <|im_end|> one token each. The chat
    template renders text messages and tools as Qwen3's template does (no default system prompt);
    every call is recorded, so the test can read what the loop asked to be rendered."""

    def __init__(self):
        self.calls = []

    def encode(self, text, add_special_tokens=False):
        ids = []
        for piece in _SPECIAL_RE.split(text):
            ids += [SPECIAL[piece]] if piece in SPECIAL else [ord(c) for c in piece]
        return ids

    def decode(self, ids, skip_special_tokens=False):
        return "".join(
            ("" if skip_special_tokens else SPECIAL_TEXT[i]) if i in SPECIAL_TEXT else chr(i) for i in ids
        )

    def render(self, messages, tools=None, add_generation_prompt=False):
        out = ""
        rest = list(messages)
        if tools:
            out += f"{IM_START}system\n"
            if rest and rest[0]["role"] == "system":
                out += rest.pop(0)["content"] + "\n\n"
            out += (
                "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
            )
            for tool in tools:
                out += "\n" + json.dumps(tool, ensure_ascii=False)
            out += (
                "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
                "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
                '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>' + f"{IM_END}\n"
            )
        for i, m in enumerate(rest):
            if m["role"] == "tool":
                if i == 0 or rest[i - 1]["role"] != "tool":
                    out += f"{IM_START}user"
                out += f"\n<tool_response>\n{m['content']}\n</tool_response>"
                if i == len(rest) - 1 or rest[i + 1]["role"] != "tool":
                    out += f"{IM_END}\n"
            else:
                out += f"{IM_START}{m['role']}\n{m['content']}{IM_END}\n"
        if add_generation_prompt:
            out += f"{IM_START}assistant\n"
        return out

    def apply_chat_template(self, messages, tools=None, add_generation_prompt=False, tokenize=True, **kwargs):
        self.calls.append({"messages": copy.deepcopy(list(messages)), "tools": copy.deepcopy(tools),
                           "add_generation_prompt": add_generation_prompt, "kwargs": kwargs})
        text = self.render(messages, tools, add_generation_prompt)
        return self.encode(text) if tokenize else text


class ScriptedServer:
    """A rollout server handle (what AsyncLLMServerManager holds): `generate.remote(...)` returns the
    next scripted policy turn as VeRL's TokenOutput, and records the prompt it was given."""

    def __init__(self, tokenizer, turns, token_output):
        self.turns = list(turns)
        self.prompts = []
        outer = self

        class _Generate:
            async def remote(self, request_id, prompt_ids, sampling_params, image_data=None, video_data=None):
                outer.prompts.append(list(prompt_ids))
                if not outer.turns:
                    raise AssertionError("the loop asked for more turns than scripted")
                ids = tokenizer.encode(outer.turns.pop(0)) + [SPECIAL[IM_END]]
                return token_output(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")

        self.generate = _Generate()


# ---------------------------------------------------------------- one episode


def compose_config(verl_root, export_dir):
    from omegaconf import OmegaConf

    base = OmegaConf.load(f"{verl_root}/verl/trainer/config/_generated_ppo_trainer.yaml")
    run = OmegaConf.load(f"{export_dir}/config/pact_trainer.yaml")
    body = OmegaConf.masked_copy(run, [k for k in run.keys() if k not in ("hydra", "defaults")])
    merged = OmegaConf.merge(base, body)
    OmegaConf.set_struct(merged, True)
    return merged


def runs_of(ids, mask, tokenizer):
    """The response as runs of equal mask: [{mask, text}]."""
    out = []
    for i, m in zip(ids, mask):
        if out and out[-1]["mask"] == m:
            out[-1]["ids"].append(i)
        else:
            out.append({"mask": m, "ids": [i]})
    return [{"mask": r["mask"], "text": tokenizer.decode(r["ids"])} for r in out]


async def run_episode(mods, config, export_dir, row, turns):
    from omegaconf import OmegaConf

    al = mods["verl.experimental.agent_loop.agent_loop"]
    tokenizer = TinyChatTokenizer()
    server = ScriptedServer(tokenizer, turns, sys.modules["verl.workers.rollout.replica"].TokenOutput)

    # AgentLoopWorker.__init__, the parts this run reaches: the server manager over the handles, the
    # agent loop registry from agent_loop_config_path, the tokenizer (processor None: a text model).
    worker = object.__new__(al.AgentLoopWorker)
    worker.config = config
    worker.server_manager = al.AsyncLLMServerManager(config, [server])
    worker.dataset_cls = al.RLHFDataset
    worker.tokenizer = tokenizer
    worker.processor = None
    path = config.actor_rollout_ref.rollout.agent.agent_loop_config_path
    for agent_loop_config in OmegaConf.load(f"{export_dir}/{path}"):
        al._agent_loop_registry[agent_loop_config.name] = agent_loop_config
    captured = {}

    async def capture(output, **kwargs):
        captured["output"] = output
        return output

    worker._agent_loop_postprocess = capture
    rollout = config.actor_rollout_ref.rollout
    sampling_params = dict(temperature=rollout.temperature, top_p=rollout.top_p, top_k=rollout.top_k,
                           repetition_penalty=1.0, logprobs=rollout.calculate_log_probs)
    # RLHFDataset.__getitem__'s fields for the row (non-tensor ones: what generate_sequences passes on).
    extra = row["extra_info"]
    kwargs = {**row, "raw_prompt": row["prompt"], "index": extra.get("index", 0),
              "tools_kwargs": extra.get("tools_kwargs", {}), "interaction_kwargs": extra.get("interaction_kwargs", {})}
    trajectory = {"step": 1, "sample_index": 0, "rollout_n": 0, "validate": False}
    await worker._run_agent_loop(sampling_params, trajectory, agent_name=rollout.agent.default_agent_loop,
                                 trace=False, **kwargs)
    out = captured["output"]
    assert isinstance(out, al.AgentLoopOutput), type(out)
    # calls[0:2]: initialize_system_prompt in AgentLoopBase.__init__; calls[2]: the prompt (_handle_pending_state).
    prompt_call = tokenizer.calls[2]
    assert prompt_call["add_generation_prompt"] and prompt_call["messages"] == row["prompt"], prompt_call
    return {
        "prompt_text": tokenizer.decode(out.prompt_ids),
        "prompt_tools": prompt_call["tools"],
        "prompt_messages": prompt_call["messages"],
        "response": runs_of(out.response_ids, out.response_mask, tokenizer),
        "response_mask": out.response_mask,
        "n_response_ids": len(out.response_ids),
        "n_logprobs": len(out.response_logprobs or []),
        "num_turns": out.num_turns,
        "generate_calls": len(server.prompts),
        "turn_prompts": [tokenizer.decode(p) for p in server.prompts],
        "tool_rewards": out.extra_fields.get("tool_rewards"),
        "loop_class": type(sys.modules["hydra.utils"].instantiate.made[-1]).__qualname__,
    }


async def call_tool_directly(mods, config, row, name, arguments):
    """PactToolAgentLoop._call_tool on a FunctionCall whose arguments are not JSON (what a parser that
    does not check them, such as VeRL's gpt-oss one, hands over): the loop's own error text."""
    al = mods["verl.experimental.agent_loop.agent_loop"]
    from pact_verl.agent_loop import PactToolAgentLoop

    FunctionCall = mods["verl.experimental.agent_loop.tool_parser"].FunctionCall
    loop = PactToolAgentLoop(trainer_config=al.DictConfigWrap(config), server_manager=None,
                             tokenizer=TinyChatTokenizer(), processor=None, dataset_cls=al.RLHFDataset,
                             dataset_config=al.DictConfigWrap(config.data))
    loop._pact_tools = json.loads(row["extra_info"]["tools"])
    loop._pact_impls = json.loads(row["extra_info"]["implementations"])
    response, reward, _ = await loop._call_tool(FunctionCall(name=name, arguments=arguments), {}, None)
    return {"text": response.text, "reward": reward}


def main():
    verl_root, fixtures_path = sys.argv[1], sys.argv[2]
    fx = json.load(open(fixtures_path))
    export_dir = fx["exportDir"]
    mods = install_stubs(verl_root)
    sys.path.insert(0, export_dir)
    config = compose_config(verl_root, export_dir)
    rows = [json.loads(line) for line in open(f"{export_dir}/data/train.json") if line.strip()]
    row = next(r for r in rows if r["extra_info"]["task_id"] == fx["taskId"])
    out = {"episodes": [], "config": {
        "max_assistant_turns": config.actor_rollout_ref.rollout.multi_turn.max_assistant_turns,
        "format": config.actor_rollout_ref.rollout.multi_turn.format,
        "default_agent_loop": config.actor_rollout_ref.rollout.agent.default_agent_loop,
    }}
    for turns in fx["episodes"]:
        out["episodes"].append(asyncio.run(run_episode(mods, config, export_dir, row, turns)))
    out["malformed"] = asyncio.run(call_tool_directly(mods, config, row, **fx["malformedCall"]))
    import pact_verl.agent_loop as pal

    out["registered"] = dict(mods["verl.experimental.agent_loop.agent_loop"]._agent_loop_registry).get(
        "pact_tool_agent") is not None and pal.__file__.startswith(export_dir)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
