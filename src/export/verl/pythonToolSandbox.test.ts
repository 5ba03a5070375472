/**
 * The audit hook of a VeRL export's Python tool process (pythonAuditHook.ts), tried with hostile
 * tools through runPythonToolProcess, the function the exported tool server calls: each refusal is
 * the tool's answer in the app's error format (`formatToolError`), and each test checks that nothing
 * happened on the machine (no connection reached a listener started here, no file was created,
 * read or deleted outside the call's folder), not only the text. A tool that keeps to its working
 * folder and the standard library still works. Skips, saying why, without a python3 (3.8+).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatToolError } from '../../envs/sandbox/types';
import { DEFAULT_PYTHON_TOOL_LIMITS, formatRunnerSource, runPythonToolProcess } from './pythonToolProcess';
import { findToolPython } from './testPython';

const PY = findToolPython();
const TIMEOUT_MS = 10_000;

/** Calls `def tool(x): BODY` in a tool process, as the exported server does. */
function callTool(body: string): Promise<{ ok: boolean; output: string }> {
  const source = 'def tool(x):\n' + body.replace(/^/gm, '    ') + '\n';
  return runPythonToolProcess(PY.python!, source, 'tool', { x: 'a' }, TIMEOUT_MS);
}

/** The app's text for a tool that raised MESSAGE. */
const refused = (message: string) => ({ ok: false, output: formatToolError('tool', message) });

let root: string; // the test's own folder, outside every call's working folder
let listener: Server;
let port: number;
let connections = 0;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'pact-sandbox-test-'));
  listener = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as { port: number }).port;
});

afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await new Promise((resolve) => listener.close(resolve));
});

