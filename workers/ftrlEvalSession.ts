/**
 * The trainer worker's FTRL evaluation (the `eval-ftrl` request): loads
 * the policy (the shipped warm start, a saved run's newest checkpoint from IndexedDB, or a
 * Qwen3 folder the user picked), starts Pyodide in its own worker from this app's origin
 * (`<base>/pyodide/`; runPlatform.ts createTaskFileExecutor, as FTRL training runs), and runs the shared loop
 * (src/run/ftrlEval.ts: greedy rollouts, FTRL's Solve-R/P/F1 per category, prompts over
 * the window counted as promptTooLong). Progress goes out as `ftrl-eval-progress` events.
 *
 * Errors name what is wrong: the task file (no task in it), the policy (no run, no
 * checkpoint, a bad folder), or Pyodide (its load error and the URL it tried). A tool call
 * past its time limit does not fail the evaluation: it becomes FTRL's error observation and
 * is counted in `summary.toolCalls.timeouts`.
 */
import type { LanguageRoutingExecutor } from '../src/envs/ftrl/languageExecutor';
import { Qwen3Model, getQwen3Preset } from '../src/model/qwen3';
import { PrunedTokenizer } from '../src/model/tokenizer/prunedVocab';
import { inferQwen3Config } from '../src/run/checkpoint';
import { resolveConfig } from '../src/recipes/config';
import { evaluatePolicyOnFtrlTasks } from '../src/run/ftrlEval';
import { bindRenderChat } from '../src/recipes/policyVocab';
import { loadNamedPolicy, type Policy } from '../src/run/runAssets';
import { PactStore } from '../src/storage';
import { readCheckpointRecord } from './checkpointRecord';
import type { EvalPolicySpec, FtrlEvalPhase, FtrlEvalReport, FtrlEvalSettings, WorkerEvent } from './protocol';
import { createBrowserPlatform, createTaskFileExecutor, loadPython } from './runPlatform';
import { activateBackend } from './tfBrowser';

export interface FtrlEvalRequest {
  requestId: number;
  tasksText: string;
  fileName: string;
  policy: EvalPolicySpec;
  settings: FtrlEvalSettings;
}

/** A saved run's newest checkpoint as a policy. */
async function loadCheckpointPolicy(
  runId: string,
  source: Awaited<ReturnType<ReturnType<typeof createBrowserPlatform>['loadSourceTokenizer']>>,
): Promise<Policy> {
  const store = await PactStore.open();
  try {
    const run = await store.getRun(runId);
    if (!run) throw new Error(`no saved run "${runId}" in this browser`);
    const record = await store.loadLatestCheckpoint(runId);
    if (!record)
      throw new Error(`run "${runId}" has no checkpoint yet (runs save one when they pause, stop or finish)`);
    const { state, mapping, modelConfig } = readCheckpointRecord(record);
    const config =
      modelConfig ?? inferQwen3Config(state.weights, getQwen3Preset(resolveConfig(state.config).model.preset));
    const tensors = new Map(state.weights.map((w) => [w.name, { shape: w.shape, data: w.data }]));
    return {
      model: Qwen3Model.fromTensors(config, tensors),
      tokenizer: mapping ? new PrunedTokenizer(source, mapping) : source,
      mapping,
      source: `run ${runId}, checkpoint at step ${record.step}`,
    };
  } finally {
    store.close();
  }
}

/** The policy of an evaluation request (FTRL's and BFCL's): the warm start, a saved run's checkpoint, or a picked folder. */
export async function loadEvalPolicy(
  spec: EvalPolicySpec,
  platform: ReturnType<typeof createBrowserPlatform>,
  source: Awaited<ReturnType<ReturnType<typeof createBrowserPlatform>['loadSourceTokenizer']>>,
  executor: LanguageRoutingExecutor,
): Promise<Policy> {
  if (spec.kind === 'checkpoint') return loadCheckpointPolicy(spec.runId, source);
  if (spec.kind === 'warm-start') return loadNamedPolicy(platform, 'warm-start', { source, executor, log: () => {} });
  return {
    // the platform opens the sent files; the init string only names them in messages
    ...(await loadNamedPolicy(platform, `folder:${spec.name}`, { source, executor, log: () => {} })),
    source: `your Qwen3 folder "${spec.name}"`,
  };
}

export class FtrlEvalSession {
  private isCancelRequested = false;
  private activeId: number | null = null;

  constructor(private readonly post: (e: WorkerEvent) => void) {}

  get isActive(): boolean {
    return this.activeId !== null;
  }

  stop(): void {
    if (this.activeId === null) throw new Error('no FTRL evaluation is running');
    this.isCancelRequested = true;
  }

  async run(req: FtrlEvalRequest): Promise<FtrlEvalReport> {
    if (this.activeId !== null) throw new Error('an FTRL evaluation is already running: wait for it or stop it');
    this.activeId = req.requestId;
    this.isCancelRequested = false;
    const t0 = Date.now();
    const progress = (phase: FtrlEvalPhase, message: string, done = 0, total = 0) =>
      this.post({ type: 'ftrl-eval-progress', requestId: req.requestId, phase, message, done, total });
    let policy: Policy | null = null;
    let executor: LanguageRoutingExecutor | null = null;
    try {
      const { settings } = req;
      progress('loading', `starting tfjs (${settings.backend})…`);
      const selection = await activateBackend(settings.backend);
      const platform = createBrowserPlatform(req.policy.kind === 'folder' ? { modelFiles: req.policy.files } : {});
      const source = await platform.loadSourceTokenizer();
      // A task file's tools: Python in Pyodide, JavaScript ones in a fresh sandbox worker per call.
      const tools = await createTaskFileExecutor({ timeoutMs: settings.toolTimeoutMs });
      executor = tools.executor;
      progress('loading', 'loading the policy…');
      policy = await loadEvalPolicy(req.policy, platform, source, executor);
      const contextTokens = policy.model.config.max_position_embeddings;
      const routed = executor;
      let pyodideLoadMs: number | undefined;
      const summary = await evaluatePolicyOnFtrlTasks({
        tasksText: req.tasksText,
        // Only ids the tokenizer can decode (a folder's embedding may have padding rows past its vocabulary).
        policy: {
          generate: (p, o) => policy!.model.generate(p, { ...o, vocabLimit: policy!.tokenizer.vocabSize }),
        },
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
          progress('python', `loading Python (Pyodide) from ${tools.indexURL}…`);
          pyodideLoadMs = await loadPython(tools);
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
    } finally {
      executor?.dispose();
      policy?.model.dispose();
      this.activeId = null;
    }
  }
}
