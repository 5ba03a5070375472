/**
 * BFCL's backend classes (GorillaFileSystem, TwitterAPI, …) run in Pyodide, loaded from the
 * user's own copy of BFCL's source (never shipped with PACT Lab): their module texts are
 * registered with an in-memory importer (no file is written; it sits on sys.meta_path only
 * while a request runs, as the sandbox's interpreter check wants the import machinery
 * unchanged between calls), so
 * `from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.long_context import …`
 * inside them resolves as in BFCL.
 *
 * The Python side is one helper script run through the executor's `runScript` (a
 * `PyodideExecutor`: src/envs/ftrl/pyodideExecutor.ts, public API only). The executor keeps
 * a script's namespace between calls (cached by its source text), so the backend instances
 * of a session live there across the calls of an entry. A worker that crashed or timed out
 * is replaced with a fresh namespace: the next call says so (`not loaded`), the wrapper
 * reloads the sources, and a session that was open is lost (its entry fails with an error).
 *
 * Execution follows BFCL's `execute_multi_turn_func_call` (bfcl_eval/eval_checker/
 * multi_turn_eval/multi_turn_utils.py, ShishirPatil/gorilla):
 * - one instance per involved class, `_load_scenario(deepcopy(initial_config[cls]),
 *   long_context=…)` unless the class is stateless; public method names map to their
 *   instance (a later class wins a shared name);
 * - each call string has its method names prefixed with the instance (BFCL's
 *   `_process_method_calls` regex, applied the same way) and is `eval`-ed; the names kill,
 *   exit, quit, remove, unlink, popen, Popen, run are refused; the result is the str as is,
 *   a dict as `json.dumps` (else `str`), anything else `str(x)`; an exception becomes
 *   `Error during execution: <message>`;
 * - a model call `{name, arguments}` becomes the string BFCL's `convert_to_function_call`
 *   writes: `name(k=repr(v),…)` (arguments parsed by Python's json from the text the model
 *   wrote, so `2.0` stays a float; `initial_config` likewise from the entry's own JSON text).
 * Differences (simplifications): the eval namespace holds the instances and no builtins,
 * so a call to a name that is no backend method (e.g. `print(…)`) is an error rather than a
 * builtin call; a model call whose name or argument names are not Python identifiers is an
 * error without being evaluated.
 *
 * The state check is BFCL's `state_checker` / `_compare_instances`: for every class of the
 * ground truth's instances, every attribute in `vars(instance)` not starting with `_` must
 * compare equal (`!=`) to the model instance's.
 */

/** What the evaluator needs of a Python executor: `PyodideExecutor.runScript`. */
export interface PythonScriptRunner {
  runScript(source: string, entry: string, input: string, options?: { timeoutMs?: number }): Promise<string>;
}

/** The backend modules to load: dotted module name → source, plus the package names. */
export interface BfclBackendSources {
  /** Dotted module name → source text (a package's `__init__.py` under the package's own name). */
  modules: Record<string, string>;
  /** Dotted names that are packages (every parent of a module, and each folder with `__init__.py`). */
  packages: string[];
  /** Backend class name → dotted module defining it. */
  classModules: Record<string, string>;
  /** Classes never given `_load_scenario` (BFCL's STATELESS_CLASSES). */
  stateless: string[];
}

/** One call the model made: its name, and the JSON text of its `<tool_call>` block (`{"name": …, "arguments": …}`). */
export interface BfclModelCall {
  name: string;
  callJson: string;
}

/** A call to execute: a BFCL call string (ground truth) or a model call. */
export type BfclCall = { text: string } | BfclModelCall;

export interface BfclExecution {
  /** The call strings executed (model calls as BFCL decodes them). */
  decoded: string[];
  /** One result string per call, BFCL's execution result. */
  results: string[];
}

export interface BfclStateDifference {
  className: string;
  attribute: string;
  /** repr of the values, cut to 300 characters. */
  model: string;
  groundTruth: string;
}

