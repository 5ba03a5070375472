/**
 * One training run inside the worker: drives `Trainer.step()` (PACT Algorithm 1 or the
 * chosen recipe), and after each step stores the metrics in IndexedDB and pushes them to the
 * page with the rollout views. When it evaluates and checkpoints is the one rule of
 * src/run/runLoop.ts, shared with `pact train`: evaluations every `evalEvery` steps and at the
 * last; a checkpoint (one IndexedDB transaction, older ones pruned after it commits) after
 * every step (APP_CHECKPOINT_EVERY: a reload loses at most the step under way), and when the
 * run pauses, stops or ends. Pause takes
 * effect between steps; `step` runs exactly one step while paused. While a run is loaded it
 * holds the run's lock (runLock.ts), forwards the trainer's in-step progress, and samples
 * memory on a timer, at each progress report and around each generation (the loader's hook). A failure is logged with its stack, the
 * config and the step, stored with the run, and sent to the page.
 * What touches tfjs, the browser or the model comes in `SessionDeps` (browserSession.ts).
 */
import { checkResumableState } from '../src/run/checkpoint';
import { runTrainingLoop } from '../src/run/runLoop';
import { resolveConfig, type TrainConfig, type TrainConfigInput } from '../src/recipes/config';
import type { Trainer } from '../src/recipes/train/trainer';
import type { StepProgress } from '../src/recipes/types';
import type { KernelVariant } from '../src/model/engine/kernelChoice';
import type { PactStore } from '../src/storage/db';
import { APP_CHECKPOINTS_KEPT, checkCheckpointRoom, type StorageEstimateLike } from '../src/storage/storageRoom';
import { PLACEHOLDER_RUN_NAME, type CheckpointRecord, type RunRecord } from '../src/storage/schema';
import { readCheckpointRecord } from './checkpointRecord';
import type {
  BackendName,
  MemoryUsage,
  RolloutGroupView,
  RunFailureReport,
  RunPhase,
  RunState,
  WorkerEvent,
} from './protocol';

/** The trainer as the session drives it. */
export type SessionTrainer = Pick<Trainer, 'completedSteps' | 'config' | 'step' | 'evaluate' | 'dispose'>;

/** A run's model, tasks and trainer, loaded on a backend. */
export interface LoadedRun {
  trainer: SessionTrainer;
  backend: BackendName;
  fallbackReason?: string;
  nParams: number;
  /** On wasm: the threads tfjs-wasm computes with; on wasm and cpu, the CPU engine's. */
  wasmThreads?: number;
  engineThreads?: number;
  /** The kernels the CPU engine runs the model with (absent where it does not serve it: WebGPU). */
  engineKernels?: KernelVariant;
  /** Why they are not those the config asked for (relaxed SIMD missing: the plain ones). */
  engineKernelsWarning?: string;
  /** The rollout groups of the step just taken, as the inspector shows them. */
  viewRollouts(step: number): RolloutGroupView[];
  /** A checkpoint record of the trainer's state now. */
  buildCheckpoint(runId: string): Promise<CheckpointRecord>;
  /** Bytes of one checkpoint of this run (Trainer.stateBytes) and what it holds, in words; absent: not checked. */
  checkpointSize?: { bytes: number; what: string };
  /** Python tool calls so far (FTRL sources: the task file's tools in Pyodide); absent for other sources. */
  readPythonCounts?(): PythonToolCounts;
  dispose(): void;
}

/** Python tool calls of a run: all of them, those answered with an error observation, those stopped at the time limit. */
export interface PythonToolCounts {
  calls: number;
  errors: number;
  timeouts: number;
}

export interface LoadRunOptions {
  /** A checkpoint to continue from (already read). */
  resume?: ReturnType<typeof readCheckpointRecord>;
  /** The files of a Qwen3 folder the user picked. */
  modelFiles?: File[];
  /** The FTRL task file the page loaded (tasks.source "ftrl"). */
  taskFile?: { name: string; text: string };
  /** The trainer's in-step progress hook (TrainerInit.onProgress). */
  onProgress: (p: StepProgress) => void;
  /** Called from inside a step where the loader can (around each generation): a memory reading is due. */
  onInStep: () => void;
}

