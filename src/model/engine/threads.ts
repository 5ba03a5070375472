/**
 * Worker threads for the engine: each instantiates the kernels on the runtime's shared
 * memory and runs tasks the calling thread posts in a shared table. A task is a short
 * sequence of kernel calls; tasks write disjoint memory, so who runs which does not change
 * a single bit of the result (tested: any thread count gives the same numbers). The caller
 * runs tasks too and blocks (Atomics.wait: Node, and browser workers, not a page's main
 * thread) until every worker has finished the batch.
 * A task may be long: a decode step on several threads is one task per slice of slots, each
 * the slice's whole forward (decode.ts), a few thousand slots of the table.
 * Node: worker_threads; browser: module-less Workers from a Blob, which need
 * cross-origin isolation for SharedArrayBuffer.
 */

/** Kernel names a task may call (an index into this list travels in the table). */
export const TASK_KERNELS = [
  'gemm',
  'gemmTN',
  'attnFwd',
  'attnBwd',
  'rmsnormFwd',
  'swigluFwd',
  'swigluBwd',
  'lmHeadRows',
  'lmHeadGradRows',
  'transpose',
  'rope',
  'axpy',
  'embedFwd',
  'gemmPacked',
  'attnDecode',
  'sampleRows',
] as const;
export type TaskKernel = (typeof TASK_KERNELS)[number];
/** One kernel call: the kernel and its (i32 or f32) arguments. */
export type KernelCall = [TaskKernel, ...number[]];

/**
 * f(a[p], …, a[p + n − 1]) without building an argument array, for the arities of the task
 * kernels (any other n takes the slow path). Self-contained: the worker's source embeds its text.
 */
export function invoke(f: (...args: number[]) => void, a: ArrayLike<unknown>, p: number, n: number): void {
  const x = a as ArrayLike<number>;
  switch (n) {
    case 4:
      f(x[p], x[p + 1], x[p + 2], x[p + 3]);
      return;
    case 5:
      f(x[p], x[p + 1], x[p + 2], x[p + 3], x[p + 4]);
      return;
    case 6:
      f(x[p], x[p + 1], x[p + 2], x[p + 3], x[p + 4], x[p + 5]);
      return;
    case 7:
      f(x[p], x[p + 1], x[p + 2], x[p + 3], x[p + 4], x[p + 5], x[p + 6]);
      return;
    case 9:
      f(x[p], x[p + 1], x[p + 2], x[p + 3], x[p + 4], x[p + 5], x[p + 6], x[p + 7], x[p + 8]);
      return;
    case 10:
      f(x[p], x[p + 1], x[p + 2], x[p + 3], x[p + 4], x[p + 5], x[p + 6], x[p + 7], x[p + 8], x[p + 9]);
      return;
    case 11:
      f(x[p], x[p + 1], x[p + 2], x[p + 3], x[p + 4], x[p + 5], x[p + 6], x[p + 7], x[p + 8], x[p + 9], x[p + 10]);
      return;
    case 14:
      f(
        x[p],
        x[p + 1],
        x[p + 2],
        x[p + 3],
        x[p + 4],
        x[p + 5],
        x[p + 6],
        x[p + 7],
        x[p + 8],
        x[p + 9],
        x[p + 10],
        x[p + 11],
        x[p + 12],
        x[p + 13],
      );
      return;
    case 18:
      f(
        x[p],
        x[p + 1],
        x[p + 2],
        x[p + 3],
        x[p + 4],
        x[p + 5],
        x[p + 6],
        x[p + 7],
        x[p + 8],
        x[p + 9],
        x[p + 10],
        x[p + 11],
        x[p + 12],
        x[p + 13],
        x[p + 14],
        x[p + 15],
        x[p + 16],
        x[p + 17],
      );
      return;
    case 26:
      f(
        x[p],
        x[p + 1],
        x[p + 2],
        x[p + 3],
        x[p + 4],
        x[p + 5],
        x[p + 6],
        x[p + 7],
        x[p + 8],
        x[p + 9],
        x[p + 10],
        x[p + 11],
        x[p + 12],
        x[p + 13],
        x[p + 14],
        x[p + 15],
        x[p + 16],
        x[p + 17],
        x[p + 18],
        x[p + 19],
        x[p + 20],
        x[p + 21],
        x[p + 22],
        x[p + 23],
        x[p + 24],
        x[p + 25],
      );
      return;
    default:
      f(...Array.prototype.slice.call(x, p, p + n));
  }
}

/** Runs one task's calls here, on kernels `k` (the exports by name). */
export function runCalls(k: Readonly<Record<string, (...args: number[]) => void>>, calls: readonly KernelCall[]): void {
  for (const call of calls) invoke(k[call[0]], call, 1, call.length - 1);
}