/** The helper script (see the file header). */
export const BFCL_PYTHON_SOURCE = String.raw`
import sys, json, copy, re, inspect, importlib, importlib.abc, importlib.util

_bfcl_sources = {}
_bfcl_packages = set()
_bfcl_class_modules = {}
_bfcl_stateless = set()
_bfcl_sessions = {}
_BFCL_FORBIDDEN = ["kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"]
_BFCL_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _BfclImporter(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in _bfcl_packages:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        if fullname in _bfcl_sources:
            return importlib.util.spec_from_loader(fullname, self, is_package=False)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        source = _bfcl_sources.get(module.__name__)
        if source:
            exec(compile(source, "<bfcl " + module.__name__ + ">", "exec"), module.__dict__)


_bfcl_importer = _BfclImporter()


def _bfcl_load(req):
    names = set(_bfcl_sources) | set(_bfcl_packages) | set(req["modules"]) | set(req["packages"])
    for name in list(sys.modules):
        if name in names:
            del sys.modules[name]
    _bfcl_sources.clear()
    _bfcl_sources.update(req["modules"])
    _bfcl_packages.clear()
    _bfcl_packages.update(req["packages"])
    _bfcl_class_modules.clear()
    _bfcl_class_modules.update(req["class_modules"])
    _bfcl_stateless.clear()
    _bfcl_stateless.update(req["stateless"])
    _bfcl_sessions.clear()
    problems = {}
    for cls, module_name in _bfcl_class_modules.items():
        try:
            getattr(importlib.import_module(module_name), cls)
            problems[cls] = None
        except BaseException as e:
            problems[cls] = type(e).__name__ + ": " + str(e)
    return {"classes": problems}


def _bfcl_open(req):
    instances = {}
    mapping = {}
    config = json.loads(req["entry_json"]).get("initial_config", {})
    for cls in req["classes"]:
        if cls not in _bfcl_class_modules:
            raise KeyError("no backend module defines class " + cls)
        instance = getattr(importlib.import_module(_bfcl_class_modules[cls]), cls)()
        if cls not in _bfcl_stateless:
            instance._load_scenario(copy.deepcopy(config.get(cls, {})), long_context=req["long_context"])
        instances[cls] = instance
        for method_name, _ in inspect.getmembers(instance, predicate=inspect.ismethod):
            if method_name.startswith("_"):
                continue
            mapping[method_name] = cls
    _bfcl_sessions[req["sid"]] = (instances, mapping)
    return {}


def _bfcl_decode(call):
    if "text" in call:
        return call["text"], None
    name = call["name"]
    try:
        value = json.loads(call["call_json"])["arguments"]
        if type(value) == str:
            value = json.loads(value)
    except Exception as e:
        return name + "(...)", "Error during execution: the arguments are not JSON: " + str(e)
    if not isinstance(value, dict):
        return name + "(...)", "Error during execution: the arguments are not a JSON object"
    if not _BFCL_IDENT.match(name) or not all(isinstance(k, str) and _BFCL_IDENT.match(k) for k in value):
        return name + "(...)", "Error during execution: the function or an argument name is not a Python identifier"
    return f"{name}({','.join([f'{k}={repr(v)}' for k, v in value.items()])})", None


def _bfcl_execute(req):
    instances, mapping = _bfcl_sessions[req["sid"]]
    env = {"__builtins__": {}}
    for cls, instance in instances.items():
        env["_bfcl_i_" + cls] = instance

    def replace_function(match):
        func_name = match.group(1)
        if func_name in mapping:
            return "_bfcl_i_" + mapping[func_name] + "." + func_name
        return func_name

    decoded = []
    results = []
    for call in req["calls"]:
        func_call, problem = _bfcl_decode(call)
        decoded.append(func_call)
        if problem is not None:
            results.append(problem)
            continue
        func_call = re.sub(r"\b([a-zA-Z_]\w*)\s*(?=\()", replace_function, func_call)
        try:
            head = func_call
            if "(" in head:
                head = head.split("(")[0]
            if "." in head:
                head = head.split(".")[1]
            if head in _BFCL_FORBIDDEN:
                raise Exception(f"Function call {head} is not allowed.")
            result = eval(func_call, env)
            if type(result) == str:
                pass
            elif type(result) == dict:
                try:
                    result = json.dumps(result)
                except Exception:
                    result = str(result)
            else:
                result = str(result)
            results.append(result)
        except Exception as e:
            results.append(f"Error during execution: {str(e)}")
    return {"decoded": decoded, "results": results}


def _bfcl_cut(value):
    try:
        text = repr(value)
    except Exception as e:
        text = "<repr failed: " + str(e) + ">"
    return text if len(text) <= 300 else text[:300] + "..."


def _bfcl_compare(req):
    model_instances, _ = _bfcl_sessions[req["model_sid"]]
    truth_instances, _ = _bfcl_sessions[req["truth_sid"]]
    differences = []
    for cls, truth in truth_instances.items():
        model = model_instances[cls]
        for attr in vars(truth):
            if attr.startswith("_"):
                continue
            truth_value = getattr(truth, attr)
            missing = object()
            model_value = getattr(model, attr, missing)
            if model_value is missing or model_value != truth_value:
                differences.append({
                    "className": cls,
                    "attribute": attr,
                    "model": "<missing>" if model_value is missing else _bfcl_cut(model_value),
                    "groundTruth": _bfcl_cut(truth_value),
                })
    return {"differences": differences}


def _bfcl_close(req):
    for sid in req["sids"]:
        _bfcl_sessions.pop(sid, None)
    return {}


_BFCL_OPS = {"load": _bfcl_load, "open": _bfcl_open, "execute": _bfcl_execute, "compare": _bfcl_compare, "close": _bfcl_close}


def bfcl_entry(input_text):
    req = json.loads(input_text)
    op = req["op"]
    if op != "load" and not _bfcl_class_modules:
        return json.dumps({"notLoaded": True})
    # The importer is on sys.meta_path only while an op runs: the sandbox's guard checks
    # the import machinery after each script call, and would replace a changed interpreter.
    sys.meta_path.insert(0, _bfcl_importer)
    try:
        return json.dumps({"ok": _BFCL_OPS[op](req)})
    except BaseException as e:
        return json.dumps({"error": type(e).__name__ + ": " + str(e)})
    finally:
        sys.meta_path.remove(_bfcl_importer)
`;

