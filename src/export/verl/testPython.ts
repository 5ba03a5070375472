/**
 * Test helper (tests only), the Python side of the VeRL export's tests: the torch interpreter
 * (model/torchPython.ts) running python/tests/check_fixtures.py on fixtures the TypeScript test
 * wrote, the python3 an exported tool server runs tools with, and what the tests share to read an
 * export back (its parquet files, its tool server's answers). Node only.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parquetReadObjects } from 'hyparquet';
import { findTorchPython } from '../../model/torchPython';

export const VERL_ROOT = path.resolve(fileURLToPath(new URL('../../../../shared/verl', import.meta.url)));
export const PACKAGE_PARENT = fileURLToPath(new URL('./python/', import.meta.url));
export const CHECK_SCRIPT = fileURLToPath(new URL('./python/tests/check_fixtures.py', import.meta.url));

/** The python that can import torch and omegaconf, or why the tests skip. */
export function findVerlTestPython(): { python?: string; reason?: string } {
  const found = findTorchPython();
  if (!found.python) return found;
  const r = spawnSync(found.python, ['-c', 'import omegaconf, numpy'], { stdio: 'ignore' });
  if (r.status !== 0) return { reason: `${found.python} has torch but not omegaconf/numpy` };
  return found;
}

/** Writes the fixtures, runs the check script, returns what Python computed. */
export function runPythonCheck(python: string, fixtures: object): Record<string, unknown> {
  const dir = mkdtempSync(path.join(tmpdir(), 'pact-verl-'));
  const file = path.join(dir, 'fixtures.json');
  writeFileSync(file, JSON.stringify(fixtures));
  const r = spawnSync(python, [CHECK_SCRIPT, VERL_ROOT, PACKAGE_PARENT, file], {
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`check_fixtures.py failed (${r.status}):\n${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** A python3 the exported tool server can start (any CPython 3.8+ with `resource`), or why not. */
export function findToolPython(): { python?: string; reason?: string } {
  for (const python of ['/usr/bin/python3', 'python3']) {
    const r = spawnSync(python, ['-c', 'import resource, json, sys; sys.addaudithook'], { stdio: 'ignore' });
    if (r.status === 0) return { python };
  }
  return { reason: 'no python3 (3.8 or later) with the resource module' };
}

/** The rows of an exported parquet file. */
export async function readParquet<Row = Record<string, unknown>>(file: string): Promise<Row[]> {
  const buf = readFileSync(file);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  return (await parquetReadObjects({ file: ab })) as Row[];
}

/** Sends each request to a running tool server (one JSON line each) and collects its answers in order. */
export function askToolServer(
  server: { stdin: NodeJS.WritableStream; stdout: NodeJS.ReadableStream },
  requests: object[],
): Promise<[boolean, string][]> {
  return new Promise((resolve) => {
    let buf = '';
    const got: [boolean, string][] = [];
    server.stdout.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const a = JSON.parse(buf.slice(0, nl)) as { ok: boolean; output: string };
        buf = buf.slice(nl + 1);
        got.push([a.ok, a.output]);
        if (got.length === requests.length) resolve(got);
      }
    });
    requests.forEach((r, id) => server.stdin.write(JSON.stringify({ id, ...r }) + '\n'));
  });
}
