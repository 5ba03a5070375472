/**
 * Hostile inputs, one reproducer per finding of a probe of the importers written apart from
 * the project's tests: deep or huge values in task files, prototype-chain names, checkpoint
 * archives with climbing names, duplicates, links or altered weights, configs with absurd
 * sizes or depth, and a big file read whole to check its header. Each test failed before the
 * fix it covers. The seeded fuzzing of the same readers is in hostileFuzz.test.ts.
 */
import { mkdtempSync, openSync, closeSync, ftruncateSync, writeSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseFtrlJsonl } from './envs/ftrl/importFtrl';
import { validateTask } from './envs/taskSchema';
import { convertToolDocumentToSchema } from './envs/toolRepo/toolDoc';
import { generateTasks } from './envs/generator';
import { getQwen3Preset, listQwen3ParamShapes, type Qwen3Config } from './model/qwen3/config';
import { createNodeFolderReader } from './model/weights/nodeFiles';
import { loadQwen3Folder, type FolderReader } from './model/weights/qwen3Folder';
import { readSafetensorsHeader, writeSafetensors } from './model/weights/safetensors';
import {
  MANIFEST_FILE,
  REFERENCE_FILE,
  buildCheckpointFiles,
  buildCheckpointManifest,
  checkResumableState,
  readCheckpointFolder,
} from './run/checkpoint';
import { ConfigError, resolveConfig } from './recipes/config';
import { expandExperiment } from './run/experimentFile';
import { readerOfFiles } from './recipes/testing/testKit';
import type { TrainerState } from './recipes/types';
import { TAR_BLOCK, readTar, writeTar } from './storage/tar';
import { parseTracesJsonl } from './traces/jsonl';
import { createTarFolderReader, prepareCheckpointImport } from './ui/checkpointFiles';

const scratch = mkdtempSync(path.join(tmpdir(), 'pact-hostile-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// ---- task files -----------------------------------------------------------------------

const tool = (name: string, props: Record<string, unknown> = { q: { type: 'string' } }) => ({
  type: 'function',
  function: { name, description: `${name} tool`, parameters: { type: 'object', properties: props } },
});

/** A good FTRL record with tool `f`. */
function ftrlRecord(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    messages: [{ role: 'user', content: 'Question: who?' }],
    tools: [tool('f')],
    codes: { f: 'def f(q):\n    return q\n' },
    unsolved_set: { f: ['x'] },
    answer: 'x',
    data_source: 'self/single_hop',
    ...over,
  };
}

/** A parameter schema nested `depth` levels through `items` (about 25 bytes a level). */
function nestedItems(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < depth; i++) schema = { type: 'array', items: schema };
  return schema;
}

