import { test, expect, type Page } from '@playwright/test';
import { readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

// Hostile tool code in the browser (docs/security.md), in the built app's own origin, where
// the page keeps the user's runs in IndexedDB. JavaScript tools run through the app's sandbox
// executor (bundled from src/ by e2e/toolSandboxHarness.ts); Python tools through the app's
// built Pyodide worker. A second server on another port counts every request that reaches it
// and answers with CORS headers, so that only the sandbox, not the server, can refuse them.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.resolve(root, process.env.PACT_E2E_DIST ?? 'dist');

let harness = '';
let server: http.Server;
let outsideUrl = '';
let hits = 0;

test.beforeAll(async () => {
  const out = await build({
    configFile: false,
    logLevel: 'warn',
    root,
    build: {
      write: false,
      minify: false,
      lib: { entry: path.join(root, 'e2e/toolSandboxHarness.ts'), formats: ['iife'], name: 'pactToolSandboxHarness' },
      rolldownOptions: { output: { codeSplitting: false } },
    },
  });
  const bundle = (Array.isArray(out) ? out[0] : out) as { output: { type: string; code?: string }[] };
  harness = bundle.output.find((o) => o.type === 'chunk')?.code ?? '';
  server = http.createServer((_req, res) => {
    hits++;
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('content-type', 'text/javascript');
    res.end('export const reached = true;');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  outsideUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

test.afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Puts a record into the app origin's IndexedDB, and reads it back. */
async function writeSecret(page: Page): Promise<void> {
  await page.evaluate(
    () =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open('pact-sandbox-probe', 1);
        open.onupgradeneeded = () => open.result.createObjectStore('kv');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction('kv', 'readwrite');
          tx.objectStore('kv').put('user data', 'secret');
          tx.oncomplete = () => (open.result.close(), resolve());
        };
      }),
  );
}

async function readSecret(page: Page): Promise<string> {
  return page.evaluate(
    () =>
      new Promise<string>((resolve, reject) => {
        const open = indexedDB.open('pact-sandbox-probe', 1);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const get = open.result.transaction('kv').objectStore('kv').get('secret');
          get.onsuccess = () => (open.result.close(), resolve(String(get.result)));
        };
      }),
  );
}

test('JavaScript tool code in the browser sandbox reaches no storage, network, page, or (fresh per call) later call', async ({
  page,
}) => {
  await page.goto('/');
  await writeSecret(page);
  await page.addScriptTag({ content: harness });
  const before = hits;
  const r = await page.evaluate(async (url) => {
    type Result = { ok: boolean; output: string };
    type Executor = { execute(...a: unknown[]): Promise<Result>; dispose(): void };
    const sandbox = (
      globalThis as unknown as {
        pactToolSandbox: { createWorkerExecutor(o?: { isFreshPerCall?: boolean }): Promise<Executor> };
      }
    ).pactToolSandbox;
    const ex = await sandbox.createWorkerExecutor({ isFreshPerCall: true });
    const run = (source: string, args: Record<string, unknown> = {}, timeoutMs = 10_000) =>
      ex.execute({ language: 'javascript', source }, 'probe', args, { timeoutMs });
    const globals = [
      'fetch',
      'XMLHttpRequest',
      'WebSocket',
      'EventSource',
      'importScripts',
      'indexedDB',
      'caches',
      'navigator',
      'BroadcastChannel',
      'Worker',
      'postMessage',
      'document',
      'window',
      'parent',
    ];
    const out: Record<string, Result> = {};
    out.honest = await run('(a) => ({ sum: a.x + a.y })', { x: 2, y: 3 });
    out.globals = await run(
      `() => ${JSON.stringify(globals)}.filter((n) => typeof globalThis[n] !== 'undefined').join(',') || 'none'`,
    );
    out.recovered = await run(`() => {
      const found = [];
      for (let o = globalThis; o; o = Object.getPrototypeOf(o))
        for (const n of ['indexedDB', 'fetch', 'caches', 'XMLHttpRequest', 'postMessage'])
          if (Object.getOwnPropertyDescriptor(o, n) && (Object.getOwnPropertyDescriptor(o, n).get || Object.getOwnPropertyDescriptor(o, n).value)) found.push(n);
      return found.join(',') || 'none';
    }`);
    out.origin = await run('() => globalThis.origin');
    out.importUrl = await run(
      'async (a) => { try { await import(a.url + "module.js"); return "imported"; } catch (e) { return "refused: " + e.name; } }',
      { url },
    );
    out.fetchUrl = await run(
      'async (a) => { try { await fetch(a.url); return "fetched"; } catch (e) { return "refused: " + e.name; } }',
      { url },
    );
    out.store = await run(
      '() => { globalThis.kept = "from the first call"; Object.prototype.polluted = 1; return "stored"; }',
    );
    out.read = await run('() => [typeof kept, typeof ({}).polluted].join(",")');
    out.loop = await run('() => { for (;;) {} }', {}, 300);
    out.after = await run('(a) => a.n + 1', { n: 41 });
    ex.dispose();
    // The default executor (one worker for many calls, for the generator's own stubs) runs in the same box.
    const shared = await sandbox.createWorkerExecutor();
    out.sharedGlobals = await shared.execute(
      {
        language: 'javascript',
        source: `() => ${JSON.stringify(globals)}.filter((n) => typeof globalThis[n] !== 'undefined').join(',') || 'none'`,
      },
      'probe',
      {},
    );
    out.sharedOrigin = await shared.execute({ language: 'javascript', source: '() => globalThis.origin' }, 'probe', {});
    out.sharedImport = await shared.execute(
      {
        language: 'javascript',
        source:
          'async (a) => { try { await import(a.url + "module.js"); return "imported"; } catch (e) { return "refused: " + e.name; } }',
      },
      'probe',
      { url },
    );
    shared.dispose();
    return out;
  }, outsideUrl);
  expect(r.honest).toEqual({ ok: true, output: '{"sum": 5}' });
  expect(r.globals).toEqual({ ok: true, output: 'none' });
  expect(r.recovered).toEqual({ ok: true, output: 'none' });
  // An opaque origin: the app's IndexedDB does not exist for it even if a global came back.
  expect(r.origin).toEqual({ ok: true, output: 'null' });
  // import() cannot be removed from a worker: the frame's CSP refuses it.
  expect(r.importUrl).toEqual({ ok: true, output: 'refused: TypeError' });
  expect(r.fetchUrl).toEqual({ ok: true, output: 'refused: TypeError' });
  expect(r.store.output).toBe('stored');
  expect(r.read).toEqual({ ok: true, output: 'undefined,undefined' });
  expect(r.loop).toEqual({ ok: false, output: 'an error occured when call probe: timed out after 300 ms' });
  expect(r.after).toEqual({ ok: true, output: '42' });
  expect(r.sharedGlobals).toEqual({ ok: true, output: 'none' });
  expect(r.sharedOrigin).toEqual({ ok: true, output: 'null' });
  expect(r.sharedImport).toEqual({ ok: true, output: 'refused: TypeError' });
  expect(hits).toBe(before);
  expect(await readSecret(page)).toBe('user data');
});

test('Python tool code in the browser Pyodide worker reaches no storage or network', async ({ page }) => {
  test.setTimeout(300_000);
  const workerFile = readdirSync(path.join(dist, 'assets')).find((f) => /^pyodide\.worker-.*\.js$/.test(f));
  expect(workerFile, 'the build has a Pyodide worker chunk').toBeTruthy();
  await page.goto('/');
  await writeSecret(page);
  const before = hits;
  const r = await page.evaluate(
    async ({ workerUrl, url }) => {
      const worker = new Worker(workerUrl, { type: 'module' });
      const replies = new Map<number, (m: { observation: string; isError: boolean }) => void>();
      const ready = new Promise<void>((resolve, reject) => {
        worker.onmessage = (e: MessageEvent) => {
          const m = e.data;
          if (m.type === 'ready') resolve();
          else if (m.type === 'loadFailed') reject(new Error(m.message));
          else if (m.type === 'toolResult') replies.get(m.id)?.(m);
        };
      });
      worker.postMessage({ type: 'init', indexURL: new URL('/pyodide/', location.href).href });
      await ready;
      let id = 0;
      const call = (source: string, args: Record<string, unknown> = {}) =>
        new Promise<{ observation: string; isError: boolean }>((resolve) => {
          const n = ++id;
          replies.set(n, resolve);
          worker.postMessage({ type: 'callTool', id: n, source, name: 'probe', argumentsJson: JSON.stringify(args) });
        });
      const out: Record<string, { observation: string; isError: boolean }> = {};
      out.honest = await call('def probe(x):\n    return {"x": x}\n', { x: 'é' });
      out.js = await call(
        'def probe():\n    import js\n    return [n for n in ["fetch", "indexedDB", "caches", "XMLHttpRequest", "postMessage", "globalThis"] if hasattr(js, n)]\n',
      );
      out.realm = await call(
        'def probe():\n    from pyodide.ffi import to_js\n    return str(to_js([]).constructor.constructor("return globalThis")())\n',
      );
      out.loadPackage = await call(
        'def probe(url):\n    import pyodide_js\n    pyodide_js.loadPackage(url + "pkg-0.1-py3-none-any.whl")\n    return "asked"\n',
        { url },
      );
      out.after = await call('def probe(n):\n    return n + 1\n', { n: 41 });
      // Let any request the tools started land before the count is read.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      worker.terminate();
      return out;
    },
    { workerUrl: `/assets/${workerFile}`, url: outsideUrl },
  );
  // An honest call answers, and leaves the interpreter as it found it (isBroken false: no replacement needed).
  expect(r.honest).toEqual({ type: 'toolResult', id: 1, observation: '{"x": "é"}', isError: false, isBroken: false });
  expect(r.js.observation).toBe('[]');
  expect(r.realm.isError).toBe(true);
  expect(r.realm.observation).toMatch(/code generation is off in the tool sandbox/);
  expect(r.after.observation).toBe('42');
  expect(hits).toBe(before);
  expect(await readSecret(page)).toBe('user data');
});
