/**
 * Runs JavaScript tool stubs in a sandbox with a time limit (docs/security.md). One executor
 * over a swappable WorkerFactory: in Node a sandbox process (`nodeProcess.ts`: permission
 * model, memory cap, a fresh context per call), in the browser a worker in an opaque-origin
 * frame under a CSP that forbids connections (`browserSandbox.ts`), fresh per call for task
 * files.
 *
 * Calls run one at a time, in order; arguments cross as JSON text, results as a string. A
 * call past its time limit, or a sandbox that dies (out of memory), yields an error
 * observation; a sandbox that did not answer by then is terminated and replaced.
 */
import {
  DEFAULT_TIMEOUT_MS,
  formatToolError,
  type ExecuteOptions,
  type ToolExecutor,
  type ToolResult,
  type WorkerFactory,
  type WorkerHandle,
} from './types';
import type { ToolImplementation } from '../types';

/** The few things the executor needs from a sandbox, whatever its kind. */
export type { WorkerFactory, WorkerHandle } from './types';

/** What the executor sends: the arguments as JSON text, parsed inside the sandbox. */
export interface ToolCallMessage {
  id: number;
  source: string;
  argsJson: string;
  timeoutMs: number;
}

interface Reply {
  id: number;
  ok: boolean;
  output: string;
}

function isReply(data: unknown): data is Reply {
  return (
    typeof data === 'object' &&
    data !== null &&
    typeof (data as Reply).id === 'number' &&
    typeof (data as Reply).output === 'string'
  );
}

export class WorkerExecutor implements ToolExecutor {
  private worker: WorkerHandle | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;
  private current: { id: number; settle: (r: { ok: boolean; output: string }) => void } | null = null;
  /** How many sandboxes were started so far (a respawn after a timeout or a single-use call adds one). */
  spawnCount = 0;

  constructor(private readonly createWorker: WorkerFactory) {}

  execute(
    impl: ToolImplementation,
    toolName: string,
    args: Record<string, unknown>,
    options: ExecuteOptions = {},
  ): Promise<ToolResult> {
    const run = () => this.runOne(impl, toolName, args, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const result = this.queue.then(run, run);
    this.queue = result;
    return result;
  }

  dispose(): void {
    this.killWorker();
  }

  private async ensureWorker(): Promise<WorkerHandle> {
    if (this.worker) return this.worker;
    const worker = await this.createWorker();
    this.spawnCount++;
    worker.listen(
      (data) => {
        if (this.worker !== worker || !this.current || !isReply(data) || data.id !== this.current.id) return;
        this.current.settle({ ok: data.ok === true, output: data.output });
      },
      (reason) => {
        if (this.worker !== worker) return;
        this.killWorker();
        this.current?.settle({ ok: false, output: `the tool sandbox stopped (${reason})` });
      },
    );
    this.worker = worker;
    return worker;
  }

  private killWorker(): void {
    const worker = this.worker;
    this.worker = null;
    if (worker) {
      try {
        worker.terminate();
      } catch {
        // already gone
      }
    }
  }

  private async runOne(
    impl: ToolImplementation,
    toolName: string,
    args: Record<string, unknown>,
    timeoutMs: number,
  ): Promise<ToolResult> {
    if (impl?.language !== 'javascript') {
      return { ok: false, output: formatToolError(toolName, `no executor for ${String(impl?.language)} tools here`) };
    }
    if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
      return { ok: false, output: formatToolError(toolName, `timeoutMs must be a positive number, got ${timeoutMs}`) };
    }
    let argsJson: string;
    try {
      argsJson = JSON.stringify(args ?? {});
    } catch (e) {
      return {
        ok: false,
        output: formatToolError(toolName, `the arguments are not JSON: ${e instanceof Error ? e.message : String(e)}`),
      };
    }
    const id = this.nextId++;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let worker: WorkerHandle | null = null;
    const raw = await new Promise<{ ok: boolean; output: string }>((resolve) => {
      let settled = false;
      const settle = (r: { ok: boolean; output: string }) => {
        if (settled) return;
        settled = true;
        resolve(r);
      };
      this.current = { id, settle };
      this.ensureWorker()
        .then(
          (w) => {
            worker = w;
            if (settled) return;
            timer = setTimeout(
              () => {
                this.killWorker();
                settle({ ok: false, output: `timed out after ${timeoutMs} ms` });
              },
              timeoutMs + (w.graceMs ?? 0),
            );
            const message: ToolCallMessage = { id, source: impl.source, argsJson, timeoutMs };
            w.post(message);
          },
          (e: unknown) =>
            settle({
              ok: false,
              output: `could not start the tool sandbox: ${e instanceof Error ? e.message : String(e)}`,
            }),
        )
        .catch((e: unknown) =>
          settle({
            ok: false,
            output: `could not send the call to the tool sandbox: ${e instanceof Error ? e.message : String(e)}`,
          }),
        );
    });
    clearTimeout(timer);
    this.current = null;
    if ((worker as WorkerHandle | null)?.isSingleUse && this.worker === worker) this.killWorker();
    return raw.ok ? raw : { ok: false, output: formatToolError(toolName, raw.output) };
  }
}

export interface SandboxOptions {
  /**
   * Browser: a fresh worker per call, for task-file code (no call sees what another left in
   * the worker's realm; a worker start per call). Node always runs each call in a fresh context.
   */
  isFreshPerCall?: boolean;
}

/**
 * A worker executor for the current platform: in Node a sandbox process; in the browser a
 * worker in the tool sandbox frame (a page opens the frame itself; a worker uses the port the
 * page gave it, see browserSandbox.ts).
 */
export async function createWorkerExecutor(options: SandboxOptions = {}): Promise<WorkerExecutor> {
  const isNode =
    typeof process !== 'undefined' && typeof process.versions?.node === 'string' && typeof window === 'undefined';
  if (isNode) {
    const { createNodeProcessFactory } = await import('./nodeProcess');
    return new WorkerExecutor(createNodeProcessFactory());
  }
  const { createFrameWorkerFactory } = await import('./browserSandbox');
  return new WorkerExecutor(createFrameWorkerFactory({ isFreshPerCall: options.isFreshPerCall }));
}
