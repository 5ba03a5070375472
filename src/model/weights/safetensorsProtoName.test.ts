/**
 * A tensor named `__proto__` (or another Object.prototype name) in a safetensors file is an
 * ordinary tensor: every reader keeps it under its own name (Maps and own properties, never an
 * object's prototype slot), so it is neither lost silently nor able to change what the reader
 * builds. Through the whole-file parser, the header read through ranged reads, the writer, a
 * sharded checkpoint, and a Qwen3 folder on disk.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Qwen3Config } from '../qwen3/config';
import { listQwen3TensorSpecs } from './hfNames';
import { createNodeFolderReader, writeFolderFiles } from './nodeFiles';
import { loadQwen3Folder, saveQwen3Folder } from './qwen3Folder';
import { loadShardedSafetensors, parseSafetensors, readSafetensorsHeaderOf, writeSafetensors } from './safetensors';

const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

/** u64 LE header length, header JSON, then float32 data. */
function assembleFile(header: string, data: number[]): Uint8Array {
  const headerBytes = new TextEncoder().encode(header);
  const out = new Uint8Array(8 + headerBytes.length + data.length * 4);
  new DataView(out.buffer).setUint32(0, headerBytes.length, true);
  out.set(headerBytes, 8);
  out.set(new Uint8Array(Float32Array.from(data).buffer), 8 + headerBytes.length);
  return out;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a tensor named __proto__', () => {
  it('is parsed under its own name, alone and beside another tensor', async () => {
    const alone = assembleFile('{"__proto__":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', [3, 4]);
    const parsed = parseSafetensors(alone);
    expect([...parsed.tensors.keys()]).toEqual(['__proto__']);
    expect(Array.from(parsed.tensors.get('__proto__')!.data)).toEqual([3, 4]);
    expect(parsed.tensors.get('__proto__')!.shape).toEqual([2]);

    const beside = assembleFile(
      '{"__metadata__":{"__proto__":"m"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},' +
        '"__proto__":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}',
      [1, 2],
    );
    const both = parseSafetensors(beside);
    expect([...both.tensors.keys()].sort()).toEqual(['__proto__', 'a']);
    expect(Array.from(both.tensors.get('__proto__')!.data)).toEqual([2]);
    expect(Object.getPrototypeOf(both.metadata)).toBe(Object.prototype);
    expect(Object.hasOwn(both.metadata, '__proto__')).toBe(true);

    const header = await readSafetensorsHeaderOf(
      async (offset, length) => beside.subarray(offset, offset + length),
      beside.length,
    );
    expect(header.entries.map((e) => e.name).sort()).toEqual(['__proto__', 'a']);
  });

  it('round-trips through the writer with the other prototype names', () => {
    const tensors = PROTO_NAMES.map((name, i) => ({ name, shape: [1], data: Float32Array.from([i + 1]) }));
    const parsed = parseSafetensors(writeSafetensors(tensors));
    expect([...parsed.tensors.keys()].sort()).toEqual([...PROTO_NAMES].sort());
    PROTO_NAMES.forEach((name, i) => expect(Array.from(parsed.tensors.get(name)!.data), name).toEqual([i + 1]));
  });

  it('is found in the shard a sharded index names for it', async () => {
    const shard = writeSafetensors([{ name: '__proto__', shape: [2], data: Float32Array.from([5, 6]) }]);
    const index = JSON.parse('{"weight_map":{"__proto__":"model-1.safetensors"}}') as unknown;
    const loaded = await loadShardedSafetensors(index, async () => shard);
    expect([...loaded.tensors.keys()]).toEqual(['__proto__']);
    expect(Array.from(loaded.tensors.get('__proto__')!.data)).toEqual([5, 6]);
  });

  it('is listed as an ignored tensor of a Qwen3 folder read from disk, which loads whole', async () => {
    const config: Qwen3Config = {
      vocab_size: 8,
      hidden_size: 8,
      intermediate_size: 16,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      head_dim: 4,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
      tie_word_embeddings: true,
      max_position_embeddings: 16,
    };
    const weights = listQwen3TensorSpecs(config).map((spec) => ({
      ...spec,
      data: new Float32Array(spec.shape.reduce((a, b) => a * b, 1)).fill(0.5),
    }));
    const extra = { name: '__proto__', shape: [3], data: Float32Array.from([7, 8, 9]) };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pact-proto-tensor-'));
    dirs.push(dir);
    await writeFolderFiles(dir, { ...saveQwen3Folder({ config, tensors: [...weights, extra] }) });
    const folder = await loadQwen3Folder(createNodeFolderReader(dir));
    expect(folder.tensors.size).toBe(weights.length + 1);
    expect(folder.ignoredTensorNames).toEqual(['__proto__']);
    expect(Array.from(folder.tensors.get('__proto__')!.data)).toEqual([7, 8, 9]);
  });
});
