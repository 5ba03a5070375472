/**
 * Runs JavaScript tool stubs in a worker with a time limit (issue 4, "Tool code runs
 * in a worker with a time limit"). One interface for browser `Worker` and Node
 * `worker_threads`: both run the same script (`WORKER_SOURCE`), created from a string
 * (a Blob URL in the browser, `eval: true` in Node), so no bundler configuration is
 * needed.
 *
 * Calls run one at a time, in order. A call that exceeds its time limit (a stub that
 * loops forever), or a worker that dies (out of memory), yields an error observation;
 * the worker is terminated and a fresh one is spawned for the next call.
 */
import { DEFAULT_TIMEOUT_MS, formatToolError, type ExecuteOptions, type ToolExecutor, type ToolResult } from './types';
import { WORKER_SOURCE } from './runtimeSource';
import type { ToolImplementation } from '../types';

/** The few things the executor needs from a worker, whatever its kind. */
export interface WorkerHandle {
  post(message: unknown): void;
  /** Registers the handlers; `onFailure` is called once if the worker errors or exits. */
  listen(onMessage: (data: unknown) => void, onFailure: (reason: string) => void): void;
  terminate(): void;
}

export type WorkerFactory = () => WorkerHandle;

interface Reply {
  id: number;
  ok: boolean;
  output: string;
}

function isReply(data: unknown): data is Reply {
  return typeof data === 'object' && data !== null && typeof (data as Reply).id === 'number' && typeof (data as Reply).output === 'string';
}

export class WorkerExecutor implements ToolExecutor {
  private worker: WorkerHandle | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;
  private current: { id: number; settle: (r: { ok: boolean; output: string }) => void } | null = null;
  /** How many workers were spawned so far (a respawn after a timeout adds one). */
  spawnCount = 0;

  constructor(private readonly createWorker: WorkerFactory) {}

  execute(impl: ToolImplementation, toolName: string, args: Record<string, unknown>, options: ExecuteOptions = {}): Promise<ToolResult> {
    const run = () => this.runOne(impl, toolName, args, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const result = this.queue.then(run, run);
    this.queue = result;
    return result;
  }

  dispose(): void {
    this.killWorker();
  }

  private ensureWorker(): WorkerHandle {
    if (this.worker) return this.worker;
    const worker = this.createWorker();
    this.spawnCount++;
    worker.listen(
      (data) => {
        if (this.worker !== worker || !this.current || !isReply(data) || data.id !== this.current.id) return;
        this.current.settle({ ok: data.ok === true, output: data.output });
      },
      (reason) => {
        if (this.worker !== worker) return;
        this.killWorker();
        this.current?.settle({ ok: false, output: `the tool worker stopped (${reason})` });
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

  private async runOne(impl: ToolImplementation, toolName: string, args: Record<string, unknown>, timeoutMs: number): Promise<ToolResult> {
    if (impl?.language !== 'javascript') {
      return { ok: false, output: formatToolError(toolName, `no executor for ${String(impl?.language)} tools here`) };
    }
    if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
      return { ok: false, output: formatToolError(toolName, `timeoutMs must be a positive number, got ${timeoutMs}`) };
    }
    const id = this.nextId++;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const raw = await new Promise<{ ok: boolean; output: string }>((resolve) => {
      let settled = false;
      const settle = (r: { ok: boolean; output: string }) => {
        if (settled) return;
        settled = true;
        resolve(r);
      };
      this.current = { id, settle };
      timer = setTimeout(() => {
        this.killWorker();
        settle({ ok: false, output: `timed out after ${timeoutMs} ms` });
      }, timeoutMs);
      try {
        this.ensureWorker().post({ id, source: impl.source, args });
      } catch (e) {
        settle({ ok: false, output: `could not send the call to the tool worker: ${e instanceof Error ? e.message : String(e)}` });
      }
    });
    clearTimeout(timer);
    this.current = null;
    return raw.ok ? raw : { ok: false, output: formatToolError(toolName, raw.output) };
  }
}

/** A browser (or Deno) classic worker running WORKER_SOURCE from a Blob URL. */
export function createBrowserWorkerFactory(): WorkerFactory {
  return () => {
    const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
    const worker = new Worker(url);
    return {
      post: (message) => worker.postMessage(message),
      listen: (onMessage, onFailure) => {
        worker.onmessage = (e: MessageEvent) => onMessage(e.data);
        worker.onerror = (e: ErrorEvent) => {
          e.preventDefault();
          onFailure(e.message || 'worker error');
        };
        worker.onmessageerror = () => onFailure('a message could not be read');
      },
      terminate: () => {
        worker.terminate();
        URL.revokeObjectURL(url);
      },
    };
  };
}

interface NodeWorkerLike {
  postMessage(message: unknown): void;
  on(event: string, handler: (value: unknown) => void): void;
  terminate(): Promise<number>;
  unref(): void;
}

/** Heap limits of the Node worker, so a stub that allocates without bound dies alone. */
export const NODE_WORKER_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };

/** A Node `worker_threads` eval worker running WORKER_SOURCE. */
export async function createNodeWorkerFactory(): Promise<WorkerFactory> {
  // A variable specifier keeps bundlers from pulling a Node builtin into the browser build.
  const specifier = 'node:worker_threads';
  const threads = (await import(/* @vite-ignore */ specifier)) as {
    Worker: new (source: string, options: Record<string, unknown>) => NodeWorkerLike;
  };
  return () => {
    const worker = new threads.Worker(WORKER_SOURCE, { eval: true, resourceLimits: NODE_WORKER_LIMITS });
    // The worker alone never keeps the process alive; a pending call's timer does.
    worker.unref();
    return {
      post: (message) => worker.postMessage(message),
      listen: (onMessage, onFailure) => {
        worker.on('message', onMessage);
        worker.on('error', (e) => onFailure(e instanceof Error ? e.message : String(e)));
        worker.on('exit', (code) => onFailure(`exit code ${String(code)}`));
      },
      terminate: () => {
        void worker.terminate();
      },
    };
  };
}

/** A worker executor for the current platform: a Web Worker where one exists, else Node's worker_threads. */
export async function createWorkerExecutor(): Promise<WorkerExecutor> {
  const hasWebWorker = typeof Worker === 'function' && typeof Blob === 'function' && typeof URL?.createObjectURL === 'function';
  if (hasWebWorker) return new WorkerExecutor(createBrowserWorkerFactory());
  const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';
  if (isNode) return new WorkerExecutor(await createNodeWorkerFactory());
  throw new Error('createWorkerExecutor: this platform has neither Web Workers nor Node worker_threads');
}
