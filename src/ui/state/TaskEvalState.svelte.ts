/**
 * What the Task files panel's two evaluations share as reactive state (FtrlEvalState,
 * BfclEvalState): one request to the trainer worker, its progress events followed while it
 * runs (phase, message, done of total), then the report, or the error in words; and Stop.
 * Each subclass sends its own request and reads its own events' extras.
 */
import type { TrainerClient } from '../../../workers/client';
import type { FtrlEvalPhase, WorkerEvent } from '../../../workers/protocol';

export type TaskEvalStatus = 'idle' | 'running' | 'finished' | 'failed' | 'stopped';

/** The progress events of the two evaluations. */
export type TaskEvalProgressEvent = Extract<WorkerEvent, { type: 'ftrl-eval-progress' | 'bfcl-eval-progress' }>;

/** What an evaluation does instead of sending its request: the worker is there but an input is missing. */
export interface EvalRefusal {
  refusal: string;
}

export abstract class TaskEvalState<TReport> {
  status = $state<TaskEvalStatus>('idle');
  phase = $state<FtrlEvalPhase | null>(null);
  message = $state('');
  done = $state(0);
  total = $state(0);
  report = $state.raw<TReport | null>(null);
  error = $state<string | null>(null);

  private client: TrainerClient | null = null;
  private unsubscribe: (() => void) | null = null;

  /** `progressType`: the events this evaluation follows. */
  constructor(private readonly progressType: TaskEvalProgressEvent['type']) {}

  attach(client: TrainerClient): void {
    this.client = client;
    this.unsubscribe = client.subscribe((e) => {
      if (e.type !== this.progressType || this.status !== 'running') return;
      const progress = e as TaskEvalProgressEvent;
      this.phase = progress.phase;
      this.message = progress.message;
      this.done = progress.done;
      this.total = progress.total;
      this.onProgress(progress);
    });
  }

  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.client = null;
  }

  async stop(): Promise<void> {
    try {
      await this.client?.request({ type: 'stop-eval' });
    } catch (e) {
      this.error = `Could not stop the evaluation: ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  /** Reads what a subclass keeps from a progress event beside the shared fields (BFCL: the entry's verdict). */
  protected onProgress(_event: TaskEvalProgressEvent): void {}

  /** Clears what a subclass keeps of the previous evaluation, as a new one starts. */
  protected onStart(): void {}

  /** True when the report says Stop ended the evaluation early (BFCL reports the entries done). */
  protected isStoppedReport(_report: TReport): boolean {
    return false;
  }

  /** True when the worker's error is Stop ending the evaluation (FTRL's loop throws "stopped after …"). */
  protected isStoppedError(_message: string): boolean {
    return false;
  }

  /**
   * Runs one evaluation: refuses without a worker, or when `send` is a refusal; else resets the
   * progress, sends the request and keeps its report, or its error in words.
   */
  protected async runEvaluation(send: ((client: TrainerClient) => Promise<TReport>) | EvalRefusal): Promise<void> {
    if (!this.client) return this.refuse('Cannot evaluate: the trainer worker is not running in this page');
    if ('refusal' in send) return this.refuse(send.refusal);
    this.status = 'running';
    this.error = null;
    this.report = null;
    this.onStart();
    this.phase = 'loading';
    this.message = 'starting…';
    this.done = 0;
    this.total = 0;
    try {
      const report = await send(this.client);
      this.report = report;
      this.status = this.isStoppedReport(report) ? 'stopped' : 'finished';
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.status = this.isStoppedError(message) ? 'stopped' : 'failed';
      this.error = `The evaluation ${this.status === 'stopped' ? 'was stopped' : 'failed'}: ${message}`;
    }
  }

  private refuse(reason: string): void {
    this.status = 'failed';
    this.error = reason;
  }
}
