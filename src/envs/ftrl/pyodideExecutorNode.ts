/**
 * The Node flavour of `PyodideExecutor`: a `worker_threads` worker that loads Pyodide
 * offline from the installed npm package's own files (node_modules/pyodide).
 *
 * The worker entry is TypeScript (`pyodide.node.worker.ts`); Node cannot run it
 * directly, so the worker boots from a tiny ESM data: URL that registers tsx's loader
 * and then imports the entry. Node-only: never import this file from browser code.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PyodideExecutor, type PyodideExecutorOptions, type SpawnPyWorker } from './pyodideExecutor';
import type { PyWorkerResponse } from './pythonRuntime';

const requireHere = createRequire(import.meta.url);

/** Folder of the installed pyodide package, with a trailing separator (its `indexURL` in Node). */
export function resolveNodePyodideIndexURL(): string {
  const entry = requireHere.resolve('pyodide');
  return path.dirname(entry) + path.sep;
}

function resolveTsxEsmApi(): string {
  const cjs = requireHere.resolve('tsx/esm/api');
  const esm = cjs.replace(/\.cjs$/, '.mjs');
  if (!existsSync(esm)) throw new Error(`createNodePyodideExecutor: tsx's ESM loader API not found at ${esm}`);
  return pathToFileURL(esm).href;
}

/** Spawns `pyodide.node.worker.ts` in a `worker_threads` Worker. */
export function spawnNodePyodideWorker(): ReturnType<SpawnPyWorker> {
  const entry = new URL('./pyodide.node.worker.ts', import.meta.url).href;
  const boot = `import { register } from ${JSON.stringify(resolveTsxEsmApi())};\nregister();\nawait import(${JSON.stringify(entry)});\n`;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`));
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (handler) => worker.on('message', (message: PyWorkerResponse) => handler(message)),
    onCrash: (handler) => {
      worker.on('error', (error) => handler(error instanceof Error ? error : new Error(String(error))));
      worker.on('exit', (code) => handler(new Error(`the worker exited with code ${code}`)));
    },
    terminate: () => void worker.terminate(),
  };
}

/** A Node executor; `indexURL` defaults to the installed pyodide package. */
export function createNodePyodideExecutor(options: Partial<PyodideExecutorOptions> = {}): PyodideExecutor {
  return new PyodideExecutor(spawnNodePyodideWorker, { ...options, indexURL: options.indexURL ?? resolveNodePyodideIndexURL() });
}
