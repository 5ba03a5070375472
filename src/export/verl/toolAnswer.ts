/**
 * One tool call answered exactly as the app's environment answers it (envs/rollout.ts
 * RolloutEnv.step): a call that fails the task's schemas gets the schema error, a tool
 * without an implementation says so, else the tool's output through the executor: a
 * JavaScript stub in the app's InProcessExecutor, a Python tool (FTRL tasks) in a fresh
 * `python3 -I` process running the app's Python runtime (pythonToolProcess.ts).
 */
import { getOwn } from '../../core/untrustedJson';
import { InProcessExecutor } from '../../envs/sandbox/inProcessExecutor';
import { formatToolError, type ToolExecutor } from '../../envs/sandbox/types';
import { checkToolCall } from '../../envs/toolCallParser';
import type { ToolImplementation, ToolSchema } from '../../envs/types';
import { PythonProcessExecutor } from './pythonToolProcess';

export interface ToolRequest {
  name: string;
  arguments: Record<string, unknown>;
  tools: ToolSchema[];
  implementations: Record<string, ToolImplementation>;
  /** The call's time limit (the row's extra_info.tool_timeout_ms); default TOOL_TIMEOUT_MS. */
  timeout_ms?: number;
}

/**
 * The app's per-call time limit for the generated tasks' stubs (the sandboxes' DEFAULT_TIMEOUT_MS): the
 * server's when a request names none. rows.ts writes the same (STUB_TOOL_TIMEOUT_MS) into the
 * generated rows; not imported from there, which would bundle the row code into the server.
 */
export const TOOL_TIMEOUT_MS = 2000;

/** The executor of the tool server: JavaScript stubs in process, Python tools each in its own `python` process. */
export function createToolServerExecutor(python: string): ToolExecutor {
  const javascript = new InProcessExecutor();
  const py = new PythonProcessExecutor(python, TOOL_TIMEOUT_MS);
  return {
    execute: (impl, name, args, options) =>
      (impl.language === 'python' ? py : javascript).execute(impl, name, args, options),
    dispose: () => {
      javascript.dispose();
      py.dispose();
    },
  };
}

let shared: ToolExecutor | null = null;

export async function answerToolCall(
  request: ToolRequest,
  executor: ToolExecutor = (shared ??= createToolServerExecutor('python3')),
): Promise<{ ok: boolean; output: string }> {
  const call = { name: request.name, arguments: request.arguments };
  const problem = checkToolCall(call, request.tools);
  if (problem) return { ok: false, output: formatToolError(call.name, problem) };
  const impl = getOwn(request.implementations, call.name);
  if (!impl) return { ok: false, output: formatToolError(call.name, 'the tool has no implementation') };
  const timeoutMs = request.timeout_ms ?? TOOL_TIMEOUT_MS;
  const r = await executor.execute(impl, call.name, call.arguments, { timeoutMs });
  return { ok: r.ok, output: r.output };
}
