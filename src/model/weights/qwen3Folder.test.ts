import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Qwen3Config } from '../qwen3/config';
import { createFileListReader } from './browserFiles';
import { listQwen3TensorSpecs } from './hfNames';
import { createNodeFolderReader, writeFolderFiles } from './nodeFiles';
import { loadQwen3Folder, saveQwen3Folder, type FolderReader } from './qwen3Folder';
import { writeSafetensors } from './safetensors';

const config: Qwen3Config = {
  vocab_size: 16,
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: false,
  max_position_embeddings: 64,
  initializer_range: 0.02,
};

/** Deterministic distinct values: tensor k, element i → k + i/1000. */
function makeTensors(cfg: Qwen3Config) {
  return listQwen3TensorSpecs(cfg).map((spec, k) => {
    const numel = spec.shape.reduce((a, b) => a * b, 1);
    return { ...spec, data: Float32Array.from({ length: numel }, (_, i) => k + i / 1000) };
  });
}

function createMemoryReader(files: Record<string, string | Uint8Array>): FolderReader {
  return {
    async listFiles() {
      return Object.keys(files);
    },
    async readFile(name) {
      const content = files[name];
      if (content === undefined) throw new Error(`no file ${name}`);
      return typeof content === 'string' ? new TextEncoder().encode(content) : content;
    },
  };
}

describe('saveQwen3Folder → loadQwen3Folder', () => {
  const tensors = makeTensors(config);

  it('round-trips config and every tensor (untied: lm_head included)', async () => {
    const files = saveQwen3Folder({ config, tensors });
    const savedConfig = JSON.parse(files['config.json']);
    expect(savedConfig.model_type).toBe('qwen3');
    expect(savedConfig.architectures).toEqual(['Qwen3ForCausalLM']);
    const folder = await loadQwen3Folder(createMemoryReader({ ...files }));
    expect(folder.config).toEqual(config);
    expect(folder.metadata).toEqual({ format: 'pt' });
    expect(folder.tensors.size).toBe(1 + 2 * 11 + 1 + 1);
    for (const t of tensors) {
      expect(folder.tensors.get(t.name)!.shape).toEqual(t.shape);
      expect(Array.from(folder.tensors.get(t.name)!.data)).toEqual(Array.from(t.data));
    }
    expect(folder.tokenizerFiles).toBeUndefined();
    expect(folder.prunedVocab).toBeUndefined();
  });

  it('saves and reloads the pruned vocabulary mapping', async () => {
    const files = saveQwen3Folder({ config, tensors, prunedVocab: { keptIds: [0, 3, 7] } });
    const folder = await loadQwen3Folder(createMemoryReader({ ...files }));
    expect(folder.prunedVocab).toEqual({ keptIds: [0, 3, 7] });
  });

  it('refuses to save tensors that do not match the config', () => {
    expect(() => saveQwen3Folder({ config, tensors: tensors.slice(1) })).toThrow(
      /missing tensor "model.embed_tokens.weight"/,
    );
  });

  it('loads a sharded folder with tokenizer files and ignores rotary inv_freq', async () => {
    const half = Math.floor(tensors.length / 2);
    const extra = { name: 'model.layers.0.self_attn.rotary_emb.inv_freq', shape: [1], data: new Float32Array([1]) };
    const shardA = writeSafetensors([...tensors.slice(0, half), extra]);
    const shardB = writeSafetensors(tensors.slice(half));
    const weightMap: Record<string, string> = { [extra.name]: 'model-00001-of-00002.safetensors' };
    tensors.forEach(
      (t, i) =>
        (weightMap[t.name] = i < half ? 'model-00001-of-00002.safetensors' : 'model-00002-of-00002.safetensors'),
    );
    const folder = await loadQwen3Folder(
      createMemoryReader({
        'config.json': JSON.stringify({ ...config, model_type: 'qwen3' }),
        'model.safetensors.index.json': JSON.stringify({ metadata: {}, weight_map: weightMap }),
        'model-00001-of-00002.safetensors': shardA,
        'model-00002-of-00002.safetensors': shardB,
        'tokenizer.json': '{"model": {}}',
        'tokenizer_config.json': '{"chat_template": "x"}',
      }),
    );
    expect(folder.ignoredTensorNames).toEqual([extra.name]);
    expect(Array.from(folder.tensors.get('lm_head.weight')!.data)).toEqual(Array.from(tensors.at(-1)!.data));
    expect(folder.tokenizerFiles).toEqual({ tokenizerJson: { model: {} }, tokenizerConfig: { chat_template: 'x' } });
  });
});

