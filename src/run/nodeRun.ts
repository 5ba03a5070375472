/**
 * Node's platform for training runs (`pact train`): the file system for the warm start
 * and user folders, Qwen3's tokenizer from the installed package, and an in-process
 * executor for the tool stubs (the built-in stubs are the project's own pure functions;
 * untrusted tools go through the sandbox worker or Pyodide). The run logic itself is
 * runAssets.ts, shared with the browser worker. FTRL sources (tasks.source 'ftrl'): the task
 * file is `tasks.path`, else $PACT_FTRL_TASKS, else ../shared/data/ftrl/test.jsonl when it
 * exists; its Python tools run in a Pyodide sandbox process (pyodideExecutorNode.ts).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InProcessExecutor } from '../envs/sandbox';
import { loadQwen3TokenizerFromPackage } from '../model/tokenizer/nodeLoader';
import { createNodeFolderReader } from '../model/weights/nodeFiles';
import type { TrainConfig } from '../recipes/config';
import { readNodeFtrlTaskFile } from './ftrlTaskFile';
import { prepareRunAssetsWith, type PrepareRunOptions, type RunAssets, type RunPlatform } from './runAssets';

export {
  createRunTrainer,
  registerPolicySource,
  type Policy,
  type PolicySource,
  type PolicySourceContext,
  type RunAssets,
} from './runAssets';

export function createNodePlatform(publicDir = 'public'): RunPlatform {
  return {
    loadSourceTokenizer: loadQwen3TokenizerFromPackage,
    openWarmStart: (folder) => {
      const dir = path.join(publicDir, folder);
      return { read: (name) => readFile(path.join(dir, name)), location: dir };
    },
    openFolder: (init) => createNodeFolderReader(init),
    createExecutor: () => new InProcessExecutor(),
    readTaskFile: (file) => readNodeFtrlTaskFile(file, process.env),
    createFtrlExecutor: async ({ timeoutMs }) => {
      const { createNodePyodideExecutor } = await import('../envs/ftrl/pyodideExecutorNode');
      const { LanguageRoutingExecutor } = await import('../envs/ftrl/languageExecutor');
      // FTRL's tools are Python only (the importer reads `codes` as Python): no JavaScript executor.
      return new LanguageRoutingExecutor({ python: createNodePyodideExecutor({ timeoutMs }) });
    },
  };
}

export { DEFAULT_FTRL_TASKS, resolveFtrlTaskFile } from './ftrlTaskFile';

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
