/**
 * Seeded, time-bounded fuzzing of the readers of untrusted input: the tool-call parser and
 * argument check, the safetensors reader, the tar reader, task and trace import, and config
 * validation. Each reader gets mutations of a valid input from its own generator (hostile
 * names, depth, huge values, flipped bytes) and must answer with a result or its own named
 * error: never a RangeError or TypeError, never a prototype change, never a message that
 * echoes a huge value. A loop stops after its count or its time budget, whichever comes
 * first; the seed and iteration of a failure are in its message.
 */
import { describe, expect, it } from 'vitest';
import { createRng, type Rng } from './core/rng';
import { parseFtrlJsonl } from './envs/ftrl/importFtrl';
import { generateTasks } from './envs/generator';
import { validateTask } from './envs/taskSchema';
import { checkToolCall, parseAssistantTurn } from './envs/toolCallParser';
import type { ToolSchema } from './envs/types';
import { SafetensorsError, parseSafetensors, writeSafetensors } from './model/weights/safetensors';
import { CONFIG_MAXIMA, ConfigError, resolveConfig } from './recipes/config';
import { expandExperiment } from './run/experimentFile';
import { TarError, readTar, writeTar } from './storage/tar';
import { parseTracesJsonl } from './traces/jsonl';

/** Budget of one fuzz loop: this many iterations, or this many milliseconds. */
const MAX_ITERATIONS = 2_000;
const MAX_MS = 2_500;

/** Runs `body(rng, i)` until the count or the time budget; returns the iterations run. */
function fuzz(seed: string, body: (rng: Rng, i: number) => void, maxIterations = MAX_ITERATIONS): number {
  const rng = createRng(seed);
  const start = performance.now();
  let i = 0;
  for (; i < maxIterations && performance.now() - start < MAX_MS; i++) {
    try {
      body(rng, i);
    } catch (e) {
      throw new Error(`fuzz ${seed}, iteration ${i}: ${(e as Error).name}: ${(e as Error).message.slice(0, 500)}`);
    }
  }
  return i;
}

/** Throws unless `e` is one of the reader's own errors (a crash would be RangeError, TypeError, …). */
function expectNamedError(e: unknown, ...kinds: (new (...args: never[]) => Error)[]): void {
  if (!kinds.some((k) => e instanceof k))
    throw new Error(`unexpected ${(e as Error)?.name}: ${String((e as Error)?.message).slice(0, 300)}`);
  if ((e as Error).message.length > 2_000)
    throw new Error(`an error message of ${(e as Error).message.length} characters`);
}

function expectPrototypeIntact(): void {
  const probe = {} as Record<string, unknown>;
  if (probe.polluted !== undefined || probe.evil !== undefined || Object.getPrototypeOf(probe) !== Object.prototype)
    throw new Error('Object.prototype changed');
}

const pick = <T>(rng: Rng, list: readonly T[]): T => list[rng.int(list.length)];

const HOSTILE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '',
  '\uFEFF',
  '\u2028',
  'a'.repeat(5_000),
  '../x',
  '😀\uD800',
];