describe('item 4: one bad line costs that line only', () => {
  it('a parameter schema nested 2,000 levels (about 50 KB) is refused by its line and field; the good lines are kept', () => {
    const deep = JSON.stringify(ftrlRecord({ tools: [tool('f', { q: nestedItems(2000) })] }));
    expect(deep.length).toBeGreaterThan(50_000);
    const text = [JSON.stringify(ftrlRecord({ id: 'a' })), deep, JSON.stringify(ftrlRecord({ id: 'b' }))].join('\n');
    const { tasks, errors } = parseFtrlJsonl(text);
    expect(tasks.map((t) => t.id)).toEqual(['a', 'b']);
    expect(errors).toHaveLength(1);
    expect(errors[0].line).toBe(2);
    expect(errors[0].field).toMatch(/^tools\[0\]\.function\.parameters\.properties\.q(\.items)+\.?… \(\d+ chars\)$/); // cut to 120 characters
    expect(errors[0].message).toBe('nests deeper than 64 levels');
  });

  it('the task schema refuses the same depth by path instead of overflowing the stack', () => {
    const [task] = generateTasks({ seed: 1, n: 1 });
    const deepTask = JSON.parse(JSON.stringify(task));
    deepTask.tools[0].function.parameters.properties.deep = nestedItems(2000);
    const r = validateTask(deepTask);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issues).toHaveLength(1);
      expect(r.issues[0].path).toMatch(/^tools\[0\]\.function\.parameters\.properties\.deep(\.items)+$/);
    }
    expect(validateTask(task).ok).toBe(true);
  });

  it('a leading byte-order mark does not cost line 1 (FTRL and trace files)', () => {
    const ftrl = parseFtrlJsonl(
      '\uFEFF' + JSON.stringify(ftrlRecord({ id: 'a' })) + '\n' + JSON.stringify(ftrlRecord({ id: 'b' })),
    );
    expect(ftrl.errors).toEqual([]);
    expect(ftrl.tasks.map((t) => t.id)).toEqual(['a', 'b']);
    const traces = parseTracesJsonl('\uFEFF{"taskId":"t1","turns":[]}\n{"taskId":"t2","turns":[]}');
    expect(traces.errors).toEqual([]);
    expect(traces.traces.map((t) => t.taskId)).toEqual(['t1', 't2']);
  });

  it('CR and U+2028 line ends separate lines; U+2028 inside a string stays text', () => {
    const lines = [ftrlRecord({ id: 'a' }), ftrlRecord({ id: 'b', answer: 'x\u2028y' }), ftrlRecord({ id: 'c' })].map(
      (r) => JSON.stringify(r),
    );
    for (const sep of ['\r', '\r\n', '\u2028', '\u2029']) {
      const { tasks, errors } = parseFtrlJsonl(lines.join(sep));
      expect(errors, JSON.stringify(sep)).toEqual([]);
      expect(tasks.map((t) => t.id)).toEqual(['a', 'b', 'c']);
      expect(tasks[1].answer).toBe('x\u2028y');
    }
  });

  it('a 5 MB bad value is quoted as a short excerpt, invisible characters shown', () => {
    const huge = '\u202E' + 'x'.repeat(5_000_000);
    const { errors } = parseFtrlJsonl(
      JSON.stringify(ftrlRecord({ data_source: huge })) +
        '\n' +
        JSON.stringify(ftrlRecord({ tools: [{ type: huge, function: {} }] })),
    );
    expect(errors).toHaveLength(2);
    for (const e of errors) {
      expect(e.message.length).toBeLessThan(300);
      expect(e.message).toContain('"\\u202exxxx');
      expect(e.message).toContain('(5000001 chars)');
    }
    const key = 'k'.repeat(1_000_000);
    const byKey = parseFtrlJsonl(JSON.stringify(ftrlRecord({ codes: { f: 'x', [key]: 7 } })));
    expect(byKey.errors[0].field.length).toBeLessThan(120);
    const trace = parseTracesJsonl(JSON.stringify({ taskId: 't', turns: [], [key]: 1, source: huge }));
    expect(trace.errors[0].message.length + trace.errors[0].path.length).toBeLessThan(500);
  });
});

