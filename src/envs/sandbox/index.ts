/**
 * Tool execution for the rollout environment.
 *
 * What the worker sandbox isolates:
 * - Time: every call has a wall-clock limit; on timeout the worker is terminated and
 *   respawned, so an infinite loop costs one error observation.
 * - Crashes and memory: a stub that throws yields `an error occured when call NAME: …`;
 *   in Node the worker has heap limits (NODE_WORKER_LIMITS), so runaway allocation
 *   kills the worker, not the trainer. (Browsers give workers no such limit.)
 * - The page: a worker has no DOM, no `window`, no `document`, no access to the page's
 *   variables; only structured-cloned arguments go in and a string comes out.
 * - Network and storage. In Node, stubs run in a fresh `vm` context inside the
 *   worker: its global object holds only the JavaScript builtins (no `process`,
 *   `require`, `fetch`, timers), and a dynamic `import()` there is refused. In the
 *   browser (best effort): `fetch`, `XMLHttpRequest`, `WebSocket`, `EventSource`,
 *   `importScripts`, `indexedDB`, `caches` and nested workers are removed from the
 *   worker's global object and shadowed as undefined parameters of every stub.
 * - The formatting of outputs: the runtime keeps its own references to the builtins
 *   it uses, so a stub that overwrites `JSON.stringify` cannot corrupt later outputs.
 *
 * What it does NOT isolate: it is not a security boundary against a deliberately
 * malicious stub. In the browser a dynamic `import()` of a URL can still reach the
 * network (only the page's Content-Security-Policy could stop it), and JavaScript
 * reflection may find other routes. Stubs in one worker share one global object, so a
 * stub could leave state behind for later calls (the built-in stubs are pure). The
 * in-process executor has no isolation at all. Stubs from the built-in generator and
 * from users are treated as buggy, not hostile.
 */
import type { ToolImplementation } from '../types';
import { formatToolError, type ExecuteOptions, type ToolExecutor, type ToolResult } from './types';

export * from './types';
export { InProcessExecutor, formatToolOutput } from './inProcessExecutor';
export {
  WorkerExecutor,
  createWorkerExecutor,
  createNodeWorkerFactory,
  createBrowserWorkerFactory,
  NODE_WORKER_LIMITS,
  type WorkerFactory,
  type WorkerHandle,
} from './workerExecutor';
export { MAX_OUTPUT_CHARS } from './runtimeSource';

/**
 * Dispatches by language: JavaScript stubs to one executor, Python (imported FTRL
 * tasks, run by the Pyodide executor of `src/envs/ftrl/`) to another.
 */
export function createLanguageRouter(executors: Partial<Record<ToolImplementation['language'], ToolExecutor>>): ToolExecutor {
  return {
    execute(impl: ToolImplementation, toolName: string, args: Record<string, unknown>, options?: ExecuteOptions): Promise<ToolResult> {
      const executor = impl && executors[impl.language];
      if (!executor) {
        return Promise.resolve({ ok: false, output: formatToolError(toolName, `no executor for ${String(impl?.language)} tools`) });
      }
      return executor.execute(impl, toolName, args, options);
    },
    dispose(): void {
      for (const e of Object.values(executors)) e?.dispose();
    },
  };
}
