/**
 * The trainer worker's FTRL evaluation (the `eval-ftrl` request): loads the policy and the
 * tasks' tools (taskEvalSession.ts withEvalPolicy, as the BFCL evaluation does), and runs the
 * shared loop (src/run/ftrlEval.ts: greedy rollouts, FTRL's Solve-R/P/F1 per category, prompts
 * over the window counted as promptTooLong). Python (Pyodide) starts only when a task fits the
 * window. Progress goes out as `ftrl-eval-progress` events.
 *
 * Errors name what is wrong: the task file (no task in it), the policy (no run, no
 * checkpoint, a bad folder), or Pyodide (its load error and the URL it tried). A tool call
 * past its time limit does not fail the evaluation: it becomes FTRL's error observation and
 * is counted in `summary.toolCalls.timeouts`.
 */
import { bindRenderChat } from '../src/recipes/policyVocab';
import { evaluatePolicyOnFtrlTasks } from '../src/run/ftrlEval';
import type { FtrlEvalPhase, FtrlEvalReport, FtrlEvalSettings, WorkerEvent } from './protocol';
import { TaskEvalSession, withEvalPolicy, type TaskEvalRequest } from './taskEvalSession';

export interface FtrlEvalRequest extends TaskEvalRequest {
  tasksText: string;
  fileName: string;
  settings: FtrlEvalSettings;
}

export class FtrlEvalSession extends TaskEvalSession<FtrlEvalRequest, FtrlEvalReport> {
  constructor(post: (e: WorkerEvent) => void) {
    super(post, { one: 'an FTRL evaluation', none: 'no FTRL evaluation' });
  }

  protected async evaluate(req: FtrlEvalRequest): Promise<FtrlEvalReport> {
    const t0 = Date.now();
    const progress = (phase: FtrlEvalPhase, message: string, done = 0, total = 0) =>
      this.post({ type: 'ftrl-eval-progress', requestId: req.requestId, phase, message, done, total });
    const { settings } = req;
    return withEvalPolicy(
      req,
      progress,
      async ({ selection, source, tools, policy, contextTokens, sampler, startPython }) => {
        const routed = tools.executor;
        let pyodideLoadMs: number | undefined;
        const summary = await evaluatePolicyOnFtrlTasks({
          tasksText: req.tasksText,
          policy: sampler,
          tokenizer: policy.tokenizer,
          contextTokens,
          renderChat: bindRenderChat(source),
          executor: routed,
          perCategory: settings.perCategory,
          maxTurns: settings.maxTurns,
          maxResponseTokens: settings.maxResponseTokens,
          isCancelled: () => this.isCancelRequested,
          readToolCounts: () => ({ ...routed.pythonCounts }),
          onProgress: (p) => {
            const over = `${p.promptTooLong} of ${p.selected} over the window`;
            progress(
              'rollouts',
              p.done === 0
                ? `running ${p.total} task${p.total === 1 ? '' : 's'} (${over})…`
                : `task ${p.done} of ${p.total}: line ${p.line} (${p.category}), ${p.calls} call${p.calls === 1 ? '' : 's'} · ${over}`,
              p.done,
              p.total,
            );
          },
          beforeRollouts: async () => {
            // Python runs only when a task fits; load it first so a broken Pyodide is named at once.
            pyodideLoadMs = await startPython();
          },
        });
        return {
          summary,
          fileName: req.fileName,
          policySource: policy.source,
          contextTokens,
          settings,
          backend: selection.backend,
          ...(selection.reason ? { fallbackReason: selection.reason } : {}),
          ...(pyodideLoadMs !== undefined ? { pyodideLoadMs } : {}),
          seconds: (Date.now() - t0) / 1000,
        };
      },
    );
  }
}
