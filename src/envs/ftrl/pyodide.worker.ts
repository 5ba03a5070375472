/**
 * Browser entry of the Pyodide worker (a module `Worker`); see `pyodideWorkerCore.ts`.
 * Started by `createBrowserPyodideExecutor` in `pyodideExecutor.ts`.
 *
 * Once Pyodide is loaded, and before any tool code runs, the worker removes its network,
 * storage and messaging globals and turns code generation off (BROWSER_LOCKDOWN_SOURCE): Python
 * can reach JavaScript objects through Pyodide, so the realm itself must hold nothing to reach.
 * Its reply channel is bound first. Limits of this box: docs/security.md.
 *
 * Before loading, each runtime file the app serves (pyodideAssets.ts) is checked with a HEAD
 * request: when one is missing (an error status, or a server's index.html in its place),
 * Pyodide's own loader logs "wasm instantiation failed!" and never settles, so the failure would
 * only surface at the executor's load time limit, unnamed.
 */
import { loadPyodide } from 'pyodide';
import { BROWSER_LOCKDOWN_SOURCE } from '../sandbox/runtimeSource';
import { PYODIDE_ASSET_FILES } from './pyodideAssets';
import { servePyodideWorker } from './pyodideWorkerCore';
import type { PyWorkerRequest, PyWorkerResponse } from './pythonRuntime';

const scope = self as unknown as {
  postMessage(message: PyWorkerResponse): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<PyWorkerRequest>) => void): void;
};

/** loadPyodide, after checking that the app serves every runtime file at `indexURL`. */
const loadCheckedPyodide: typeof loadPyodide = async (options) => {
  const base = options?.indexURL ?? '';
  for (const name of PYODIDE_ASSET_FILES) {
    const url = new URL(name, new URL(base, self.location.href)).href;
    const res = await fetch(url, { method: 'HEAD' });
    // A single-page-app server answers a missing file with index.html and 200.
    const isPage = (res.headers.get('content-type') ?? '').startsWith('text/html');
    if (!res.ok || isPage) {
      const what = res.ok ? 'the server sent an HTML page in its place' : `HTTP ${res.status}`;
      throw new Error(
        `${name} is not served at ${url} (${what}); the app's build copies it from node_modules/pyodide (vite.config.ts)`,
      );
    }
  }
  return loadPyodide(options);
};

const post = scope.postMessage.bind(scope);
const lockDownWorkerGlobals = new Function(`${BROWSER_LOCKDOWN_SOURCE}\nreturn lockDownWorkerGlobals;`)() as (
  isCodeGenerationBlocked: boolean,
) => void;

servePyodideWorker(
  (message) => post(message),
  (handler) => scope.addEventListener('message', (event) => handler(event.data)),
  loadCheckedPyodide,
  () => lockDownWorkerGlobals(true),
);
