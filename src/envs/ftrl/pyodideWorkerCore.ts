/**
 * The body of a Pyodide sandbox, independent of where it runs (a Node sandbox process, see
 * `pyodideExecutorNode.ts`, or a browser module `Worker`, `pyodide.worker.ts`): waits for
 * `init`, loads one Pyodide instance with an empty `js` module (`jsglobals`), runs the Python
 * runtime once, locks its own JavaScript realm down (`lockDown`), and only then says `ready`
 * and answers `callTool` and `runScript` requests one by one. The executor enforces time
 * limits by terminating the whole sandbox. Threat model: docs/security.md.
 *
 * Plain JS as source text, because the Node sandbox runs it with `node -e` (no TypeScript
 * loader can start under the permission model); `servePyodideWorker` below builds it here.
 */
import type { loadPyodide as LoadPyodide } from 'pyodide';
import { PYTHON_RUNTIME_SOURCE, type PyWorkerRequest, type PyWorkerResponse } from './pythonRuntime';

export const PYODIDE_WORKER_CORE_SOURCE = String.raw`
function servePyodideWorker(post, listen, load, lockDown) {
  var PYTHON_RUNTIME_SOURCE = ${JSON.stringify(PYTHON_RUNTIME_SOURCE)};
  var callTool = null;
  var runScript = null;
  function describeError(err) {
    return err !== null && typeof err === 'object' && typeof err.message === 'string' ? err.message : String(err);
  }
  async function initialise(indexURL) {
    var t0 = Date.now();
    try {
      var silent = function () {};
      // An empty js module: Python's "import js" sees none of this realm's globals.
      var pyodide = await load({ indexURL: indexURL, stdout: silent, stderr: silent, jsglobals: Object.create(null) });
      pyodide.runPython(PYTHON_RUNTIME_SOURCE);
      callTool = pyodide.globals.get('pact_call_tool');
      runScript = pyodide.globals.get('pact_run_script');
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
        var result = callTool(message.source, message.name, message.argumentsJson);
        try {
          var pair = result.toJs();
          post({ type: 'toolResult', id: message.id, observation: String(pair[0]), isError: pair[1] === true });
        } finally {
          result.destroy();
        }
        return;
      }
      case 'runScript': {
        if (!runScript) {
          post({ type: 'scriptFailed', id: message.id, message: 'Pyodide is not loaded' });
          return;
        }
        try {
          post({ type: 'scriptResult', id: message.id, output: runScript(message.source, message.entry, message.input) });
        } catch (err) {
          post({ type: 'scriptFailed', id: message.id, message: describeError(err) });
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
