/**
 * One `ToolExecutor` for tasks whose tools are written in either language: JavaScript
 * implementations (generated tasks) go to the sandbox executor, Python ones (imported FTRL
 * tasks) to Pyodide. The rollout environment (src/envs/rollout.ts) only knows
 * `ToolExecutor.execute(impl, name, args)`, so FTRL tasks run through the same episode loop
 * as generated ones — for evaluation (`pact eval-ftrl --model`) and for training.
 *
 * Pyodide's result maps onto the sandbox's: `{observation, isError}` → `{output, ok: !isError}`;
 * the observation is already FTRL's text (its error wording included), so nothing is rewritten.
 */
import { formatToolError, type ExecuteOptions, type ToolExecutor, type ToolResult } from '../sandbox/types';
import type { ToolImplementation } from '../types';
import type { PyodideExecutor } from './pyodideExecutor';

export interface LanguageExecutors {
  javascript?: ToolExecutor;
  python?: Pick<PyodideExecutor, 'callTool' | 'close'>;
}

export class LanguageRoutingExecutor implements ToolExecutor {
  /** Python calls so far: answered with an error observation, stopped at the time limit. */
  readonly pythonCounts = { calls: 0, errors: 0, timeouts: 0 };

  constructor(private readonly executors: LanguageExecutors) {}

  async execute(
    impl: ToolImplementation,
    toolName: string,
    args: Record<string, unknown>,
    options: ExecuteOptions = {},
  ): Promise<ToolResult> {
    if (impl.language === 'python') {
      const py = this.executors.python;
      if (!py)
        return {
          ok: false,
          output: formatToolError(toolName, 'Python tools need the Pyodide executor, and none was given'),
        };
      try {
        this.pythonCounts.calls++;
        const r = await py.callTool(
          impl.source,
          toolName,
          args,
          options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {},
        );
        if (r.isError) this.pythonCounts.errors++;
        if (r.isTimeout) this.pythonCounts.timeouts++;
        return { ok: !r.isError, output: r.observation };
      } catch (e) {
        this.pythonCounts.errors++;
        // callTool resolves on tool errors and timeouts; it rejects only when the executor is closed.
        return { ok: false, output: formatToolError(toolName, e instanceof Error ? e.message : String(e)) };
      }
    }
    const js = this.executors.javascript;
    if (!js)
      return {
        ok: false,
        output: formatToolError(toolName, 'JavaScript tools need the sandbox executor, and none was given'),
      };
    return js.execute(impl, toolName, args, options);
  }

  dispose(): void {
    this.executors.javascript?.dispose();
    this.executors.python?.close();
  }
}