export interface SessionDeps {
  openStore(): Promise<PactStore>;
  loadRun(config: TrainConfig, opts: LoadRunOptions): Promise<LoadedRun>;
  /** tfjs memory now (and the process's where the browser offers it); undefined before a backend. */
  readMemory(): MemoryUsage | undefined;
  /** Starts a new step's peak where the platform keeps its own (the CPU engine's buffers). */
  resetMemoryPeak?(): void;
  /** The origin's storage quota and usage (navigator.storage.estimate); absent or null: not checked. */
  estimateStorage?(): Promise<StorageEstimateLike | null>;
  /** Takes the run's lock (throws when another tab holds it); resolves with its release. */
  holdLock(runId: string): Promise<() => void>;
  /** Calls `tick` every `ms` milliseconds until the returned function is called. */
  every(ms: number, tick: () => void): () => void;
  /** ms since the epoch. */
  now(): number;
  logError(...args: unknown[]): void;
}

export interface StartedRun {
  run: RunRecord;
  backend: BackendName;
  fallbackReason?: string;
  nParams: number;
  /** On wasm: the threads tfjs-wasm computes with. */
  wasmThreads?: number;
  /** On wasm and cpu: the threads the CPU engine (the model's own kernels) computes with. */
  engineThreads?: number;
  /** The CPU engine's kernels (simd, fma) where it serves the model, and why not those asked for. */
  engineKernels?: KernelVariant;
  engineKernelsWarning?: string;
}

/**
 * The app checkpoints after every step (a Quick step takes 5–8 s on the CPU engine; a qwen3-nano
 * checkpoint is 27.8 MiB of IndexedDB, older ones pruned to the last 2), so a reload loses
 * at most the step under way. The config's checkpointEvery is for `pact train`'s folders.
 */
export const APP_CHECKPOINT_EVERY = 1;

/** How often memory is sampled while a run is loaded. */
export const MEMORY_SAMPLE_MS = 1000;
/** At most one step-progress event per this many ms (a phase change or a finished phase always goes). */
export const PROGRESS_THROTTLE_MS = 200;

