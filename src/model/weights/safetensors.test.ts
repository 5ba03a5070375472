import { describe, expect, it } from 'vitest';
import {
  SafetensorsError,
  convertHalfToFloat,
  loadShardedSafetensors,
  parseSafetensors,
  readSafetensorsHeader,
  writeSafetensors,
} from './safetensors';

/** Hand-assembles a file per the spec: u64 LE header length, header JSON, data bytes. */
function assembleFile(header: string, data: number[] = [], declaredLength?: number): Uint8Array {
  const headerBytes = new TextEncoder().encode(header);
  const out = new Uint8Array(8 + headerBytes.length + data.length);
  const view = new DataView(out.buffer);
  const length = declaredLength ?? headerBytes.length;
  view.setUint32(0, length % 2 ** 32, true);
  view.setUint32(4, Math.floor(length / 2 ** 32), true);
  out.set(headerBytes, 8);
  out.set(data, 8 + headerBytes.length);
  return out;
}

/** Little-endian bytes of 16-bit words. */
function u16Bytes(words: number[]): number[] {
  return words.flatMap((w) => [w & 0xff, w >> 8]);
}

function expectError(fn: () => unknown, pattern: RegExp, tensorName?: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(SafetensorsError);
  expect((caught as Error).message).toMatch(pattern);
  if (tensorName !== undefined) expect((caught as SafetensorsError).tensorName).toBe(tensorName);
}

describe('dtype decoding from hand-computed bit patterns', () => {
  it('decodes F16: 0x3C00 = 1, 0xC000 = −2, 0x3555 ≈ 1/3, subnormal, ±inf, NaN', () => {
    // 0x3555: exponent 0b01101 = 13, fraction 0x155 = 341 → 2^(13−15)·(1 + 341/1024) = 0.333251953125
    // 0x0001: subnormal 2^−14 · 1/1024 = 2^−24
    // 0x7C00: exponent all ones, fraction 0 → +inf; 0xFC00 → −inf; 0x7E00 → NaN; 0x8000 → −0
    const words = [0x3c00, 0xc000, 0x3555, 0x0001, 0x7c00, 0xfc00, 0x7e00, 0x8000];
    const file = assembleFile(`{"h":{"dtype":"F16","shape":[2,4],"data_offsets":[0,16]}}`, u16Bytes(words));
    const t = parseSafetensors(file).tensors.get('h')!;
    expect(t.dtype).toBe('F16');
    expect(t.shape).toEqual([2, 4]);
    expect(Array.from(t.data.slice(0, 4))).toEqual([1, -2, 0.333251953125, 2 ** -24]);
    expect(t.data[4]).toBe(Infinity);
    expect(t.data[5]).toBe(-Infinity);
    expect(Number.isNaN(t.data[6])).toBe(true);
    expect(Object.is(t.data[7], -0)).toBe(true);
    expect(convertHalfToFloat(0x7bff)).toBe(65504); // largest half: 2^15 · (1 + 1023/1024)
  });

  it('decodes BF16: 0x3F80 = 1, 0xC040 = −3, 0x3E20 = 0.15625', () => {
    // bf16 is the top half of f32: 0x3F800000 = 1; 0xC0400000 = −1.5·2 = −3; 0x3E200000 = 1.25·2^−3
    const file = assembleFile(
      `{"b":{"dtype":"BF16","shape":[3],"data_offsets":[0,6]}}`,
      u16Bytes([0x3f80, 0xc040, 0x3e20]),
    );
    const t = parseSafetensors(file).tensors.get('b')!;
    expect(t.dtype).toBe('BF16');
    expect(Array.from(t.data)).toEqual([1, -3, 0.15625]);
  });

  it('decodes F32 at an unaligned offset, and a Uint8Array that is a view at an odd byteOffset', () => {
    // 1.5 = 0x3FC00000, −0.25 = 0xBE800000 (little-endian bytes reversed)
    const header = `{"f":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`; // 55 bytes: data starts at 63
    expect((8 + header.length) % 4).not.toBe(0);
    const file = assembleFile(header, [0, 0, 0xc0, 0x3f, 0, 0, 0x80, 0xbe]);
    expect(Array.from(parseSafetensors(file).tensors.get('f')!.data)).toEqual([1.5, -0.25]);
    const shifted = new Uint8Array(file.length + 1);
    shifted.set(file, 1);
    expect(Array.from(parseSafetensors(shifted.subarray(1)).tensors.get('f')!.data)).toEqual([1.5, -0.25]);
  });

  it('reads __metadata__ and copies data so the file bytes can be dropped', () => {
    const file = assembleFile(
      `{"__metadata__":{"format":"pt"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`,
      [0, 0, 0x80, 0x3f],
    );
    const parsed = parseSafetensors(file);
    expect(parsed.metadata).toEqual({ format: 'pt' });
    const x = parsed.tensors.get('x')!;
    file.fill(0);
    expect(x.data[0]).toBe(1);
  });

  it('errors on a dtype it does not decode, or skips it on request', () => {
    const file = assembleFile(
      `{"i":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},"x":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`,
      [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x3f],
    );
    expectError(() => parseSafetensors(file), /dtype I64 is not supported/, 'i');
    const parsed = parseSafetensors(file, { onUnsupportedDtype: 'skip' });
    expect([...parsed.tensors.keys()]).toEqual(['x']);
  });
});