describe('item 5: names from a file never reach the prototype chain', () => {
  it('a tool named constructor or toString still needs its own source', () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__defineGetter__']) {
      const { tasks, errors } = parseFtrlJsonl(
        JSON.stringify(ftrlRecord({ tools: [tool(name)], codes: {}, unsolved_set: {} })),
      );
      expect(tasks, name).toEqual([]);
      expect(errors[0].field).toBe(`codes.${name}`);
      expect(errors[0].message).toBe('missing: every tool in tools needs its Python source');
    }
  });

  it('a codes key "__proto__" is refused by name (object and JSON-string forms), not swallowed into a prototype', () => {
    const asObject =
      '{"messages":[{"role":"user","content":"Question: q"}],"tools":[' +
      JSON.stringify(tool('f')) +
      '],"codes":{"f":"x","__proto__":{"f":"y"}},"unsolved_set":{},"answer":"a","data_source":"self/single_hop"}';
    const asString = JSON.stringify(ftrlRecord({ codes: '{"f":"x","__proto__":"y"}' }));
    for (const line of [asObject, asString]) {
      const { tasks, errors } = parseFtrlJsonl(line);
      expect(tasks).toEqual([]);
      expect(errors[0].field).toBe('codes.__proto__');
      expect(errors[0].message).toMatch(/a key named "__proto__" is not allowed/);
    }
    const [task] = generateTasks({ seed: 2, n: 1 });
    const text = JSON.stringify(task).replace(
      '"implementations":{',
      '"implementations":{"__proto__":{"language":"javascript","source":"x"},',
    );
    const r = validateTask(JSON.parse(text));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0].path).toBe('implementations.__proto__');
  });

  it('a safetensors dtype "constructor" is an unknown dtype, not a NaN-bytes message', () => {
    const header = new TextEncoder().encode('{"a":{"dtype":"constructor","shape":[1],"data_offsets":[0,4]}}');
    const file = new Uint8Array(8 + header.length + 4);
    new DataView(file.buffer).setUint32(0, header.length, true);
    file.set(header, 8);
    expect(() => readSafetensorsHeader(file)).toThrow('tensor "a": unknown dtype "constructor" (known: BOOL,');
    const meta = new TextEncoder().encode('{"__metadata__":{"__proto__":"x","format":"pt"}}');
    const metaFile = new Uint8Array(8 + meta.length);
    new DataView(metaFile.buffer).setUint32(0, meta.length, true);
    metaFile.set(meta, 8);
    const { metadata } = readSafetensorsHeader(metaFile);
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
    expect(Object.keys(metadata)).toEqual(['__proto__', 'format']);
  });

  it('a tool repository parameter named "__proto__" stays a parameter of the schema', () => {
    const param = (name: string) => ({ name, type: 'STRING', description: name });
    const schema = convertToolDocumentToSchema({
      id: 'a',
      name: 'a',
      apiName: 'A',
      toolName: 'T',
      category: 'c',
      description: 'd',
      requiredParameters: [param('__proto__')],
      optionalParameters: [param('constructor')],
    });
    const props = schema.function.parameters.properties;
    expect(Object.getPrototypeOf(props)).toBe(Object.prototype);
    expect(Object.keys(props)).toEqual(['__proto__', 'constructor']);
  });

  it('a "__proto__" entry inside an experiment run is refused by name instead of silently ignored', () => {
    const json = JSON.parse('{"runs":[{"name":"ok"},{"__proto__":{"klCoef":-5}}]}');
    expect(() => expandExperiment(json)).toThrow(
      'experiment.runs[1].__proto__: a key named "__proto__" is not allowed',
    );
    expect(() => resolveConfig(JSON.parse('{"pact":{"__proto__":{"anchorProb":7}}}'))).toThrow(
      'config.pact.__proto__: a key named "__proto__" is not allowed',
    );
  });
});

// ---- checkpoint archives ------------------------------------------------------------------

/** A raw 512-byte tar header (any name, any type), with a correct checksum. */
function rawHeader(
  name: string,
  size: number,
  type: string,
  options: { linkName?: string; magic?: 'ustar' | 'gnu' } = {},
): Uint8Array {
  const h = new Uint8Array(TAR_BLOCK);
  const put = (offset: number, text: string) => h.set(new TextEncoder().encode(text), offset);
  put(0, name.slice(0, 100));
  put(100, '0000644\0');
  put(108, '0000000\0');
  put(116, '0000000\0');
  put(124, size.toString(8).padStart(11, '0') + '\0');
  put(136, '00000000000\0');
  put(156, type);
  if (options.linkName) put(157, options.linkName);
  put(257, options.magic === 'gnu' ? 'ustar  \0' : 'ustar\x0000');
  let sum = 0;
  for (let i = 0; i < TAR_BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i];
  put(148, sum.toString(8).padStart(6, '0') + '\0 ');
  return h;
}

/** An archive of raw entries: [header, data] pairs, each padded, then the end blocks. */
function rawTar(entries: [Uint8Array, Uint8Array][]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const [header, data] of entries) {
    parts.push(header, data, new Uint8Array((TAR_BLOCK - (data.length % TAR_BLOCK)) % TAR_BLOCK));
  }
  parts.push(new Uint8Array(2 * TAR_BLOCK));
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const bytesOf = (s: string) => new TextEncoder().encode(s);
const fileEntry = (name: string, text = 'x'): [Uint8Array, Uint8Array] => [
  rawHeader(name, bytesOf(text).length, '0'),
  bytesOf(text),
];
const paxRecord = (key: string, value: string) => {
  const body = ` ${key}=${value}\n`;
  let len = body.length + 1;
  while (String(len).length + body.length !== len) len = String(len).length + body.length;
  return `${len}${body}`;
};

