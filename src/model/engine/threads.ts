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
        const args = [];
        for (let i = 0; i < n; i++) args.push(tasks[p++]);
        f(...args);
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
  private readonly fns: ((...args: number[]) => void)[];

  private constructor(
    readonly size: number,
    exports: Record<string, unknown>,
  ) {
    this.ctl = new Int32Array(new SharedArrayBuffer(64));
    this.tasks = new Float64Array(new SharedArrayBuffer((MAX_TASKS + BODY_SLOTS) * 8));
    this.fns = TASK_KERNELS.map((n) => exports[n] as (...args: number[]) => void);
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
    for (const [name, ...args] of task) this.fns[TASK_KERNELS.indexOf(name)](...args);
  }

  private runBatch(tasks: readonly (readonly KernelCall[])[]): void {
    const table = this.tasks;
    let p = MAX_TASKS;
    tasks.forEach((task, t) => {
      table[t] = p;
      table[p++] = task.length;
      for (const [name, ...args] of task) {
        table[p++] = TASK_KERNELS.indexOf(name);
        table[p++] = args.length;
        for (const a of args) table[p++] = a;
      }
    });
    const ctl = this.ctl;
    Atomics.store(ctl, COUNT, tasks.length);
    Atomics.store(ctl, NEXT, 0);
    Atomics.store(ctl, FINISHED, 0);
    Atomics.add(ctl, GEN, 1);
    Atomics.notify(ctl, GEN);
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
