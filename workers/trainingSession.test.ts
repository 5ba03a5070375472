/**
 * The worker's run loop with a fake trainer over a real PactStore (fake-indexeddb): when it
 * checkpoints, what it writes as the run's status, what it sends from inside a step (progress
 * and memory readings), and what a failure leaves behind.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig, type TrainConfig } from '../src/recipes/config';
import type { EvalMetrics, StepMetrics, StepProgress } from '../src/recipes/types';
import { PactStore } from '../src/storage/db';
import type { CheckpointRecord } from '../src/storage/schema';
import type { MemoryUsage, WorkerEvent } from './protocol';
import { MEMORY_SAMPLE_MS, TrainingSession, type LoadRunOptions, type SessionDeps } from './trainingSession';

/** A promise the test resolves by hand. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** A trainer whose step n waits for `steps[n]` to be opened, reporting progress on the way. */
class FakeTrainer {
  completedSteps = 0;
  readonly gates = new Map<number, ReturnType<typeof gate>>();
  failAt = 0;
  isDisposed = false;
  constructor(
    readonly config: TrainConfig,
    private readonly onProgress: (p: StepProgress) => void,
  ) {}
  gateOf(n: number) {
    if (!this.gates.has(n)) this.gates.set(n, gate());
    return this.gates.get(n)!;
  }
  async step(): Promise<StepMetrics> {
    const n = this.completedSteps + 1;
    this.onProgress({ phase: 'rollouts', done: 0, total: 8, tokens: 0, turn: 1 });
    inside(n);
    await this.gateOf(n).promise;
    if (n === this.failAt) throw new RangeError('memory access out of bounds');
    this.onProgress({ phase: 'rollouts', done: 8, total: 8, tokens: 96, turn: 2 });
    this.onProgress({ phase: 'update', done: 1, total: 1 });
    this.completedSteps = n;
    return { step: n, recipe: 'pact', reward: n / 10, seconds: 2 } as unknown as StepMetrics;
  }
  async evaluate(): Promise<EvalMetrics> {
    if (python) python.calls += 10; // the held-out evaluation's Python calls (not a step's)
    return { step: this.completedSteps, nTasks: 1, nRollouts: 1 } as EvalMetrics;
  }
  dispose(): void {
    this.isDisposed = true;
  }
}

let n = 0;
let dbName: string;
let store: PactStore;
let clock: number;
let events: WorkerEvent[];
let logged: unknown[][];
let locks: { held: Set<string>; taken: string[] };
let ticks: (() => void)[];
let memoryBytes: number;
let trainer: FakeTrainer | null;
let loads: { config: TrainConfig; opts: LoadRunOptions }[];
let opened: PactStore[];
/** Called inside step n of the fake trainer, before it waits for its gate. */
let inside: (n: number) => void;
/** FTRL sources: the Python tool calls of the run so far (null: a run without Python tools). */
let python: { calls: number; errors: number; timeouts: number } | null;
/** The CPU engine's kernels the loader reports (null: none, as on WebGPU), with its fallback warning. */
let engine: { kernels: 'simd' | 'fma'; warning?: string } | null;
/** What navigator.storage.estimate() answers (null: the browser offers none), and a checkpoint's bytes. */
let storage: { quota: number; usage: number } | null;
let checkpointBytes: number;

