/**
 * The page's training run as reactive state: start / pause / resume / step / stop sent
 * to the trainer worker through TrainerClient, and the events it pushes (progress, in-step
 * progress, memory readings, metrics, eval, rollouts, run-error) kept for the status line,
 * the Device panel, the Live charts and the Rollout inspector. After a reload the worker holds
 * nothing: the newest saved run is shown detached (`phase` 'saved'), and Resume (the Train
 * button) continues it from its checkpoint. A Pause or Stop waits for the step to end: until
 * the worker says so, the run is "pausing" / "stopping", not paused or stopped. Errors are kept
 * where they happen: `startError` beside the Train button (naming the config field),
 * `controlError` for a pause/step/stop the worker refused, `runError` with `failure` (stack,
 * step, config; also logged to the console) for a run that failed midway.
 */
import type { TrainerClient } from '../../../workers/client';
import type {
  BackendName,
  MemoryUsage,
  RolloutGroupView,
  RunFailureReport,
  RunPhase,
  WorkerEvent,
} from '../../../workers/protocol';
import type { TrainConfigInput } from '../../recipes/config';
import type { EvalMetrics, StepMetrics, StepProgress } from '../../recipes/types';
import type { RunRecord } from '../../storage/schema';
import { mergeMetricPoints, toMetricPoint, type MetricPoint } from '../metricSeries';
import { toFolderInit } from '../modelFolder';
import {
  computeRunStatus,
  failureOfRun,
  formatFailureReport,
  planResume,
  STATUS_WORDS,
  type LiveRun,
  type RunDisplayStatus,
} from '../runStatus';
import { computeControls, wordStartError, type ControlPhase } from '../trainingControls';

/** A Qwen3 folder the user picked (ModelFolderPicker), used as the run's policy. */
export interface StartModelFolder {
  name: string;
  files: File[];
}

export interface TrainingOptions {
  /** Metric rows already stored for a run (a resumed run's history). */
  loadStoredPoints?: (runId: string) => Promise<MetricPoint[]>;
  /** Called when a run starts, changes state or ends (the Runs panel refreshes). */
  onRunChanged?: () => void;
  /** Where failures are logged (console.error by default). */
  logError?: (...args: unknown[]) => void;
  /** The FTRL file loaded in the page (a saved FTRL run resumes with it: a page opens no file by name). */
  readTaskFile?: () => { name: string; text: string } | null;
}

/** The latest in-step progress of the worker, with when the page received it. */
export interface StepProgressView {
  step: number;
  progress: StepProgress;
  elapsedMs: number;
  receivedAt: number;
}

export class TrainingState {
  runId = $state<string | null>(null);
  run = $state.raw<RunRecord | null>(null);
  backend = $state<BackendName | null>(null);
  fallbackReason = $state<string | null>(null);
  nParams = $state(0);
  /** On wasm: the threads tfjs-wasm computes with (null on other backends or before a run). */
  wasmThreads = $state<number | null>(null);
  /** Threads of the CPU engine (the model's kernels on wasm and cpu). */
  engineThreads = $state<number | null>(null);
  /** The CPU engine's kernels (simd, fma) where it serves the run's model (null on WebGPU or before a run). */
  engineKernels = $state<string | null>(null);
  /** Why they are not those the setup asked for (relaxed SIMD missing: the plain ones), said once. */
  engineKernelsWarning = $state<string | null>(null);
  phase = $state<ControlPhase>('idle');
  runPhase = $state<RunPhase | null>(null);
  step = $state(0);
  totalSteps = $state(0);
  message = $state<string | null>(null);
  /** The trainer's tfjs memory at its latest progress event (null before a run reports one). */
  memory = $state.raw<MemoryUsage | null>(null);

  /** Rows pushed for the current run ($state.raw: replaced, never mutated). */
  metrics = $state.raw<StepMetrics[]>([]);
  evals = $state.raw<EvalMetrics[]>([]);
  /** A resumed run's stored rows, before this session's. */
  priorPoints = $state.raw<MetricPoint[]>([]);
  /** The rollout groups of the latest step that sent them. */
  groups = $state.raw<RolloutGroupView[]>([]);

  /** A Pause or Stop the worker accepted; it takes effect when the current step ends. */
  pendingControl = $state<'pause' | 'stop' | null>(null);
  /** The shown run is a saved one this page's worker does not hold (restored after a reload). */
  isDetached = $state(false);
  /** Runs whose lock is held in some tab (workers/runLock.ts), null when the browser cannot tell. */
  liveElsewhere = $state.raw<ReadonlySet<string> | null>(null);
  stepProgress = $state.raw<StepProgressView | null>(null);
  /** When the page learned the current step began (ms since the epoch), for the time left. */
  stepStartedAt = $state<number | null>(null);
  /** The failure of the current run, with its stack, step and config. */
  failure = $state.raw<RunFailureReport | null>(null);

