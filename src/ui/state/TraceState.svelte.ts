/**
 * The expert trace the Prefix levels and Token masks panels show, shared by both: the
 * seed of the example tasks, the picked task, and its teacher trace, made on demand.
 * The generator, the teacher and the sandbox load lazily (the first `ensureTrace()`,
 * when a trace panel comes into view); the tools run in the sandbox worker (generated
 * stubs are the project's own code, so where Web Workers are missing the in-process
 * executor runs them). Traces are cached per (seed, task).
 */
import type { ToolExecutor } from '../../envs/sandbox';
import type { Task } from '../../envs/types';
import type { ExpertTrace } from '../../traces/types';
import type { TraceVerdict } from '../../traces/verify';
import { EXAMPLE_TASK_COUNT, parseSeedText } from '../prefixView';

type TraceLib = typeof import('../traceExamples');

export interface LoadedTrace {
  seed: number;
  index: number;
  task: Task;
  trace: ExpertTrace;
  verdict: TraceVerdict;
  /** [turn][call]: the observation reads as a failed call. */
  failedObservations: boolean[][];
}

export class TraceState {
  seedText = $state('1');
  /** Index of the picked task among the examples (1: a multi-hop task). */
  index = $state(1);

  seedResult = $derived(parseSeedText(this.seedText));
  seedError = $derived('error' in this.seedResult ? this.seedResult.error : null);
  /** The last valid seed typed (a bad seed keeps the previous tasks on screen). */
  private lastSeed = $state(1);
  seed = $derived('seed' in this.seedResult ? this.seedResult.seed : this.lastSeed);

  /** The example tasks of `tasksSeed` (empty until the generator has loaded). */
  tasks = $state.raw<Task[]>([]);
  tasksSeed = $state<number | null>(null);

  loaded = $state.raw<LoadedTrace | null>(null);
  isLoading = $state(false);
  error = $state<string | null>(null);

  private readonly cache = new Map<string, LoadedTrace>();
  private readonly inFlight = new Map<string, Promise<LoadedTrace>>();
  private lib: Promise<TraceLib> | null = null;
  private executor: Promise<ToolExecutor> | null = null;
  private requestId = 0;

  setSeedText(text: string): void {
    this.seedText = text;
    const parsed = parseSeedText(text);
    if ('seed' in parsed) this.lastSeed = parsed.seed;
  }

  select(index: number): void {
    if (Number.isInteger(index) && index >= 0 && index < EXAMPLE_TASK_COUNT) this.index = index;
  }

  /**
   * Generates the tasks of the current seed and builds (or takes from the cache) the
   * trace of the picked task; the latest request wins.
   */
  async ensureTrace(): Promise<void> {
    const seed = this.seed;
    const index = this.index;
    const key = `${seed}/${index}`;
    if (this.loaded && this.loaded.seed === seed && this.loaded.index === index) return;
    const id = ++this.requestId;
    this.isLoading = true;
    this.error = null;
    try {
      const lib = await this.openLib();
      if (this.tasksSeed !== seed) {
        const tasks = lib.generateExampleTasks(seed);
        if (id !== this.requestId) return;
        this.tasks = tasks;
        this.tasksSeed = seed;
      }
      let pending = this.inFlight.get(key);
      const cached = this.cache.get(key);
      if (!cached && !pending) {
        const task = this.tasks[index];
        pending = this.openExecutor()
          .then((executor) => lib.buildExampleTrace(task, index, seed, executor))
          .then(({ trace, verdict }) => ({
            seed,
            index,
            task,
            trace,
            verdict,
            failedObservations: lib.listFailedObservations(trace),
          }));
        this.inFlight.set(key, pending);
      }
      const result = cached ?? (await pending!);
      this.cache.set(key, result);
      if (id === this.requestId) this.loaded = result;
    } catch (e) {
      if (id === this.requestId)
        this.error = `Could not build the expert trace of task #${index} (seed ${seed}): ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      this.inFlight.delete(key);
      if (id === this.requestId) this.isLoading = false;
    }
  }

  private openLib(): Promise<TraceLib> {
    this.lib ??= import('../traceExamples');
    this.lib.catch(() => (this.lib = null)); // let a later call retry
    return this.lib;
  }

  private openExecutor(): Promise<ToolExecutor> {
    this.executor ??= import('../../envs/sandbox').then((sandbox) =>
      sandbox.createWorkerExecutor().catch((): ToolExecutor => new sandbox.InProcessExecutor()),
    );
    return this.executor;
  }

  dispose(): void {
    void this.executor?.then((e) => e.dispose());
    this.executor = null;
  }
}
