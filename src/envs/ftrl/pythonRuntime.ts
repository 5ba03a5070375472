/**
 * The Python side of FTRL tool execution, and the one typed message protocol between a
 * `PyodideExecutor` and its worker.
 *
 * Implements the tool-call semantics of FTRL (Ye et al. 2025, `ye2025ftrl` in PACT)
 * and its evaluation: define the tool's code, call the function
 * with the parsed arguments as keyword arguments; the observation is the return value —
 * a `str` as is, a `dict`/`list` as `json.dumps(x, ensure_ascii=False)` (`, ` and `: `
 * separators), anything else `str(x)`; any exception becomes
 * `an error occured when call NAME: MESSAGE` (FTRL's spelling).
 * Serialisation happens in Python, so the text is exactly what CPython writes.
 * Simplifications: each call runs the tool's code in a fresh namespace dict (tasks never
 * share state, and a tool cannot keep state between calls); compiled code objects are
 * cached by source text, which changes nothing observable.
 */

/** Python source run once per Pyodide instance; defines `pact_call_tool` and `pact_run_script`. */
export const PYTHON_RUNTIME_SOURCE = String.raw`
import json

def pact_format_observation(result):
    if isinstance(result, str):
        return result
    if isinstance(result, (dict, list)):
        return json.dumps(result, ensure_ascii=False)
    return str(result)

_pact_compiled = {}

def pact_compile(code):
    compiled = _pact_compiled.get(code)
    if compiled is None:
        if len(_pact_compiled) >= 512:
            _pact_compiled.clear()
        compiled = compile(code, '<tool>', 'exec')
        _pact_compiled[code] = compiled
    return compiled

def pact_call_tool(code, name, args_json):
    """Returns [observation, is_error]."""
    try:
        args = json.loads(args_json) if isinstance(args_json, str) else args_json
        if not isinstance(args, dict):
            raise TypeError('arguments must be a JSON object, got ' + type(args).__name__)
        namespace = {'__name__': '__ftrl_tool__'}
        exec(pact_compile(code), namespace)
        fn = namespace.get(name)
        if not callable(fn):
            raise NameError(f"name '{name}' is not defined")
        return [pact_format_observation(fn(**args)), False]
    except BaseException as e:
        return [f'an error occured when call {name}: {e}', True]

_pact_scripts = {}

def pact_run_script(source, entry, input_text):
    """Runs entry(input_text) of a helper script (it sees this runtime's names); returns a str."""
    namespace = _pact_scripts.get(source)
    if namespace is None:
        namespace = dict(globals())
        exec(compile(source, '<script>', 'exec'), namespace)
        _pact_scripts[source] = namespace
    result = namespace[entry](input_text)
    if not isinstance(result, str):
        raise TypeError(f'{entry} must return a str, got {type(result).__name__}')
    return result
`;

/** Page/executor → worker. */
export type PyWorkerRequest =
  | { type: 'init'; indexURL: string }
  | { type: 'callTool'; id: number; source: string; name: string; argumentsJson: string }
  | { type: 'runScript'; id: number; source: string; entry: string; input: string };

/** Worker → executor. */
export type PyWorkerResponse =
  | { type: 'ready'; loadMs: number }
  | { type: 'loadFailed'; message: string }
  | { type: 'toolResult'; id: number; observation: string; isError: boolean }
  | { type: 'scriptResult'; id: number; output: string }
  | { type: 'scriptFailed'; id: number; message: string };

/** The FTRL error observation, for errors raised outside Python (timeouts, worker crashes). */
export function formatToolError(name: string, message: string): string {
  return `an error occured when call ${name}: ${message}`;
}
