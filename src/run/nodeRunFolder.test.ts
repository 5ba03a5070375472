// What killed writes leave in a run folder, and which of it removeStalePartialFolders removes.
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeStalePartialFolders, STALE_PARTIAL_MS, writeFileAtomically } from './nodeRunFolder';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pact-run-folder-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A folder with one file, both last changed `ageMs` ago. */
async function folder(name: string, ageMs: number): Promise<void> {
  const at = new Date(Date.now() - ageMs);
  await mkdir(path.join(dir, name));
  await writeFile(path.join(dir, name, 'model.safetensors'), 'x');
  await utimes(path.join(dir, name, 'model.safetensors'), at, at);
  await utimes(path.join(dir, name), at, at);
}

describe('removeStalePartialFolders', () => {
  it('removes the stale leftovers of killed writes and keeps those in use and every checkpoint', async () => {
    const old = 2 * STALE_PARTIAL_MS;
    await folder('checkpoint-2', old);
    await folder('.partial-checkpoint-3-abc123', old); // a killed checkpoint write
    await folder('.partial-checkpoint-2-def456.old', old); // checkpoint-2 moved aside, then replaced
    await folder('.partial-checkpoint-5-ghi789.old', old); // moved aside, its replacement never renamed in
    await folder('.partial-checkpoint-4-jkl012', 1000); // being written now
    await writeFile(path.join(dir, '.partial-metrics.jsonl-mno345'), 'x'); // a killed metrics rewrite
    const at = new Date(Date.now() - old);
    await utimes(path.join(dir, '.partial-metrics.jsonl-mno345'), at, at);
    await writeFile(path.join(dir, 'metrics.jsonl'), '');

    const { removed, kept } = await removeStalePartialFolders(dir);
    expect(removed).toEqual([
      '.partial-checkpoint-2-def456.old',
      '.partial-checkpoint-3-abc123',
      '.partial-metrics.jsonl-mno345',
    ]);
    expect(kept).toEqual(['.partial-checkpoint-4-jkl012', '.partial-checkpoint-5-ghi789.old']);
    expect((await readdir(dir)).sort()).toEqual([
      '.partial-checkpoint-4-jkl012',
      '.partial-checkpoint-5-ghi789.old',
      'checkpoint-2',
      'metrics.jsonl',
    ]);
  });

  it('judges a folder by its newest file: one whose file is still being written is in use', async () => {
    await folder('.partial-checkpoint-3-abc123', 2 * STALE_PARTIAL_MS);
    await writeFile(path.join(dir, '.partial-checkpoint-3-abc123', 'optimizer.safetensors'), 'growing');
    expect(await removeStalePartialFolders(dir)).toEqual({ removed: [], kept: ['.partial-checkpoint-3-abc123'] });
    expect(await removeStalePartialFolders(dir, { now: Date.now() + STALE_PARTIAL_MS })).toEqual({
      removed: ['.partial-checkpoint-3-abc123'],
      kept: [],
    });
  });

  it('a missing run folder has nothing to remove', async () => {
    expect(await removeStalePartialFolders(path.join(dir, 'none'))).toEqual({ removed: [], kept: [] });
  });
});

describe('writeFileAtomically', () => {
  it('replaces the file whole and leaves no temporary file', async () => {
    const file = path.join(dir, 'metrics.jsonl');
    await writeFile(file, 'old\n');
    await writeFileAtomically(file, 'new\n');
    expect(await readFile(file, 'utf8')).toBe('new\n');
    expect(await readdir(dir)).toEqual(['metrics.jsonl']);
  });
});