function makeDeps(): SessionDeps {
  return {
    openStore: async () => {
      const s = await PactStore.open(dbName);
      opened.push(s);
      return s;
    },
    async loadRun(config, opts) {
      loads.push({ config, opts });
      // As createRunTrainer does: the trainer's config says which kernels the engine got.
      const runConfig = engine ? { ...config, engineKernels: engine.kernels } : config;
      const t = new FakeTrainer(runConfig, opts.onProgress);
      if (opts.resume) t.completedSteps = opts.resume.state.step;
      trainer = t;
      return {
        trainer: t as never,
        backend: 'wasm',
        nParams: 1234,
        viewRollouts: () => [],
        ...(python ? { readPythonCounts: () => ({ ...python! }) } : {}),
        ...(engine ? { engineKernels: engine.kernels } : {}),
        ...(engine?.warning ? { engineKernelsWarning: engine.warning } : {}),
        checkpointSize: { bytes: checkpointBytes, what: '1,234 parameters' },
        buildCheckpoint: async (runId): Promise<CheckpointRecord> => ({
          id: `${runId}@${t.completedSteps}`,
          runId,
          step: t.completedSteps,
          createdAt: clock,
          config: config as unknown as Record<string, unknown>,
          weights: [],
          optimizer: { step: t.completedSteps, tensors: [] },
          rngState: {},
          // the default config reads π_ref (klCoef > 0): its checkpoints carry π_ref's weights
          trainerState: { version: 1, dataCursor: t.completedSteps, recipe: config.recipe, referenceWeights: [] },
          bytes: 0,
        }),
        dispose: () => t.dispose(),
      };
    },
    estimateStorage: async () => storage,
    readMemory: (): MemoryUsage => ({ backend: 'wasm', numBytes: memoryBytes, numTensors: 10 }),
    async holdLock(runId) {
      if (locks.held.has(runId))
        throw new Error(`run "${runId}" is training in another tab of this browser: stop it there first`);
      locks.held.add(runId);
      locks.taken.push(runId);
      return () => locks.held.delete(runId);
    },
    every(ms, tick) {
      expect(ms).toBe(MEMORY_SAMPLE_MS);
      ticks.push(tick);
      return () => (ticks = ticks.filter((t) => t !== tick));
    },
    now: () => clock,
    logError: (...args) => logged.push(args),
  };
}