  startError = $state<string | null>(null);
  controlError = $state<string | null>(null);
  runError = $state<string | null>(null);
  isBusy = $state(false);

  /** Every step of the current run (stored + live, evals folded in). */
  points = $derived(
    mergeMetricPoints(this.priorPoints, this.metrics.map(toMetricPoint), this.evals.map(toMetricPoint)),
  );
  latestMetrics = $derived<StepMetrics | null>(this.metrics.length > 0 ? this.metrics[this.metrics.length - 1] : null);
  hasRun = $derived(this.runId !== null);
  /** Measured seconds of the run's steps so far (stored and live), oldest first. */
  stepSeconds = $derived(this.points.flatMap((p) => (Number.isFinite(p.values.seconds) ? [p.values.seconds] : [])));

  /** The run this page's worker holds (null when none, or when the shown run is detached). */
  liveRun = $derived<LiveRun | null>(
    this.runId !== null && !this.isDetached && this.phase !== 'idle'
      ? { runId: this.runId, phase: this.phase, pendingControl: this.pendingControl }
      : null,
  );
  /** Where the shown run stands, worded as the Runs panel words it (runStatus.ts). */
  displayStatus = $derived.by<RunDisplayStatus | null>(() => {
    if (this.phase === 'starting') return 'starting';
    if (this.runId === null) return null;
    const record = this.run ?? { id: this.runId, status: 'running' as const };
    return computeRunStatus(record, this.liveRun, this.liveElsewhere);
  });
  /** What Resume does for a detached run (null for a live one). */
  resumePlan = $derived(
    this.isDetached && this.run && this.displayStatus ? planResume(this.run, this.displayStatus, false) : null,
  );
  /** The one-line status (Run setup's progress line). */
  statusText = $derived.by(() => {
    if (this.phase === 'idle' || this.displayStatus === null)
      return 'No run yet: press Train to start one with this setup.';
    if (this.displayStatus === 'starting') return 'Starting: loading the model and the tasks in the worker…';
    const of = this.totalSteps > 0 ? ` of ${this.totalSteps}` : '';
    const isLive = !this.isDetached && (this.phase === 'running' || this.phase === 'paused');
    const phase = isLive && this.runPhase && this.runPhase !== 'idle' ? ` · ${this.runPhase}` : '';
    const resume = this.resumePlan?.canResume ? ` · ${this.resumePlan.label} ${this.resumePlan.detail}` : '';
    return `Step ${this.step}${of} · ${STATUS_WORDS[this.displayStatus]}${phase}${this.message ? ` · ${this.message}` : ''}${resume}`;
  });

