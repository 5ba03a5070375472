/**
 * Node's platform for training runs (`pact train`): the file system for the warm start
 * and user folders, Qwen3's tokenizer from the installed package, and an in-process
 * executor for the tool stubs (the built-in stubs are the project's own pure functions;
 * untrusted tools go through the sandbox worker or Pyodide). The run logic itself is
 * runAssets.ts, shared with the browser worker.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InProcessExecutor } from '../envs/sandbox';
import { loadQwen3TokenizerFromPackage } from '../model/tokenizer/nodeLoader';
import { createNodeFolderReader } from '../model/weights/nodeFiles';
import type { TrainConfig } from '../recipes/config';
import { prepareRunAssetsWith, type CheckpointPolicy, type RunAssets, type RunPlatform } from './runAssets';
import { WARM_START_DIR } from '../recipes/warmStart';

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
  };
}

/**
 * Loads the policy and the prompts of one run, from the file system. With `checkpointPolicy`
 * (a run resumed from its checkpoint) the policy takes the checkpoint's shape and vocabulary.
 */
export function prepareRunAssets(
  config: TrainConfig,
  options: { publicDir?: string; log?: (line: string) => void; checkpointPolicy?: CheckpointPolicy } = {},
): Promise<RunAssets> {
  return prepareRunAssetsWith(createNodePlatform(options.publicDir), config, {
    log: options.log,
    checkpointPolicy: options.checkpointPolicy,
  });
}
