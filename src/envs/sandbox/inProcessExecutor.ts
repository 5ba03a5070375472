/**
 * Runs JavaScript stubs in the calling process, for the project's own stubs (the task
 * generator's) in training and tests: no process or worker per call, so calls cost little.
 * It is NOT a boundary for task-file code (docs/security.md): use `createWorkerExecutor`.
 *
 * In Node the stubs run in one `vm` context of their own with a real time limit, promise jobs
 * included (CONTEXT_RUNNER_SOURCE, the runner the sandbox process uses, there with a fresh
 * context per call), so a stub that loops forever costs one error observation. In a browser
 * there is no such context: the stub runs in this thread, and only a promise that never
 * settles is cut at the time limit.
 */
import { DEFAULT_TIMEOUT_MS, formatToolError, type ExecuteOptions, type ToolExecutor, type ToolResult } from './types';
import { STUB_RUNTIME_SOURCE } from './runtimeSource';
import { CONTEXT_RUNNER_SOURCE } from './nodeSandboxSource';
import type { ToolImplementation } from '../types';

type RunStub = (source: string, args: unknown) => Promise<ToolResult>;
interface ContextRunner {
  run(source: string, argsJson: string, timeoutMs: number): ToolResult;
}

let runtime: { runStub: RunStub; formatToolOutput: (value: unknown) => string } | null = null;
let contextRunner: Promise<ContextRunner | null> | null = null;

function loadRuntime(): { runStub: RunStub; formatToolOutput: (value: unknown) => string } {
  runtime ??= new Function(
    `${STUB_RUNTIME_SOURCE}\nreturn { runStub: runStub, formatToolOutput: formatToolOutput };`,
  )() as {
    runStub: RunStub;
    formatToolOutput: (value: unknown) => string;
  };
  return runtime;
}

/** Node's `vm` runner, or null in a browser. */
function loadContextRunner(): Promise<ContextRunner | null> {
  contextRunner ??= (async () => {
    const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';
    if (!isNode) return null;
    // Variable specifiers keep bundlers from pulling Node builtins into the browser build.
    const [vmName, utilName] = ['node:vm', 'node:util'];
    const vm = (await import(/* @vite-ignore */ vmName)) as unknown;
    const util = (await import(/* @vite-ignore */ utilName)) as { types: { isProxy(x: unknown): boolean } };
    const create = new Function(
      'vm',
      'isProxy',
      `${CONTEXT_RUNNER_SOURCE}\nreturn createContextRunner(vm, isProxy, { isFreshPerCall: false });`,
    );
    return create(vm, util.types.isProxy) as ContextRunner;
  })();
  return contextRunner;
}

/** Formats a tool's return value as its observation text (FTRL/Python `json.dumps` style). */
export function formatToolOutput(value: unknown): string {
  return loadRuntime().formatToolOutput(value);
}

export class InProcessExecutor implements ToolExecutor {
  async execute(
    impl: ToolImplementation,
    toolName: string,
    args: Record<string, unknown>,
    options: ExecuteOptions = {},
  ): Promise<ToolResult> {
    if (impl?.language !== 'javascript') {
      return { ok: false, output: formatToolError(toolName, `no executor for ${String(impl?.language)} tools here`) };
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const runner = await loadContextRunner();
    const result = runner
      ? this.runInContext(runner, impl.source, args, timeoutMs)
      : await this.runInThread(impl.source, args, timeoutMs);
    return result.ok ? result : { ok: false, output: formatToolError(toolName, result.output) };
  }

  private runInContext(
    runner: ContextRunner,
    source: string,
    args: Record<string, unknown>,
    timeoutMs: number,
  ): ToolResult {
    let argsJson: string;
    try {
      argsJson = JSON.stringify(args ?? {});
    } catch (e) {
      return { ok: false, output: `the arguments are not JSON: ${e instanceof Error ? e.message : String(e)}` };
    }
    return runner.run(source, argsJson, timeoutMs);
  }

  private async runInThread(source: string, args: Record<string, unknown>, timeoutMs: number): Promise<ToolResult> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<ToolResult>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, output: `timed out after ${timeoutMs} ms` }), timeoutMs);
    });
    const result = await Promise.race([loadRuntime().runStub(source, args), timeout]);
    clearTimeout(timer);
    return result;
  }

  dispose(): void {}
}