describe.skipIf(!PY.python)('the audit hook of the exported Python tool process', () => {
  it('refuses a TCP connection to a local listener, by socket or create_connection: the listener sees none', async () => {
    const raw = await callTool(
      `import socket\ns = socket.socket()\ns.connect(('127.0.0.1', ${port}))\nreturn 'connected'`,
    );
    expect(raw).toEqual(refused('socket.__new__ is refused in the tool sandbox (no network)'));
    const viaDns = await callTool(
      `import socket\nsocket.create_connection(('localhost', ${port}), 1)\nreturn 'connected'`,
    );
    expect(viaDns).toEqual(refused('socket.getaddrinfo is refused in the tool sandbox (no network)'));
    const pair = await callTool('import socket\nsocket.socketpair()\nreturn "pair"');
    expect(pair).toEqual(refused('socket.__new__ is refused in the tool sandbox (no network)'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(connections).toBe(0);
    // The listener does count a connection (from here).
    await new Promise<void>((resolve) =>
      connect(port, '127.0.0.1')
        .on('close', () => resolve())
        .on('error', resolve),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(connections).toBe(1);
    connections = 0;
  }, 60_000);

  it('refuses urllib.request.urlopen: the listener sees no request', async () => {
    const r = await callTool(
      `import urllib.request\nreturn urllib.request.urlopen('http://127.0.0.1:${port}/').read()`,
    );
    expect(r).toEqual(refused('urllib.Request is refused in the tool sandbox (no network)'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(connections).toBe(0);
  }, 30_000);

  it('refuses subprocess.run, os.system, os.posix_spawn, os.fork and the raw fork_exec: touch never runs', async () => {
    const file = (name: string) => path.join(root, `touched-${name}`);
    const touch = `'/usr/bin/touch'`;
    const tries: [string, string, string][] = [
      [
        'run',
        `import subprocess\nsubprocess.run(['touch', ${JSON.stringify(file('run'))}])`,
        'subprocess.Popen is refused in the tool sandbox (no new processes)',
      ],
      // os.system: the app's guard refuses it first, with the app's text.
      ['system', `import os\nos.system('touch ${file('system')}')`, 'os.system is not available in the tool sandbox'],
      [
        'spawn',
        `import os\nos.posix_spawn(${touch}, ['touch', ${JSON.stringify(file('spawn'))}], {})`,
        'os.posix_spawn is refused in the tool sandbox (no new processes)',
      ],
      [
        'fork',
        `import os\npid = os.fork()\nif pid == 0:\n    os.execv(${touch}, ['touch', ${JSON.stringify(file('fork'))}])\nreturn str(pid)`,
        'os.fork is refused in the tool sandbox (no new processes)',
      ],
      [
        'exec',
        `import os\nos.execv(${touch}, ['touch', ${JSON.stringify(file('exec'))}])`,
        'os.exec is refused in the tool sandbox (no new processes)',
      ],
      [
        'fork_exec',
        `import _posixsubprocess\n_posixsubprocess.fork_exec()\nreturn 'forked'`,
        '_posixsubprocess.fork_exec is refused in the tool sandbox',
      ],
    ];
    for (const [name, body, message] of tries) {
      expect(await callTool(body), name).toEqual(refused(message));
      expect(existsSync(file(name)), name).toBe(false);
    }
  }, 60_000);

  it("refuses open('/etc/passwd').read(): the answer holds none of it", async () => {
    const r = await callTool("return open('/etc/passwd').read()");
    expect(r).toEqual(refused("open '/etc/passwd' is refused in the tool sandbox (outside the call's folder)"));
    expect(r.output).not.toContain(readFileSync('/etc/passwd', 'utf8').slice(0, 5));
  });

  it('refuses writing a file outside its folder, by open, os.open or pathlib: none is created', async () => {
    const target = path.join(root, 'written');
    const q = JSON.stringify(target);
    const open = await callTool(`open(${q}, 'w').write('x')\nreturn 'written'`);
    expect(open).toEqual(refused(`open '${target}' is refused in the tool sandbox (outside the call's folder)`));
    const raw = await callTool(`import os\nos.open(${q}, os.O_WRONLY | os.O_CREAT)\nreturn 'written'`);
    expect(raw).toEqual(refused(`open '${target}' is refused in the tool sandbox (outside the call's folder)`));
    const lib = await callTool(`import pathlib\npathlib.Path(${q}).write_text('x')\nreturn 'written'`);
    expect(lib).toEqual(refused(`open '${target}' is refused in the tool sandbox (outside the call's folder)`));
    const climb = await callTool(`open('../escaped', 'w').write('x')\nreturn 'written'`);
    expect(climb).toEqual(
      refused("open '../escaped' is refused in the tool sandbox (a relative path must not leave its folder)"),
    );
    expect(existsSync(target)).toBe(false);
    expect(existsSync(path.join(tmpdir(), 'escaped'))).toBe(false);
  }, 30_000);

  it('refuses a symbolic link out of its folder: made by the tool, or already there and opened', async () => {
    const secret = path.join(root, 'secret.txt');
    writeFileSync(secret, 'SECRET');
    const made = await callTool(`import os\nos.symlink(${JSON.stringify(secret)}, 'link')\nreturn open('link').read()`);
    expect(made).toEqual(refused('os.symlink is refused in the tool sandbox'));
    // A working folder that already holds links out (the runner run by hand in a folder made here).
    const work = path.join(root, 'work');
    mkdirSync(work);
    symlinkSync(secret, path.join(work, 'link'));
    symlinkSync(root, path.join(work, 'folder'));
    symlinkSync(path.join(root, 'planted.txt'), path.join(work, 'dangling'));
    const runIn = (body: string) => {
      const request = JSON.stringify({
        source: `def tool(x):\n    ${body}\n`,
        name: 'tool',
        argumentsJson: '{"x": "a"}',
      });
      const runner = formatRunnerSource({ ...DEFAULT_PYTHON_TOOL_LIMITS, cpuSeconds: 10 });
      const r = spawnSync(PY.python!, ['-I', '-c', runner], { cwd: work, env: {}, input: request, encoding: 'utf8' });
      return JSON.parse(r.stdout.split('\n')[1]) as { observation: string; isError: boolean };
    };
    const resolved = (name: string, real: string, reason = "outside the call's folder") =>
      `an error occured when call tool: open '${name}' is refused in the tool sandbox (it leads to '${real}', ${reason})`;
    expect(runIn("return open('link').read()")).toEqual({ observation: resolved('link', secret), isError: true });
    expect(runIn("return open('folder/secret.txt').read()")).toEqual({
      observation: resolved('folder/secret.txt', secret),
      isError: true,
    });
    expect(runIn("return open('dangling', 'w').write('x')")).toEqual({
      observation: resolved('dangling', path.join(root, 'planted.txt')),
      isError: true,
    });
    expect(existsSync(path.join(root, 'planted.txt'))).toBe(false);
    expect(readFileSync(secret, 'utf8')).toBe('SECRET');
  }, 30_000);

  it('refuses shutil.rmtree of a folder outside: it survives with its file', async () => {
    const victim = path.join(root, 'victim');
    mkdirSync(victim);
    writeFileSync(path.join(victim, 'keep.txt'), 'keep');
    const r = await callTool(`import shutil\nshutil.rmtree(${JSON.stringify(victim)})\nreturn 'removed'`);
    expect(r).toEqual(refused(`shutil.rmtree '${victim}' is refused in the tool sandbox (outside the call's folder)`));
    const unlink = await callTool(
      `import os\nos.remove(${JSON.stringify(path.join(victim, 'keep.txt'))})\nreturn 'removed'`,
    );
    expect(unlink.ok).toBe(false);
    expect(readFileSync(path.join(victim, 'keep.txt'), 'utf8')).toBe('keep');
  }, 30_000);

  it("refuses os.listdir('/') and a glob outside: nothing of the machine's folders comes back", async () => {
    expect(await callTool("import os\nreturn str(os.listdir('/'))")).toEqual(
      refused("os.listdir '/' is refused in the tool sandbox (outside the call's folder)"),
    );
    expect(await callTool("import glob\nreturn str(glob.glob('/etc/*'))")).toEqual(
      refused("glob.glob '/etc/*' is refused in the tool sandbox (outside the call's folder)"),
    );
  }, 30_000);

  it('refuses import ctypes, a second audit hook, os.fork, and the other ways around the hook', async () => {
    expect(await callTool('import ctypes\nreturn "loaded"')).toEqual(
      refused('import of ctypes is refused in the tool sandbox'),
    );
    expect(await callTool('import sys\nsys.addaudithook(lambda *a: None)\nreturn "added"')).toEqual(
      refused('sys.addaudithook is refused in the tool sandbox'),
    );
    // The refused hook is not in force either: the hook still refuses the next file.
    expect(
      await callTool(
        "import sys\ntry:\n    sys.addaudithook(lambda *a: None)\nexcept OSError:\n    pass\nreturn open('/etc/hostname').read()",
      ),
    ).toEqual(refused("open '/etc/hostname' is refused in the tool sandbox (outside the call's folder)"));
    expect(await callTool('import os\nreturn str(os.fork())')).toEqual(
      refused('os.fork is refused in the tool sandbox (no new processes)'),
    );
    expect(await callTool('import gc\nreturn str(len(gc.get_objects()))')).toEqual(
      refused('gc.get_objects is refused in the tool sandbox'),
    );
    expect(await callTool('import sys\nsys.settrace(lambda *a: None)\nreturn "tracing"')).toEqual(
      refused('sys.settrace is refused in the tool sandbox'),
    );
    // The C extension file a tool writes cannot be loaded; nor a builtin module made afresh.
    const so = await callTool(
      "import _imp, types\nopen('evil.so', 'wb').write(b'x')\n_imp.create_dynamic(types.SimpleNamespace(name='evil', origin='evil.so'))\nreturn 'loaded'",
    );
    expect(so).toEqual(refused("loading 'evil.so' is refused in the tool sandbox (outside the call's folder)"));
    expect(
      await callTool(
        "import _imp, types\nreturn _imp.create_builtin(types.SimpleNamespace(name='posix')).mknod('dev')",
      ),
    ).toEqual(refused('os.mknod is refused in the tool sandbox'));
    expect(await callTool("import sys\ndel sys.modules['posix']\nimport posix\nreturn 'again'")).toEqual(
      refused('import of posix is refused in the tool sandbox'),
    );
  }, 60_000);

  it("a tool still writes and reads in its own folder, with the standard library (not the machine's site-packages)", async () => {
    const body = [
      'import json, math, re, datetime, random, collections, itertools, functools, statistics',
      'import decimal, fractions, string, typing, calendar, os, tempfile, pathlib',
      "with open('notes.txt', 'w') as f:",
      "    f.write('kept')",
      "pathlib.Path('more.txt').write_text(str(math.sqrt(16)))",
      'with tempfile.TemporaryFile() as t:',
      "    t.write(b'x')",
      'try:',
      '    import pytz',
      '    site = "pytz"',
      'except ImportError:',
      '    site = "none"',
      "return json.dumps([open('notes.txt').read(), pathlib.Path('more.txt').read_text(), sorted(os.listdir('.')),",
      "                   str(statistics.mean([1, 2, 3])), str(fractions.Fraction(1, 3)), str(decimal.Decimal('1.5')),",
      '                   datetime.date(2020, 1, 2).isoformat(), site])',
    ].join('\n');
    expect(await callTool(body)).toEqual({
      ok: true,
      output: '["kept", "4.0", ["more.txt", "notes.txt"], "2", "1/3", "1.5", "2020-01-02", "none"]',
    });
  }, 30_000);
});

it.runIf(!PY.python)('skips without a python3', () => {
  console.warn(`pythonToolSandbox.test.ts: the audit hook not tried: ${PY.reason}`);
});
