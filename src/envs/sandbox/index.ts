/**
 * Tool execution for the rollout environment. Task files carry tool code, and tool code is
 * treated as hostile: it may compute on its arguments and return JSON, and must never reach
 * files, processes, the network, storage, the page, or another call's state. What enforces
 * that in each runtime, and the honest limits: docs/security.md.
 *
 * - `createWorkerExecutor()`: the sandbox, for any code a task file or a user brings. Node: a
 *   process under the permission model with a memory cap, a fresh `vm` context per call
 *   (nodeProcess.ts, nodeSandboxSource.ts). Browser: a worker in an opaque-origin frame whose
 *   CSP forbids connections, fresh per call with `isFreshPerCall` (browserSandbox.ts).
 * - `InProcessExecutor`: the project's own stubs (the task generator's), cheap per call; in
 *   Node with a real time limit, but no boundary.
 * - Python tools run in Pyodide (src/envs/ftrl/), boxed the same way.
 */
import type { ToolImplementation } from '../types';
import { formatToolError, type ExecuteOptions, type ToolExecutor, type ToolResult } from './types';

export * from './types';
export { InProcessExecutor, formatToolOutput } from './inProcessExecutor';
export {
  WorkerExecutor,
  createWorkerExecutor,
  type SandboxOptions,
  type ToolCallMessage,
  type WorkerFactory,
  type WorkerHandle,
} from './workerExecutor';
export {
  createNodeProcessFactory,
  probeNetworkCut,
  NODE_SANDBOX_LIMITS,
  type NetworkCut,
  type SandboxLimits,
} from './nodeProcess';
export {
  connectToolSandbox,
  setToolSandboxPort,
  createFrameWorkerFactory,
  TOOL_SANDBOX_PAGE,
  type FrameFactoryOptions,
} from './browserSandbox';
export { MAX_OUTPUT_CHARS } from './runtimeSource';

/**
 * Dispatches by language: JavaScript stubs to one executor, Python (imported FTRL
 * tasks, run by the Pyodide executor of `src/envs/ftrl/`) to another.
 */
export function createLanguageRouter(
  executors: Partial<Record<ToolImplementation['language'], ToolExecutor>>,
): ToolExecutor {
  return {
    execute(
      impl: ToolImplementation,
      toolName: string,
      args: Record<string, unknown>,
      options?: ExecuteOptions,
    ): Promise<ToolResult> {
      const executor = impl && executors[impl.language];
      if (!executor) {
        return Promise.resolve({
          ok: false,
          output: formatToolError(toolName, `no executor for ${String(impl?.language)} tools`),
        });
      }
      return executor.execute(impl, toolName, args, options);
    },
    dispose(): void {
      for (const e of Object.values(executors)) e?.dispose();
    },
  };
}