/** The Python side lost its state (a replaced worker): sessions are gone. */
export class BfclNotLoadedError extends Error {}

/**
 * BFCL's backends in one Python executor. `load()` first (and after a worker was replaced);
 * sessions are named by the caller and must be closed.
 */
export class BfclBackends {
  private isLoaded = false;
  /** Class → import problem (null: the class loaded), from the last load. */
  classProblems: Record<string, string | null> = {};

  constructor(
    private readonly runner: PythonScriptRunner,
    private readonly sources: BfclBackendSources,
    private readonly options: { timeoutMs?: number; loadTimeoutMs?: number } = {},
  ) {}

  /** Loads the sources; resolves with class → import problem (null when the class imports). */
  async load(): Promise<Record<string, string | null>> {
    const out = (await this.call(
      {
        op: 'load',
        modules: this.sources.modules,
        packages: this.sources.packages,
        class_modules: this.sources.classModules,
        stateless: this.sources.stateless,
      },
      this.options.loadTimeoutMs ?? 120_000,
    )) as { classes: Record<string, string | null> };
    this.isLoaded = true;
    this.classProblems = out.classes;
    return out.classes;
  }

  /** Creates the instances of a session (reloading the sources first if the worker was replaced). */
  async open(sid: string, classes: readonly string[], entryJson: string, longContext: boolean): Promise<void> {
    if (!this.isLoaded) await this.load();
    const request = { op: 'open', sid, classes, entry_json: entryJson, long_context: longContext };
    try {
      await this.call(request);
    } catch (e) {
      if (!(e instanceof BfclNotLoadedError)) throw e;
      await this.load();
      await this.call(request);
    }
  }

  async execute(sid: string, calls: readonly BfclCall[]): Promise<BfclExecution> {
    const wire = calls.map((c) => ('text' in c ? { text: c.text } : { name: c.name, call_json: c.callJson }));
    return (await this.call({ op: 'execute', sid, calls: wire })) as BfclExecution;
  }

  /** BFCL's state check of two sessions; an empty list is a pass. */
  async compare(modelSid: string, truthSid: string): Promise<BfclStateDifference[]> {
    const out = (await this.call({ op: 'compare', model_sid: modelSid, truth_sid: truthSid })) as {
      differences: BfclStateDifference[];
    };
    return out.differences;
  }

  async close(...sids: string[]): Promise<void> {
    try {
      await this.call({ op: 'close', sids });
    } catch (e) {
      if (!(e instanceof BfclNotLoadedError)) throw e;
    }
  }

  private async call(request: Record<string, unknown>, timeoutMs = this.options.timeoutMs): Promise<unknown> {
    const text = await this.runner.runScript(BFCL_PYTHON_SOURCE, 'bfcl_entry', JSON.stringify(request), {
      timeoutMs,
    });
    const reply = JSON.parse(text) as { ok?: unknown; error?: string; notLoaded?: boolean };
    if (reply.notLoaded) {
      this.isLoaded = false;
      throw new BfclNotLoadedError(
        'the Python worker was restarted; the BFCL backends are reloaded, open sessions are lost',
      );
    }
    if (reply.error !== undefined) throw new Error(`BFCL backend ${String(request.op)}: ${reply.error}`);
    return reply.ok;
  }
}
