/**
 * The page's training run as reactive state: start / pause / resume / step / stop sent
 * to the trainer worker through TrainerClient, and the events it pushes (progress,
 * metrics, eval, rollouts, run-error) kept for the Live charts and Rollout inspector.
 * The setup in the URL is the source of a run's config. Errors are kept where they
 * happen: `startError` beside the Train button (naming the config field), `controlError`
 * for a pause/step/stop the worker refused, `runError` for a run that failed midway.
 */
import type { TrainerClient } from '../../../workers/client';
import type { BackendName, MemoryUsage, RolloutGroupView, RunPhase, WorkerEvent } from '../../../workers/protocol';
import type { TrainConfigInput } from '../../recipes/config';
import type { EvalMetrics, StepMetrics } from '../../recipes/types';
import type { RunRecord } from '../../storage/schema';
import { mergeMetricPoints, toMetricPoint, type MetricPoint } from '../metricSeries';
import { toFolderInit } from '../modelFolder';
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
}

export class TrainingState {
  runId = $state<string | null>(null);
  run = $state.raw<RunRecord | null>(null);
  backend = $state<BackendName | null>(null);
  fallbackReason = $state<string | null>(null);
  nParams = $state(0);
  /** On wasm: the threads tfjs-wasm computes with (null on other backends or before a run). */
  wasmThreads = $state<number | null>(null);
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

  startError = $state<string | null>(null);
  controlError = $state<string | null>(null);
  runError = $state<string | null>(null);
  isBusy = $state(false);

  /** Every step of the current run (stored + live, evals folded in). */
  points = $derived(mergeMetricPoints(this.priorPoints, this.metrics.map(toMetricPoint), this.evals.map(toMetricPoint)));
  latestMetrics = $derived<StepMetrics | null>(this.metrics.length > 0 ? this.metrics[this.metrics.length - 1] : null);
  hasRun = $derived(this.runId !== null);

  private client: TrainerClient | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly options: TrainingOptions = {}) {}

  attach(client: TrainerClient): void {
    this.detach();
    this.client = client;
    this.unsubscribe = client.subscribe((e) => this.handleEvent(e));
  }

  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.client = null;
  }

  controls = $derived(computeControls(this.phase, this.isBusy));

  /**
   * Starts a run with `config` (the setup's config input), or resumes a stored run.
   * `localError` is the setup's own validation message: when given, nothing is sent.
   */
  async start(config: TrainConfigInput, opts: { resumeRunId?: string; localError?: string; modelFolder?: StartModelFolder | null } = {}): Promise<void> {
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
      const sent: TrainConfigInput = folder ? { ...config, model: { ...config.model, init: toFolderInit(folder.name) } } : config;
      const res = await this.client.request({
        type: 'start',
        config: sent,
        ...(opts.resumeRunId ? { resumeRunId: opts.resumeRunId } : {}),
        // a plain array of the File objects: a $state proxy of the list would not clone
        ...(folder ? { modelFiles: [...folder.files] } : {}),
      });
      if (res.type !== 'started') throw new Error(`unexpected reply "${res.type}" to start`);
      this.run = res.run;
      this.runId = res.run.id;
      this.backend = res.backend;
      this.fallbackReason = res.fallbackReason ?? null;
      this.nParams = res.nParams;
      this.wasmThreads = res.wasmThreads ?? null;
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

  resume(): Promise<void> {
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
    if (this.phase === 'running' || this.phase === 'paused') await this.stop();
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
      // The worker's progress events carry the new state; these keep the buttons right meanwhile.
      if (type === 'pause' && this.phase === 'running') this.phase = 'paused';
      if (type === 'resume' && this.phase === 'paused') this.phase = 'running';
      if (type === 'stop') this.phase = 'stopped';
    } catch (e) {
      this.controlError = `${type[0].toUpperCase()}${type.slice(1)} failed: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      this.isBusy = false;
    }
  }

  private clearRun(): void {
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

  handleEvent(e: WorkerEvent): void {
    if (e.type === 'ftrl-eval-progress') return; // an FTRL evaluation's, not a run's (FtrlEvalState)
    if (!this.isOurs(e.runId)) return;
    switch (e.type) {
      case 'progress': {
        const changed = e.state !== this.phase;
        this.step = e.step;
        this.totalSteps = e.totalSteps;
        this.runPhase = e.phase;
        this.message = e.message ?? null;
        if (e.memory) this.memory = e.memory;
        this.phase = e.state;
        // 'idle' comes after a pause's checkpoint is committed: the Runs list can offer it.
        if (changed || e.phase === 'idle') this.options.onRunChanged?.();
        return;
      }
      case 'metrics':
        this.metrics = [...this.metrics.filter((m) => m.step !== e.metrics.step), e.metrics];
        return;
      case 'eval':
        this.evals = [...this.evals.filter((m) => m.step !== e.metrics.step), e.metrics];
        return;
      case 'rollouts':
        this.groups = e.groups;
        return;
      case 'run-error':
        this.runError = e.message;
        this.phase = 'failed';
        this.options.onRunChanged?.();
        return;
      default: {
        const unknown: never = e;
        throw new Error(`unknown worker event ${String((unknown as { type?: string }).type)}`);
      }
    }
  }
}
