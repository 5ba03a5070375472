/** The one interface every tool executor implements (`schema/execute`). */
import type { ToolImplementation } from '../types';

export interface ToolResult {
  /** False when the stub threw, timed out, crashed, or could not run. */
  ok: boolean;
  /** The observation text: the formatted output, or `an error occured when call NAME: MESSAGE`. */
  output: string;
}

export interface ExecuteOptions {
  /** Wall-clock limit for one call, in milliseconds. Default DEFAULT_TIMEOUT_MS. */
  timeoutMs?: number;
}

export interface ToolExecutor {
  /** Runs one tool call. Never rejects: every failure is a `{ok: false, output}` result. */
  execute(
    impl: ToolImplementation,
    toolName: string,
    args: Record<string, unknown>,
    options?: ExecuteOptions,
  ): Promise<ToolResult>;
  /** Frees the worker(s), if any. The executor may be used again afterwards (it respawns). */
  dispose(): void;
}

export const DEFAULT_TIMEOUT_MS = 2000;

/** The error observation FTRL's evaluation writes (its spelling "occured" kept on purpose). */
export function formatToolError(toolName: string, message: string): string {
  return `an error occured when call ${toolName}: ${message}`;
}

/** One sandbox worker (a Node process, or a browser worker in the sandbox frame), as the executor drives it. */
export interface WorkerHandle {
  post(message: unknown): void;
  /** Registers the handlers; `onFailure` is called once if the worker errors or exits. */
  listen(onMessage: (data: unknown) => void, onFailure: (reason: string) => void): void;
  terminate(): void;
  /** Extra ms the executor waits past a call's limit, for a sandbox that stops calls itself. */
  graceMs?: number;
  /** Terminated after one call (a browser worker's realm cannot be reset). */
  isSingleUse?: boolean;
}

export type WorkerFactory = () => WorkerHandle | Promise<WorkerHandle>;
