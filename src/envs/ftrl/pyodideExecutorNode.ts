/**
 * The Node flavour of `PyodideExecutor`: Pyodide runs in a sandbox process (src/envs/sandbox/
 * nodeProcess.ts: Node's permission model, an empty environment, a memory cap, no network),
 * which may read only the installed pyodide package's own files. Python reaches JavaScript
 * through Pyodide (`to_js(...)`, `pyodide_js`), so the box is the process, not Python: it
 * cannot write a file, start a process or a worker, signal another process (the host
 * included), or open a connection (docs/security.md).
 *
 * The program is plain JS (PYODIDE_WORKER_CORE_SOURCE plus the lockdown), run as an ES module
 * by `node -e`. Node-only: never import this file from browser code.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { NODE_LOCKDOWN_SOURCE } from '../sandbox/nodeSandboxSource';
import { spawnSandboxedNode, wrapChildProcess, type SandboxLimits } from '../sandbox/nodeProcess';
import { PyodideExecutor, type PyodideExecutorOptions, type PyWorkerPort, type SpawnPyWorker } from './pyodideExecutor';
import { PYODIDE_WORKER_CORE_SOURCE } from './pyodideWorkerCore';
import type { PyWorkerResponse } from './pythonRuntime';

const requireHere = createRequire(import.meta.url);

/** Pyodide's wasm memory, its heap and CPython's: room for FTRL's tools, far from the host's memory. */
export const PYODIDE_SANDBOX_LIMITS: SandboxLimits = { heapMb: 256, dataMb: 2048 };

/** Folder of the installed pyodide package, with a trailing separator (its `indexURL` in Node). */
export function resolveNodePyodideIndexURL(): string {
  const entry = requireHere.resolve('pyodide');
  return path.dirname(entry) + path.sep;
}

/**
 * The sandbox program. Pyodide's Node file system reads fs flags through
 * `process.binding('constants')`, which the permission model refuses: that one binding is
 * answered from the public modules while Pyodide loads, then the lockdown seals it.
 */
function pyodideProcessSource(pyodideModuleUrl: string): string {
  return String.raw`
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
const send = process.send.bind(process);
const requireBuiltin = createRequire(${JSON.stringify(pyodideModuleUrl)});
const binding = process.binding;
process.binding = function (name) {
  if (name === 'constants') return { fs: fs.constants, os: os.constants };
  return binding.call(process, name);
};
${NODE_LOCKDOWN_SOURCE}
${PYODIDE_WORKER_CORE_SOURCE}
const { loadPyodide } = await import(${JSON.stringify(pyodideModuleUrl)});
process.on('disconnect', () => process.exit(0));
servePyodideWorker(
  (message) => { try { send(message); } catch (_) {} },
  (handler) => process.on('message', handler),
  loadPyodide,
  () => lockDownNodeProcess(requireBuiltin),
);
`;
}

/** Spawns a Pyodide sandbox process that may read `pyodideDir` only. */
export function spawnNodePyodideProcess(
  pyodideDir: string = resolveNodePyodideIndexURL(),
  limits: SandboxLimits = PYODIDE_SANDBOX_LIMITS,
): PyWorkerPort {
  const started = spawnSandboxedNode({
    source: pyodideProcessSource(pathToFileURL(path.join(pyodideDir, 'pyodide.mjs')).href),
    isModule: true,
    allowFsRead: [pyodideDir],
    limits,
  }).then((child) => wrapChildProcess(child, 0));
  // The executor's port is synchronous; a message waits here until the process exists.
  let messageHandler: ((message: PyWorkerResponse) => void) | null = null;
  let crashHandler: ((error: Error) => void) | null = null;
  let isTerminated = false;
  started.then(
    (handle) => {
      if (isTerminated) return handle.terminate();
      handle.listen(
        (data) => messageHandler?.(data as PyWorkerResponse),
        (reason) => crashHandler?.(new Error(`the Python sandbox process stopped (${reason})`)),
      );
    },
    (error: unknown) => crashHandler?.(error instanceof Error ? error : new Error(String(error))),
  );
  return {
    post: (message) => {
      void started.then(
        (handle) => {
          if (isTerminated) return;
          try {
            handle.post(message);
          } catch (error) {
            crashHandler?.(error instanceof Error ? error : new Error(String(error)));
          }
        },
        () => undefined,
      );
    },
    onMessage: (handler) => {
      messageHandler = handler;
    },
    onCrash: (handler) => {
      crashHandler = handler;
    },
    terminate: () => {
      isTerminated = true;
      void started.then(
        (handle) => handle.terminate(),
        () => undefined,
      );
    },
  };
}

/** A Node executor; `indexURL` defaults to the installed pyodide package. */
export function createNodePyodideExecutor(
  options: Partial<PyodideExecutorOptions> & { limits?: SandboxLimits } = {},
): PyodideExecutor {
  const indexURL = options.indexURL ?? resolveNodePyodideIndexURL();
  const spawn: SpawnPyWorker = () => spawnNodePyodideProcess(indexURL, options.limits);
  return new PyodideExecutor(spawn, { ...options, indexURL });
}