function newRunId(config: TrainConfig): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${config.recipe}-s${config.seed}-${stamp}-${Math.floor(Math.random() * 1e4)
    .toString()
    .padStart(4, '0')}`;
}

/** Numeric values of a metrics record (drops the recipe name). */
function numericValues(m: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(m)) if (typeof v === 'number') out[k] = v;
  return out;
}

export class TrainingSession {
  private loaded: LoadedRun | null = null;
  private store: PactStore | null = null;
  private run: RunRecord | null = null;
  private totalSteps = 0;
  private state: RunState = 'stopped';
  private isStarting = false;
  /** The run continues from a checkpoint (its step-0 evaluation, if any, is stored already). */
  private isResumed = false;
  private isPauseRequested = false;
  private isStopRequested = false;
  private pendingSingleSteps = 0;
  private wake: (() => void) | null = null;
  private releaseLock: (() => void) | null = null;
  private stopSampling: (() => void) | null = null;
  /** The step being worked on (for progress and failure reports). */
  private activeStep = 0;
  private stepStartedAt = 0;
  private peakBytes = 0;
  private lastMemoryPostAt = 0;
  private lastProgress: { phase: StepProgress['phase']; at: number } | null = null;

  constructor(
    private readonly post: (e: WorkerEvent) => void,
    private readonly deps: SessionDeps,
  ) {}

  get isActive(): boolean {
    return this.loaded !== null || this.isStarting;
  }

  private progress(phase: RunPhase, message?: string): void {
    if (!this.run) return;
    const step = this.loaded?.trainer.completedSteps ?? 0;
    this.post({
      type: 'progress',
      runId: this.run.id,
      step,
      totalSteps: this.totalSteps,
      phase,
      state: this.state,
      message,
      memory: this.sampleMemory(),
    });
  }

  /** Reads memory now and folds it into the step's peak. */
  private sampleMemory(): MemoryUsage | undefined {
    const m = this.deps.readMemory();
    if (!m) return undefined;
    this.peakBytes = Math.max(this.peakBytes, m.numBytes);
    return { ...m, peakBytes: this.peakBytes, sampledAt: this.deps.now() };
  }

  private postMemory(): void {
    if (!this.run || !this.loaded) return;
    const memory = this.sampleMemory();
    if (!memory) return;
    this.lastMemoryPostAt = this.deps.now();
    this.post({ type: 'memory', runId: this.run.id, memory });
  }

  /**
   * A memory reading from inside a step: posted when a second has passed since the last one,
   * else folded into the step's peak. Timers alone cannot do it: a step on wasm runs kernel
   * after kernel with only microtask awaits, so the worker's timer fires between steps.
   */
  private sampleInStep(): void {
    if (!this.run || !this.loaded) return;
    if (this.deps.now() - this.lastMemoryPostAt >= MEMORY_SAMPLE_MS) this.postMemory();
    else this.sampleMemory();
  }

  /** The trainer's in-step hook: forwarded to the page (throttled), and a memory sample. */
  private onStepProgress(p: StepProgress): void {
    if (!this.run || !this.loaded) return;
    const now = this.deps.now();
    this.sampleInStep();
    const isNews = this.lastProgress?.phase !== p.phase || p.done >= p.total || p.done === 0;
    if (!isNews && this.lastProgress && now - this.lastProgress.at < PROGRESS_THROTTLE_MS) return;
    this.lastProgress = { phase: p.phase, at: now };
    this.post({
      type: 'step-progress',
      runId: this.run.id,
      step: this.activeStep,
      progress: { ...p },
      elapsedMs: now - this.stepStartedAt,
    });
  }

  private beginActivity(step: number): void {
    this.activeStep = step;
    this.stepStartedAt = this.deps.now();
    this.lastProgress = null;
    this.deps.resetMemoryPeak?.();
    this.peakBytes = this.deps.readMemory()?.numBytes ?? 0;
  }

  /**
   * Loads everything and starts the loop (not awaited): the reply goes out at once. A run to
   * resume continues from its last checkpoint, or, with none saved yet, starts again from step 0
   * with its stored config (nothing of it was kept to continue from).
   */
  async start(
    input: TrainConfigInput,
    opts: {
      resumeRunId?: string;
      maxSteps?: number;
      modelFiles?: File[];
      taskFile?: { name: string; text: string };
    } = {},
  ): Promise<StartedRun> {
    if (this.isActive) throw new Error('a run is already in progress: stop it before starting another');
    this.isStarting = true;
    let release: (() => void) | null = null;
    let loaded: LoadedRun | null = null;
    try {
      this.store ??= await this.deps.openStore();
      const store = this.store;
      let config: TrainConfig;
      let resume: ReturnType<typeof readCheckpointRecord> | undefined;
      let run: RunRecord | null = null;
      if (opts.resumeRunId) {
        run = (await store.getRun(opts.resumeRunId)) ?? null;
        if (!run) throw new Error(`no saved run "${opts.resumeRunId}" to resume`);
        release = await this.deps.holdLock(run.id);
        const ckpt = await store.loadLatestCheckpoint(run.id);
        resume = ckpt ? readCheckpointRecord(ckpt) : undefined;
        config = resolveConfig(resume ? resume.state.config : run.config);
        if (resume) checkResumableState({ ...resume.state, config });
      } else {
        config = resolveConfig(input);
      }
      loaded = await this.deps.loadRun(config, {
        resume,
        modelFiles: opts.modelFiles,
        taskFile: opts.taskFile,
        onProgress: (p) => this.onStepProgress(p),
        onInStep: () => this.sampleInStep(),
      });
      await this.checkStorageRoom(loaded, run);
      if (!run) {
        const id = newRunId(config);
        run = await store.createRun({
          id,
          // Chosen once and stored: the config's name when it names the run, else the run's id.
          name: config.name === PLACEHOLDER_RUN_NAME ? id : config.name,
          recipe: config.recipe,
          // As the run runs it: engineKernels "simd" where "fma" fell back (createRunTrainer).
          config: loaded.trainer.config as unknown as Record<string, unknown>,
        });
        release = await this.deps.holdLock(run.id);
      }
      this.isResumed = resume !== undefined;
      // The lock is held before the run is marked running: a `running` run without one is dead.
      this.run = await store.updateRun(run.id, {
        status: 'running',
        error: undefined,
        failure: undefined,
        backend: loaded.backend,
        engineKernels: loaded.engineKernels,
      });
      this.loaded = loaded;
      this.releaseLock = release;
      this.totalSteps = Math.min(config.steps, opts.maxSteps ?? config.steps);
      this.state = 'running';
      this.isPauseRequested = false;
      this.isStopRequested = false;
      this.pendingSingleSteps = 0;
      this.lastMemoryPostAt = 0;
      this.stopSampling = this.deps.every(MEMORY_SAMPLE_MS, () => this.postMemory());
      const started: StartedRun = {
        run: this.run,
        backend: loaded.backend,
        fallbackReason: loaded.fallbackReason,
        nParams: loaded.nParams,
        ...(loaded.wasmThreads !== undefined ? { wasmThreads: loaded.wasmThreads } : {}),
        ...(loaded.engineThreads !== undefined ? { engineThreads: loaded.engineThreads } : {}),
        ...(loaded.engineKernels ? { engineKernels: loaded.engineKernels } : {}),
        ...(loaded.engineKernelsWarning ? { engineKernelsWarning: loaded.engineKernelsWarning } : {}),
      };
      void this.loop();
      return started;
    } catch (e) {
      if (!this.loaded) {
        loaded?.dispose();
        release?.();
        this.run = null;
      }
      this.deps.logError('PACT Lab: the run could not start:', e, { config: input, resumeRunId: opts.resumeRunId });
      throw e;
    } finally {
      this.isStarting = false;
    }
  }

  /**
   * Refuses, before the run is created or marked running, a run whose checkpoints the origin's
   * storage cannot hold (storageRoom.ts): a new run needs room for APP_CHECKPOINTS_KEPT + 1 of
   * them, a resumed one for those it has not stored yet.
   */
  private async checkStorageRoom(loaded: LoadedRun, run: RunRecord | null): Promise<void> {
    if (!loaded.checkpointSize || !this.deps.estimateStorage || !this.store) return;
    const estimate = await this.deps.estimateStorage().catch(() => null);
    if (!estimate) return;
    const stored = run ? (await this.store.listCheckpoints(run.id)).length : 0;
    checkCheckpointRoom(
      estimate,
      { checkpointBytes: loaded.checkpointSize.bytes, keepLast: APP_CHECKPOINTS_KEPT, stored },
      loaded.checkpointSize.what,
    );
  }

  pause(): void {
    if (!this.loaded) throw new Error('no run to pause');
    this.isPauseRequested = true;
  }

  resume(): void {
    if (!this.loaded) throw new Error('no run to resume');
    this.isPauseRequested = false;
    this.wake?.();
  }

  stepOnce(): void {
    if (!this.loaded) throw new Error('no run to step');
    if (!this.isPauseRequested) throw new Error('single steps are for a paused run: pause it first');
    this.pendingSingleSteps++;
    this.wake?.();
  }

  stop(): void {
    if (!this.loaded) throw new Error('no run to stop');
    this.isStopRequested = true;
    this.wake?.();
  }

  private async waitWhilePaused(): Promise<void> {
    while (this.isPauseRequested && this.pendingSingleSteps === 0 && !this.isStopRequested) {
      if (this.state !== 'paused') {
        this.state = 'paused';
        await this.checkpoint();
        await this.setStatus('paused');
        this.progress('idle');
        continue; // re-check: a resume, step or stop may have come in during the awaits
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
    if (this.pendingSingleSteps > 0) {
      this.pendingSingleSteps--;
    } else if (this.state === 'paused' && !this.isStopRequested) {
      this.state = 'running';
      await this.setStatus('running');
    }
  }

  private async setStatus(status: RunRecord['status'], patch: Partial<RunRecord> = {}): Promise<void> {
    if (this.store && this.run) this.run = await this.store.updateRun(this.run.id, { status, ...patch });
  }

  /**
   * Saves the trainer's state now, unless it is saved already or nothing was trained yet (a
   * run without a checkpoint resumes from step 0 with its stored config anyway).
   */
  private async checkpoint(): Promise<void> {
    const { loaded, store, run } = this;
    if (!loaded || !store || !run) return;
    const step = loaded.trainer.completedSteps;
    if (step === 0) return;
    if ((await store.getRun(run.id))?.lastCheckpointId === `${run.id}@${step}`) return;
    this.activeStep = step;
    this.progress('checkpoint');
    await store.saveCheckpoint(await loaded.buildCheckpoint(run.id), { keepLast: APP_CHECKPOINTS_KEPT });
  }

  private async loop(): Promise<void> {
    const { trainer } = this.loaded!;
    const store = this.store!;
    const runId = this.run!.id;
    const c = trainer.config;
    let values: Record<string, number> = {};
    // FTRL sources: the Python calls a step's rollouts made (its evaluation's come after onStep).
    let pythonAtStepStart: PythonToolCounts | undefined;
    try {
      // The rule of when to evaluate and checkpoint: src/run/runLoop.ts, with a checkpoint
      // after every step (APP_CHECKPOINT_EVERY) instead of the config's checkpointEvery.
      await runTrainingLoop(
        trainer,
        {
          totalSteps: this.totalSteps,
          evalEvery: c.evalEvery,
          evalAtStart: c.evalAtStart,
          checkpointEvery: APP_CHECKPOINT_EVERY,
          isResumed: this.isResumed,
        },
        {
          beforeStep: async () => {
            // After a single step taken while paused (saved like every step): idle again.
            if (this.state === 'paused' && !this.isStopRequested) this.progress('idle');
            await this.waitWhilePaused();
            if (this.isStopRequested) return false;
            this.beginActivity(trainer.completedSteps + 1);
            pythonAtStepStart = this.loaded?.readPythonCounts?.();
            this.progress('rollouts');
            return true;
          },
          onStep: (metrics) => {
            const memory = this.sampleMemory();
            if (memory) {
              metrics['memory/bytes'] = memory.numBytes;
              metrics['memory/peak_bytes'] = this.peakBytes;
              if (memory.engine) metrics['memory/engine_peak_bytes'] = memory.engine.peakBytes;
            }
            const python = this.loaded?.readPythonCounts?.();
            if (python && pythonAtStepStart) {
              metrics['tools/python_calls'] = python.calls - pythonAtStepStart.calls;
              metrics['tools/python_errors'] = python.errors - pythonAtStepStart.errors;
              metrics['tools/python_timeouts'] = python.timeouts - pythonAtStepStart.timeouts;
            }
            values = numericValues(metrics);
            this.post({ type: 'metrics', runId, metrics });
            this.post({ type: 'rollouts', runId, groups: this.loaded!.viewRollouts(metrics.step) });
          },
          beforeEval: (step) => {
            // step 0: the held-out evaluation of the starting policy (evalAtStart, or steps = 0).
            if (step === 0) this.beginActivity(0);
            else this.activeStep = step;
            this.progress('eval');
          },
          onEval: async (evalMetrics, atStart) => {
            this.post({ type: 'eval', runId, metrics: evalMetrics });
            if (atStart) await store.appendMetrics(runId, [{ step: 0, values: numericValues(evalMetrics) }]);
          },
          onStepDone: async (metrics, evalMetrics) => {
            if (evalMetrics) Object.assign(values, numericValues(evalMetrics));
            await store.appendMetrics(runId, [{ step: metrics.step, values }]);
          },
          checkpoint: () => this.checkpoint(),
        },
      );
      this.state = trainer.completedSteps >= this.totalSteps ? 'finished' : 'stopped';
      await this.setStatus(this.state === 'finished' ? 'finished' : 'stopped');
      this.progress('idle');
    } catch (e) {
      await this.fail(e, c);
    } finally {
      this.dispose();
    }
  }

  /** Logs the failure (stack, config, step), stores it with the run and tells the page. */
  private async fail(e: unknown, config: TrainConfig): Promise<void> {
    const run = this.run!;
    const error = e instanceof Error ? e : new Error(String(e));
    const failure: RunFailureReport = {
      runId: run.id,
      runName: run.name,
      message: error.message,
      stack: error.stack,
      step: this.activeStep,
      config: config as unknown as Record<string, unknown>,
      backend: this.loaded?.backend,
      at: this.deps.now(),
    };
    this.deps.logError(
      `PACT Lab: run "${run.name}"${run.name === run.id ? '' : ` (${run.id})`} failed at step ${failure.step} on ${failure.backend ?? 'an unknown backend'}: ${error.message}`,
      error,
      { config },
    );
    this.state = 'failed';
    await this.setStatus('failed', {
      error: error.message,
      failure: { step: failure.step, stack: failure.stack, at: failure.at },
    }).catch(() => undefined);
    this.post({ type: 'run-error', runId: run.id, message: error.message, failure });
    this.progress('idle', error.message);
  }

  private dispose(): void {
    const { loaded } = this;
    this.loaded = null;
    this.stopSampling?.();
    this.stopSampling = null;
    try {
      loaded?.dispose();
    } finally {
      this.releaseLock?.();
      this.releaseLock = null;
    }
  }
}
