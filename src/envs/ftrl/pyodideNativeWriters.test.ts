/**
 * Files Node writes from native code, past its permission model, probed by Python tools in the
 * Node Pyodide sandbox through the route docs/security.md expects them to have
 * (`to_js([]).constructor.constructor`, the sandbox realm's Function): trace events
 * (`trace_events.createTracing(...).enable()` wrote `node_trace.1.log`) and a heap snapshot
 * near the heap limit (`v8.setHeapSnapshotNearHeapLimit(2)` and a heap bomb wrote
 * `Heap.*.heapsnapshot`), each through `process.getBuiltinModule` and through `import()`.
 * Nothing may appear in the host's working folder (this test process moves into an empty one)
 * nor, while the process lives, in the sandbox's own (watched with fs.watch).
 */
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, watch, type FSWatcher } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PyodideExecutor } from './pyodideExecutor';
import { createNodePyodideExecutor } from './pyodideExecutorNode';

let executor: PyodideExecutor;
let hostCwd: string;
let originalCwd: string;

beforeAll(async () => {
  originalCwd = process.cwd();
  hostCwd = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'pact-native-writers-host-')));
  process.chdir(hostCwd);
  executor = createNodePyodideExecutor({ timeoutMs: 20_000 });
  await executor.ready();
}, 120_000);

afterAll(() => {
  executor?.close();
  process.chdir(originalCwd);
  rmSync(hostCwd, { recursive: true, force: true });
});

/** A Python tool that runs `js` (a function body) in the sandbox realm and returns its value as str. */
const viaRealmJs = (js: string) =>
  [
    'def probe():',
    '    from pyodide.ffi import to_js',
    `    return str(to_js([]).constructor.constructor(${JSON.stringify(js)})())`,
    '',
  ].join('\n');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The sandbox's working folder, and a watcher that records every name created in it. */
async function watchSandboxCwd(): Promise<{ cwd: string; created: string[]; watcher: FSWatcher }> {
  const r = await executor.callTool(viaRealmJs('return process.cwd()'), 'probe', {});
  expect(r.isError).toBe(false);
  const cwd = r.observation;
  const created: string[] = [];
  // The folder's own removal, when the process exits, is not a file written in it.
  const watcher = watch(cwd, (_event, name) => {
    if (name !== null && String(name) !== path.basename(cwd)) created.push(String(name));
  });
  watcher.on('error', () => undefined);
  return { cwd, created, watcher };
}

const traceFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => /node_trace/.test(n)) : []);
const heapFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => /heapsnapshot/.test(n)) : []);

describe('native file writers in the Node Pyodide sandbox', () => {
  it('trace events write no node_trace file', async () => {
    const box = await watchSandboxCwd();
    try {
      const enable = await executor.callTool(
        viaRealmJs(`
          var out = [];
          var categories = { categories: ['node', 'node.perf', 'v8'] };
          try {
            globalThis.__tracing = process.getBuiltinModule('trace_events').createTracing(categories);
            globalThis.__tracing.enable();
            out.push('enabled');
          } catch (e) { out.push(e.message); }
          import('node:trace_events').then(function (m) {
            globalThis.__tracingEsm = m.createTracing(categories);
            globalThis.__tracingEsm.enable();
          }).catch(function () {});
          for (var i = 0; i < 20000; i++) JSON.parse('[1, 2, 3]');
          return out.join('|');`),
        'probe',
        {},
      );
      await sleep(1_000);
      // Disabling flushes what was recorded; then the process exits and its writer closes.
      await executor.callTool(
        viaRealmJs(`
          for (var i = 0; i < 20000; i++) JSON.parse('[1, 2, 3]');
          try { globalThis.__tracing && globalThis.__tracing.disable(); } catch (e) {}
          try { globalThis.__tracingEsm && globalThis.__tracingEsm.disable(); } catch (e) {}
          return 'disabled';`),
        'probe',
        {},
      );
      await sleep(1_500);
      expect(traceFiles(hostCwd)).toEqual([]);
      expect(traceFiles(box.cwd)).toEqual([]);
      expect(box.created).toEqual([]);
      // Layers behind that result: the API is sealed, and the process has a folder of its own.
      expect(enable.observation).toMatch(/trace_events\.createTracing is not available inside the tool sandbox/);
      expect(box.cwd).not.toBe(hostCwd);
    } finally {
      box.watcher.close();
    }
  }, 60_000);

  it('a heap bomb after v8.setHeapSnapshotNearHeapLimit writes no heap snapshot', async () => {
    const box = await watchSandboxCwd();
    try {
      const arm = await executor.callTool(
        viaRealmJs(`
          var out = [];
          try { process.getBuiltinModule('v8').setHeapSnapshotNearHeapLimit(2); out.push('armed'); }
          catch (e) { out.push(e.message); }
          import('node:v8').then(function (m) { m.setHeapSnapshotNearHeapLimit(2); }).catch(function () {});
          return out.join('|');`),
        'probe',
        {},
      );
      await sleep(200);
      // The bomb: objects until V8's heap limit, which ends the process.
      const bomb = await executor.callTool(
        viaRealmJs('var a = []; for (;;) a.push({ x: Math.random(), y: [1, 2, 3] });'),
        'probe',
        {},
        { timeoutMs: 90_000 },
      );
      expect(bomb.isError).toBe(true);
      await sleep(1_000);
      expect(heapFiles(hostCwd)).toEqual([]);
      expect(box.created).toEqual([]);
      expect(heapFiles(box.cwd)).toEqual([]);
      expect(arm.observation).toMatch(/v8\.setHeapSnapshotNearHeapLimit is not available inside the tool sandbox/);
      // The process's throwaway folder goes with it.
      expect(existsSync(box.cwd)).toBe(false);
    } finally {
      box.watcher.close();
    }
    // The executor goes on with a fresh sandbox.
    expect(await executor.callTool('def ok():\n    return "next"\n', 'ok', {})).toMatchObject({
      observation: 'next',
      isError: false,
    });
  }, 180_000);
});
