/**
 * One training run inside the worker: loads the run's assets, drives `Trainer.step()`
 * (PACT Algorithm 1 or the chosen recipe), and after each step stores the metrics in
 * IndexedDB and pushes them to the page with the rollout views; evaluates every
 * `evalEvery` steps; writes a checkpoint (one IndexedDB transaction, older ones pruned
 * after it commits) every `checkpointEvery` steps and when the run pauses, stops or ends.
 * Pause takes effect between steps; `step` runs exactly one step while paused.
 */
import * as tf from '@tensorflow/tfjs-core';
import { checkResumableState } from '../src/recipes/checkpoint';
import { resolveConfig, type TrainConfig, type TrainConfigInput } from '../src/recipes/config';
import '../src/recipes';
import { createRunTrainer, prepareRunAssetsWith, type RunAssets } from '../src/recipes/runAssets';
import { buildRolloutViews } from '../src/recipes/rolloutViews';
import type { Trainer } from '../src/recipes/trainer';
import { PactStore } from '../src/storage';
import type { RunRecord } from '../src/storage/schema';
import { buildCheckpointRecord, readCheckpointRecord } from './checkpointRecord';
import { toMemoryUsage, type BackendName, type MemoryUsage, type RunPhase, type RunState, type WorkerEvent } from './protocol';
import { createBrowserPlatform } from './runPlatform';
import { activateBackend } from './tfBrowser';

export interface StartedRun {
  run: RunRecord;
  backend: BackendName;
  fallbackReason?: string;
  nParams: number;
  /** On wasm: the threads tfjs-wasm computes with. */
  wasmThreads?: number;
}

