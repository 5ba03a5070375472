/**
 * Runs FTRL's Python tool code in a Pyodide worker with a time limit.
 *
 * One worker holds one Pyodide instance, reused across calls (loading takes seconds);
 * each call's code runs in its own namespace (see `pythonRuntime.ts` for the exact
 * observation format; the worker cuts it at MAX_OUTPUT_CHARS). Calls are served one at a
 * time, in order. When a call runs past its time limit, or the worker dies, the worker is
 * terminated, a fresh one starts loading at once, and the call yields FTRL's error
 * observation `an error occured when call NAME: …` — the run goes on. A call after which
 * the worker reports its interpreter changed (`isBroken`: builtins, the runtime, json, ...)
 * keeps its observation, and the worker is replaced the same way before the next call.
 *
 * The worker flavour is injected (`SpawnPyWorker`): Node's `worker_threads` in
 * `pyodideExecutorNode.ts`, a browser module `Worker` in `createBrowserPyodideExecutor`.
 */
import type { Task, ToolCall } from '../types';
import { formatToolError, type PyWorkerRequest, type PyWorkerResponse } from './pythonRuntime';

/** The executor's view of one worker, whatever its flavour. */
export interface PyWorkerPort {
  post(message: PyWorkerRequest): void;
  onMessage(handler: (message: PyWorkerResponse) => void): void;
  /** The worker died (uncaught error, exit). */
  onCrash(handler: (error: Error) => void): void;
  terminate(): void;
}

export type SpawnPyWorker = () => PyWorkerPort;

export interface PyodideExecutorOptions {
  /** Folder (URL or path, ending in '/') holding pyodide.asm.mjs, pyodide.asm.wasm, python_stdlib.zip, pyodide-lock.json. */
  indexURL: string;
  /** Default time limit of one tool call, in ms (the worker's load time is not counted). */
  timeoutMs?: number;
  /** Time limit for loading Pyodide in a fresh worker, in ms. */
  loadTimeoutMs?: number;
}

export interface PythonToolResult {
  /** What the policy sees: the formatted return value, or FTRL's error string. */
  observation: string;
  isError: boolean;
  isTimeout: boolean;
  elapsedMs: number;
}

export const DEFAULT_TOOL_TIMEOUT_MS = 5_000;
export const DEFAULT_LOAD_TIMEOUT_MS = 120_000;

type RequestBody =
  | { type: 'callTool'; source: string; name: string; argumentsJson: string }
  | { type: 'runScript'; source: string; entry: string; input: string };

type Outcome = { kind: 'response'; message: PyWorkerResponse } | { kind: 'timeout' } | { kind: 'crash'; error: Error };
type TimedOutcome = Outcome & { elapsedMs: number };

interface LiveWorker {
  port: PyWorkerPort;
  ready: Promise<number>;
  settle: ((outcome: Outcome) => void) | null;
  isDead: boolean;
  /** Terminates the worker and clears its load timer. */
  dispose: () => void;
}

/** A reply whose worker found its interpreter changed by the call (pyodideWorkerCore.ts). */
function isBrokenReply(message: PyWorkerResponse): boolean {
  return (message as { isBroken?: unknown }).isBroken === true;
}

export class PyodideExecutor {
  private readonly spawn: SpawnPyWorker;
  private readonly indexURL: string;
  private readonly timeoutMs: number;
  private readonly loadTimeoutMs: number;
  private live: LiveWorker | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;
  private isClosed = false;
  /** Workers started after the first one (after a timeout or a crash). */
  respawnCount = 0;

  constructor(spawn: SpawnPyWorker, options: PyodideExecutorOptions) {
    if (!options || typeof options.indexURL !== 'string' || options.indexURL === '') {
      throw new Error('PyodideExecutor: options.indexURL must name the folder of the pyodide package files');
    }
    this.spawn = spawn;
    this.indexURL = options.indexURL;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    this.loadTimeoutMs = options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS;
  }

