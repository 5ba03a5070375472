/**
 * The body of a Pyodide sandbox, independent of where it runs (a Node sandbox process, see
 * `pyodideExecutorNode.ts`, or a browser module `Worker`, `pyodide.worker.ts`): waits for
 * `init`, loads one Pyodide instance with an empty `js` module (`jsglobals`), runs the Python
 * runtime and its guard once, locks its own JavaScript realm down (`lockDown`), and only then
 * says `ready` and answers `callTool` and `runScript` requests one by one. Observations are cut
 * at MAX_OUTPUT_CHARS in here; after each call the guard checks the shared interpreter, and a
 * reply with `isBroken` makes the executor replace the sandbox. The executor enforces time
 * limits by terminating the whole sandbox. Threat model: docs/security.md.
 *
 * Plain JS as source text, because the Node sandbox runs it with `node -e` (no TypeScript
 * loader can start under the permission model); `servePyodideWorker` below builds it here.
 */
import type { loadPyodide as LoadPyodide } from 'pyodide';
import { MAX_OUTPUT_CHARS } from '../sandbox/runtimeSource';
import { PYTHON_RUNTIME_SOURCE, type PyWorkerRequest, type PyWorkerResponse } from './pythonRuntime';

/**
 * Python run once after PYTHON_RUNTIME_SOURCE, before any tool code: wraps `pact_call_tool`
 * as `pact_sandbox_call_tool`, which cuts the observation at MAX_OUTPUT_CHARS inside the
 * sandbox (as the JavaScript runtime does) and then checks the shared interpreter
 * (`pact_sandbox_intact`): the builtins, the runtime's own names and functions, the json
 * modules it serialises with, sys.modules' entries for them, the import machinery, trace and
 * profile hooks, the recursion and int-digit limits. It returns [observation, is_error,
 * is_intact]; a false `is_intact` makes the executor replace the sandbox before the next call.
 * The check keeps its own references (a tool that sets `builtins.len` does not change it); a
 * tool that aims at the check itself can still get past it (docs/security.md, the limits).
 * `os.system` (Emscripten runs it through child_process, which the permission model refuses,
 * and the refusal killed the process) raises an OSError instead.
 */