/** Lets the session's awaits (IndexedDB included) run until `isDone` holds. */
async function until(isDone: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await isDone()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const progressStates = () => events.flatMap((e) => (e.type === 'progress' ? [`${e.state}/${e.phase}@${e.step}`] : []));

beforeEach(async () => {
  dbName = `pact-session-${n++}`;
  store = await PactStore.open(dbName);
  clock = 1_000_000;
  events = [];
  logged = [];
  locks = { held: new Set(), taken: [] };
  ticks = [];
  memoryBytes = 1000;
  trainer = null;
  loads = [];
  opened = [];
  inside = () => {};
  python = null;
  engine = null;
  storage = null;
  checkpointBytes = 100;
});
afterEach(async () => {
  store.close();
  opened.forEach((s) => s.close());
  await PactStore.destroy(dbName);
});

describe('TrainingSession', () => {
  it("FTRL sources: each step's metrics count its own rollouts' Python calls, not the evaluation's; the task file reaches the loader", async () => {
    python = { calls: 0, errors: 0, timeouts: 0 };
    inside = (step) => {
      python!.calls += step === 1 ? 2 : 3;
      if (step === 1) python!.errors += 1;
    };
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    const taskFile = { name: 'tasks.jsonl', text: '{}\n' };
    await session.start({ steps: 2, evalEvery: 1 }, { taskFile });
    expect(loads[0].opts.taskFile).toEqual(taskFile);
    trainer!.gateOf(1).open();
    trainer!.gateOf(2).open();
    await until(() => progressStates().includes('finished/idle@2'), 'the end');
    const rows = events.flatMap((e) => (e.type === 'metrics' ? [e.metrics] : []));
    expect(
      rows.map((m) => [m.step, m['tools/python_calls'], m['tools/python_errors'], m['tools/python_timeouts']]),
    ).toEqual([
      [1, 2, 1, 0],
      [2, 3, 0, 0], // the 10 calls of step 1's evaluation are not step 2's
    ]);
  });

  it('records the kernels the engine ran: fma asked without relaxed SIMD is stored as simd, and the page is told why once', async () => {
    engine = {
      kernels: 'simd',
      warning: 'fma: relaxed SIMD is unavailable in this runtime; the engine runs the plain SIMD kernels',
    };
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    const started = await session.start({ steps: 1, evalEvery: 0, engineKernels: 'fma' });
    expect(loads[0].config.engineKernels).toBe('fma'); // what the setup asked the loader for
    expect([started.engineKernels, started.engineKernelsWarning]).toEqual(['simd', engine.warning]);
    const run = await store.getRun(started.run.id);
    expect([run?.engineKernels, run?.config.engineKernels, run?.backend]).toEqual(['simd', 'simd', 'wasm']);
    trainer!.gateOf(1).open();
    await until(() => progressStates().includes('finished/idle@1'), 'the end');

    // A run the engine does not serve (WebGPU) records no kernels; the config keeps what was asked.
    engine = null;
    const other = await new TrainingSession((e) => events.push(e), makeDeps()).start({ steps: 1, evalEvery: 0 });
    expect(other.engineKernels).toBeUndefined();
    const record = await store.getRun(other.run.id);
    expect([record?.engineKernels, record?.config.engineKernels]).toEqual([undefined, 'simd']);
    trainer!.gateOf(1).open();
    await until(() => progressStates().filter((s) => s === 'finished/idle@1').length === 2, 'the second end');
  });

  it('a run without Python tools has no Python metrics', async () => {
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    await session.start({ steps: 1, evalEvery: 0 });
    trainer!.gateOf(1).open();
    await until(() => progressStates().includes('finished/idle@1'), 'the end');
    const [row] = events.flatMap((e) => (e.type === 'metrics' ? [e.metrics] : []));
    expect(Object.keys(row).filter((k) => k.startsWith('tools/'))).toEqual([]);
  });

  it('checkpoints after the first step, on pause and on stop, and stores the status the run is in', async () => {
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    const started = await session.start({ steps: 5, evalEvery: 0, checkpointEvery: 0, name: 'first try' });
    const id = started.run.id;
    expect(started.run.status).toBe('running');
    expect(started.run.backend).toBe('wasm');
    expect(locks.held.has(id)).toBe(true); // held before the run was marked running
    const t = trainer!;

    t.gateOf(1).open();
    await until(() => t.completedSteps === 1, 'step 1');
    // checkpointEvery = 0, yet step 1 is saved: a reload right after Train keeps it.
    await until(
      () => events.some((e) => e.type === 'progress' && e.phase === 'checkpoint' && e.step === 1),
      'the step-1 checkpoint',
    );
    await until(() => t.gates.has(2), 'step 2 to begin');
    expect((await store.getRun(id))?.lastCheckpointId).toBe(`${id}@1`);

    // Pause during step 2: it takes effect after the step, which is then saved.
    session.pause();
    t.gateOf(2).open();
    await until(() => progressStates().includes('paused/idle@2'), 'the pause');
    let run = await store.getRun(id);
    expect([run?.status, run?.lastCheckpointId]).toEqual(['paused', `${id}@2`]);

    // Resume: the stored status says running again (not "paused" while it trains).
    session.resume();
    await until(() => t.gates.has(3), 'step 3 to begin');
    await until(
      () =>
        events.some((e) => e.type === 'progress' && e.state === 'running' && e.step === 2 && e.phase === 'rollouts'),
      'the resumed step',
    );
    expect((await store.getRun(id))?.status).toBe('running');

    // Stop during step 3: it ends after the step, saved, as "stopped" (not "paused").
    session.stop();
    t.gateOf(3).open();
    await until(() => progressStates().includes('stopped/idle@3'), 'the stop');
    run = await store.getRun(id);
    expect([run?.status, run?.lastStep, run?.lastCheckpointId, run?.name]).toEqual([
      'stopped',
      3,
      `${id}@3`,
      'first try',
    ]);
    expect((await store.listCheckpoints(id)).map((c) => c.step)).toEqual([2, 3]); // keepLast 2
    expect(t.isDisposed).toBe(true);
    expect(locks.held.has(id)).toBe(false);
    expect(ticks).toEqual([]); // the memory timer stopped with the run
    expect(session.isActive).toBe(false);
  });

  it('sends progress and memory readings from inside a step, before its metrics', async () => {
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    inside = () => {
      // Three timer ticks while the step runs, the tensors growing, then shrinking.
      for (const bytes of [5000, 9000, 3000]) {
        memoryBytes = bytes;
        clock += MEMORY_SAMPLE_MS;
        ticks.forEach((tick) => tick());
      }
    };
    const { run } = await session.start({ steps: 1, evalEvery: 0 });
    const t = trainer!;
    await until(() => t.gates.has(1), 'step 1 to begin');
    clock += 50; // within the throttle window: "done 8 of 8" still goes (a phase ends)
    t.gateOf(1).open();
    await until(() => progressStates().includes('finished/idle@1'), 'the end');

    const iMetrics = events.findIndex((e) => e.type === 'metrics');
    const before = events.slice(0, iMetrics);
    const readings = before.flatMap((e) => (e.type === 'memory' ? [e.memory] : []));
    expect(readings.map((m) => [m.numBytes, m.peakBytes])).toEqual([
      [1000, 1000], // the first progress report of the run samples at once
      [5000, 5000],
      [9000, 9000],
      [3000, 9000], // the peak of the step so far
    ]);
    expect(readings.map((m) => m.sampledAt)).toEqual([1_000_000, 1_001_000, 1_002_000, 1_003_000]);
    const progress = before.flatMap((e) =>
      e.type === 'step-progress'
        ? [[e.step, e.progress.phase, e.progress.done, e.progress.tokens ?? null, e.elapsedMs]]
        : [],
    );
    expect(progress).toEqual([
      [1, 'rollouts', 0, 0, 0],
      [1, 'rollouts', 8, 96, 3050],
      [1, 'update', 1, null, 3050],
    ]);
    const metrics = events[iMetrics] as Extract<WorkerEvent, { type: 'metrics' }>;
    expect([metrics.metrics['memory/bytes'], metrics.metrics['memory/peak_bytes']]).toEqual([3000, 9000]);
    expect((await store.getRun(run.id))?.status).toBe('finished');
  });

  it("reads memory from inside a step through the loader's hook (around generation), posting at most once a second", async () => {
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    inside = () => {
      memoryBytes = 4000;
      clock += 400; // 0.4 s after the step's first reading: folded into the peak only
      loads[0].opts.onInStep();
      memoryBytes = 2000;
      clock += 700; // 1.1 s after it: posted
      loads[0].opts.onInStep();
    };
    await session.start({ steps: 1, evalEvery: 0 });
    trainer!.gateOf(1).open();
    await until(() => !session.isActive, 'the end');
    const iMetrics = events.findIndex((e) => e.type === 'metrics');
    const readings = events
      .slice(0, iMetrics)
      .flatMap((e) => (e.type === 'memory' ? [[e.memory.numBytes, e.memory.peakBytes, e.memory.sampledAt]] : []));
    expect(readings).toEqual([
      [1000, 1000, 1_000_000],
      [2000, 4000, 1_001_100],
    ]);
  });

  it('throttles in-step progress to one event per 200 ms, but never drops the end of a phase', async () => {
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    await session.start({ steps: 1, evalEvery: 0 });
    const t = trainer!;
    await until(() => t.gates.has(1), 'step 1 to begin');
    const report = (t as unknown as { onProgress: (p: StepProgress) => void }).onProgress;
    for (let done = 1; done <= 4; done++) {
      clock += 90; // 90, 180, 270, 360 ms after "done 0"
      report({ phase: 'rollouts', done, total: 4, tokens: done * 10 });
    }
    const sent = events.flatMap((e) => (e.type === 'step-progress' ? [e.progress.done] : []));
    // 0 (a phase begins), 3 (270 ms ≥ 200 after it), 4 (the phase ends); 1, 2 dropped.
    expect(sent).toEqual([0, 3, 4]);
    session.stop();
    t.gateOf(1).open();
    await until(() => !session.isActive, 'the end');
  });

  it('logs a failure with its stack, the config and the step, stores it with the run, and tells the page', async () => {
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    const { run } = await session.start({ steps: 4, evalEvery: 0, seed: 7 });
    const t = trainer!;
    t.failAt = 2;
    t.gateOf(1).open();
    t.gateOf(2).open();
    await until(() => events.some((e) => e.type === 'run-error'), 'the failure');
    await until(() => !session.isActive, 'the end');

    expect(logged).toHaveLength(1);
    const [line, error, extra] = logged[0] as [string, Error, { config: TrainConfig }];
    expect(line).toBe(`PACT Lab: run "${run.id}" failed at step 2 on wasm: memory access out of bounds`);
    expect(error).toBeInstanceOf(RangeError);
    expect(error.stack).toContain('memory access out of bounds');
    expect(extra.config.seed).toBe(7);

    const ev = events.find((e) => e.type === 'run-error') as Extract<WorkerEvent, { type: 'run-error' }>;
    expect(ev.failure).toMatchObject({
      runId: run.id,
      runName: run.id,
      message: 'memory access out of bounds',
      step: 2,
      backend: 'wasm',
      at: clock,
    });
    expect(ev.failure.stack).toContain('RangeError');
    expect((ev.failure.config as unknown as TrainConfig).seed).toBe(7);
    const stored = await store.getRun(run.id);
    expect(stored?.status).toBe('failed');
    expect(stored?.error).toBe('memory access out of bounds');
    expect(stored?.failure).toEqual({ step: 2, stack: error.stack, at: clock });
    expect(stored?.lastCheckpointId).toBe(`${run.id}@1`); // what it had before the failure stays
    expect(locks.held.size).toBe(0);
  });

  it('resumes from the last checkpoint; a run with none starts again from step 0 with its stored config', async () => {
    const config = resolveConfig({ steps: 3, evalEvery: 0, seed: 5 });
    await store.createRun({
      id: 'lost',
      name: 'lost',
      recipe: 'pact',
      config: config as unknown as Record<string, unknown>,
      status: 'interrupted',
    });
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    const started = await session.start({}, { resumeRunId: 'lost' });
    expect(started.run).toMatchObject({ id: 'lost', status: 'running' });
    expect(loads[0].opts.resume).toBeUndefined();
    expect(loads[0].config.seed).toBe(5); // the stored config, not the (empty) input
    expect(trainer!.completedSteps).toBe(0);
    // the lock was taken before anything loaded: a second tab cannot resume it meanwhile
    expect(locks.taken).toEqual(['lost']);
    session.stop();
    trainer!.gateOf(1).open();
    await until(() => !session.isActive, 'the stop');

    // Now it has a checkpoint at step 1: resuming continues from there.
    await session.start({}, { resumeRunId: 'lost' });
    expect(loads[1].opts.resume?.state.step).toBe(1);
    expect(trainer!.completedSteps).toBe(1);
    session.stop();
    trainer!.gateOf(2).open();
    await until(() => !session.isActive, 'the second stop');
  });

  it('a reload loses at most the step under way: every step is checkpointed, whatever checkpointEvery says', async () => {
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    const { run } = await session.start({ steps: 8, evalEvery: 0, checkpointEvery: 4 });
    const t = trainer!;
    for (const n of [1, 2, 3]) t.gateOf(n).open();
    await until(() => t.gates.has(4), 'step 4 to begin');
    await until(async () => (await store.getRun(run.id))?.lastCheckpointId === `${run.id}@3`, 'the step-3 checkpoint');
    // The page reloads during step 4: the worker is gone (its lock with it); a new one resumes.
    locks.held.clear();
    const after = new TrainingSession((e) => events.push(e), makeDeps());
    await after.start({}, { resumeRunId: run.id });
    expect(loads[1].opts.resume?.state.step).toBe(3);
    expect(trainer!.completedSteps).toBe(3);
    expect((await store.listCheckpoints(run.id)).map((c) => c.step)).toEqual([2, 3]); // keepLast 2
    after.stop();
    trainer!.gateOf(4).open();
    await until(() => !after.isActive, 'the stop');
  });

  it('names a run nobody named after its id, once, in storage; a named config keeps its name; a resume keeps a rename', async () => {
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    const { run } = await session.start({ steps: 2, evalEvery: 0, seed: 3 });
    expect(run.id).toMatch(/^pact-s3-\d{8}-\d{6}-\d{4}$/);
    expect(run.name).toBe(run.id); // never the config's placeholder "run"
    expect((await store.getRun(run.id))?.name).toBe(run.id);
    session.stop();
    trainer!.gateOf(1).open();
    await until(() => !session.isActive, 'the stop');

    // A rename (the Runs panel) survives a resume: the name is chosen at creation only.
    await store.updateRun(run.id, { name: 'baseline' });
    const resumed = await session.start({}, { resumeRunId: run.id });
    expect(resumed.run.name).toBe('baseline');
    session.stop();
    trainer!.gateOf(2).open();
    await until(() => !session.isActive, 'the second stop');

    const named = await session.start({ steps: 1, evalEvery: 0, name: 'my first PACT run' });
    expect(named.run.name).toBe('my first PACT run');
    session.stop();
    trainer!.gateOf(1).open();
    await until(() => !session.isActive, 'the third stop');
  });

  it("refuses, before it creates anything, a run whose checkpoints the site's storage cannot hold", async () => {
    // A new run needs 3 checkpoints of room (2 kept + the next, written before the oldest goes).
    storage = { quota: 1000, usage: 701 };
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    await expect(session.start({ steps: 3, evalEvery: 0 })).rejects.toThrow(
      /not enough browser storage for this run's checkpoints: .*needs 300 B more \(3 × 100 B\).* 299 B free/,
    );
    expect(await store.listRuns()).toEqual([]);
    expect(trainer!.isDisposed).toBe(true);
    expect([session.isActive, locks.held.size]).toEqual([false, 0]);

    storage = { quota: 1000, usage: 700 }; // exactly the room: it starts
    const { run } = await session.start({ steps: 3, evalEvery: 0 });
    for (const n of [1, 2]) trainer!.gateOf(n).open();
    await until(async () => (await store.getRun(run.id))?.lastCheckpointId === `${run.id}@2`, 'the step-2 checkpoint');
    const t = trainer!;
    await until(() => t.gates.has(3), 'step 3 to begin'); // a stop during step 3 lets it finish and saves it
    session.stop();
    t.gateOf(3).open();
    await until(() => !session.isActive, 'the stop');
    const saved = await store.listCheckpoints(run.id);
    expect(saved.map((c) => c.step)).toEqual([2, 3]);

    // Resumed with its 2 checkpoints stored (in the usage), it needs room for the next one only.
    storage = { quota: 1000, usage: 901 };
    const status = (await store.getRun(run.id))?.status;
    await expect(session.start({}, { resumeRunId: run.id })).rejects.toThrow(/needs 100 B more \(1 × 100 B\)/);
    expect((await store.getRun(run.id))?.status).toBe(status); // not marked running
    expect(await store.listCheckpoints(run.id)).toEqual(saved); // nothing saved was lost
    expect(locks.held.size).toBe(0);
    storage = { quota: 1000, usage: 900 };
    await session.start({}, { resumeRunId: run.id });
    expect(trainer!.completedSteps).toBe(3);
    session.stop();
    trainer!.gateOf(4).open();
    await until(() => !session.isActive, 'the second stop');
  });

  it('refuses a run another tab is training, and leaves nothing loaded', async () => {
    await store.createRun({ id: 'busy', name: 'busy', recipe: 'pact', config: {}, status: 'running' });
    locks.held.add('busy');
    const session = new TrainingSession((e) => events.push(e), makeDeps());
    await expect(session.start({}, { resumeRunId: 'busy' })).rejects.toThrow('training in another tab');
    expect(loads).toHaveLength(0);
    expect(session.isActive).toBe(false);
    expect((await store.getRun('busy'))?.status).toBe('running');
    expect(logged).toHaveLength(1); // the refused start is logged too
  });
});
