import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLanguageRouter,
  createWorkerExecutor,
  formatToolOutput,
  InProcessExecutor,
  MAX_OUTPUT_CHARS,
  WorkerExecutor,
} from './index';
import type { ToolImplementation } from '../types';

const js = (source: string): ToolImplementation => ({ language: 'javascript', source });

describe('formatToolOutput (FTRL / Python json.dumps style)', () => {
  it('writes strings as is, objects with ", " and ": " separators, Python literals for scalars', () => {
    expect(formatToolOutput('plain')).toBe('plain');
    expect(formatToolOutput({ a: 1, b: [1.5, 'é', null, true] })).toBe('{"a": 1, "b": [1.5, "é", null, true]}');
    expect(formatToolOutput(null)).toBe('None');
    expect(formatToolOutput(undefined)).toBe('None');
    expect(formatToolOutput(true)).toBe('True');
    expect(formatToolOutput(42)).toBe('42');
    expect(formatToolOutput({ x: NaN, y: -Infinity, f: () => 1 })).toBe('{"x": NaN, "y": -Infinity}');
    expect(formatToolOutput('x'.repeat(MAX_OUTPUT_CHARS + 5))).toBe(
      `${'x'.repeat(MAX_OUTPUT_CHARS)} …[output cut at ${MAX_OUTPUT_CHARS} characters]`,
    );
  });
});

describe('InProcessExecutor', () => {
  const ex = new InProcessExecutor();
  it('runs a stub and turns a throw or a bad source into an error observation', async () => {
    expect(await ex.execute(js('(args) => ({ twice: args.x * 2 })'), 'twice', { x: 21 })).toEqual({
      ok: true,
      output: '{"twice": 42}',
    });
    expect(await ex.execute(js('(args) => { throw new Error("bad city") }'), 'f', {})).toEqual({
      ok: false,
      output: 'an error occured when call f: bad city',
    });
    expect(await ex.execute(js('(args) => { throw 7 }'), 'f', {})).toEqual({
      ok: false,
      output: 'an error occured when call f: 7',
    });
    expect((await ex.execute(js('this is not js'), 'f', {})).output).toMatch(/^an error occured when call f: /);
    expect(await ex.execute(js('42'), 'f', {})).toEqual({
      ok: false,
      output: 'an error occured when call f: tool source does not evaluate to a function',
    });
    expect(await ex.execute(js('(a) => { const o = {}; o.self = o; return o; }'), 'f', {})).toEqual({
      ok: false,
      output: 'an error occured when call f: output contains a circular reference',
    });
  });

  it('answers a promise that can never settle at once: a stub has no timers or I/O to settle it with', async () => {
    expect(await ex.execute(js('(a) => new Promise(() => {})'), 'slow', {}, { timeoutMs: 30 })).toEqual({
      ok: false,
      output:
        'an error occured when call slow: the tool returned a promise that never settles (tool code has no timers or I/O)',
    });
  });

  it('routes by language: a Python tool without a Python executor is an error observation', async () => {
    const router = createLanguageRouter({ javascript: ex });
    expect(await router.execute({ language: 'python', source: 'def f(): pass' }, 'f', {})).toEqual({
      ok: false,
      output: 'an error occured when call f: no executor for python tools',
    });
    expect(await router.execute(js('() => "ok"'), 'f', {})).toEqual({ ok: true, output: 'ok' });
  });
});

describe('WorkerExecutor (Node sandbox process)', () => {
  let ex: WorkerExecutor;
  beforeAll(async () => {
    ex = await createWorkerExecutor();
  });
  afterAll(() => ex.dispose());

  it('runs stubs in a worker with the same formatting', async () => {
    expect(await ex.execute(js('(args) => ({ twice: args.x * 2, s: "é" })'), 'twice', { x: 21 })).toEqual({
      ok: true,
      output: '{"twice": 42, "s": "é"}',
    });
    expect(await ex.execute(js('async (args) => args.items.length'), 'count', { items: [1, 2, 3] })).toEqual({
      ok: true,
      output: '3',
    });
    expect(await ex.execute(js('(args) => { throw new Error("no such person") }'), 'who', {})).toEqual({
      ok: false,
      output: 'an error occured when call who: no such person',
    });
  });

  it('a stub that loops forever is stopped at its limit inside the process, which serves the next call', async () => {
    await ex.execute(js('(args) => "warm"'), 'ping', {});
    const before = ex.spawnCount;
    const loop = await ex.execute(js('(args) => { for (;;) {} }'), 'spin', {}, { timeoutMs: 200 });
    expect(loop).toEqual({ ok: false, output: 'an error occured when call spin: timed out after 200 ms' });
    const after = await ex.execute(js('(args) => "alive"'), 'ping', {});
    expect(after).toEqual({ ok: true, output: 'alive' });
    expect(ex.spawnCount).toBe(before);
  });

  it('hides network and Node globals from stubs', async () => {
    const probe = js(
      '(args) => [typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof require, typeof process, typeof globalThis.require, typeof globalThis.process, typeof globalThis.fetch, typeof setTimeout].join(",")',
    );
    expect(await ex.execute(probe, 'probe', {})).toEqual({ ok: true, output: Array(9).fill('undefined').join(',') });
  });

  it('refuses dynamic import() and keeps formatting after a stub overwrites JSON.stringify', async () => {
    const imp = await ex.execute(js('(a) => import("node:fs").then((m) => typeof m.readFileSync)'), 'imp', {});
    expect(imp.ok).toBe(false);
    expect(await ex.execute(js('(a) => { JSON.stringify = null; return { x: 1 }; }'), 'poison', {})).toEqual({
      ok: true,
      output: '{"x": 1}',
    });
    expect(await ex.execute(js('(a) => ({ y: [2] })'), 'next', {})).toEqual({ ok: true, output: '{"y": [2]}' });
  });

  it('queues calls made at once and answers each with its own output', async () => {
    const results = await Promise.all([1, 2, 3].map((x) => ex.execute(js('(a) => a.x * 10'), 'times10', { x })));
    expect(results.map((r) => r.output)).toEqual(['10', '20', '30']);
  });
});
