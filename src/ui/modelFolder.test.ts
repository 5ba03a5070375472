import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listQwen3ParamShapes, type Qwen3Config } from '../model/qwen3/config';
import { saveQwen3Folder } from '../model/weights/qwen3Folder';
import { writeSafetensors } from '../model/weights/safetensors';
import { createFileListReader } from '../model/weights/browserFiles';
import { loadQwen3Folder } from '../model/weights/qwen3Folder';
import { describeModelShape, inspectModelFolder, toFolderInit } from './modelFolder';

// A tiny Qwen3: V 16, H 8, I 12, 2 layers, 2 heads of D 4, 1 KV head, tied head.
const TINY: Qwen3Config = {
  vocab_size: 16,
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 4,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  max_position_embeddings: 64,
};

function tensorsOf(config: Qwen3Config, skip: string[] = []) {
  return [...listQwen3ParamShapes(config)]
    .filter(([name]) => !skip.includes(name))
    .map(([name, shape]) => ({
      name,
      shape,
      data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => (i % 7) / 10),
    }));
}

/** A File as a folder pick gives it: webkitRelativePath = "<folder>/<name>". */
function pickedFile(folder: string, name: string, content: string | Uint8Array): File {
  const file = new File([content as BlobPart], name);
  Object.defineProperty(file, 'webkitRelativePath', { value: `${folder}/${name}` });
  return file;
}

function pickFolder(folder: string, files: Record<string, string | Uint8Array>): File[] {
  return Object.entries(files).map(([name, content]) => pickedFile(folder, name, content));
}

function savedTiny(): Record<string, string | Uint8Array> {
  return { ...saveQwen3Folder({ config: TINY, tensors: tensorsOf(TINY) }) };
}

describe('inspectModelFolder: a folder written by saveQwen3Folder', () => {
  it('reads the shape from config.json and the header, and counts parameters by hand', async () => {
    const f = await inspectModelFolder(pickFolder('tiny-qwen3', savedTiny()));
    // embed 16·8 = 128; per layer: norms 8 + 8 + 4 + 4, q 8·8 = 64, k 4·8 = 32, v 32, o 64,
    // gate/up/down 3·(12·8) = 288 → 504; 2 layers 1008; final norm 8; tied head: 0 → 1144
    expect(f.nParams).toBe(1144);
    expect([f.name, f.config.num_hidden_layers, f.config.hidden_size, f.config.vocab_size]).toEqual([
      'tiny-qwen3',
      2,
      8,
      16,
    ]);
    expect(f.weightFiles).toEqual(['model.safetensors']);
    expect(f.dtypes).toEqual(['F32']);
    expect([f.hasTokenizerFiles, f.prunedVocabSize]).toEqual([false, undefined]);
    expect(f.files).toHaveLength(2);
    expect(describeModelShape(f)).toBe('2 layers · hidden 8 · vocab 16 · 1,144 parameters');
    expect(toFolderInit(f.name)).toBe('folder:tiny-qwen3');
    // The same files load in full through the worker's reader (what runAssets does with them).
    const loaded = await loadQwen3Folder(createFileListReader(f.files));
    expect(loaded.config.num_hidden_layers).toBe(2);
  });

  it('the shipped warm start (public/warm-start): 4 layers, hidden 192, vocab 1,022, pruned vocabulary', async () => {
    const dir = resolve('public/warm-start');
    const files = readdirSync(dir).map((name) =>
      pickedFile('warm-start', name, new Uint8Array(readFileSync(resolve(dir, name)))),
    );
    const f = await inspectModelFolder(files);
    // embed 1022·192 = 196,224; per layer: q 192·192 = 36,864, k and v 96·192 = 18,432 each, o 36,864,
    // norms 192 + 192 + 48 + 48 = 480, MLP 3·512·192 = 294,912 → 405,984; ×4 = 1,623,936; final norm 192
    expect(f.nParams).toBe(1_820_352);
    expect(describeModelShape(f)).toBe('4 layers · hidden 192 · vocab 1,022 · 1.82 M parameters');
    expect(f.prunedVocabSize).toBe(1022);
    expect(f.weightBytes).toBe(readFileSync(resolve(dir, 'model.safetensors')).length);
  });

  it('a sharded folder: the index and its shards, an untied head', async () => {
    const config = { ...TINY, tie_word_embeddings: false };
    const all = tensorsOf(config);
    const first = all.filter((t) => t.name.startsWith('model.layers.0.'));
    const rest = all.filter((t) => !t.name.startsWith('model.layers.0.'));
    const weightMap = Object.fromEntries([
      ...first.map((t) => [t.name, 'model-00001-of-00002.safetensors']),
      ...rest.map((t) => [t.name, 'model-00002-of-00002.safetensors']),
    ]);
    const { 'config.json': configJson } = saveQwen3Folder({ config, tensors: all });
    const f = await inspectModelFolder(
      pickFolder('sharded', {
        'config.json': configJson,
        'model.safetensors.index.json': JSON.stringify({ metadata: {}, weight_map: weightMap }),
        'model-00001-of-00002.safetensors': writeSafetensors(first),
        'model-00002-of-00002.safetensors': writeSafetensors(rest),
      }),
    );
    expect(f.nParams).toBe(1144 + 16 * 8); // + lm_head [16, 8]
    expect(f.weightFiles).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
  });
});

