/**
 * Browser entry of the Pyodide worker (a module `Worker`); see `pyodideWorkerCore.ts`.
 * Started by `createBrowserPyodideExecutor` in `pyodideExecutor.ts`.
 */
import { loadPyodide } from 'pyodide';
import { servePyodideWorker } from './pyodideWorkerCore';
import type { PyWorkerRequest, PyWorkerResponse } from './pythonRuntime';

const scope = self as unknown as {
  postMessage(message: PyWorkerResponse): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<PyWorkerRequest>) => void): void;
};
servePyodideWorker(
  (message) => scope.postMessage(message),
  (handler) => scope.addEventListener('message', (event) => handler(event.data)),
  loadPyodide,
);
