/**
 * One tool call answered exactly as the app's environment answers it (envs/rollout.ts
 * RolloutEnv.step): a call that fails the task's schemas gets the schema error, a tool
 * without an implementation says so, else the stub's output through the executor.
 */
import { getOwn } from '../../core/untrustedJson';
import { InProcessExecutor } from '../../envs/sandbox/inProcessExecutor';
import { formatToolError, type ToolExecutor } from '../../envs/sandbox/types';
import { checkToolCall } from '../../envs/toolCallParser';
import type { ToolImplementation, ToolSchema } from '../../envs/types';

export interface ToolRequest {
  name: string;
  arguments: Record<string, unknown>;
  tools: ToolSchema[];
  implementations: Record<string, ToolImplementation>;
}

/** The app's per-call time limit (RolloutEnv's default). */
export const TOOL_TIMEOUT_MS = 2000;

let shared: ToolExecutor | null = null;

export async function answerToolCall(
  request: ToolRequest,
  executor: ToolExecutor = (shared ??= new InProcessExecutor()),
): Promise<{ ok: boolean; output: string }> {
  const call = { name: request.name, arguments: request.arguments };
  const problem = checkToolCall(call, request.tools);
  if (problem) return { ok: false, output: formatToolError(call.name, problem) };
  const impl = getOwn(request.implementations, call.name);
  if (!impl) return { ok: false, output: formatToolError(call.name, 'the tool has no implementation') };
  const r = await executor.execute(impl, call.name, call.arguments, { timeoutMs: TOOL_TIMEOUT_MS });
  return { ok: r.ok, output: r.output };
}
