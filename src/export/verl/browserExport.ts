/**
 * The VeRL export in the app: the run setup's config built into the same files as
 * `pact export verl` (buildVerlExport.ts, with the sources Vite supplies: browserSources.ts),
 * packed into one .tar under one folder, launch.sh executable, for `tar -xf`. The run setup
 * imports this module on click, so none of it (parquet writer, Python files, tool server)
 * is in the page's first download. An FTRL run reads its lines and the tools' Python sources
 * from the task file loaded in the page (createPageTaskFileReader).
 */
import type { TrainConfig } from '../../recipes/config';
import { writeTarChunks, type TarEntry } from '../../storage/tar';
import { InProcessExecutor } from '../../envs/sandbox/inProcessExecutor';
import type { ToolExecutor } from '../../envs/sandbox/types';
import { buildVerlExport, type VerlExportFile, type VerlExportPhase } from './buildVerlExport';
import { readBrowserSources } from './browserSources';
import type { ReadTaskFile } from './ftrlTasks';

/** The experiment name the app's exports carry (in the YAML's first line and the README's title). */
export const APP_EXPERIMENT_NAME = 'run-setup';

export interface VerlArchive {
  /** `pact-verl-<recipe>-s<seed>.tar` */
  fileName: string;
  /** The folder every file is in (`tar -xf` makes it). */
  folder: string;
  /** The archive's bytes as chunks (for a Blob). */
  chunks: Uint8Array[];
  /** Paths inside the folder, in order. */
  paths: string[];
  bytes: number;
  nTrainTasks: number;
  nTestTasks: number;
}

/** A task file the page holds: the one loaded in the Task files panel. */
export interface PageTaskFile {
  name: string;
  text: string;
}

/**
 * Reads the task file an FTRL run names, as the trainer worker does (workers/runPlatform.ts): the
 * page holds one file, loaded in the Task files panel, and a config may name only that one.
 */
export function createPageTaskFileReader(taskFile: PageTaskFile | null | undefined): ReadTaskFile {
  return async (path) => {
    if (!taskFile)
      throw new Error(
        `config.tasks.source "ftrl": no task file is loaded${path ? ` (the run names ${path})` : ''}: a page cannot open a file by name, so load it in the Task files panel`,
      );
    if (path !== undefined && path !== taskFile.name)
      throw new Error(
        `config.tasks: the run names the task file ${path}, but the page holds ${taskFile.name} (the file loaded in the Task files panel); load ${path} there`,
      );
    return { name: taskFile.name, text: taskFile.text };
  };
}

/** The run's id as an experiment file names it: `<run name>-s<seed>` (the config's name is the run's). */
export function describeRunId(config: Pick<TrainConfig, 'name' | 'seed'>): string {
  return `${config.name}-s${config.seed}`;
}

/**
 * An executor that lets the page repaint while the expert traces are made on its thread: a
 * call made `everyMs` or more after the last pause first waits one macrotask. The answers are
 * the inner executor's, so the tasks are the same.
 */
export function createPausingExecutor(inner: ToolExecutor, everyMs: number): ToolExecutor {
  let last = Date.now();
  return {
    async execute(impl, toolName, args, options) {
      if (Date.now() - last >= everyMs) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        last = Date.now();
      }
      return inner.execute(impl, toolName, args, options);
    },
    dispose: () => inner.dispose(),
  };
}

/** The files as one tar under `folder/`, each with its mode (launch.sh 0755), dated `mtimeSeconds`. */
export function packVerlArchive(files: readonly VerlExportFile[], folder: string, mtimeSeconds: number): Uint8Array[] {
  const entries: TarEntry[] = files.map((f) => ({
    name: `${folder}/${f.path}`,
    data: f.bytes,
    ...(f.mode === undefined ? {} : { mode: f.mode }),
  }));
  return writeTarChunks(entries, { mtimeSeconds });
}

/** The export of `config` as one .tar. */
export async function buildVerlArchive(
  config: TrainConfig,
  options: {
    onProgress?: (phase: VerlExportPhase) => void | Promise<void>;
    /** How often the task tracing pauses for the page to repaint (default 50 ms). */
    pauseEveryMs?: number;
    /** FTRL runs: the task file loaded in the page (its lines and the tools' Python sources). */
    taskFile?: PageTaskFile | null;
    now?: Date;
  } = {},
): Promise<VerlArchive> {
  const built = await buildVerlExport({
    config,
    runId: describeRunId(config),
    experimentName: APP_EXPERIMENT_NAME,
    sources: readBrowserSources(),
    executor: createPausingExecutor(new InProcessExecutor(), options.pauseEveryMs ?? 50),
    readTaskFile: createPageTaskFileReader(options.taskFile),
    onProgress: options.onProgress,
  });
  const folder = `pact-verl-${config.recipe}-s${config.seed}`.replace(/[^A-Za-z0-9._-]/g, '_');
  const chunks = packVerlArchive(built.files, folder, Math.floor((options.now ?? new Date()).getTime() / 1000));
  return {
    fileName: `${folder}.tar`,
    folder,
    chunks,
    paths: built.files.map((f) => f.path),
    bytes: chunks.reduce((s, c) => s + c.length, 0),
    nTrainTasks: built.trainTasks.length,
    nTestTasks: built.testTasks.length,
  };
}