  /** Starts the worker if needed and resolves with its Pyodide load time in ms. */
  ready(): Promise<number> {
    return this.ensureWorker().ready;
  }

  /**
   * Executes one tool call. `args` is the arguments object, or the raw JSON text the
   * policy wrote (pass the text to keep Python's int/float distinction: `2.0` stays a float).
   */
  callTool(
    source: string,
    name: string,
    args: Record<string, unknown> | string,
    options: { timeoutMs?: number } = {},
  ): Promise<PythonToolResult> {
    const argumentsJson = typeof args === 'string' ? args : JSON.stringify(args ?? {});
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    return this.enqueue(async () => {
      const outcome = await this.request({ type: 'callTool', source, name, argumentsJson }, timeoutMs);
      const elapsedMs = outcome.elapsedMs;
      if (outcome.kind === 'timeout') {
        return {
          observation: formatToolError(name, `timed out after ${timeoutMs} ms`),
          isError: true,
          isTimeout: true,
          elapsedMs,
        };
      }
      if (outcome.kind === 'crash') {
        return {
          observation: formatToolError(name, outcome.error.message),
          isError: true,
          isTimeout: false,
          elapsedMs,
        };
      }
      const message = outcome.message;
      if (message.type !== 'toolResult') throw new Error(`PyodideExecutor: expected toolResult, got ${message.type}`);
      return { observation: message.observation, isError: message.isError, isTimeout: false, elapsedMs };
    });
  }

  /**
   * Runs `entry(input)` of a helper Python script (it sees the runtime's names, e.g.
   * `pact_call_tool`) and resolves with the str it returns; rejects on error or timeout.
   */
  runScript(source: string, entry: string, input: string, options: { timeoutMs?: number } = {}): Promise<string> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    return this.enqueue(async () => {
      const outcome = await this.request({ type: 'runScript', source, entry, input }, timeoutMs);
      if (outcome.kind === 'timeout') throw new Error(`python script ${entry}: timed out after ${timeoutMs} ms`);
      if (outcome.kind === 'crash') throw new Error(`python script ${entry}: worker died: ${outcome.error.message}`);
      const message = outcome.message;
      if (message.type === 'scriptFailed') throw new Error(`python script ${entry}: ${message.message}`);
      if (message.type !== 'scriptResult')
        throw new Error(`PyodideExecutor: expected scriptResult, got ${message.type}`);
      return message.output;
    });
  }

  /** Terminates the worker; later calls reject. */
  close(): void {
    this.isClosed = true;
    this.live?.dispose();
    this.live = null;
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.isClosed) throw new Error('PyodideExecutor: the executor is closed');
      return job();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Sends one request to a loaded worker; the clock starts once the worker is ready. */
  private async request(body: RequestBody, timeoutMs: number): Promise<TimedOutcome> {
    const live = this.ensureWorker();
    await live.ready;
    const id = this.nextId++;
    const t0 = Date.now();
    const outcome = await new Promise<Outcome>((resolve) => {
      const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
      const finish = (o: Outcome): void => {
        clearTimeout(timer);
        live.settle = null;
        resolve(o);
      };
      live.settle = (o) => {
        if (o.kind === 'response' && 'id' in o.message && o.message.id !== id) return; // a stale answer
        finish(o);
      };
      live.port.post({ ...body, id } as PyWorkerRequest);
    });
    // A timeout or a crash, or a tool that changed the shared interpreter (the worker's check
    // after each call, `isBroken`): the next call gets a fresh sandbox.
    if (outcome.kind !== 'response' || isBrokenReply(outcome.message)) this.replaceWorker(live);
    return { ...outcome, elapsedMs: Date.now() - t0 };
  }

  private ensureWorker(): LiveWorker {
    if (this.isClosed) throw new Error('PyodideExecutor: the executor is closed');
    if (!this.live) this.live = this.startWorker();
    else if (this.live.isDead) this.replaceWorker(this.live);
    return this.live as LiveWorker;
  }

  private replaceWorker(dead: LiveWorker): void {
    dead.dispose();
    if (this.live === dead && !this.isClosed) {
      this.respawnCount++;
      this.live = this.startWorker();
    }
  }

  private startWorker(): LiveWorker {
    const port = this.spawn();
    let loadTimer: ReturnType<typeof setTimeout> | undefined;
    const live: LiveWorker = {
      port,
      ready: Promise.resolve(0),
      settle: null,
      isDead: false,
      dispose: () => {
        clearTimeout(loadTimer);
        port.terminate();
      },
    };
    live.ready = new Promise<number>((resolve, reject) => {
      let isLoaded = false;
      const timer = setTimeout(() => {
        if (!isLoaded)
          reject(
            new Error(`PyodideExecutor: Pyodide did not load within ${this.loadTimeoutMs} ms from ${this.indexURL}`),
          );
      }, this.loadTimeoutMs);
      loadTimer = timer;
      port.onMessage((message) => {
        if (message.type === 'ready') {
          isLoaded = true;
          clearTimeout(timer);
          resolve(message.loadMs);
        } else if (message.type === 'loadFailed') {
          clearTimeout(timer);
          reject(new Error(message.message));
        } else {
          live.settle?.({ kind: 'response', message });
        }
      });
      port.onCrash((error) => {
        clearTimeout(timer);
        live.isDead = true;
        if (!isLoaded) reject(new Error(`PyodideExecutor: the worker died while loading Pyodide: ${error.message}`));
        else live.settle?.({ kind: 'crash', error });
      });
    });
    live.ready.catch(() => undefined); // reported to whoever awaits it
    port.post({ type: 'init', indexURL: this.indexURL });
    return live;
  }
}