export const PYTHON_SANDBOX_GUARD_SOURCE = String.raw`
def _pact_make_sandbox_guard(max_chars):
    import builtins, gc, json, json.decoder, json.encoder, json.scanner, os, posix, sys, __main__

    def refuse(what):
        def refused(*args, **kwargs):
            raise OSError(what + ' is not available in the tool sandbox')
        return refused

    os.system = posix.system = refuse('os.system')
    __main__.__dict__.pop('_pact_make_sandbox_guard', None)

    # Everything the guard calls, read now: a tool that replaces builtins.len changes nothing here.
    _call = __main__.pact_call_tool
    _str = str
    _str_str = str.__str__
    _isinstance = isinstance
    _type = type
    _len = len
    _range = range
    _dict = dict
    _tuple = tuple
    _items = dict.items
    _get = dict.get
    _pop = dict.pop
    _missing = object()
    _BaseException = BaseException
    _function = type(refuse)
    _modules = sys.modules
    _gettrace = sys.gettrace
    _getprofile = sys.getprofile
    _getrecursionlimit = sys.getrecursionlimit
    _get_int_max_str_digits = sys.get_int_max_str_digits
    _gc_callbacks = gc.callbacks
    _meta_path = sys.meta_path
    _path_hooks = sys.path_hooks
    _sys_dict = sys.__dict__
    # Set by the interpreter itself when an error reaches JavaScript, not by a tool.
    _sys_volatile = ('last_exc', 'last_type', 'last_value', 'last_traceback')
    suffix = ' …[output cut at ' + _str(max_chars) + ' characters]'

    def cut(text):
        if _type(text) is not _str:
            text = _str_str(text) if _isinstance(text, _str) else '(the tool runtime returned no text)'
        if _len(text) > max_chars:
            return text[:max_chars] + suffix
        return text

    def sandbox_call_tool(code, name, args_json):
        try:
            pair = _call(code, name, args_json)
            text, is_error = pair[0], pair[1] is True
        except _BaseException:
            text, is_error = 'an error occured when call ' + _str_str(name) + ': the tool runtime failed', True
        text = cut(text)
        return [text, is_error, intact()]

    namespaces = (
        builtins.__dict__, __main__.__dict__, json.__dict__, json.decoder.__dict__, json.encoder.__dict__,
        json.scanner.__dict__, json.JSONDecoder.__dict__, json.JSONEncoder.__dict__,
        json._default_decoder.__dict__, json._default_encoder.__dict__, sys.__dict__,
    )
    module_names = ('builtins', '__main__', 'json', 'json.decoder', 'json.encoder', 'json.scanner', 'sys', 'gc')
    state = {}

    def read_namespace(ns):
        copy = _dict(ns)
        if ns is _sys_dict:
            for key in _sys_volatile:
                _pop(copy, key, None)
        return copy

    def read_function(fn):
        cells = _tuple(c.cell_contents for c in fn.__closure__ or ())
        return (fn, fn.__code__, fn.__defaults__, fn.__kwdefaults__, fn.__globals__, cells)

    def read_state():
        return (
            _tuple(read_namespace(ns) for ns in namespaces),
            _tuple(_get(_modules, n, _missing) for n in module_names),
            _tuple(_meta_path),
            _tuple(_path_hooks),
            _tuple(_gc_callbacks),
            (_gettrace(), _getprofile(), sys.meta_path, sys.path_hooks, gc.callbacks, builtins.__dict__),
            (_getrecursionlimit(), _get_int_max_str_digits()),
            _tuple(read_function(fn) for fn in state['functions']),
        )

    def same_sequence(a, b):
        if _len(a) != _len(b):
            return False
        for i in _range(_len(a)):
            if a[i] is not b[i]:
                return False
        return True

    def same_mapping(now, then):
        if _len(now) != _len(then):
            return False
        for k, v in _items(then):
            if _get(now, k, _missing) is not v:
                return False
        return True

    def intact():
        try:
            now = read_state()
            then = state['then']
            for i in _range(_len(then[0])):
                if not same_mapping(now[0][i], then[0][i]):
                    return False
            for i in (1, 2, 3, 4, 5):
                if not same_sequence(now[i], then[i]):
                    return False
            if now[6] != then[6] or _len(now[7]) != _len(then[7]):
                return False
            for i in _range(_len(then[7])):
                if not same_sequence(now[7][i][:5], then[7][i][:5]) or not same_sequence(now[7][i][5], then[7][i][5]):
                    return False
            return True
        except _BaseException:
            return False

    # The guard's names go into __main__ before the snapshot, so it already holds them.
    __main__.pact_sandbox_call_tool = sandbox_call_tool
    __main__.pact_sandbox_intact = intact
    functions = [v for v in __main__.__dict__.values() if _type(v) is _function]
    state['functions'] = _tuple(functions) + (
        refuse, cut, sandbox_call_tool, read_namespace, read_function, read_state, same_sequence, same_mapping, intact,
    )
    state['then'] = read_state()

_pact_make_sandbox_guard(${MAX_OUTPUT_CHARS})
`;