describe('item 6: checkpoint archives', () => {
  it('refuses ".." and absolute names, whether from the header, a pax path or a GNU long name', () => {
    const cases: [string, Uint8Array][] = [
      ['ustar ..', rawTar([fileEntry('ck/../../etc/passwd')])],
      ['ustar absolute', rawTar([fileEntry('/etc/passwd')])],
      [
        'pax ..',
        rawTar([
          [
            rawHeader('PaxHeaders/x', paxRecord('path', '../evil.json').length, 'x'),
            bytesOf(paxRecord('path', '../evil.json')),
          ],
          fileEntry('ok.json'),
        ]),
      ],
      [
        'pax absolute',
        rawTar([
          [
            rawHeader('PaxHeaders/x', paxRecord('path', '/tmp/evil').length, 'x'),
            bytesOf(paxRecord('path', '/tmp/evil')),
          ],
          fileEntry('ok.json'),
        ]),
      ],
      [
        'GNU ..',
        rawTar([
          [rawHeader('././@LongLink', 20, 'L', { magic: 'gnu' }), bytesOf('ck/../../../evil.bin\0')],
          fileEntry('ok.json'),
        ]),
      ],
      [
        'GNU absolute',
        rawTar([
          [rawHeader('././@LongLink', 10, 'L', { magic: 'gnu' }), bytesOf('/root/.x\0\0')],
          fileEntry('ok.json'),
        ]),
      ],
      ['windows drive', rawTar([fileEntry('C:\\evil.json')])],
    ];
    for (const [label, tar] of cases) {
      expect(() => readTar(tar), label).toThrow(/an absolute path is refused|a "\.\." part is refused/);
    }
    expect(() => readTar(cases[2][1])).toThrow('tar: entry "../evil.json" (pax path): a ".." part is refused');
    expect(() => readTar(cases[4][1])).toThrow('(GNU long name)');
  });

  it('refuses a second entry of the same name (a second trainer_state.json does not silently win)', () => {
    const twice = rawTar([
      fileEntry('ck/trainer_state.json', '{"step":1}'),
      fileEntry('ck/config.json'),
      fileEntry('ck/./trainer_state.json', '{"step":9}'),
    ]);
    expect(() => readTar(twice)).toThrow('tar: two entries are named "ck/trainer_state.json"');
    const viaSlashes = rawTar([fileEntry('ck/a.json'), fileEntry('ck//a.json')]);
    expect(() => readTar(viaSlashes)).toThrow('two entries are named "ck/a.json"');
  });

  it('refuses hard links and symbolic links by name', () => {
    expect(() =>
      readTar(rawTar([[rawHeader('ck/model.safetensors', 0, '1', { linkName: '/etc/shadow' }), new Uint8Array(0)]])),
    ).toThrow('tar: "ck/model.safetensors" is a hard link (to "/etc/shadow"); links are refused');
    expect(() =>
      readTar(rawTar([[rawHeader('ck/config.json', 0, '2', { linkName: '../../x' }), new Uint8Array(0)]])),
    ).toThrow('tar: "ck/config.json" is a symbolic link (to "../../x"); links are refused');
  });

  const MODEL: Qwen3Config = {
    ...getQwen3Preset('qwen3-nano'),
    vocab_size: 10,
    hidden_size: 4,
    intermediate_size: 8,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    head_dim: 2,
  };
  function buildState(config = resolveConfig({ recipe: 'grpo', steps: 8 })): TrainerState {
    let k = 0;
    const weights = [...listQwen3ParamShapes(MODEL)].map(([name, shape]) => ({
      name,
      shape,
      data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => (k++ % 13) / 8 - 0.7),
    }));
    return {
      version: 1,
      step: 2,
      dataCursor: 2,
      rngStates: { root: { key: '1', words: [1, 2, 3, 4] } },
      weights,
      optimizer: weights.flatMap((w) => [
        { name: `${w.name}.exp_avg`, shape: w.shape, data: w.data.map((x) => x / 3) },
        { name: `${w.name}.exp_avg_sq`, shape: w.shape, data: w.data.map((x) => x * x) },
        { name: `${w.name}.step`, shape: [], data: Float32Array.of(2) },
      ]),
      referenceWeights: weights.map((w) => ({ ...w, data: w.data.map((x) => x + 1) })),
      config,
      recipe: 'grpo',
    };
  }

  it('a checkpoint carries a manifest (bytes and SHA-256 per file), and one altered weight byte is refused', async () => {
    const files = buildCheckpointFiles(buildState(), MODEL);
    const manifest = JSON.parse(files[MANIFEST_FILE] as string);
    expect(Object.keys(manifest.files)).toEqual([
      'config.json',
      'model.safetensors',
      'optimizer.safetensors',
      'reference.safetensors',
      'trainer_state.json',
    ]);
    expect(manifest.files['model.safetensors'].bytes).toBe((files['model.safetensors'] as Uint8Array).length);
    const altered = (files['model.safetensors'] as Uint8Array).slice();
    altered[altered.length - 3] ^= 0x40; // a float's exponent bit: the file still parses
    await expect(readCheckpointFolder(readerOfFiles({ ...files, 'model.safetensors': altered }))).rejects.toThrow(
      "model.safetensors: its SHA-256 differs from checkpoint_manifest.json's (the file was altered or damaged)",
    );
    const { [REFERENCE_FILE]: _ref, ...withoutReference } = files;
    await expect(readCheckpointFolder(readerOfFiles(withoutReference))).rejects.toThrow(
      'reference.safetensors is missing: checkpoint_manifest.json lists it',
    );
    const extra = { ...files, 'adapter_model.safetensors': writeSafetensors([]) };
    await expect(readCheckpointFolder(readerOfFiles(extra))).rejects.toThrow('adapter_model.safetensors');
  });

  it('an archive without reference.safetensors imports with a warning, and its run cannot resume with a fresh π_ref', async () => {
    const files = buildCheckpointFiles(buildState(), MODEL);
    const { [REFERENCE_FILE]: _ref, ...rest } = files;
    const sealed = { ...rest, [MANIFEST_FILE]: buildCheckpointManifest(rest) };
    const tar = writeTar(
      Object.entries(sealed).map(([name, f]) => ({
        name: `ck-step2/${name}`,
        data: typeof f === 'string' ? bytesOf(f) : f,
      })),
    );
    const reader = createTarFolderReader(readTar(tar));
    const folder = await readCheckpointFolder(reader);
    expect(folder.state.referenceWeights).toBeUndefined();
    expect(folder.warnings).toEqual([
      'reference.safetensors is missing while its run reads π_ref (config.klCoef 0.001 > 0): its policy can be evaluated, but it cannot be resumed',
    ]);
    expect(() => checkResumableState(folder.state)).toThrow(
      'the checkpoint has no π_ref weights (reference.safetensors) but its run reads π_ref (config.klCoef 0.001)',
    );
    const prepared = await prepareCheckpointImport(reader, 'ck.tar', { now: new Date(0), random: () => 0 });
    expect(prepared.warning).toContain('reference.safetensors is missing');
    // A run without a KL term never reads π_ref: nothing to refuse.
    const noKl = buildState(resolveConfig({ recipe: 'grpo', steps: 8, klCoef: 0 }));
    expect(() => checkResumableState({ ...noKl, referenceWeights: undefined })).not.toThrow();
  });
});

