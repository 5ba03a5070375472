/**
 * Node's platform for training runs (`pact train`): the file system for the warm start
 * and user folders, Qwen3's tokenizer from the installed package, and an in-process
 * executor for the tool stubs (the built-in stubs are the project's own pure functions;
 * untrusted tools go through the sandbox worker or Pyodide). The run logic itself is
 * runAssets.ts, shared with the browser worker. FTRL sources (tasks.source 'ftrl'): the task
 * file is `tasks.path`, else $PACT_FTRL_TASKS, else ../shared/data/ftrl/test.jsonl when it
 * exists; its Python tools run in a Pyodide sandbox process (pyodideExecutorNode.ts).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InProcessExecutor } from '../envs/sandbox';
import { loadQwen3TokenizerFromPackage } from '../model/tokenizer/nodeLoader';
import { createNodeFolderReader } from '../model/weights/nodeFiles';
import type { TrainConfig } from '../recipes/config';
import { prepareRunAssetsWith, type PrepareRunOptions, type RunAssets, type RunPlatform } from './runAssets';
import { WARM_START_DIR } from '../recipes/warmStart/index';

export {
  createRunTrainer,
  registerPolicySource,
  type Policy,
  type PolicySource,
  type PolicySourceContext,
  type RunAssets,
} from './runAssets';

export function createNodePlatform(publicDir = 'public'): RunPlatform {
  const dir = path.join(publicDir, WARM_START_DIR);
  return {
    loadSourceTokenizer: loadQwen3TokenizerFromPackage,
    readWarmStartFile: (name) => readFile(path.join(dir, name)),
    warmStartLocation: dir,
    openFolder: (init) => createNodeFolderReader(init),
    createExecutor: () => new InProcessExecutor(),
    readTaskFile: async (file) => {
      const name = resolveFtrlTaskFile(file, process.env);
      const text = await readFile(name, 'utf8').catch((e: NodeJS.ErrnoException) => {
        throw new Error(`config.tasks: cannot read the FTRL task file ${name}: ${e.code ?? e.message}`);
      });
      return { name, text };
    },
    createFtrlExecutor: async ({ timeoutMs }) => {
      const { createNodePyodideExecutor } = await import('../envs/ftrl/pyodideExecutorNode');
      const { LanguageRoutingExecutor } = await import('../envs/ftrl/languageExecutor');
      // FTRL's tools are Python only (the importer reads `codes` as Python): no JavaScript executor.
      return new LanguageRoutingExecutor({ python: createNodePyodideExecutor({ timeoutMs }) });
    },
  };
}

/** Where FTRL's test file is found when neither the config nor $PACT_FTRL_TASKS names one. */
export const DEFAULT_FTRL_TASKS = path.join('..', 'shared', 'data', 'ftrl', 'test.jsonl');

/** The FTRL task file of a run: the config's path, else $PACT_FTRL_TASKS, else DEFAULT_FTRL_TASKS when it exists. */
export function resolveFtrlTaskFile(file: string | undefined, env: Record<string, string | undefined>): string {
  if (file !== undefined) return file;
  if (env.PACT_FTRL_TASKS) return env.PACT_FTRL_TASKS;
  if (existsSync(DEFAULT_FTRL_TASKS)) return DEFAULT_FTRL_TASKS;
  throw new Error(
    `config.tasks.path: no FTRL task file: set tasks.path, or PACT_FTRL_TASKS=PATH, or put FTRL's test.jsonl at ${DEFAULT_FTRL_TASKS} (it is never part of the repository)`,
  );
}

/**
 * Loads the policy and the prompts of one run, from the file system, on the engine kernels
 * it asks for (runAssets.ts). With `checkpointPolicy` (a run resumed from its checkpoint) the
 * policy takes the checkpoint's shape and vocabulary.
 */
export function prepareRunAssets(
  config: TrainConfig,
  options: { publicDir?: string } & PrepareRunOptions = {},
): Promise<RunAssets> {
  const { publicDir, ...rest } = options;
  return prepareRunAssetsWith(createNodePlatform(publicDir), config, rest);
}
