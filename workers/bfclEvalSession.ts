/**
 * The trainer worker's BFCL evaluation (the `eval-bfcl` request): the Task files panel's
 * BFCL section as `pact eval-bfcl` runs it in Node (src/cli/commands/evalBfcl.ts), with the
 * same loop and rule (src/run/bfclEval.ts, src/envs/bfcl/). The page sends the texts of the
 * picked data files and the backend modules read from the user's copy of BFCL's source
 * (src/envs/bfcl/fileSource.ts); the policy and the tools load as for the FTRL evaluation
 * (taskEvalSession.ts withEvalPolicy); BFCL's backends run in that Pyodide. Each entry's
 * verdict goes out as a `bfcl-eval-progress` event. Stop ends after the current entry and
 * reports the entries done.
 */
import { parseBfclDataTexts, type BfclDataTexts } from '../src/envs/bfcl/fileSource';
import { BfclBackends, type BfclBackendSources } from '../src/envs/bfcl/pythonBackend';
import { evaluatePolicyOnBfcl, summariseBfcl, type BfclEntryResult } from '../src/run/bfclEval';
import type { BfclEvalReport, BfclEvalSettings, FtrlEvalPhase, WorkerEvent } from './protocol';
import { TaskEvalSession, withEvalPolicy, type TaskEvalRequest } from './taskEvalSession';

export interface BfclEvalRequest extends TaskEvalRequest {
  data: BfclDataTexts;
  sources: BfclBackendSources;
  settings: BfclEvalSettings;
}

/** Thrown from the per-entry callback to end the loop when Stop was pressed. */
class StopRequested extends Error {}

/** The verdict of one entry, in words (the progress line; the CLI prints the same). */
export function describeBfclEntry(r: BfclEntryResult): string {
  const verdict = r.valid ? 'correct' : (r.errorType ?? r.status);
  return `${r.id}: ${verdict}${r.turn !== undefined ? ` (turn ${r.turn})` : ''}; ${r.steps} steps, ${r.generatedTokens} tokens`;
}

export class BfclEvalSession extends TaskEvalSession<BfclEvalRequest, BfclEvalReport> {
  constructor(post: (e: WorkerEvent) => void) {
    super(post, { one: 'a BFCL evaluation', none: 'no BFCL evaluation' });
  }

  protected async evaluate(req: BfclEvalRequest): Promise<BfclEvalReport> {
    const t0 = Date.now();
    const progress = (phase: FtrlEvalPhase, message: string, done = 0, total = 0, entry?: BfclEntryResult) =>
      this.post({ type: 'bfcl-eval-progress', requestId: req.requestId, phase, message, done, total, entry });
    const { settings } = req;
    const files = parseBfclDataTexts(req.data, settings.limit);
    return withEvalPolicy(
      req,
      progress,
      async ({ selection, source, tools, policy, contextTokens, sampler, startPython }) => {
        const pyodideLoadMs = await startPython();
        const backends = new BfclBackends(tools.python, req.sources, { timeoutMs: settings.toolTimeoutMs });
        const loaded = await backends.load();
        const classProblems: Record<string, string> = {};
        for (const cls of new Set(files.flatMap((f) => f.pairs.flatMap((p) => p.entry.involved_classes)))) {
          const problem = cls in loaded ? loaded[cls] : `no module in the picked source folder defines class ${cls}`;
          if (problem !== null) classProblems[cls] = problem;
        }
        const total = files.reduce((n, f) => n + f.pairs.length, 0);
        progress('rollouts', `running ${total} entr${total === 1 ? 'y' : 'ies'}…`, 0, total);
        const done: BfclEntryResult[] = [];
        let summary;
        let isStopped = false;
        try {
          summary = await evaluatePolicyOnBfcl(
            files,
            {
              policy: sampler,
              tokenizer: policy.tokenizer,
              renderChat: (messages, o) => source.renderChat(messages, o),
              backends,
              contextTokens,
              maxResponseTokens: settings.maxResponseTokens,
              maxStepsPerTurn: settings.maxSteps,
            },
            (r, n, of) => {
              done.push(r);
              progress('rollouts', `entry ${n} of ${of}: ${describeBfclEntry(r)}`, n, of, r);
              if (this.isCancelRequested && n < of) throw new StopRequested();
            },
          );
        } catch (e) {
          if (!(e instanceof StopRequested)) throw e;
          summary = summariseBfcl(done);
          isStopped = true;
        }
        return {
          summary,
          policySource: policy.source,
          contextTokens,
          classProblems,
          settings,
          backend: selection.backend,
          ...(selection.reason ? { fallbackReason: selection.reason } : {}),
          pyodideLoadMs,
          isStopped,
          seconds: (Date.now() - t0) / 1000,
        };
      },
    );
  }
}