/** Each task kernel's index in TASK_KERNELS (its number in the task table). */
const KERNEL_INDEX = Object.fromEntries(TASK_KERNELS.map((name, i) => [name, i])) as Record<TaskKernel, number>;

// The shared table (float64): MAX_TASKS start offsets, then the tasks one after another, each
// [calls, (kernel, nArgs, args…)…]. A batch holds as many tasks as fit; a task too long for the
// whole table (none the engine builds: decodeSlices.test.ts holds a qwen3-nano decode step to
// it) runs on the calling thread alone.
const MAX_TASKS = 4096;
const BODY_SLOTS = MAX_TASKS * 96;
/** Float64 slots of the task table that one batch's tasks share (taskSlots each). */
export const TASK_TABLE_SLOTS = BODY_SLOTS;

/** Slots of the task table that a task takes: its call count, then each call's kernel, arity and arguments. */
export function taskSlots(task: readonly KernelCall[]): number {
  let n = 1;
  for (const call of task) n += 1 + call.length;
  return n;
}
// Control words (Int32).
const GEN = 0;
const NEXT = 1;
const COUNT = 2;
const FINISHED = 3;
const STOP = 4;

/** The worker's whole program, as text (it runs without a module loader). */
const WORKER_SOURCE = `
const invoke = (${invoke.toString()});
const start = (data, post) => {
  const { module, memory, ctl: ctlBuffer, tasks: taskBuffer, names } = data;
  const instance = new WebAssembly.Instance(module, { env: { memory, abort() { throw new Error('engine kernel abort'); } } });
  const fns = names.map((n) => instance.exports[n]);
  const ctl = new Int32Array(ctlBuffer);
  const tasks = new Float64Array(taskBuffer);
  // The generation is read before 'ready': a batch posted as soon as the caller hears it must
  // find this thread waiting for a newer one, not for the one after it.
  let seen = Atomics.load(ctl, ${GEN});
  post('ready');
  for (;;) {
    Atomics.wait(ctl, ${GEN}, seen);
    seen = Atomics.load(ctl, ${GEN});
    if (Atomics.load(ctl, ${STOP})) break;
    const count = Atomics.load(ctl, ${COUNT});
    for (let t = Atomics.add(ctl, ${NEXT}, 1); t < count; t = Atomics.add(ctl, ${NEXT}, 1)) {
      let p = tasks[t];
      const calls = tasks[p++];
      for (let c = 0; c < calls; c++) {
        const f = fns[tasks[p++]];
        const n = tasks[p++];
        // One call per arity, its arguments read in place (no array a call: a decode step
        // makes hundreds, and their garbage cost both threads collections).
        invoke(f, tasks, p, n);
        p += n;
      }
    }
    Atomics.add(ctl, ${FINISHED}, 1);
    Atomics.notify(ctl, ${FINISHED});
  }
};
if (typeof self !== 'undefined' && typeof self.postMessage === 'function' && typeof require === 'undefined') {
  self.onmessage = (e) => start(e.data, (m) => self.postMessage(m));
} else {
  const { parentPort, workerData } = require('node:worker_threads');
  start(workerData, (m) => parentPort.postMessage(m));
}
`;

interface WorkerLike {
  terminate(): unknown;
}

export class ThreadPool {
  private readonly ctl: Int32Array;
  private readonly tasks: Float64Array;
  private readonly workers: WorkerLike[] = [];
  private readyCount = 0;
  private readonly kernels: Readonly<Record<string, (...args: number[]) => void>>;

  private constructor(
    readonly size: number,
    exports: Record<string, unknown>,
  ) {
    this.ctl = new Int32Array(new SharedArrayBuffer(64));
    this.tasks = new Float64Array(new SharedArrayBuffer((MAX_TASKS + BODY_SLOTS) * 8));
    this.kernels = exports as Record<string, (...args: number[]) => void>;
  }

