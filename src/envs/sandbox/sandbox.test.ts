import { Worker as NodeWorker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createBrowserWorkerFactory,
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
    expect(formatToolOutput('x'.repeat(MAX_OUTPUT_CHARS + 5))).toBe(`${'x'.repeat(MAX_OUTPUT_CHARS)} …[output cut at ${MAX_OUTPUT_CHARS} characters]`);
  });
});

describe('InProcessExecutor', () => {
  const ex = new InProcessExecutor();
  it('runs a stub and turns a throw or a bad source into an error observation', async () => {
    expect(await ex.execute(js('(args) => ({ twice: args.x * 2 })'), 'twice', { x: 21 })).toEqual({ ok: true, output: '{"twice": 42}' });
    expect(await ex.execute(js('(args) => { throw new Error("bad city") }'), 'f', {})).toEqual({ ok: false, output: 'an error occured when call f: bad city' });
    expect(await ex.execute(js('(args) => { throw 7 }'), 'f', {})).toEqual({ ok: false, output: 'an error occured when call f: 7' });
    expect((await ex.execute(js('this is not js'), 'f', {})).output).toMatch(/^an error occured when call f: /);
    expect(await ex.execute(js('42'), 'f', {})).toEqual({ ok: false, output: 'an error occured when call f: tool source does not evaluate to a function' });
    expect(await ex.execute(js('(a) => { const o = {}; o.self = o; return o; }'), 'f', {})).toEqual({
      ok: false,
      output: 'an error occured when call f: output contains a circular reference',
    });
  });

  it('cuts a promise that never settles at the time limit', async () => {
    expect(await ex.execute(js('(a) => new Promise(() => {})'), 'slow', {}, { timeoutMs: 30 })).toEqual({
      ok: false,
      output: 'an error occured when call slow: timed out after 30 ms',
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

describe('WorkerExecutor (Node worker_threads)', () => {
  let ex: WorkerExecutor;
  beforeAll(async () => {
    ex = await createWorkerExecutor();
  });
  afterAll(() => ex.dispose());

  it('runs stubs in a worker with the same formatting', async () => {
    expect(await ex.execute(js('(args) => ({ twice: args.x * 2, s: "é" })'), 'twice', { x: 21 })).toEqual({ ok: true, output: '{"twice": 42, "s": "é"}' });
    expect(await ex.execute(js('async (args) => args.items.length'), 'count', { items: [1, 2, 3] })).toEqual({ ok: true, output: '3' });
    expect(await ex.execute(js('(args) => { throw new Error("no such person") }'), 'who', {})).toEqual({
      ok: false,
      output: 'an error occured when call who: no such person',
    });
  });

  it('a stub that loops forever times out, the worker is respawned, and the next call works', async () => {
    const before = ex.spawnCount;
    const loop = await ex.execute(js('(args) => { for (;;) {} }'), 'spin', {}, { timeoutMs: 200 });
    expect(loop).toEqual({ ok: false, output: 'an error occured when call spin: timed out after 200 ms' });
    const after = await ex.execute(js('(args) => "alive"'), 'ping', {});
    expect(after).toEqual({ ok: true, output: 'alive' });
    expect(ex.spawnCount).toBe(before + 1);
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
    expect(await ex.execute(js('(a) => { JSON.stringify = null; return { x: 1 }; }'), 'poison', {})).toEqual({ ok: true, output: '{"x": 1}' });
    expect(await ex.execute(js('(a) => ({ y: [2] })'), 'next', {})).toEqual({ ok: true, output: '{"y": [2]}' });
  });

  it('queues calls made at once and answers each with its own output', async () => {
    const results = await Promise.all([1, 2, 3].map((x) => ex.execute(js('(a) => a.x * 10'), 'times10', { x })));
    expect(results.map((r) => r.output)).toEqual(['10', '20', '30']);
  });
});

/**
 * The browser path (Blob URL + classic Worker + `self.onmessage`), run in Node: a fake
 * `Worker` runs the Blob's text in a worker_threads worker where `require` is removed
 * and `self` is a message shim, so WORKER_SOURCE takes its browser branch.
 */
describe('WorkerExecutor (browser factory, through a Web Worker shim)', () => {
  const blobs = new Map<string, string>();
  class FakeBlob {
    constructor(readonly parts: string[]) {}
  }
  class FakeWebWorker {
    onmessage: ((e: { data: unknown }) => void) | null = null;
    onerror: ((e: { message: string; preventDefault(): void }) => void) | null = null;
    onmessageerror: (() => void) | null = null;
    private readonly worker: NodeWorker;
    constructor(url: string) {
      const prelude =
        "const { parentPort } = require('node:worker_threads'); delete globalThis.require;" +
        'globalThis.self = { postMessage: (m) => parentPort.postMessage(m) };' +
        "parentPort.on('message', (d) => globalThis.self.onmessage && globalThis.self.onmessage({ data: d }));";
      this.worker = new NodeWorker(`${prelude}\n(0, eval)(${JSON.stringify(blobs.get(url))});`, { eval: true });
      this.worker.on('message', (data) => this.onmessage?.({ data }));
      this.worker.on('error', (e) => this.onerror?.({ message: e.message, preventDefault() {} }));
    }
    postMessage(m: unknown) {
      this.worker.postMessage(m);
    }
    terminate() {
      void this.worker.terminate();
    }
  }
  let ex: WorkerExecutor;
  beforeAll(() => {
    let n = 0;
    vi.stubGlobal('Blob', FakeBlob);
    vi.stubGlobal('Worker', FakeWebWorker);
    vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => {
      const url = `blob:fake/${n++}`;
      blobs.set(url, (blob as unknown as FakeBlob).parts.join(''));
      return url;
    });
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => {});
    ex = new WorkerExecutor(createBrowserWorkerFactory());
  });
  afterAll(() => {
    ex.dispose();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it('runs stubs with shadowed globals and survives an infinite loop', async () => {
    expect(await ex.execute(js('(a) => ({ sum: a.x + a.y })'), 'add', { x: 2, y: 3 })).toEqual({ ok: true, output: '{"sum": 5}' });
    // setTimeout is a function here (the browser branch compiles in the worker's realm);
    // in Node's branch the vm context has none.
    expect(await ex.execute(js('(a) => [typeof fetch, typeof require, typeof self, typeof postMessage, typeof setTimeout].join(",")'), 'probe', {})).toEqual({
      ok: true,
      output: 'undefined,undefined,undefined,undefined,function',
    });
    expect(await ex.execute(js('(a) => { while (true) {} }'), 'spin', {}, { timeoutMs: 200 })).toEqual({
      ok: false,
      output: 'an error occured when call spin: timed out after 200 ms',
    });
    expect(await ex.execute(js('(a) => "back"'), 'ping', {})).toEqual({ ok: true, output: 'back' });
    expect(ex.spawnCount).toBe(2);
  });
});
