/**
 * The trainer worker's BFCL evaluation (the `eval-bfcl` request): the Task files panel's
 * BFCL section as `pact eval-bfcl` runs it in Node (src/cli/commands/evalBfcl.ts), with the
 * same loop and rule (src/run/bfclEval.ts, src/envs/bfcl/). The page sends the texts of the
 * picked data files and the backend modules read from the user's copy of BFCL's source
 * (src/envs/bfcl/fileSource.ts); the policy loads as for the FTRL evaluation
 * (ftrlEvalSession.ts loadEvalPolicy); BFCL's backends run in Pyodide in its own worker,
 * started from this app's origin (runPlatform.ts createTaskFileExecutor). Each entry's
 * verdict goes out as a `bfcl-eval-progress` event. Stop ends after the current entry and
 * reports the entries done.
 */
import { parseBfclDataTexts, type BfclDataTexts } from '../src/envs/bfcl/fileSource';
import { BfclBackends, type BfclBackendSources } from '../src/envs/bfcl/pythonBackend';
import type { LanguageRoutingExecutor } from '../src/envs/ftrl/languageExecutor';
import { evaluatePolicyOnBfcl, summariseBfcl, type BfclEntryResult } from '../src/run/bfclEval';
import type { Policy } from '../src/run/runAssets';
import { loadEvalPolicy } from './ftrlEvalSession';
import type { BfclEvalReport, BfclEvalSettings, EvalPolicySpec, FtrlEvalPhase, WorkerEvent } from './protocol';
import { createBrowserPlatform, createTaskFileExecutor, loadPython } from './runPlatform';
import { activateBackend } from './tfBrowser';

export interface BfclEvalRequest {
  requestId: number;
  data: BfclDataTexts;
  sources: BfclBackendSources;
  policy: EvalPolicySpec;
  settings: BfclEvalSettings;
}

/** Thrown from the per-entry callback to end the loop when Stop was pressed. */
class StopRequested extends Error {}

/** The verdict of one entry, in words (the progress line; the CLI prints the same). */
export function describeBfclEntry(r: BfclEntryResult): string {
  const verdict = r.valid ? 'correct' : (r.errorType ?? r.status);
  return `${r.id}: ${verdict}${r.turn !== undefined ? ` (turn ${r.turn})` : ''}; ${r.steps} steps, ${r.generatedTokens} tokens`;
}

export class BfclEvalSession {
  private isCancelRequested = false;
  private activeId: number | null = null;

  constructor(private readonly post: (e: WorkerEvent) => void) {}

  get isActive(): boolean {
    return this.activeId !== null;
  }

  stop(): void {
    if (this.activeId === null) throw new Error('no BFCL evaluation is running');
    this.isCancelRequested = true;
  }

  async run(req: BfclEvalRequest): Promise<BfclEvalReport> {
    if (this.activeId !== null) throw new Error('a BFCL evaluation is already running: wait for it or stop it');
    this.activeId = req.requestId;
    this.isCancelRequested = false;
    const t0 = Date.now();
    const progress = (phase: FtrlEvalPhase, message: string, done = 0, total = 0, entry?: BfclEntryResult) =>
      this.post({ type: 'bfcl-eval-progress', requestId: req.requestId, phase, message, done, total, entry });
    let policy: Policy | null = null;
    let executor: LanguageRoutingExecutor | null = null;
    try {
      const { settings } = req;
      const files = parseBfclDataTexts(req.data, settings.limit);
      progress('loading', `starting tfjs (${settings.backend})…`);
      const selection = await activateBackend(settings.backend);
      const platform = createBrowserPlatform(req.policy.kind === 'folder' ? { modelFiles: req.policy.files } : {});
      const source = await platform.loadSourceTokenizer();
      const tools = await createTaskFileExecutor({ timeoutMs: settings.toolTimeoutMs });
      executor = tools.executor;
      progress('loading', 'loading the policy…');
      policy = await loadEvalPolicy(req.policy, platform, source, executor);
      progress('python', `loading Python (Pyodide) from ${tools.indexURL}…`);
      const pyodideLoadMs = await loadPython(tools);
      const backends = new BfclBackends(tools.python, req.sources, { timeoutMs: settings.toolTimeoutMs });
      const loaded = await backends.load();
      const classProblems: Record<string, string> = {};
      for (const cls of new Set(files.flatMap((f) => f.pairs.flatMap((p) => p.entry.involved_classes)))) {
        const problem = cls in loaded ? loaded[cls] : `no module in the picked source folder defines class ${cls}`;
        if (problem !== null) classProblems[cls] = problem;
      }
      const contextTokens = policy.model.config.max_position_embeddings;
      const total = files.reduce((n, f) => n + f.pairs.length, 0);
      progress('rollouts', `running ${total} entr${total === 1 ? 'y' : 'ies'}…`, 0, total);
      const done: BfclEntryResult[] = [];
      const model = policy.model;
      const tokenizer = policy.tokenizer;
      let summary;
      let isStopped = false;
      try {
        summary = await evaluatePolicyOnBfcl(
          files,
          {
            // Only ids the tokenizer can decode (a folder's embedding may have padding rows past its vocabulary).
            policy: { generate: (p, o) => model.generate(p, { ...o, vocabLimit: tokenizer.vocabSize }) },
            tokenizer,
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
    } finally {
      executor?.dispose();
      policy?.model.dispose();
      this.activeId = null;
    }
  }
}
