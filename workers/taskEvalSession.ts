/**
 * What the trainer worker's two task-file evaluations share (ftrlEvalSession.ts: `eval-ftrl`,
 * bfclEvalSession.ts: `eval-bfcl`): one evaluation at a time, stopped between tasks when Stop is
 * pressed (TaskEvalSession), and what every evaluation loads before its first rollout, disposed
 * of when it ends (withEvalPolicy): tfjs's backend, Qwen3's tokenizer, the task file's tool
 * executor (Python in Pyodide, started from this app's origin by runPlatform.ts) and the
 * policy (the shipped warm start, a saved run's newest checkpoint from IndexedDB, or a Qwen3
 * folder the user picked).
 */
import type { LanguageRoutingExecutor } from '../src/envs/ftrl/languageExecutor';
import type { BackendName, BackendSelection } from '../src/model/backend';
import { Qwen3Model, getQwen3Preset } from '../src/model/qwen3';
import { configureEngineKernels } from '../src/model/engine/runtime';
import { PrunedTokenizer } from '../src/model/tokenizer/prunedVocab';
import type { Qwen3Tokenizer } from '../src/model/tokenizer/qwen3Tokenizer';
import { resolveConfig } from '../src/recipes/config';
import type { PolicySampler } from '../src/recipes/types';
import { inferQwen3Config } from '../src/run/checkpoint';
import { loadNamedPolicy, type Policy, type RunPlatform } from '../src/run/runAssets';
import { PactStore } from '../src/storage';
import { readCheckpointRecord } from './checkpointRecord';
import type { EvalPolicySpec, FtrlEvalPhase, WorkerEvent } from './protocol';
import { createBrowserPlatform, createTaskFileExecutor, loadPython, type TaskFileExecutor } from './runPlatform';
import { activateBackend } from './tfBrowser';

/** What both evaluation requests carry besides their tasks. */
export interface TaskEvalRequest {
  requestId: number;
  policy: EvalPolicySpec;
  settings: { backend: BackendName; toolTimeoutMs: number };
}

/** A saved run's newest checkpoint as a policy. */
async function loadCheckpointPolicy(runId: string, source: Qwen3Tokenizer): Promise<Policy> {
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
  platform: RunPlatform,
  source: Qwen3Tokenizer,
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

/** What an evaluation runs with, loaded by withEvalPolicy. */
export interface EvalPolicyRun {
  /** The tfjs backend in use, and why it is not the one asked for (`reason`). */
  selection: BackendSelection;
  /** Qwen3's tokenizer (full vocabulary); the policy's may be a pruned view of it. */
  source: Qwen3Tokenizer;
  tools: TaskFileExecutor;
  policy: Policy;
  /** The model's window (max_position_embeddings). */
  contextTokens: number;
  /** The policy's greedy sampler, limited to ids the tokenizer can decode (a folder's embedding may have padding rows past its vocabulary). */
  sampler: PolicySampler;
  /** Starts Python (Pyodide) for the tools, saying so first; its load time in ms. */
  startPython: () => Promise<number>;
}

/**
 * Loads what `req` evaluates with (progress in the 'loading' phase), runs `evaluate` on it, and
 * disposes of the tool executor and the model after, whatever happens.
 */
export async function withEvalPolicy<T>(
  req: TaskEvalRequest,
  progress: (phase: FtrlEvalPhase, message: string) => void,
  evaluate: (run: EvalPolicyRun) => Promise<T>,
): Promise<T> {
  let policy: Policy | null = null;
  let tools: TaskFileExecutor | null = null;
  try {
    const { settings } = req;
    progress('loading', `starting tfjs (${settings.backend})…`);
    const selection = await activateBackend(settings.backend);
    // An evaluation has no kernels setting: the default ones, whatever a run before it asked for.
    await configureEngineKernels('simd');
    const platform = createBrowserPlatform(req.policy.kind === 'folder' ? { modelFiles: req.policy.files } : {});
    const source = await platform.loadSourceTokenizer();
    // A task file's tools: Python in Pyodide, JavaScript ones in a fresh sandbox worker per call.
    tools = await createTaskFileExecutor({ timeoutMs: settings.toolTimeoutMs });
    progress('loading', 'loading the policy…');
    policy = await loadEvalPolicy(req.policy, platform, source, tools.executor);
    const { model, tokenizer } = policy;
    const taskTools = tools;
    return await evaluate({
      selection,
      source,
      tools,
      policy,
      contextTokens: model.config.max_position_embeddings,
      sampler: { generate: (p, o) => model.generate(p, { ...o, vocabLimit: tokenizer.vocabSize }) },
      startPython: () => {
        progress('python', `loading Python (Pyodide) from ${taskTools.indexURL}…`);
        return loadPython(taskTools);
      },
    });
  } finally {
    tools?.executor.dispose();
    policy?.model.dispose();
  }
}

/** One task-file evaluation at a time in this worker, and Stop for it. */
export abstract class TaskEvalSession<TRequest extends TaskEvalRequest, TReport> {
  /** Set by Stop; the evaluation reads it after each task. */
  protected isCancelRequested = false;
  private activeId: number | null = null;

  constructor(
    protected readonly post: (e: WorkerEvent) => void,
    /** The evaluation in the refusals' words: "an FTRL evaluation", "no FTRL evaluation". */
    private readonly names: { one: string; none: string },
  ) {}

  get isActive(): boolean {
    return this.activeId !== null;
  }

  stop(): void {
    if (this.activeId === null) throw new Error(`${this.names.none} is running`);
    this.isCancelRequested = true;
  }

  async run(req: TRequest): Promise<TReport> {
    if (this.activeId !== null) throw new Error(`${this.names.one} is already running: wait for it or stop it`);
    this.activeId = req.requestId;
    this.isCancelRequested = false;
    try {
      return await this.evaluate(req);
    } finally {
      this.activeId = null;
    }
  }

  /** The evaluation itself, its progress posted as events carrying `req.requestId`. */
  protected abstract evaluate(req: TRequest): Promise<TReport>;
}