function newRunId(config: TrainConfig): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${config.recipe}-s${config.seed}-${stamp}-${Math.floor(Math.random() * 1e4).toString().padStart(4, '0')}`;
}

/** Numeric values of a metrics record (drops the recipe name). */
function numericValues(m: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(m)) if (typeof v === 'number') out[k] = v;
  return out;
}

/** tfjs memory in use now (numBytes, numTensors; on WebGPU also the GPU buffer bytes). */
function readMemory(): MemoryUsage | undefined {
  try {
    return toMemoryUsage(tf.getBackend() ?? 'none', tf.memory() as unknown as Record<string, unknown>);
  } catch {
    return undefined; // no backend yet: nothing to report
  }
}

export class TrainingSession {
  private trainer: Trainer | null = null;
  private assets: RunAssets | null = null;
  private store: PactStore | null = null;
  private run: RunRecord | null = null;
  private totalSteps = 0;
  private state: RunState = 'stopped';
  private isPauseRequested = false;
  private isStopRequested = false;
  private pendingSingleSteps = 0;
  private wake: (() => void) | null = null;

  constructor(private readonly post: (e: WorkerEvent) => void) {}

  get isActive(): boolean {
    return this.trainer !== null;
  }

  private progress(phase: RunPhase, message?: string): void {
    if (!this.run) return;
    this.post({ type: 'progress', runId: this.run.id, step: this.trainer?.completedSteps ?? 0, totalSteps: this.totalSteps, phase, state: this.state, message, memory: readMemory() });
  }

  /** Loads everything and starts the loop (not awaited): the reply goes out at once. */
  async start(input: TrainConfigInput, opts: { resumeRunId?: string; maxSteps?: number; modelFiles?: File[] } = {}): Promise<StartedRun> {
    if (this.trainer) throw new Error('a run is already in progress: stop it before starting another');
    this.store ??= await PactStore.open();
    const store = this.store;
    let config: TrainConfig;
    let resume: ReturnType<typeof readCheckpointRecord> | null = null;
    if (opts.resumeRunId) {
      const run = await store.getRun(opts.resumeRunId);
      if (!run) throw new Error(`no saved run "${opts.resumeRunId}" to resume`);
      const ckpt = await store.loadLatestCheckpoint(run.id);
      if (!ckpt) throw new Error(`run "${run.id}" has no checkpoint to resume from`);
      resume = readCheckpointRecord(ckpt);
      config = resolveConfig(resume.state.config);
      checkResumableState({ ...resume.state, config });
      this.run = run;
    } else {
      config = resolveConfig(input);
    }
    const selection = await activateBackend(config.backend ?? 'auto');
    // A checkpoint that carries its model shape rebuilds the policy itself (a folder or an
    // imported run resumes without its files); older records reload the run's model.init.
    const checkpointPolicy = resume?.modelConfig ? { modelConfig: resume.modelConfig, mapping: resume.mapping } : undefined;
    const assets = await prepareRunAssetsWith(createBrowserPlatform({ modelFiles: opts.modelFiles }), config, { checkpointPolicy });
    const trainer = createRunTrainer(config, assets);
    if (resume) trainer.importState(resume.state);
    if (!this.run) {
      this.run = await store.createRun({ id: newRunId(config), name: config.name, recipe: config.recipe, config: config as unknown as Record<string, unknown> });
    }
    this.trainer = trainer;
    this.assets = assets;
    this.totalSteps = Math.min(config.steps, opts.maxSteps ?? config.steps);
    this.state = 'running';
    this.isPauseRequested = false;
    this.isStopRequested = false;
    this.run = await store.updateRun(this.run.id, { status: 'running', error: undefined });
    const started: StartedRun = {
      run: this.run,
      backend: selection.backend,
      fallbackReason: selection.reason,
      nParams: assets.policy.model.countParams(),
      ...(selection.wasmThreads !== undefined ? { wasmThreads: selection.wasmThreads } : {}),
    };
    void this.loop();
    return started;
  }

  pause(): void {
    if (!this.trainer) throw new Error('no run to pause');
    this.isPauseRequested = true;
  }

  resume(): void {
    if (!this.trainer) throw new Error('no run to resume');
    this.isPauseRequested = false;
    this.wake?.();
  }

  stepOnce(): void {
    if (!this.trainer) throw new Error('no run to step');
    if (!this.isPauseRequested) throw new Error('single steps are for a paused run: pause it first');
    this.pendingSingleSteps++;
    this.wake?.();
  }

  stop(): void {
    if (!this.trainer) throw new Error('no run to stop');
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
    if (this.pendingSingleSteps > 0) this.pendingSingleSteps--;
    else this.state = 'running';
  }

  private async setStatus(status: RunRecord['status'], error?: string): Promise<void> {
    if (this.store && this.run) this.run = await this.store.updateRun(this.run.id, { status, error });
  }

  private async checkpoint(): Promise<void> {
    const { trainer, store, run, assets } = this;
    if (!trainer || !store || !run || !assets) return;
    if (trainer.completedSteps === 0) return;
    if ((await store.getRun(run.id))?.lastCheckpointId === `${run.id}@${trainer.completedSteps}`) return;
    this.progress('checkpoint');
    await store.saveCheckpoint(buildCheckpointRecord(run.id, await trainer.exportState(), assets.policy.mapping, assets.policy.model.config), { keepLast: 2 });
  }

  private async loop(): Promise<void> {
    const trainer = this.trainer!;
    const store = this.store!;
    const runId = this.run!.id;
    const c = trainer.config;
    try {
      if ((this.totalSteps === 0 || c.evalAtStart) && trainer.completedSteps === 0) {
        // steps = 0 (evaluate only) or evalAtStart: the held-out evaluation of the starting policy.
        this.progress('eval');
        const evalMetrics = await trainer.evaluate();
        this.post({ type: 'eval', runId, metrics: evalMetrics });
        await store.appendMetrics(runId, [{ step: 0, values: numericValues(evalMetrics) }]);
      }
      while (trainer.completedSteps < this.totalSteps && !this.isStopRequested) {
        await this.waitWhilePaused();
        if (this.isStopRequested) break;
        this.progress('rollouts');
        const metrics = await trainer.step();
        metrics['memory/bytes'] = tf.memory().numBytes;
        const values = numericValues(metrics);
        this.post({ type: 'metrics', runId, metrics });
        this.post({
          type: 'rollouts',
          runId,
          groups: buildRolloutViews(metrics.step, trainer.lastGroups, trainer.lastScores, trainer.lastRoutes, c, trainer.tokenizer),
        });
        const s = trainer.completedSteps;
        if (c.evalEvery > 0 && (s % c.evalEvery === 0 || s === this.totalSteps)) {
          this.progress('eval');
          const evalMetrics = await trainer.evaluate();
          Object.assign(values, numericValues(evalMetrics));
          this.post({ type: 'eval', runId, metrics: evalMetrics });
        }
        await store.appendMetrics(runId, [{ step: metrics.step, values }]);
        if (c.checkpointEvery > 0 && s % c.checkpointEvery === 0) await this.checkpoint();
        if (this.state === 'paused') this.progress('idle'); // a single step while paused
      }
      await this.checkpoint();
      this.state = trainer.completedSteps >= this.totalSteps ? 'finished' : 'stopped';
      await this.setStatus(this.state === 'finished' ? 'finished' : 'paused');
      this.progress('idle');
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.state = 'failed';
      await this.setStatus('failed', message).catch(() => undefined);
      this.post({ type: 'run-error', runId, message });
      this.progress('idle', message);
    } finally {
      this.dispose();
    }
  }

  private dispose(): void {
    const { trainer, assets } = this;
    this.trainer = null;
    this.assets = null;
    trainer?.dispose();
    assets?.policy.model.dispose();
    const ex = assets?.executor as { dispose?: () => void } | undefined;
    ex?.dispose?.();
  }
}