/**
 * Executes one call of an imported FTRL task: looks up the tool's Python source in
 * `task.implementations`. An unknown tool, or one without Python source, yields FTRL's
 * error observation.
 */
export function callTaskTool(
  executor: PyodideExecutor,
  task: Task,
  call: ToolCall | { name: string; arguments: string },
  options: { timeoutMs?: number } = {},
): Promise<PythonToolResult> {
  const impl = Object.hasOwn(task.implementations, call.name) ? task.implementations[call.name] : undefined; // a tool named "constructor" is not Object's
  if (!impl || impl.language !== 'python') {
    const reason = impl
      ? `tool ${call.name} is not implemented in Python`
      : `no tool named ${call.name} in task ${task.id}`;
    return Promise.resolve({
      observation: formatToolError(call.name, reason),
      isError: true,
      isTimeout: false,
      elapsedMs: 0,
    });
  }
  return executor.callTool(impl.source, call.name, call.arguments, options);
}

/**
 * A browser executor: a module worker bundled by Vite. `indexURL` must serve the pyodide
 * package files (pyodide.asm.mjs, pyodide.asm.wasm, python_stdlib.zip, pyodide-lock.json),
 * e.g. copied from node_modules/pyodide to `public/pyodide/` and passed as
 * `${import.meta.env.BASE_URL}pyodide/`.
 */
export function createBrowserPyodideExecutor(options: PyodideExecutorOptions): PyodideExecutor {
  const spawn: SpawnPyWorker = () => {
    const worker = new Worker(new URL('./pyodide.worker.ts', import.meta.url), { type: 'module' });
    return {
      post: (message) => worker.postMessage(message),
      onMessage: (handler) =>
        worker.addEventListener('message', (event: MessageEvent<PyWorkerResponse>) => handler(event.data)),
      onCrash: (handler) =>
        worker.addEventListener('error', (event: ErrorEvent) => handler(new Error(event.message || 'worker error'))),
      terminate: () => worker.terminate(),
    };
  };
  return new PyodideExecutor(spawn, options);
}