/** A random JSON value: scalars, hostile strings, nested arrays and objects (with hostile keys). */
function randomValue(rng: Rng, depth = 0): unknown {
  const r = rng.next();
  if (depth > 4 || r < 0.4) {
    return pick(rng, [
      null,
      true,
      0,
      -1,
      1e308,
      -1e-308,
      2 ** 53 + 1,
      1e9,
      'x',
      '',
      'x'.repeat(rng.int(3) === 0 ? 100_000 : 10),
      pick(rng, HOSTILE_NAMES),
    ]);
  }
  if (r < 0.6) return Array.from({ length: rng.int(4) }, () => randomValue(rng, depth + 1));
  const out: Record<string, unknown> = {};
  for (let k = rng.int(4); k > 0; k--)
    Object.defineProperty(out, pick(rng, [...HOSTILE_NAMES, 'type', 'items', 'name', 'a']), {
      value: randomValue(rng, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

/** A value nested `depth` levels deep. */
function deepValue(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { d: v };
  return v;
}

/** Replaces a random path of `obj` (a JSON tree) with `value`; returns the tree. */
function mutateTree(rng: Rng, obj: unknown, value: unknown): unknown {
  if (obj === null || typeof obj !== 'object' || rng.next() < 0.25) return value;
  const keys = Object.keys(obj);
  if (keys.length === 0) return value;
  const key = pick(rng, keys);
  const node = obj as Record<string, unknown>;
  Object.defineProperty(node, key, {
    value: mutateTree(rng, node[key], value),
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return obj;
}

/** A hostile replacement value: random, very deep, very long, or a prototype-named object. */
function hostileValue(rng: Rng): unknown {
  switch (rng.int(5)) {
    case 0:
      return deepValue(50 + rng.int(3_000));
    case 1:
      return 'z'.repeat(rng.next() < 0.1 ? 2_000_000 : 1 + rng.int(2_000));
    case 2:
      return JSON.parse(`{"${pick(rng, ['__proto__', 'constructor', 'toString'])}": {"polluted": 1}}`);
    default:
      return randomValue(rng);
  }
}

describe('tool-call parser and argument check', () => {
  const tools: ToolSchema[] = generateTasks({ seed: 5, n: 1 })[0].tools;

  it('any text parses without throwing; any parsed call is checked without throwing or touching the prototype', () => {
    const n = fuzz('hostile/parser', (rng) => {
      const args: Record<string, unknown> = {};
      for (let k = rng.int(4); k > 0; k--)
        args[pick(rng, [...HOSTILE_NAMES, ...Object.keys(tools[0].function.parameters.properties)])] = randomValue(rng);
      const name = rng.next() < 0.5 ? pick(rng, tools).function.name : pick(rng, HOSTILE_NAMES);
      let body = JSON.stringify({ name, arguments: args });
      if (rng.next() < 0.3) body = body.slice(0, rng.int(body.length + 1)); // torn
      if (rng.next() < 0.1) body = '{"name":"x","arguments":' + '['.repeat(rng.int(50_000)) + '}';
      const text =
        `<think>${pick(rng, HOSTILE_NAMES)}</think>` +
        `<tool_call>\n${body}\n</tool_call>`.repeat(1 + rng.int(3)) +
        pick(rng, ['', '<answer>x</answer>', '<tool_call>']);
      const parsed = parseAssistantTurn(text);
      expect(parsed.pieces.reduce((s, p) => s + (p.end - p.start), 0)).toBe(text.length);
      for (const c of parsed.calls) {
        if (!c.call) continue;
        const problem = checkToolCall(c.call, tools);
        if (problem !== null && typeof problem !== 'string') throw new Error('checkToolCall returned a non-string');
      }
      expectPrototypeIntact();
    });
    expect(n).toBeGreaterThan(20);
  });
});

describe('safetensors reader', () => {
  const valid = writeSafetensors(
    [
      { name: 'a', shape: [2, 3], data: Float32Array.from({ length: 6 }, (_, i) => i) },
      { name: 'b.weight', shape: [4], data: new Float32Array(4) },
    ],
    { format: 'pt' },
  );
  const headerLength = new DataView(valid.buffer).getUint32(0, true);
  const headerText = new TextDecoder().decode(valid.subarray(8, 8 + headerLength));

  /** A file with `header` (text) and `dataBytes` bytes of data. */
  function fileOf(header: string, dataBytes: number, lengthField?: number): Uint8Array {
    const h = new TextEncoder().encode(header);
    const out = new Uint8Array(8 + h.length + dataBytes);
    new DataView(out.buffer).setUint32(0, lengthField ?? h.length, true);
    out.set(h, 8);
    return out;
  }

  it('mutated files parse to consistent tensors or give a SafetensorsError', () => {
    const n = fuzz('hostile/safetensors', (rng) => {
      let file: Uint8Array;
      switch (rng.int(4)) {
        case 0: {
          // Flip bytes anywhere.
          file = valid.slice();
          for (let k = 1 + rng.int(4); k > 0; k--) file[rng.int(file.length)] ^= 1 << rng.int(8);
          break;
        }
        case 1: {
          // Replace a field of the header with a hostile value.
          const header = JSON.parse(headerText);
          const entry = pick(rng, ['a', 'b.weight', '__metadata__']);
          const field = pick(rng, ['dtype', 'shape', 'data_offsets', 'format', pick(rng, HOSTILE_NAMES)]);
          if (rng.next() < 0.5) header[entry][field] = hostileValue(rng);
          else
            header[entry][field] = pick(rng, [
              'constructor',
              '__proto__',
              'toString',
              'F32',
              'F16',
              'BF16',
              'I64',
              [1e30, 1],
              [-1],
              [[1]],
              [0, 2 ** 60],
            ]);
          file = fileOf(JSON.stringify(header), 40);
          break;
        }
        case 2: {
          // A hostile tensor name or a header of random JSON.
          const header =
            rng.next() < 0.5
              ? { [pick(rng, HOSTILE_NAMES)]: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }
              : randomValue(rng);
          file = fileOf(JSON.stringify(header) ?? 'null', 4);
          break;
        }
        default: {
          // A header length field that lies.
          file = fileOf(headerText, 40, pick(rng, [0, 1, headerLength - 1, headerLength + 1, 2 ** 31, 0xffffffff]));
        }
      }
      try {
        const parsed = parseSafetensors(file);
        for (const [, t] of parsed.tensors) expect(t.data.length).toBe(t.shape.reduce((a, b) => a * b, 1));
      } catch (e) {
        expectNamedError(e, SafetensorsError);
      }
      expectPrototypeIntact();
    });
    expect(n).toBeGreaterThan(20);
  });
});

describe('tar reader', () => {
  const encoder = new TextEncoder();
  const valid = writeTar([
    { name: 'ck/config.json', data: encoder.encode('{"a":1}') },
    { name: 'ck/model.safetensors', data: new Uint8Array(700).fill(7) },
    { name: 'ck/trainer_state.json', data: encoder.encode('{}') },
  ]);

  /** Rewrites the checksum of the header at `at` (so a mutation reaches the checks behind it). */
  function reseal(bytes: Uint8Array, at: number): void {
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : bytes[at + i];
    bytes.set(encoder.encode(sum.toString(8).padStart(6, '0') + '\0 '), at + 148);
  }

  it('mutated archives give relative, unique names of regular files, or a TarError', () => {
    const headers = [0, 1024, 2560];
    const n = fuzz('hostile/tar', (rng) => {
      const bytes = valid.slice();
      for (let k = 1 + rng.int(3); k > 0; k--) {
        const at = pick(rng, headers);
        switch (rng.int(5)) {
          case 0: // a hostile name
            bytes.fill(0, at, at + 100);
            bytes.set(
              encoder.encode(
                pick(rng, [
                  '../x',
                  '/etc/x',
                  'ck/../../x',
                  'ck/config.json',
                  './ck/config.json',
                  'ck//config.json',
                  'C:\\x',
                  '',
                  '.',
                  'a\\..\\b',
                ]).slice(0, 100),
              ),
              at,
            );
            break;
          case 1: // a type: link, directory, pax, GNU long name, device, …
            bytes[at + 156] = encoder.encode(
              pick(rng, ['0', '1', '2', '3', '5', '7', 'x', 'g', 'L', 'K', 'S', '\0']),
            )[0];
            break;
          case 2: // a size
            bytes.set(
              encoder.encode(pick(rng, ['77777777777', '00000000000', '00000001000', '-1', 'zz']).padEnd(11, '\0')),
              at + 124,
            );
            break;
          case 3: // a prefix (ustar's 155-byte directory part)
            bytes.set(encoder.encode(pick(rng, ['..', '/abs', 'ck', 'x'.repeat(155)])), at + 345);
            break;
          default: // random bytes anywhere in the header
            bytes[at + rng.int(512)] = rng.int(256);
        }
        if (rng.next() < 0.9) reseal(bytes, at);
      }
      try {
        const entries = readTar(bytes);
        const names = entries.map((e) => e.name);
        expect(new Set(names).size).toBe(names.length);
        for (const name of names) {
          expect(
            name.startsWith('/') || /^[A-Za-z]:/.test(name) || name.split(/[/\\]/).includes('..') || name === '',
          ).toBe(false);
        }
      } catch (e) {
        expectNamedError(e, TarError);
      }
    });
    expect(n).toBeGreaterThan(20);
  });
});

describe('task and trace import', () => {
  const tasks = generateTasks({ seed: 9, n: 4 });
  const ftrlLine = (i: number) => ({
    id: `t${i}`,
    messages: [{ role: 'user', content: `Question: ${tasks[i % 4].question}` }],
    tools: tasks[i % 4].tools,
    codes: Object.fromEntries(tasks[i % 4].tools.map((t) => [t.function.name, 'def f():\n    return 1\n'])),
    unsolved_set: { [tasks[i % 4].tools[0].function.name]: ['1'] },
    answer: '1',
    data_source: 'self/single_hop',
  });

  it('a file of mutated FTRL lines never throws: every non-blank line is a task or an error with a short message', () => {
    const n = fuzz(
      'hostile/ftrl',
      (rng) => {
        const records = Array.from({ length: 1 + rng.int(4) }, (_, i) => {
          const rec = JSON.parse(JSON.stringify(ftrlLine(i)));
          return rng.next() < 0.7 ? mutateTree(rng, rec, hostileValue(rng)) : rec;
        });
        const sep = pick(rng, ['\n', '\r\n', '\r', '\u2028']);
        // A torn line (an open string) only before LF / CR: after one, a U+2028 is inside that string.
        const lines = records.map((r) =>
          sep !== '\u2028' && rng.next() < 0.1 ? JSON.stringify(r).slice(0, 30) : JSON.stringify(r),
        );
        const text = (rng.next() < 0.3 ? '\uFEFF' : '') + lines.join(sep);
        const { tasks: got, errors, warnings } = parseFtrlJsonl(text);
        expect(got.length + errors.length).toBe(lines.length);
        for (const e of [...errors, ...warnings]) {
          expect(e.message.length).toBeLessThanOrEqual(330);
          expect(e.field.length).toBeLessThanOrEqual(140);
        }
        expectPrototypeIntact();
      },
      300,
    );
    expect(n).toBeGreaterThan(10);
  });

  it('mutated tasks validate or list issues, never throw; mutated trace lines are traces or errors', () => {
    const n = fuzz(
      'hostile/tasks',
      (rng) => {
        const task = mutateTree(rng, JSON.parse(JSON.stringify(pick(rng, tasks))), hostileValue(rng));
        const r = validateTask(task);
        if (!r.ok) for (const issue of r.issues) expect(issue.path.length + issue.message.length).toBeLessThan(400);
        const trace = mutateTree(
          rng,
          { taskId: 't', turns: [{ reasoning: 'r', calls: [{ name: 'f', arguments: {} }], observations: ['o'] }] },
          hostileValue(rng),
        );
        const parsed = parseTracesJsonl(JSON.stringify(trace) + '\n' + JSON.stringify(trace));
        expect(parsed.traces.length + parsed.unlabeled.length + parsed.errors.length).toBe(2);
        for (const e of parsed.errors) expect(e.message.length + e.path.length).toBeLessThan(500);
        expectPrototypeIntact();
      },
      300,
    );
    expect(n).toBeGreaterThan(10);
  });
});

describe('config validation', () => {
  const SIZE_FIELDS: [string[], number][] = [
    [['batchPrompts'], CONFIG_MAXIMA.batchPrompts],
    [['rolloutsPerPrompt'], CONFIG_MAXIMA.rolloutsPerPrompt],
    [['microBatchRows'], CONFIG_MAXIMA.microBatchRows],
    [['steps'], CONFIG_MAXIMA.steps],
    [['maxTurns'], CONFIG_MAXIMA.maxTurns],
    [['maxPromptTokens'], CONFIG_MAXIMA.tokens],
    [['maxResponseTokens'], CONFIG_MAXIMA.tokens],
    [['tasks', 'nTrain'], CONFIG_MAXIMA.nTrain],
    [['tasks', 'nTest'], CONFIG_MAXIMA.nTest],
  ];
  const FIELDS = [
    ...SIZE_FIELDS.map(([p]) => p),
    ['pact', 'anchorProb'],
    ['lr'],
    ['model', 'lora'],
    ['pact', 'traceComponents', 'reasoning'],
    ['name'],
    [pick(createRng('x'), HOSTILE_NAMES)],
  ];

  it('random configs resolve within every maximum, or give a ConfigError naming fields', () => {
    const n = fuzz(
      'hostile/config',
      (rng) => {
        const input: Record<string, unknown> = {};
        for (let k = 1 + rng.int(3); k > 0; k--) {
          const fieldPath = pick(rng, FIELDS);
          let node = input;
          for (const key of fieldPath.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
          const value = rng.next() < 0.5 ? pick(rng, [1, 2, 8, 1e9, 2 ** 53, -1, 0.5, 'x', null]) : hostileValue(rng);
          Object.defineProperty(node, fieldPath.at(-1)!, {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        try {
          const config = resolveConfig(input) as unknown as Record<string, Record<string, number>>;
          for (const [fieldPath, max] of SIZE_FIELDS) {
            const v =
              fieldPath.length === 1
                ? (config as unknown as Record<string, number>)[fieldPath[0]]
                : config[fieldPath[0]][fieldPath[1]];
            expect(v).toBeLessThanOrEqual(max);
          }
        } catch (e) {
          expectNamedError(e, ConfigError);
          for (const issue of (e as ConfigError).issues) {
            expect(issue.startsWith('config')).toBe(true);
            expect(issue.length).toBeLessThan(400);
          }
        }
        try {
          expandExperiment({
            base: input,
            runs: [mutateTree(rng, { pact: { anchorProb: 0.1 } }, hostileValue(rng)) as Record<string, unknown>],
          });
        } catch (e) {
          expectNamedError(e, Error);
          if (e instanceof RangeError || e instanceof TypeError) throw e;
        }
        expectPrototypeIntact();
      },
      500,
    );
    expect(n).toBeGreaterThan(10);
  });
});