  /** Starts `threads − 1` workers beside the calling thread; they take tasks once they are up. */
  static async start(
    threads: number,
    module: WebAssembly.Module,
    memory: WebAssembly.Memory,
    exports: Record<string, unknown>,
  ): Promise<ThreadPool> {
    const pool = new ThreadPool(threads, exports);
    const data = { module, memory, ctl: pool.ctl.buffer, tasks: pool.tasks.buffer, names: [...TASK_KERNELS] };
    const ready: Promise<void>[] = [];
    for (let i = 0; i < threads - 1; i++) {
      if (typeof process !== 'undefined' && process.versions?.node) {
        const specifier = 'node:worker_threads'; // not bundled for the browser
        const { Worker } = (await import(/* @vite-ignore */ specifier)) as typeof import('node:worker_threads');
        const w = new Worker(WORKER_SOURCE, { eval: true, workerData: data });
        w.unref();
        pool.workers.push(w);
        ready.push(
          new Promise((resolve, reject) => {
            w.once('message', () => resolve());
            w.once('error', reject);
          }),
        );
      } else {
        const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
        const w = new Worker(url);
        pool.workers.push(w);
        ready.push(
          new Promise((resolve, reject) => {
            w.onmessage = () => resolve();
            w.onerror = (e) => reject(new Error(`engine thread failed: ${e.message}`));
          }),
        );
        w.postMessage(data);
      }
    }
    await Promise.all(ready);
    pool.readyCount = pool.workers.length;
    return pool;
  }

  /** Runs every task (each a sequence of calls) across the threads; returns when all are done. */
  run(tasks: readonly (readonly KernelCall[])[]): void {
    if (tasks.length === 0) return;
    if (tasks.length === 1 || this.readyCount === 0) {
      for (const task of tasks) this.runHere(task);
      return;
    }
    let batch: (readonly KernelCall[])[] = [];
    let used = 0;
    for (const task of tasks) {
      const size = taskSlots(task);
      if (size > BODY_SLOTS) {
        // Too long for the table: run what is queued, then this task here (same bits either way).
        if (batch.length) this.runBatch(batch);
        batch = [];
        used = 0;
        this.runHere(task);
        continue;
      }
      if (batch.length === MAX_TASKS || used + size > BODY_SLOTS) {
        this.runBatch(batch);
        batch = [];
        used = 0;
      }
      batch.push(task);
      used += size;
    }
    if (batch.length) this.runBatch(batch);
  }

  /** Runs one task's calls on the calling thread. */
  private runHere(task: readonly KernelCall[]): void {
    runCalls(this.kernels, task);
  }

  /**
   * Posts `tasks` to the worker threads, runs `local` on the calling thread meanwhile, then any
   * posted task no worker has taken yet, and returns when all are done (also when `local`
   * throws: the tasks write memory). `local` runs kernels itself and must not dispatch; it
   * writes memory no task touches. What does not fit one batch runs after `local`, as `run`.
   */
  runBeside(tasks: readonly (readonly KernelCall[])[], local: () => void): void {
    let size = 0;
    for (const task of tasks) size += taskSlots(task);
    if (tasks.length === 0 || this.readyCount === 0 || tasks.length > MAX_TASKS || size > BODY_SLOTS) {
      local();
      this.run(tasks);
      return;
    }
    this.post(tasks);
    try {
      local();
    } finally {
      this.finish(tasks);
    }
  }

  private runBatch(tasks: readonly (readonly KernelCall[])[]): void {
    this.post(tasks);
    this.finish(tasks);
  }

  /** Writes a batch into the table and wakes the workers. */
  private post(tasks: readonly (readonly KernelCall[])[]): void {
    const table = this.tasks;
    let p = MAX_TASKS;
    for (let t = 0; t < tasks.length; t++) {
      const task = tasks[t];
      table[t] = p;
      table[p++] = task.length;
      for (const call of task) {
        table[p++] = KERNEL_INDEX[call[0]];
        table[p++] = call.length - 1;
        for (let i = 1; i < call.length; i++) table[p++] = call[i] as number;
      }
    }
    const ctl = this.ctl;
    Atomics.store(ctl, COUNT, tasks.length);
    Atomics.store(ctl, NEXT, 0);
    Atomics.store(ctl, FINISHED, 0);
    Atomics.add(ctl, GEN, 1);
    Atomics.notify(ctl, GEN);
  }

  /** Runs the posted tasks no worker has taken, then waits until every worker is done. */
  private finish(tasks: readonly (readonly KernelCall[])[]): void {
    const ctl = this.ctl;
    for (let t = Atomics.add(ctl, NEXT, 1); t < tasks.length; t = Atomics.add(ctl, NEXT, 1)) {
      this.runHere(tasks[t]);
    }
    for (;;) {
      const finished = Atomics.load(ctl, FINISHED);
      if (finished >= this.readyCount) break;
      Atomics.wait(ctl, FINISHED, finished, 1000);
    }
  }

  stop(): void {
    Atomics.store(this.ctl, STOP, 1);
    Atomics.add(this.ctl, GEN, 1);
    Atomics.notify(this.ctl, GEN);
    for (const w of this.workers) w.terminate();
    this.readyCount = 0;
  }
}
