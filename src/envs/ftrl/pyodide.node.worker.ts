/**
 * Node entry of the Pyodide worker (`worker_threads`); see `pyodideWorkerCore.ts`.
 * Started by `createNodePyodideExecutor` in `pyodideExecutorNode.ts`.
 */
import { parentPort } from 'node:worker_threads';
import { loadPyodide } from 'pyodide';
import { servePyodideWorker } from './pyodideWorkerCore';
import type { PyWorkerRequest } from './pythonRuntime';

if (!parentPort) throw new Error('pyodide.node.worker.ts must run inside a worker_threads Worker');
const port = parentPort;
servePyodideWorker(
  (message) => port.postMessage(message),
  (handler) => port.on('message', (message: PyWorkerRequest) => handler(message)),
  loadPyodide,
);
