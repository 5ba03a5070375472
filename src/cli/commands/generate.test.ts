// `pact generate` on a tiny random Qwen3 folder with a pruned vocabulary (pruned_vocab.json +
// the package Qwen3 tokenizer): greedy output equals Qwen3Model.generate on the same weights,
// a seed reproduces a sampled completion, and a folder with no way to encode text fails clearly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../main';
import { selectBackend } from '../../model/backend';
import type { Qwen3Config } from '../../model/qwen3/index';
import { createRng } from '../../core/rng';
import { loadQwen3TokenizerFromPackage } from '../../model/tokenizer/nodeLoader';
import { PrunedTokenizer, selectKeptIds } from '../../model/tokenizer/prunedVocab';
import { createRandomQwen3Tensors, createTinyQwen3Config, writeQwen3Folder } from '../../model/weights/testFolders';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe('pact generate', () => {
  let dir: string;
  let bareDir: string;
  let tokenizer: PrunedTokenizer;
  let config: Qwen3Config;

  beforeAll(async () => {
    await selectBackend('cpu');
    const source = await loadQwen3TokenizerFromPackage();
    const mapping = selectKeptIds(source, ['Hello world, the answer is 42.']);
    tokenizer = new PrunedTokenizer(source, mapping);
    config = createTinyQwen3Config({
      vocab_size: tokenizer.vocabSize,
      max_position_embeddings: 128,
      initializer_range: 0.5,
    });
    const tensors = await createRandomQwen3Tensors(config, 11);
    dir = mkdtempSync(path.join(os.tmpdir(), 'pact-gen-'));
    bareDir = mkdtempSync(path.join(os.tmpdir(), 'pact-gen-bare-'));
    await writeQwen3Folder(dir, { config, tensors, prunedVocab: mapping });
    await writeQwen3Folder(bareDir, { config, tensors });
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(bareDir, { recursive: true, force: true });
  });

  async function runGenerate(extra: string[]) {
    const c = capture();
    const code = await main(
      [
        'generate',
        '--model',
        dir,
        '--prompt',
        'Hello world',
        '--max-new-tokens',
        '6',
        '--backend',
        'cpu',
        '--json',
        ...extra,
      ],
      c.io,
    );
    expect(code, c.err.join('\n')).toBe(0);
    return JSON.parse(c.out[0]) as { promptIds: number[]; tokens: number[]; text: string; finishReason: string };
  }

  it('greedy output equals Qwen3Model.generate on the folder weights, decoded by the pruned tokenizer', async () => {
    const got = await runGenerate([]);
    expect(got.promptIds).toEqual(tokenizer.encode('Hello world'));
    const { loadModelFolder } = await import('./score');
    const { model } = await loadModelFolder(dir);
    const [row] = await model.generate([got.promptIds], {
      maxNewTokens: 6,
      temperature: 0,
      decode: (ids) => tokenizer.decode(ids),
      stopStrings: ['<|im_end|>', '</answer>'],
    });
    model.dispose();
    expect(got.tokens).toEqual(row.tokens);
    expect(got.text).toBe(tokenizer.decode(row.tokens));
    expect(got.tokens.length).toBeGreaterThan(0);
  });

  it('a seed reproduces a sampled completion, drawn from createRng(seed).split("generate")', async () => {
    const a = await runGenerate(['--temperature', '1', '--seed', '7']);
    const b = await runGenerate(['--temperature', '1', '--seed', '7']);
    expect(b.tokens).toEqual(a.tokens);
    const { loadModelFolder } = await import('./score');
    const { model } = await loadModelFolder(dir);
    const rng = createRng(7).split('generate');
    const [row] = await model.generate([a.promptIds], {
      maxNewTokens: 6,
      temperature: 1,
      random: () => rng.next(),
      decode: (ids) => tokenizer.decode(ids),
      stopStrings: ['<|im_end|>', '</answer>'],
    });
    model.dispose();
    expect(a.tokens).toEqual(row.tokens);
  });

  it('fails clearly when the folder has no tokenizer, and on a bad flag value', async () => {
    const c = capture();
    expect(await main(['generate', '--model', bareDir, '--prompt', 'hi', '--backend', 'cpu'], c.io)).toBe(2);
    expect(c.err[0]).toContain('has no tokenizer.json and no pruned_vocab.json');
    const d = capture();
    expect(await main(['generate', '--model', dir, '--prompt', 'hi', '--temperature', '-1'], d.io)).toBe(2);
    expect(d.err[0]).toBe('pact generate: --temperature must be a number ≥ 0, got "-1"');
  });
});