describe('loadQwen3Folder errors name what is wrong', () => {
  const weights = saveQwen3Folder({ config, tensors: makeTensors(config) })['model.safetensors'];

  it('missing config.json or weights', async () => {
    await expect(loadQwen3Folder(createMemoryReader({ 'model.safetensors': weights }))).rejects.toThrow(
      /no config.json \(found: model.safetensors\)/,
    );
    await expect(loadQwen3Folder(createMemoryReader({ 'config.json': JSON.stringify(config) }))).rejects.toThrow(
      /neither model.safetensors nor model.safetensors.index.json/,
    );
  });

  it('a bad config field, bad JSON, another model_type', async () => {
    const bad = { ...config, num_key_value_heads: 3 };
    await expect(
      loadQwen3Folder(createMemoryReader({ 'config.json': JSON.stringify(bad), 'model.safetensors': weights })),
    ).rejects.toThrow(/config.json: .*num_key_value_heads/);
    await expect(
      loadQwen3Folder(createMemoryReader({ 'config.json': '{oops', 'model.safetensors': weights })),
    ).rejects.toThrow(/config.json is not valid JSON/);
    await expect(
      loadQwen3Folder(
        createMemoryReader({
          'config.json': JSON.stringify({ ...config, model_type: 'llama' }),
          'model.safetensors': weights,
        }),
      ),
    ).rejects.toThrow(/"model_type" is "llama", expected "qwen3"/);
  });

  it('weights of another shape name the tensor and both shapes', async () => {
    const wider = { ...config, hidden_size: 16 };
    await expect(
      loadQwen3Folder(createMemoryReader({ 'config.json': JSON.stringify(wider), 'model.safetensors': weights })),
    ).rejects.toThrow(/tensor "model.embed_tokens.weight" has shape \[16, 8\], expected \[16, 16\]/);
  });

  it('a tokenizer.json without tokenizer_config.json', async () => {
    await expect(
      loadQwen3Folder(
        createMemoryReader({
          'config.json': JSON.stringify(config),
          'model.safetensors': weights,
          'tokenizer.json': '{}',
        }),
      ),
    ).rejects.toThrow(/has tokenizer.json but no tokenizer_config.json/);
  });
});

describe('file readers', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('Node: writes a folder and loads it back from the path', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pact-qwen3-'));
    dirs.push(dir);
    const tensors = makeTensors(config);
    await writeFolderFiles(dir, { ...saveQwen3Folder({ config, tensors }) });
    await writeFile(path.join(dir, 'README.md'), 'not a weight');
    const reader = createNodeFolderReader(dir);
    expect((await reader.listFiles()).sort()).toEqual(['README.md', 'config.json', 'model.safetensors']);
    await expect(reader.readFile('../x')).rejects.toThrow(/leaves the folder/);
    const folder = await loadQwen3Folder(reader);
    expect(folder.config).toEqual(config);
    expect(Array.from(folder.tensors.get('model.norm.weight')!.data)).toEqual(
      Array.from(tensors.find((t) => t.name === 'model.norm.weight')!.data),
    );
  });

  it('browser: a folder pick strips the top folder of webkitRelativePath', async () => {
    const files = saveQwen3Folder({ config, tensors: makeTensors(config) });
    const picked = Object.entries(files).map(([name, content]) => {
      const file = new File([content as BlobPart], name);
      Object.defineProperty(file, 'webkitRelativePath', { value: `my-model/${name}` });
      return file;
    });
    const reader = createFileListReader(picked);
    expect((await reader.listFiles()).sort()).toEqual(['config.json', 'model.safetensors']);
    const folder = await loadQwen3Folder(reader);
    expect(folder.config.hidden_size).toBe(8);
  });
});