describe('writeSafetensors', () => {
  it('writes the Python library layout: sorted keys, metadata first, header padded with spaces to 8', () => {
    const bytes = writeSafetensors(
      [
        { name: 'b', shape: [2], data: new Float32Array([3, 4]) },
        { name: 'a', shape: [1, 1], data: new Float32Array([2]) },
      ],
      { format: 'pt' },
    );
    const view = new DataView(bytes.buffer);
    const headerLength = view.getUint32(0, true);
    expect(view.getUint32(4, true)).toBe(0);
    expect(headerLength % 8).toBe(0);
    const headerText = new TextDecoder().decode(bytes.subarray(8, 8 + headerLength));
    const expected =
      '{"__metadata__":{"format":"pt"},' +
      '"a":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]},' +
      '"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}';
    expect(headerText.trimEnd()).toBe(expected);
    expect(headerText.length - expected.length).toBeLessThan(8);
    expect(headerText.slice(expected.length)).toMatch(/^ *$/);
    // data: 'a' then 'b' → floats 2, 3, 4; total size 8 + header + 3·4
    expect(bytes.length).toBe(8 + headerLength + 12);
    const data = new Float32Array(bytes.slice(8 + headerLength).buffer);
    expect(Array.from(data)).toEqual([2, 3, 4]);
  });

  it('round-trips shapes and values, including a scalar and an empty tensor', () => {
    const tensors = [
      {
        name: 'model.layers.0.mlp.up_proj.weight',
        shape: [3, 2],
        data: new Float32Array([1, -2, 3.5, 1e-7, -0, 1e30]),
      },
      { name: 'scalar', shape: [], data: new Float32Array([42]) },
      { name: 'empty', shape: [0, 5], data: new Float32Array(0) },
    ];
    const parsed = parseSafetensors(writeSafetensors(tensors));
    expect(parsed.metadata).toEqual({});
    for (const t of tensors) {
      const back = parsed.tensors.get(t.name)!;
      expect(back.dtype).toBe('F32');
      expect(back.shape).toEqual(t.shape);
      expect(Array.from(back.data)).toEqual(Array.from(t.data));
    }
  });

  it('rejects a shape that does not match the data, and duplicate names', () => {
    expectError(
      () => writeSafetensors([{ name: 'w', shape: [2, 2], data: new Float32Array(3) }]),
      /shape \[2, 2\] has 4 elements but data has 3/,
      'w',
    );
    expectError(
      () =>
        writeSafetensors([
          { name: 'w', shape: [1], data: new Float32Array(1) },
          { name: 'w', shape: [1], data: new Float32Array(1) },
        ]),
      /twice/,
      'w',
    );
  });
});

