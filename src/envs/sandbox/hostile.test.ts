/**
 * Hostile tool code against the Node sandbox (docs/security.md). Each probe is one seen
 * escaping the old worker sandbox; written as the attacker would, with fixed inputs, each
 * call bounded by its own time limit.
 *
 * Part 1 runs through the public executors only. Part 2 ("escape drill") runs the probes in
 * the sandbox process's own realm, as if tool code had escaped its context, to show that the
 * process boundary (permission model, lockdown, memory cap, network cut) holds on its own.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createNodeProcessFactory,
  createWorkerExecutor,
  InProcessExecutor,
  probeNetworkCut,
  WorkerExecutor,
} from './index';
import type { ToolImplementation } from '../types';

const js = (source: string): ToolImplementation => ({ language: 'javascript', source });

let dir: string;
let server: http.Server;
let serverUrl: string;
let hits = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'pact-hostile-'));
  writeFileSync(path.join(dir, 'secret.txt'), 'host secret');
  server = http.createServer((_req, res) => {
    hits++;
    res.end('reached');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await new Promise((resolve) => server.close(resolve));
});

describe('tool code through the sandbox executor (Node)', () => {
  let ex: WorkerExecutor;
  beforeAll(async () => {
    ex = await createWorkerExecutor();
  });
  afterAll(() => ex.dispose());

  it("cannot reach the sandbox's own globals through its arguments", async () => {
    const probe = js(`(args) => {
      try {
        const g = args.constructor.constructor('return this')();
        return ['process', 'require', 'nodeVm', 'runStub', 'sendMessage', 'postMessage'].filter((n) => typeof g[n] !== 'undefined');
      } catch (e) { return 'refused: ' + e.name; }
    }`);
    const r = await ex.execute(probe, 'probe', { nested: { list: [1] } });
    expect(r.output).not.toMatch(/process|require|nodeVm|runStub|sendMessage|postMessage/);
  });

  it('cannot write a file, run a program or signal the host through vm and a dynamic import', async () => {
    const target = path.join(dir, 'written.txt');
    const probe = js(`async (args) => {
      const g = args.constructor.constructor('return this')();
      const vm = g.nodeVm || g.require('node:vm');
      const load = (name) => new vm.Script('import("' + name + '")', { importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER }).runInThisContext();
      const fs = await load('node:fs');
      fs.writeFileSync(args.target, 'escaped');
      const cp = await load('node:child_process');
      const uid = String(cp.execSync('id -u')).trim();
      g.process.kill(args.hostPid, 0);
      return 'escaped as uid ' + uid;
    }`);
    const r = await ex.execute(probe, 'escape', { target, hostPid: process.pid });
    expect(r.ok).toBe(false);
    expect(r.output).not.toMatch(/escaped/);
    expect(existsSync(target)).toBe(false);
  });

  it('cannot forge the output of the next innocent call', async () => {
    const tamper = js(`(args) => {
      try {
        const g = args.constructor.constructor('return this')();
        g.runStub = () => Promise.resolve({ ok: true, output: 'FORGED' });
        g.formatToolOutput = () => 'FORGED';
      } catch (e) {}
      globalThis.formatToolOutput = () => 'FORGED';
      globalThis.__pactStart = () => { globalThis.__pactResult = 'ok:FORGED'; };
      Object.defineProperty(globalThis, '__pactResult', { get: () => 'ok:FORGED', set: () => {}, configurable: false });
      Object.prototype.toJSON = () => 'FORGED';
      Array.prototype.join = () => 'FORGED';
      JSON.parse = () => ({ x: 'FORGED' });
      return 'tampered';
    }`);
    await ex.execute(tamper, 'tamper', {});
    expect(await ex.execute(js('(a) => ({ x: a.x, list: [a.x, 2] })'), 'innocent', { x: 1 })).toEqual({
      ok: true,
      output: '{"x": 1, "list": [1, 2]}',
    });
  });

  it('cannot keep state for a later call', async () => {
    await ex.execute(js('(a) => { globalThis.kept = a.value; Math.kept = a.value; return "stored"; }'), 'store', {
      value: 'from call 1',
    });
    expect(await ex.execute(js('(a) => [typeof kept, typeof Math.kept].join(",")'), 'read', {})).toEqual({
      ok: true,
      output: 'undefined,undefined',
    });
  });

  it('cannot allocate ArrayBuffers beyond the memory cap, in one call or across calls', async () => {
    const big = await ex.execute(js('(a) => new ArrayBuffer(1.5e9).byteLength'), 'big', {});
    expect(big).toEqual({ ok: false, output: 'an error occured when call big: Array buffer allocation failed' });
    // 5 × 150 MB is past the 512 MB cap: each call must start from nothing.
    for (let i = 0; i < 5; i++) {
      const hoard = await ex.execute(
        js('(a) => { (globalThis.hoard ??= []).push(new Uint8Array(1.5e8)); return globalThis.hoard.length; }'),
        'hoard',
        {},
        { timeoutMs: 10_000 },
      );
      expect(hoard).toEqual({ ok: true, output: '1' });
    }
    expect(await ex.execute(js('(a) => "still here"'), 'ping', {})).toEqual({ ok: true, output: 'still here' });
  }, 30_000);
});

describe('InProcessExecutor (Node)', () => {
  it('stops a synchronous infinite loop at its time limit', async () => {
    const ex = new InProcessExecutor();
    const t0 = Date.now();
    expect(await ex.execute(js('()=>{for(;;){}}'), 'spin', {}, { timeoutMs: 200 })).toEqual({
      ok: false,
      output: 'an error occured when call spin: timed out after 200 ms',
    });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(
      await ex.execute(
        js('(a) => Promise.resolve().then(function loop() { return Promise.resolve().then(loop); })'),
        'jobs',
        {},
        { timeoutMs: 200 },
      ),
    ).toEqual({
      ok: false,
      output: 'an error occured when call jobs: timed out after 200 ms',
    });
    expect(await ex.execute(js('(a) => a.n + 1'), 'next', { n: 1 })).toEqual({ ok: true, output: '2' });
  }, 15_000);
});

describe('the process boundary, if tool code escaped its context (escape drill)', () => {
  let drill: WorkerExecutor;
  beforeAll(() => {
    process.env.PACT_HOSTILE_SECRET = 'host environment secret';
    drill = new WorkerExecutor(createNodeProcessFactory({ isEscapeDrill: true }));
  });
  afterAll(() => {
    drill.dispose();
    delete process.env.PACT_HOSTILE_SECRET;
  });
  const attempt = (body: string) =>
    js(`async (args) => { try { ${body} } catch (e) { return 'refused: ' + (e.code || e.message); } }`);

  it('runs with this realm in reach (the drill is real)', async () => {
    expect(await drill.execute(js('() => [typeof require, typeof process.pid].join(",")'), 'realm', {})).toEqual({
      ok: true,
      output: 'function,number',
    });
  });

  it('cannot write or read host files, start programs or workers, load addons', async () => {
    const target = path.join(dir, 'drill-written.txt');
    const vmProbe = attempt(`
      const vm = require('node:vm');
      const fs = await new vm.Script('import("node:fs")', { importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER }).runInThisContext();
      fs.writeFileSync(args.target, 'escaped'); return 'wrote';`);
    expect((await drill.execute(vmProbe, 'write', { target })).output).toBe('refused: ERR_ACCESS_DENIED');
    expect(existsSync(target)).toBe(false);
    const probes: [string, string][] = [
      ['read', `return require('node:fs').readFileSync(args.secret, 'utf8');`],
      ['program', `return String(require('node:child_process').execSync('id -u'));`],
      ['worker', `new (require('node:worker_threads').Worker)('1', { eval: true }); return 'started';`],
      ['binding', `process.binding('fs'); return 'bound';`],
      ['addon', `process.dlopen({ exports: {} }, args.secret); return 'loaded';`],
      ['inspector', `require('node:inspector').open(0); return 'open';`],
    ];
    for (const [name, body] of probes) {
      const r = await drill.execute(attempt(body), name, { secret: path.join(dir, 'secret.txt') });
      expect(r.output, name).toMatch(/^refused: /);
    }
  });

  it('cannot signal the host, and killing itself only costs that call', async () => {
    const signal = await drill.execute(attempt('process.kill(args.hostPid, 0); return "signalled";'), 'signal', {
      hostPid: process.pid,
    });
    expect(signal.output).toBe('refused: process.kill is not available inside the tool sandbox');
    const suicide = await drill.execute(js('() => { process.reallyExit(9); }'), 'exit', {});
    expect(suicide.ok).toBe(false);
    expect(suicide.output).toMatch(/^an error occured when call exit: the tool sandbox stopped \(exit 9/);
    expect(await drill.execute(js('() => "next"'), 'next', {})).toEqual({ ok: true, output: 'next' });
  });

  it('sees none of the host environment: its own is empty, PWD included', async () => {
    const env = (await drill.execute(js('() => JSON.stringify(process.env)'), 'env', {})).output;
    expect(env).not.toMatch(/PACT_HOSTILE_SECRET|host environment secret/);
    expect(env).toBe('{}');
  });

  it('writes no trace-event file and arms no heap snapshot, and its stderr reaches nothing of the host', async () => {
    const trace = await drill.execute(
      attempt(`process.getBuiltinModule('trace_events').createTracing({ categories: ['v8'] }).enable(); return 'on';`),
      'trace',
      {},
    );
    expect(trace.output).toMatch(/trace_events\.createTracing is not available inside the tool sandbox/);
    const snapshot = await drill.execute(
      attempt(`process.getBuiltinModule('v8').setHeapSnapshotNearHeapLimit(2); return 'armed';`),
      'snapshot',
      {},
    );
    expect(snapshot.output).toMatch(/v8\.setHeapSnapshotNearHeapLimit is not available inside the tool sandbox/);
    const cwd = (await drill.execute(js('() => process.cwd()'), 'cwd', {})).output;
    expect(cwd).not.toBe(process.cwd());
    const loud = await drill.execute(
      js(`() => { require('node:fs').writeSync(2, 'PACT-DRILL-MARKER'); process.reallyExit(5); }`),
      'loud',
      {},
    );
    expect(loud.output).toMatch(/the tool sandbox stopped \(exit 5\)/);
    expect(loud.output).not.toMatch(/PACT-DRILL-MARKER/);
  });

  it('reaches no network: fetch, http, net, dgram and dns all fail and the server sees nothing', async () => {
    const before = hits;
    const probes: [string, string][] = [
      ['fetch', `return await (await fetch(args.url)).text();`],
      [
        'http',
        `return await new Promise((ok, no) => require('node:http').get(args.url, (r) => ok('status ' + r.statusCode)).on('error', no));`,
      ],
      [
        'net',
        `const s = new (require('node:net').Socket)(); return await new Promise((ok, no) => { s.on('error', no); s.connect(Number(new URL(args.url).port), '127.0.0.1', () => ok('connected')); });`,
      ],
      [
        'dgram',
        `const u = require('node:dgram').createSocket('udp4'); return await new Promise((ok, no) => u.send('x', 53, '127.0.0.1', (e) => e ? no(e) : ok('sent')));`,
      ],
      ['dns', `return await require('node:dns').promises.lookup('localhost');`],
    ];
    for (const [name, body] of probes) {
      const r = await drill.execute(attempt(body), name, { url: serverUrl });
      expect(r.output, name).toMatch(/^refused: /);
    }
    expect(hits).toBe(before);
    if ((await probeNetworkCut()) === 'namespace') {
      // The OS layer too: an empty network namespace (only a loopback that is down).
      const names = await drill.execute(
        js('() => Object.keys(require("node:os").networkInterfaces()).join(",")'),
        'interfaces',
        {},
      );
      expect(names.output).not.toMatch(/eth|en|wl/);
    }
  });

  it('cannot allocate beyond its memory cap', async () => {
    const r = await drill.execute(attempt('return String(Buffer.alloc(1.5e9).length);'), 'alloc', {});
    expect(r.ok === false || r.output.startsWith('refused: ')).toBe(true);
    expect(await drill.execute(js('() => "after"'), 'after', {})).toEqual({ ok: true, output: 'after' });
  });
});