describe('inspectModelFolder: a folder that is not a Qwen3 folder says why', () => {
  const cases: [string, (files: Record<string, string | Uint8Array>) => void, string][] = [
    [
      'no config.json',
      (f) => delete f['config.json'],
      'not a Qwen3 folder: it has no config.json at its top (found: model.safetensors)',
    ],
    [
      'a llama config',
      (f) => (f['config.json'] = JSON.stringify({ ...JSON.parse(f['config.json'] as string), model_type: 'llama' })),
      'config.json: model_type must be "qwen3" (found "llama")',
    ],
    [
      'a bad field',
      (f) => (f['config.json'] = JSON.stringify({ ...JSON.parse(f['config.json'] as string), hidden_size: 'big' })),
      'config.json field "hidden_size": expected a positive integer, got "big"',
    ],
    ['config.json not JSON', (f) => (f['config.json'] = '{model_type: qwen3'), 'config.json is not valid JSON'],
    [
      'no weights',
      (f) => delete f['model.safetensors'],
      'not a Qwen3 folder: it has neither model.safetensors nor model.safetensors.index.json (found: config.json)',
    ],
    [
      'truncated weights',
      (f) => (f['model.safetensors'] = (f['model.safetensors'] as Uint8Array).slice(0, -4)),
      '(truncated?)',
    ],
    [
      'not safetensors',
      (f) => (f['model.safetensors'] = new TextEncoder().encode('hello, this is text')),
      'model.safetensors: not a safetensors file',
    ],
    [
      'a missing tensor',
      (f) => (f['model.safetensors'] = writeSafetensors(tensorsOf(TINY, ['model.layers.1.mlp.up_proj.weight']))),
      'model.safetensors do not match config.json: missing tensor "model.layers.1.mlp.up_proj.weight" (expected shape [12, 8])',
    ],
    [
      'half a tokenizer',
      (f) => (f['tokenizer.json'] = '{}'),
      'the folder has tokenizer.json but no tokenizer_config.json',
    ],
    [
      'a pruned vocabulary larger than vocab_size',
      (f) => (f['pruned_vocab.json'] = JSON.stringify({ keptIds: Array.from({ length: 17 }, (_, i) => i) })),
      'pruned_vocab.json keeps 17 tokens but config.json field "vocab_size" is 16',
    ],
  ];
  for (const [what, breakIt, message] of cases) {
    it(what, async () => {
      const files = savedTiny();
      breakIt(files);
      await expect(inspectModelFolder(pickFolder('broken', files))).rejects.toThrow(message);
    });
  }

  it('an empty pick', async () => {
    await expect(inspectModelFolder([])).rejects.toThrow('it has no config.json at its top (found: nothing)');
  });
});