describe('hostile headers give a named SafetensorsError', () => {
  const ok = `{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`;

  it('file shorter than the length field', () => {
    expectError(() => parseSafetensors(new Uint8Array(5)), /shorter than the 8-byte header length/);
  });
  it('huge header length (2^40) is refused before any allocation', () => {
    expectError(() => parseSafetensors(assembleFile(ok, [0, 0, 0, 0], 2 ** 40)), /exceeds the limit/);
  });
  it('header length past the end of the file', () => {
    expectError(() => parseSafetensors(assembleFile(ok, [0, 0, 0, 0], 1000)), /runs past the end of the file/);
  });
  it('bad JSON', () => {
    expectError(() => parseSafetensors(assembleFile('{"x": {', [])), /not valid JSON/);
  });
  it('non-object header', () => {
    expectError(() => parseSafetensors(assembleFile('[1,2]', [])), /must be a JSON object, found an array/);
  });
  it('unknown dtype', () => {
    expectError(
      () => parseSafetensors(assembleFile(`{"x":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}}`, [0, 0, 0, 0])),
      /unknown dtype "F99"/,
      'x',
    );
  });
  it('negative offsets', () => {
    expectError(
      () => parseSafetensors(assembleFile(`{"x":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}}`, [0, 0, 0, 0])),
      /two non-negative integers/,
      'x',
    );
  });
  it('offsets past the end of the data', () => {
    expectError(
      () => parseSafetensors(assembleFile(`{"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, [0, 0, 0, 0])),
      /\[0, 16\] run past the end of the data \(4 bytes\)/,
      'x',
    );
  });
  it('a shape whose size does not match the byte range (no giant allocation for a huge shape)', () => {
    expectError(
      () => parseSafetensors(assembleFile(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, [0, 0, 0, 0])),
      /needs 8 bytes but data_offsets \[0, 4\] hold 4/,
      'x',
    );
    expectError(
      () =>
        parseSafetensors(
          assembleFile(`{"x":{"dtype":"F32","shape":[1000000000,1000000000],"data_offsets":[0,4]}}`, [0, 0, 0, 0]),
        ),
      /needs 4000000000000000000 bytes/,
      'x',
    );
  });
  it('overlapping tensors', () => {
    const header = `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`;
    expectError(() => parseSafetensors(assembleFile(header, new Array(12).fill(0))), /overlap/, 'b');
  });
  it('a hole in the data, and bytes no tensor indexes', () => {
    const hole = `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`;
    expectError(() => parseSafetensors(assembleFile(hole, new Array(12).fill(0))), /hole after byte 4/, 'b');
    expectError(
      () => parseSafetensors(assembleFile(ok, new Array(8).fill(0))),
      /index 4 bytes of data but the file holds 8/,
    );
  });
  it('bad shape and bad metadata', () => {
    expectError(
      () => parseSafetensors(assembleFile(`{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, [0, 0, 0, 0])),
      /shape must be an array of non-negative integers/,
      'x',
    );
    expectError(
      () => parseSafetensors(assembleFile(`{"__metadata__":{"n":3}}`)),
      /"__metadata__"."n" must be a string/,
    );
  });
  it('readSafetensorsHeader validates without decoding', () => {
    const header = readSafetensorsHeader(assembleFile(ok, [0, 0, 0x80, 0x3f]));
    // header: 8 + 55 bytes; data of "x" at [63, 67)
    expect(header.entries).toEqual([
      { name: 'x', dtype: 'F32', shape: [1], byteBegin: 8 + ok.length, byteEnd: 12 + ok.length },
    ]);
  });
});

describe('sharded checkpoints', () => {
  const shard1 = writeSafetensors([
    { name: 'a', shape: [2], data: new Float32Array([1, 2]) },
    { name: 'b', shape: [1], data: new Float32Array([3]) },
  ]);
  const shard2 = writeSafetensors([{ name: 'c', shape: [1, 2], data: new Float32Array([4, 5]) }]);
  const files = new Map([
    ['model-00001-of-00002.safetensors', shard1],
    ['model-00002-of-00002.safetensors', shard2],
  ]);
  const readFile = async (name: string) => {
    const bytes = files.get(name);
    if (!bytes) throw new Error(`no such file ${name}`);
    return bytes;
  };

  it('resolves the weight_map across two shards', async () => {
    const index = {
      metadata: { total_size: 20 },
      weight_map: {
        a: 'model-00001-of-00002.safetensors',
        b: 'model-00001-of-00002.safetensors',
        c: 'model-00002-of-00002.safetensors',
      },
    };
    const { tensors } = await loadShardedSafetensors(index, readFile);
    expect([...tensors.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(Array.from(tensors.get('c')!.data)).toEqual([4, 5]);
    expect(tensors.get('c')!.shape).toEqual([1, 2]);
  });

  it('names the tensor the index misplaces, a missing shard, and a path outside the folder', async () => {
    await expect(
      loadShardedSafetensors(
        { weight_map: { a: 'model-00002-of-00002.safetensors', c: 'model-00002-of-00002.safetensors' } },
        readFile,
      ),
    ).rejects.toThrow(/tensor "a": index says it is in "model-00002-of-00002.safetensors"/);
    await expect(loadShardedSafetensors({ weight_map: { a: 'gone.safetensors' } }, readFile)).rejects.toThrow(
      /cannot read shard "gone.safetensors"/,
    );
    await expect(loadShardedSafetensors({ weight_map: { a: '../etc/passwd' } }, readFile)).rejects.toThrow(
      /outside the folder/,
    );
    await expect(loadShardedSafetensors({ weights: {} }, readFile)).rejects.toThrow(/"weight_map" must be an object/);
  });
});
