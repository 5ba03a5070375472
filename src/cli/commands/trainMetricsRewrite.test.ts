/**
 * `pact train --resume` cuts metrics.jsonl to the checkpoint's step: a process killed (SIGKILL)
 * at any point of that rewrite leaves the file whole, with every line it held. Each run of a
 * child process is killed at its k-th file operation (a write is cut half way first), k = 1, 2, …
 * until the rewrite runs to the end.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const TRAIN_TS = pathToFileURL(path.join(ROOT, 'src/cli/commands/train.ts')).href;

/** The child: fs operations patched to die at the KILL_AT-th one, then train.ts's rewrite. */
const CHILD = `
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const fsp = fs.promises;
const killAt = Number(process.env.KILL_AT);
let calls = 0;
const die = () => { process.kill(process.pid, 'SIGKILL'); return new Promise(() => {}); };
const half = (d) => (typeof d === 'string' ? d.slice(0, d.length >> 1) : d.subarray(0, d.length >> 1));
function patch(owner, name, cut) {
  const orig = owner[name];
  owner[name] = async function (...args) {
    if (++calls === killAt) {
      if (cut) await orig.apply(this, cut(args));
      return die();
    }
    return orig.apply(this, args);
  };
}
const probe = await fsp.open(process.env.METRICS, 'r');
const FileHandle = Object.getPrototypeOf(probe);
await probe.close();
patch(fsp, 'writeFile', ([f, d, ...r]) => [f, half(d), ...r]);
patch(fsp, 'appendFile', ([f, d, ...r]) => [f, half(d), ...r]);
patch(fsp, 'open');
patch(fsp, 'rename');
patch(fsp, 'truncate');
patch(FileHandle, 'writeFile', ([d, ...r]) => [half(d), ...r]);
patch(FileHandle, 'write');
patch(FileHandle, 'truncate');
patch(FileHandle, 'sync');
patch(FileHandle, 'datasync');
syncBuiltinESMExports();
const { rewriteMetricsUpTo } = await import(${JSON.stringify(TRAIN_TS)});
await rewriteMetricsUpTo(process.env.METRICS, 2);
console.log('done after ' + calls + ' operations');
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pact-metrics-kill-'));
  await writeFile(path.join(dir, 'child.mjs'), CHILD);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function runChild(env: Record<string, string>): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(dir, 'child.mjs')], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, out }));
  });
}

describe('pact train --resume: the metrics.jsonl rewrite', () => {
  it('loses no line when the process is killed at any point of it', async () => {
    const lines = [
      '{"type":"eval","run":"r","step":0}',
      '{"type":"step","run":"r","step":1,"reward":0.1}',
      '{"type":"step","run":"r","step":2,"reward":0.2}',
      '{"type":"eval","run":"r","step":2}',
      '{"type":"step","run":"r","step":3,"reward":0.3}',
    ];
    const before = lines.map((l) => l + '\n').join('');
    const after = lines
      .slice(0, 4)
      .map((l) => l + '\n')
      .join('');
    const metrics = path.join(dir, 'metrics.jsonl');
    let finished = false;
    for (let k = 1; k <= 20 && !finished; k++) {
      await writeFile(metrics, before);
      const child = await runChild({ KILL_AT: String(k), METRICS: metrics });
      const text = await readFile(metrics, 'utf8');
      if (child.signal === 'SIGKILL') {
        // Killed: the file is the old one or the whole new one, never less.
        expect([before, after], `killed at operation ${k}: ${JSON.stringify(text)}`).toContain(text);
      } else {
        expect(child.code, child.out).toBe(0);
        expect(child.out).toMatch(/^done after \d+ operations/);
        expect(text).toBe(after);
        finished = true;
      }
    }
    expect(finished).toBe(true);
    // Only metrics.jsonl, the child and what killed writes left behind (removed by the next start).
    const names = (await readdir(dir)).filter((n) => n !== 'metrics.jsonl' && n !== 'child.mjs');
    expect(
      names.every((n) => n.startsWith('.partial-metrics.jsonl-')),
      names.join(', '),
    ).toBe(true);
  }, 180_000);
});