// ---- bounds -----------------------------------------------------------------------------

describe('item 8: sizes and depth are bounded', () => {
  it.each([
    ['rolloutsPerPrompt', { rolloutsPerPrompt: 1e9 }, 'config.rolloutsPerPrompt: Too big: expected number to be <=256'],
    ['tasks.nTrain', { tasks: { nTrain: 1e9 } }, 'config.tasks.nTrain: Too big: expected number to be <=100000'],
    [
      'batchPrompts',
      { batchPrompts: 1e9, miniBatchPrompts: 1 },
      'config.batchPrompts: Too big: expected number to be <=4096',
    ],
    [
      'maxResponseTokens',
      { maxResponseTokens: 1e9 },
      'config.maxResponseTokens: Too big: expected number to be <=131072',
    ],
  ])('%s 1e9 is refused by name', (_label, input, message) => {
    expect(() => resolveConfig(input)).toThrow(ConfigError);
    expect(() => resolveConfig(input)).toThrow(message);
  });

  it('a 20,000-deep config is refused by depth with the path, in a config and in an experiment file', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = { a: deep };
    expect(() => resolveConfig({ pact: deep })).toThrow(
      /^invalid training config:\n {2}config\.pact(\.a){15}: nests deeper than 16 levels$/,
    );
    expect(() => expandExperiment({ base: { pact: deep }, runs: [{ pact: deep }] })).toThrow(
      /^experiment\.base\.pact(\.a){16}: nests deeper than 18 levels$/,
    );
  });

  it('a bad header of a 2.3 GB file is refused after reading 8 + N bytes, never the file', async () => {
    const config = getQwen3Preset('qwen3-nano');
    const header = bytesOf('{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}');
    const head = new Uint8Array(8 + header.length);
    new DataView(head.buffer).setUint32(0, header.length, true);
    head.set(header, 8);
    const fileBytes = 2.3e9;
    let rangeBytes = 0;
    const reader: FolderReader = {
      async listFiles() {
        return ['config.json', 'model.safetensors'];
      },
      async readFile(name) {
        if (name === 'config.json') return bytesOf(JSON.stringify({ ...config, model_type: 'qwen3' }));
        throw new Error(`read all of ${name}`);
      },
      async fileSize(name) {
        return name === 'model.safetensors' ? fileBytes : 0;
      },
      async readFileRange(_name, offset, length) {
        rangeBytes += length;
        return head.slice(offset, offset + length);
      },
    };
    await expect(loadQwen3Folder(reader)).rejects.toThrow(
      `tensors index 4 bytes of data but the file holds ${fileBytes - head.length}`,
    );
    expect(rangeBytes).toBe(head.length);
  });

  it('so is a bad shard of a sharded checkpoint', async () => {
    const config = getQwen3Preset('qwen3-nano');
    const head = new Uint8Array(8);
    new DataView(head.buffer).setUint32(0, 1 << 20, true); // a 1 MiB header in a file of 100 bytes
    const files: Record<string, Uint8Array> = {
      'config.json': bytesOf(JSON.stringify({ ...config, model_type: 'qwen3' })),
      'model.safetensors.index.json': bytesOf(
        JSON.stringify({ weight_map: { 'model.norm.weight': 'model-00001-of-00001.safetensors' } }),
      ),
    };
    const reader: FolderReader = {
      async listFiles() {
        return [...Object.keys(files), 'model-00001-of-00001.safetensors'];
      },
      async readFile(name) {
        if (files[name]) return files[name];
        throw new Error(`read all of ${name}`);
      },
      async fileSize() {
        return 100;
      },
      async readFileRange(_name, offset, length) {
        return head.slice(offset, offset + length);
      },
    };
    await expect(loadQwen3Folder(reader)).rejects.toThrow(
      'shard "model-00001-of-00001.safetensors" named in the index: header length 1048576 runs past the end of the file (92 bytes after the length field)',
    );
  });

  it('the Node folder reader checks a header with ranged reads (a sparse 512 MB file is not read into memory)', async () => {
    const dir = path.join(scratch, 'big');
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, 'config.json'),
      JSON.stringify({ ...getQwen3Preset('qwen3-nano'), model_type: 'qwen3' }),
    );
    const header = bytesOf('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}');
    const fd = openSync(path.join(dir, 'model.safetensors'), 'w');
    const length = new Uint8Array(8);
    new DataView(length.buffer).setUint32(0, header.length, true);
    writeSync(fd, length, 0, 8, 0);
    writeSync(fd, header, 0, header.length, 8);
    ftruncateSync(fd, 512 * 2 ** 20); // sparse: no disk, and no memory unless read
    closeSync(fd);
    const before = process.memoryUsage().arrayBuffers;
    await expect(loadQwen3Folder(createNodeFolderReader(dir))).rejects.toThrow(
      'tensors index 8 bytes of data but the file holds',
    );
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 2 ** 20);
  });
});
