/**
 * The FTRL evaluation of the Task files panel as reactive state (TaskEvalState.svelte.ts): sends
 * the `eval-ftrl` request to the trainer worker, follows its `ftrl-eval-progress` events, and
 * keeps the report (the table's rows) or the error naming what went wrong. Stop ends FTRL's loop
 * with an error ("stopped after k of n tasks"): the status is then 'stopped'.
 */
import type { EvalPolicySpec, FtrlEvalReport, FtrlEvalSettings } from '../../../workers/protocol';
import { TaskEvalState } from './TaskEvalState.svelte';

export class FtrlEvalState extends TaskEvalState<FtrlEvalReport> {
  constructor() {
    super('ftrl-eval-progress');
  }

  async evaluate(input: {
    tasksText: string;
    fileName: string;
    policy: EvalPolicySpec;
    settings: FtrlEvalSettings;
  }): Promise<void> {
    await this.runEvaluation(async (client) => {
      const res = await client.request({ type: 'eval-ftrl', ...input });
      if (res.type !== 'ftrl-eval') throw new Error(`unexpected reply "${res.type}" to eval-ftrl`);
      return res.report;
    });
  }

  protected override isStoppedError(message: string): boolean {
    return /^stopped after/.test(message);
  }
}