  private client: TrainerClient | null = null;
  private hasRestored = false;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly options: TrainingOptions = {}) {}

  attach(client: TrainerClient): void {
    this.detach();
    this.client = client;
    const unsubscribe = client.subscribe((e) => this.handleEvent(e));
    const unwatch = client.onCrash?.((message) => this.handleCrash(message));
    this.unsubscribe = () => {
      unsubscribe();
      unwatch?.();
    };
  }

  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.client = null;
  }

  controls = $derived(
    computeControls(this.phase, this.isBusy, {
      pendingControl: this.pendingControl,
      canResumeSaved: this.resumePlan?.canResume ?? false,
    }),
  );

  /**
   * After a reload: shows the newest saved run (detached; its stored rows on the charts) when
   * the page has none yet, so the status line and charts do not fall back to "no run".
   */
  async restore(runs: readonly RunRecord[], liveElsewhere: ReadonlySet<string> | null): Promise<void> {
    this.liveElsewhere = liveElsewhere;
    if (this.hasRestored || this.runId !== null || this.phase !== 'idle') return;
    this.hasRestored = true;
    const run = runs[0];
    if (!run) return;
    const points = this.options.loadStoredPoints ? await this.options.loadStoredPoints(run.id) : [];
    if (this.runId !== null || this.phase !== 'idle') return; // a start came in meanwhile
    this.run = run;
    this.runId = run.id;
    this.isDetached = true;
    this.phase = 'saved';
    this.step = run.lastStep;
    this.totalSteps = typeof run.config.steps === 'number' ? run.config.steps : 0;
    this.priorPoints = points;
    this.failure = failureOfRun(run);
    this.runError = this.failure?.message ?? null;
  }

  /** Keeps a detached run's record in step with the saved list (rewritten, renamed or deleted). */
  syncSaved(runs: readonly RunRecord[], liveElsewhere: ReadonlySet<string> | null): void {
    this.liveElsewhere = liveElsewhere;
    const id = this.runId;
    if (id === null) return;
    const record = runs.find((r) => r.id === id);
    if (this.isDetached) {
      if (!record) return this.clearRun();
      this.run = record;
      this.step = record.lastStep;
    } else if (record && this.run) {
      this.run = { ...this.run, name: record.name };
    }
  }

  /**
   * Starts a run with `config` (the setup's config input), or resumes a stored run.
   * `localError` is the setup's own validation message: when given, nothing is sent.
   */
  async start(
    config: TrainConfigInput,
    opts: {
      resumeRunId?: string;
      localError?: string;
      modelFolder?: StartModelFolder | null;
      /** The FTRL file loaded in the Task files panel, when the run trains on it (tasks.source "ftrl"). */
      taskFile?: { name: string; text: string };
    } = {},
  ): Promise<void> {
    this.startError = null;
    this.controlError = null;
    if (opts.localError) {
      this.startError = `Cannot start: ${opts.localError}`;
      return;
    }
    if (!this.client) {
      this.startError = 'Cannot start: the trainer worker is not running in this page';
      return;
    }
    this.clearRun();
    this.phase = 'starting';
    this.isBusy = true;
    if (opts.resumeRunId) this.runId = opts.resumeRunId;
    try {
      if (opts.resumeRunId && this.options.loadStoredPoints) {
        this.priorPoints = await this.options.loadStoredPoints(opts.resumeRunId);
      }
      // A picked Qwen3 folder replaces the preset: model.init names it, its files go along.
      const folder = opts.modelFolder;
      const sent: TrainConfigInput = folder
        ? { ...config, model: { ...config.model, init: toFolderInit(folder.name) } }
        : config;
      const res = await this.client.request({
        type: 'start',
        config: sent,
        ...(opts.resumeRunId ? { resumeRunId: opts.resumeRunId } : {}),
        // a plain array of the File objects: a $state proxy of the list would not clone
        ...(folder ? { modelFiles: [...folder.files] } : {}),
        ...(opts.taskFile ? { taskFile: { name: opts.taskFile.name, text: opts.taskFile.text } } : {}),
      });
      if (res.type !== 'started') throw new Error(`unexpected reply "${res.type}" to start`);
      this.run = res.run;
      this.runId = res.run.id;
      this.backend = res.backend;
      this.fallbackReason = res.fallbackReason ?? null;
      this.nParams = res.nParams;
      this.wasmThreads = res.wasmThreads ?? null;
      this.engineThreads = res.engineThreads ?? null;
      this.engineKernels = res.engineKernels ?? null;
      this.engineKernelsWarning = res.engineKernelsWarning ?? null;
      if (this.phase === 'starting') this.phase = 'running';
      this.options.onRunChanged?.();
    } catch (e) {
      this.startError = `Could not start training: ${wordStartError(e instanceof Error ? e.message : String(e))}`;
      this.phase = 'idle';
      this.runId = null;
      this.priorPoints = [];
    } finally {
      this.isBusy = false;
    }
  }

  pause(): Promise<void> {
    return this.send('pause');
  }

  /** Resumes the paused run; for a detached saved run, starts it again from its checkpoint. */
  resume(): Promise<void> {
    if (this.isDetached && this.run) {
      // A saved FTRL run reads its task file again: the loaded one when it has the run's name (else the worker says which to load).
      const tasks = this.run.config.tasks as { source?: unknown; path?: unknown } | undefined;
      const file = tasks?.source === 'ftrl' ? this.options.readTaskFile?.() : null;
      const taskFile = file && file.name === tasks?.path ? file : undefined;
      return this.start(this.run.config as TrainConfigInput, {
        resumeRunId: this.run.id,
        ...(taskFile ? { taskFile } : {}),
      });
    }
    return this.send('resume');
  }

  /** One step while paused. */
  stepOnce(): Promise<void> {
    return this.send('step');
  }

  stop(): Promise<void> {
    return this.send('stop');
  }

  /** Stops an active run, then clears the page's view of it (what was saved stays in the Runs panel). */
  async reset(): Promise<void> {
    if (!this.isDetached && (this.phase === 'running' || this.phase === 'paused')) await this.stop();
    this.clearRun();
    this.startError = null;
    this.controlError = null;
  }

  private async send(type: 'pause' | 'resume' | 'step' | 'stop'): Promise<void> {
    if (!this.client) return;
    this.controlError = null;
    this.isBusy = true;
    try {
      const res = await this.client.request({ type });
      if (res.type !== 'ok') throw new Error(`unexpected reply "${res.type}" to ${type}`);
      // Pause and Stop take effect when the step ends: the worker's progress event says when.
      if (type === 'pause' && this.phase === 'running') this.pendingControl = 'pause';
      if (type === 'stop') this.pendingControl = 'stop';
      if (type === 'resume') {
        if (this.pendingControl === 'pause') this.pendingControl = null;
        if (this.phase === 'paused') this.phase = 'running';
      }
    } catch (e) {
      this.controlError = `${type[0].toUpperCase()}${type.slice(1)} failed: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      this.isBusy = false;
    }
  }

  private clearRun(): void {
    this.isDetached = false;
    this.pendingControl = null;
    this.stepProgress = null;
    this.stepStartedAt = null;
    this.failure = null;
    this.runId = null;
    this.run = null;
    this.phase = 'idle';
    this.runPhase = null;
    this.step = 0;
    this.totalSteps = 0;
    this.message = null;
    this.memory = null;
    this.metrics = [];
    this.evals = [];
    this.priorPoints = [];
    this.groups = [];
    this.runError = null;
  }

  /** Events of another run (a stale one) are ignored; while starting, the first run id seen is adopted. */
  private isOurs(runId: string): boolean {
    if (this.runId === null && this.phase === 'starting') this.runId = runId;
    return runId === this.runId;
  }

  /** The worker itself died (out of memory, a crash in its script): the run with it. */
  private handleCrash(message: string): void {
    if (this.isDetached || !['starting', 'running', 'paused'].includes(this.phase)) return;
    this.runError = message;
    this.phase = 'failed';
    this.pendingControl = null;
    this.log('PACT Lab: the trainer worker stopped:', message, {
      runId: this.runId,
      step: this.step,
      config: this.run?.config,
    });
    this.options.onRunChanged?.();
  }

  private log(...args: unknown[]): void {
    (this.options.logError ?? ((...a: unknown[]) => console.error(...a)))(...args);
  }

  handleEvent(e: WorkerEvent): void {
    // an evaluation's, not a run's (FtrlEvalState, BfclEvalState)
    if (e.type === 'ftrl-eval-progress' || e.type === 'bfcl-eval-progress') return;
    if (this.isDetached) return; // the worker holds another run than the one shown
    if (!this.isOurs(e.runId)) return;
    switch (e.type) {
      case 'progress': {
        const changed = e.state !== this.phase;
        // The worker sends 'rollouts' once, as a step begins.
        if (e.phase === 'rollouts') this.stepStartedAt = Date.now();
        this.step = e.step;
        this.totalSteps = e.totalSteps;
        this.runPhase = e.phase;
        this.message = e.message ?? null;
        if (e.memory) this.memory = e.memory;
        this.phase = e.state;
        if (e.state !== 'running')
          this.pendingControl = e.state === 'paused' && this.pendingControl === 'stop' ? 'stop' : null;
        // 'idle' comes after a pause's checkpoint is committed: the Runs list can offer it.
        if (changed || e.phase === 'idle') this.options.onRunChanged?.();
        return;
      }
      case 'metrics':
        this.metrics = [...this.metrics.filter((m) => m.step !== e.metrics.step), e.metrics];
        this.stepProgress = null;
        return;
      case 'step-progress':
        this.stepProgress = { step: e.step, progress: e.progress, elapsedMs: e.elapsedMs, receivedAt: Date.now() };
        return;
      case 'memory':
        this.memory = e.memory;
        return;
      case 'eval':
        this.evals = [...this.evals.filter((m) => m.step !== e.metrics.step), e.metrics];
        return;
      case 'rollouts':
        this.groups = e.groups;
        return;
      case 'run-error':
        this.runError = e.message;
        this.failure = e.failure;
        this.phase = 'failed';
        this.pendingControl = null;
        this.log(
          `PACT Lab: run "${e.failure.runName}" failed at step ${e.failure.step}: ${e.message}\n${formatFailureReport(e.failure)}`,
        );
        this.options.onRunChanged?.();
        return;
      default: {
        const unknown: never = e;
        throw new Error(`unknown worker event ${String((unknown as { type?: string }).type)}`);
      }
    }
  }
}
