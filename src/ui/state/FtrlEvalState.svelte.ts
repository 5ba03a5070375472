/**
 * The FTRL evaluation of the Task files panel as reactive state: sends
 * the `eval-ftrl` request to the trainer worker, follows its `ftrl-eval-progress` events, and
 * keeps the report (the table's rows) or the error naming what went wrong.
 */
import type { TrainerClient } from '../../../workers/client';
import type { EvalPolicySpec, FtrlEvalPhase, FtrlEvalReport, FtrlEvalSettings } from '../../../workers/protocol';

export type FtrlEvalStatus = 'idle' | 'running' | 'finished' | 'failed' | 'stopped';

export class FtrlEvalState {
  status = $state<FtrlEvalStatus>('idle');
  phase = $state<FtrlEvalPhase | null>(null);
  message = $state('');
  done = $state(0);
  total = $state(0);
  report = $state.raw<FtrlEvalReport | null>(null);
  error = $state<string | null>(null);

  private client: TrainerClient | null = null;
  private unsubscribe: (() => void) | null = null;

  attach(client: TrainerClient): void {
    this.client = client;
    this.unsubscribe = client.subscribe((e) => {
      if (e.type !== 'ftrl-eval-progress' || this.status !== 'running') return;
      this.phase = e.phase;
      this.message = e.message;
      this.done = e.done;
      this.total = e.total;
    });
  }

  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.client = null;
  }

  async evaluate(input: {
    tasksText: string;
    fileName: string;
    policy: EvalPolicySpec;
    settings: FtrlEvalSettings;
  }): Promise<void> {
    if (!this.client) {
      this.status = 'failed';
      this.error = 'Cannot evaluate: the trainer worker is not running in this page';
      return;
    }
    this.status = 'running';
    this.error = null;
    this.report = null;
    this.phase = 'loading';
    this.message = 'starting…';
    this.done = 0;
    this.total = 0;
    try {
      const res = await this.client.request({ type: 'eval-ftrl', ...input });
      if (res.type !== 'ftrl-eval') throw new Error(`unexpected reply "${res.type}" to eval-ftrl`);
      this.report = res.report;
      this.status = 'finished';
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.status = /^stopped after/.test(message) ? 'stopped' : 'failed';
      this.error = `The evaluation ${this.status === 'stopped' ? 'was stopped' : 'failed'}: ${message}`;
    }
  }

  async stop(): Promise<void> {
    try {
      await this.client?.request({ type: 'stop-eval' });
    } catch (e) {
      this.error = `Could not stop the evaluation: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
}
