/**
 * metrics.jsonl, the metric log a checkpoint file carries: written and read back row for row,
 * `pact train`'s own lines read too, and an untrusted file bounded and checked line by line
 * (the error names the line and field).
 */
import { describe, expect, it } from 'vitest';
import {
  METRICS_FILE,
  METRICS_LIMITS,
  MetricsFileError,
  formatMetricsJsonl,
  parseMetricsJsonl,
  readMetricsFile,
  type MetricsFileRow,
} from './metricsFile';

const bytes = (s: string) => new TextEncoder().encode(s);
const parse = (s: string, maxStep?: number) => parseMetricsJsonl(bytes(s), { maxStep });
const errorOf = (s: string): string => {
  try {
    parse(s);
  } catch (e) {
    expect(e).toBeInstanceOf(MetricsFileError);
    return (e as Error).message;
  }
  throw new Error('expected an error');
};

describe('metrics.jsonl', () => {
  it('round-trips stored rows (NaN as null and back), ordered by step', () => {
    // As the worker stores them: every row's values carry its step too.
    const rows: MetricsFileRow[] = [
      { step: 2, values: { step: 2, reward: 0.5, kl: 0.01, 'eval/reward': 0.25 } },
      { step: 0, values: { step: 0, 'eval/reward': 0.125 } },
      { step: 1, values: { step: 1, reward: 0.25, 'loss/Lx': Number.NaN } },
    ];
    const text = formatMetricsJsonl(rows);
    expect(text.split('\n')[1]).toBe('{"step":1,"reward":0.25,"loss/Lx":null}');
    expect(parse(text)).toEqual({ rows: [rows[1], rows[2], rows[0]], droppedAfter: 0 });
    // The row's step is the line's, whatever its values say; values without one gain it.
    const odd = formatMetricsJsonl([{ step: 3, values: { step: 9, r: 1 } }]);
    expect(odd).toBe('{"step":3,"r":1}\n');
    expect(parse(odd).rows).toEqual([{ step: 3, values: { step: 3, r: 1 } }]);
  });

  it("reads pact train's lines: text fields ignored, a step's eval line merged into it, rows past maxStep dropped", () => {
    const text =
      '{"type":"step","run":"pact-s1","step":1,"recipe":"pact","reward":1.18,"loss/Lx":null}\n' +
      '{"type":"eval","run":"pact-s1","step":1,"eval/reward":0.5}\r\n\n' +
      '{"type":"step","run":"pact-s1","step":2,"recipe":"pact","reward":1.2}\n';
    const { rows, droppedAfter } = parse(text, 1);
    expect(rows).toEqual([{ step: 1, values: { step: 1, reward: 1.18, 'loss/Lx': Number.NaN, 'eval/reward': 0.5 } }]);
    expect(droppedAfter).toBe(1);
  });

  it('a bad row is an error naming its line and field', () => {
    const good = '{"step":1,"reward":0.5}\n';
    expect(errorOf(`${good}{"step":2,"reward":"high"}\n`)).toBe(
      'metrics.jsonl line 2: field "reward" must be a number or null, got "high"',
    );
    expect(errorOf(`${good}{"step":2,"reward":{"a":1}}`)).toBe(
      'metrics.jsonl line 2: field "reward" must be a number or null, got an object with 1 key(s)',
    );
    expect(errorOf(`${good}\n{"step":2,"rew`)).toMatch(/^metrics\.jsonl line 3: not valid JSON \(/);
    expect(errorOf('[1,2]')).toBe(
      'metrics.jsonl line 1: expected an object {"step": N, "<metric>": number, …}, got an array of 2',
    );
    expect(errorOf('{"reward":1}')).toBe('metrics.jsonl line 1: field "step" is missing (every row names its step)');
    expect(errorOf('{"step":-1}')).toBe('metrics.jsonl line 1: field "step" must be an integer ≥ 0, got -1');
    expect(errorOf('{"step":1.5}')).toBe('metrics.jsonl line 1: field "step" must be an integer ≥ 0, got 1.5');
    expect(errorOf('{"step":1,"type":3}')).toBe('metrics.jsonl line 1: field "type" must be text, got 3');
    expect(errorOf('{"step":1,"__proto__":1}')).toBe(
      'metrics.jsonl line 1: field "__proto__": a metric may not be named "__proto__"',
    );
    expect(errorOf(`{"step":1,"${'k'.repeat(201)}":1}`)).toMatch(
      /^metrics\.jsonl line 1: field "k+…" \(201 chars\): a metric name may hold at most 200 characters$/,
    );
    // "constructor" and "toString" are metric names like any other.
    expect(parse('{"step":1,"constructor":1,"toString":2}').rows[0].values).toEqual({
      step: 1,
      constructor: 1,
      toString: 2,
    });
  });

  it('is bounded: bytes, lines, line length and metrics per row', () => {
    expect(() => parseMetricsJsonl(new Uint8Array(METRICS_LIMITS.bytes + 1))).toThrow(
      `metrics.jsonl is ${METRICS_LIMITS.bytes + 1} bytes; a metric log may hold at most ${METRICS_LIMITS.bytes}`,
    );
    expect(errorOf('{"step":0}\n'.repeat(METRICS_LIMITS.lines + 1))).toBe(
      `metrics.jsonl has ${METRICS_LIMITS.lines + 1} lines; a metric log may hold at most ${METRICS_LIMITS.lines}`,
    );
    expect(errorOf(`{"step":0}\n{"step":1,"a":"${'x'.repeat(METRICS_LIMITS.lineChars)}"}`)).toMatch(
      /^metrics\.jsonl line 2: \d+ characters; a line may hold at most 262144$/,
    );
    const wide = Object.fromEntries(Array.from({ length: METRICS_LIMITS.keys + 5 }, (_, i) => [`m${i}`, i]));
    expect(errorOf(JSON.stringify({ step: 0, ...wide }))).toBe(
      `metrics.jsonl line 1: ${METRICS_LIMITS.keys + 6} fields; a row may hold at most ${METRICS_LIMITS.keys} metrics`,
    );
    expect(() => parseMetricsJsonl(Uint8Array.of(0x7b, 0xff, 0x7d))).toThrow('metrics.jsonl is not UTF-8 text');
  });

  it('readMetricsFile: rows, none, or unreadable with the reason (it never throws)', async () => {
    const source = (files: Record<string, string>, sizes: Record<string, number> = {}) => ({
      listFiles: async () => Object.keys(files),
      readFile: async (name: string) => bytes(files[name]),
      fileSize: async (name: string) => sizes[name] ?? bytes(files[name]).length,
    });
    expect(await readMetricsFile(source({ 'config.json': '{}' }), 3)).toEqual({ kind: 'none' });
    expect(await readMetricsFile(source({ [METRICS_FILE]: '{"step":1,"r":1}\n{"step":4,"r":2}\n' }), 3)).toEqual({
      kind: 'rows',
      rows: [{ step: 1, values: { step: 1, r: 1 } }],
      droppedAfter: 1,
    });
    expect(await readMetricsFile(source({ [METRICS_FILE]: '{"step":1}\n{"step":"2"}' }), 3)).toEqual({
      kind: 'unreadable',
      reason: 'metrics.jsonl line 2: field "step" must be an integer ≥ 0, got "2"',
    });
    // Too big by its size alone: refused before it is read.
    const huge = source({ [METRICS_FILE]: '' }, { [METRICS_FILE]: 1e9 });
    huge.readFile = async () => {
      throw new Error('read');
    };
    expect(await readMetricsFile(huge, 3)).toEqual({
      kind: 'unreadable',
      reason: `metrics.jsonl is 1000000000 bytes; a metric log may hold at most ${METRICS_LIMITS.bytes}`,
    });
  });
});