export const PYODIDE_WORKER_CORE_SOURCE = String.raw`
function servePyodideWorker(post, listen, load, lockDown) {
  var PYTHON_RUNTIME_SOURCE = ${JSON.stringify(PYTHON_RUNTIME_SOURCE)};
  var PYTHON_SANDBOX_GUARD_SOURCE = ${JSON.stringify(PYTHON_SANDBOX_GUARD_SOURCE)};
  var MAX_CHARS = ${MAX_OUTPUT_CHARS};
  var callTool = null;
  var runScript = null;
  var isIntact = null;
  function describeError(err) {
    return err !== null && typeof err === 'object' && typeof err.message === 'string' ? err.message : String(err);
  }
  function cut(text) {
    return text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) + ' …[output cut at ' + MAX_CHARS + ' characters]' : text;
  }
  // False when the check says the shared interpreter was changed, or cannot say.
  function checkIntact() {
    try { return isIntact() === true; } catch (_) { return false; }
  }
  async function initialise(indexURL) {
    var t0 = Date.now();
    try {
      var silent = function () {};
      // An empty js module: Python's "import js" sees none of this realm's globals.
      var pyodide = await load({ indexURL: indexURL, stdout: silent, stderr: silent, jsglobals: Object.create(null) });
      pyodide.runPython(PYTHON_RUNTIME_SOURCE);
      pyodide.runPython(PYTHON_SANDBOX_GUARD_SOURCE);
      callTool = pyodide.globals.get('pact_sandbox_call_tool');
      runScript = pyodide.globals.get('pact_run_script');
      isIntact = pyodide.globals.get('pact_sandbox_intact');
      if (!checkIntact()) throw new Error('the interpreter check fails before any tool ran');
      lockDown();
      post({ type: 'ready', loadMs: Date.now() - t0 });
    } catch (err) {
      post({ type: 'loadFailed', message: 'Pyodide failed to load from ' + indexURL + ': ' + describeError(err) });
    }
  }
  listen(function (message) {
    switch (message && message.type) {
      case 'init':
        void initialise(message.indexURL);
        return;
      case 'callTool': {
        if (!callTool) {
          post({ type: 'toolResult', id: message.id, observation: 'an error occured when call ' + message.name + ': Pyodide is not loaded', isError: true });
          return;
        }
        // The observation is cut in Python, before it becomes a JavaScript string; isBroken asks
        // the executor for a fresh interpreter before the next call.
        var observation;
        var isError = true;
        var isBroken = true;
        try {
          var result = callTool(message.source, message.name, message.argumentsJson);
          try {
            var triple = result.toJs();
            observation = String(triple[0]);
            isError = triple[1] === true;
            isBroken = triple[2] !== true;
          } finally {
            result.destroy();
          }
        } catch (err) {
          observation = 'an error occured when call ' + message.name + ': the tool runtime failed: ' + describeError(err);
        }
        post({ type: 'toolResult', id: message.id, observation: cut(observation), isError: isError, isBroken: isBroken });
        return;
      }
      case 'runScript': {
        if (!runScript) {
          post({ type: 'scriptFailed', id: message.id, message: 'Pyodide is not loaded' });
          return;
        }
        try {
          var output = runScript(message.source, message.entry, message.input);
          post({ type: 'scriptResult', id: message.id, output: output, isBroken: !checkIntact() });
        } catch (err) {
          post({ type: 'scriptFailed', id: message.id, message: describeError(err), isBroken: !checkIntact() });
        }
        return;
      }
      default:
        throw new Error('pyodide worker: unknown message ' + String(message && message.type));
    }
  });
}
`;

type Serve = (
  post: (message: PyWorkerResponse) => void,
  listen: (handler: (message: PyWorkerRequest) => void) => void,
  load: typeof LoadPyodide,
  lockDown: () => void,
) => void;

/**
 * Serves the worker protocol (PYODIDE_WORKER_CORE_SOURCE, compiled here).
 * @param post sends a response to the executor
 * @param listen registers the handler of incoming requests
 * @param load pyodide's `loadPyodide`
 * @param lockDown removes what tool code must not reach, after loading and before the first call
 */
export function servePyodideWorker(...args: Parameters<Serve>): void {
  const serve = new Function(`${PYODIDE_WORKER_CORE_SOURCE}\nreturn servePyodideWorker;`)() as Serve;
  serve(...args);
}
