/**
 * The body of a Pyodide worker, independent of the worker flavour (Node `worker_threads`
 * or a browser module `Worker`): waits for `init`, loads one Pyodide instance, runs the
 * Python runtime once, then answers `callTool` and `runScript` requests one by one.
 * The executor enforces time limits by terminating the whole worker.
 */
import type { PyodideAPI, loadPyodide as LoadPyodide } from 'pyodide';
import type { PyProxy } from 'pyodide/ffi';
import { PYTHON_RUNTIME_SOURCE, type PyWorkerRequest, type PyWorkerResponse } from './pythonRuntime';

type CallToolFn = (source: string, name: string, argumentsJson: string) => PyProxy;
type RunScriptFn = (source: string, entry: string, input: string) => string;

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Serves the worker protocol.
 * @param post sends a response to the executor
 * @param listen registers the handler of incoming requests
 * @param load pyodide's `loadPyodide`
 */
export function servePyodideWorker(
  post: (message: PyWorkerResponse) => void,
  listen: (handler: (message: PyWorkerRequest) => void) => void,
  load: typeof LoadPyodide,
): void {
  let callTool: CallToolFn | null = null;
  let runScript: RunScriptFn | null = null;

  async function initialise(indexURL: string): Promise<void> {
    const t0 = Date.now();
    try {
      const silent = (): void => {};
      const pyodide: PyodideAPI = await load({ indexURL, stdout: silent, stderr: silent });
      pyodide.runPython(PYTHON_RUNTIME_SOURCE);
      callTool = pyodide.globals.get('pact_call_tool') as CallToolFn;
      runScript = pyodide.globals.get('pact_run_script') as RunScriptFn;
      post({ type: 'ready', loadMs: Date.now() - t0 });
    } catch (err) {
      post({ type: 'loadFailed', message: `Pyodide failed to load from ${indexURL}: ${describeError(err)}` });
    }
  }

  listen((message) => {
    switch (message.type) {
      case 'init':
        void initialise(message.indexURL);
        return;
      case 'callTool': {
        if (!callTool) {
          post({ type: 'toolResult', id: message.id, observation: `an error occured when call ${message.name}: Pyodide is not loaded`, isError: true });
          return;
        }
        const result = callTool(message.source, message.name, message.argumentsJson);
        try {
          const [observation, isError] = result.toJs() as [string, boolean];
          post({ type: 'toolResult', id: message.id, observation, isError });
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
      default: {
        const unknown: never = message;
        throw new Error(`pyodide worker: unknown message ${JSON.stringify(unknown)}`);
      }
    }
  });
}
