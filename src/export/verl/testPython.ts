/**
 * The Python side of the VeRL export's tests: the torch interpreter (model/torchPython.ts) running
 * python/tests/check_fixtures.py on fixtures the TypeScript test wrote. Node only.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
