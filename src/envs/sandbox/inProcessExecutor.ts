/**
 * Runs JavaScript stubs in the calling thread, for fast unit tests and for trusted
 * stubs. It has NO protection against a stub that loops forever (a synchronous loop
 * blocks the thread); only a never-settling promise is cut by the time limit. Use the
 * worker executor (`createWorkerExecutor`) for anything a policy or a user controls.
 */
import { DEFAULT_TIMEOUT_MS, formatToolError, type ExecuteOptions, type ToolExecutor, type ToolResult } from './types';
import { STUB_RUNTIME_SOURCE } from './runtimeSource';
import type { ToolImplementation } from '../types';

type RunStub = (source: string, args: unknown) => Promise<ToolResult>;

let runtime: { runStub: RunStub; formatToolOutput: (value: unknown) => string } | null = null;

function loadRuntime(): { runStub: RunStub; formatToolOutput: (value: unknown) => string } {
  runtime ??= new Function(`${STUB_RUNTIME_SOURCE}\nreturn { runStub: runStub, formatToolOutput: formatToolOutput };`)() as {
    runStub: RunStub;
    formatToolOutput: (value: unknown) => string;
  };
  return runtime;
}

/** Formats a tool's return value as its observation text (FTRL/Python `json.dumps` style). */
export function formatToolOutput(value: unknown): string {
  return loadRuntime().formatToolOutput(value);
}

export class InProcessExecutor implements ToolExecutor {
  async execute(impl: ToolImplementation, toolName: string, args: Record<string, unknown>, options: ExecuteOptions = {}): Promise<ToolResult> {
    if (impl?.language !== 'javascript') {
      return { ok: false, output: formatToolError(toolName, `no executor for ${String(impl?.language)} tools here`) };
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<ToolResult>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, output: `timed out after ${timeoutMs} ms` }), timeoutMs);
    });
    const result = await Promise.race([loadRuntime().runStub(impl.source, args), timeout]);
    clearTimeout(timer);
    return result.ok ? result : { ok: false, output: formatToolError(toolName, result.output) };
  }

  dispose(): void {}
}
