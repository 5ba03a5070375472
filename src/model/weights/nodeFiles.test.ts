import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeFolderReader, writeFolderAtomically, writeFolderFiles } from './nodeFiles';

const scratch = mkdtempSync(path.join(tmpdir(), 'pact-nodefiles-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('writeFolderAtomically', () => {
  it('writes the folder whole and leaves no temporary folder', async () => {
    const dir = path.join(scratch, 'run', 'checkpoint-4');
    await writeFolderAtomically(dir, { 'a.json': '{"a":1}\n', 'b.bin': new Uint8Array([1, 2, 3]) });
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'b.bin']);
    expect(readFileSync(path.join(dir, 'a.json'), 'utf8')).toBe('{"a":1}\n');
    expect([...readFileSync(path.join(dir, 'b.bin'))]).toEqual([1, 2, 3]);
    expect(readdirSync(path.join(scratch, 'run'))).toEqual(['checkpoint-4']);
  });

  it('a write that fails half way leaves no folder at all (in place, the first file would be left behind)', async () => {
    const files = { 'a.json': 'first', 'b.bin': null as unknown as Uint8Array }; // the second write throws
    const atomic = path.join(scratch, 'atomic', 'checkpoint-8');
    await expect(writeFolderAtomically(atomic, files)).rejects.toThrow();
    expect(readdirSync(path.join(scratch, 'atomic'))).toEqual([]);
    // The in-place writer, for contrast: a torn folder that looks like a checkpoint.
    const inPlace = path.join(scratch, 'inplace', 'checkpoint-8');
    await expect(writeFolderFiles(inPlace, files)).rejects.toThrow();
    expect(readdirSync(inPlace)).toEqual(['a.json']);
  });

  it('replaces an existing folder whole (no file of the old one survives)', async () => {
    const dir = path.join(scratch, 'replace', 'checkpoint-2');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'stale.bin'), 'old');
    writeFileSync(path.join(dir, 'a.json'), 'old');
    await writeFolderAtomically(dir, { 'a.json': 'new' });
    expect(readdirSync(dir)).toEqual(['a.json']);
    expect(readFileSync(path.join(dir, 'a.json'), 'utf8')).toBe('new');
    expect(readdirSync(path.join(scratch, 'replace'))).toEqual(['checkpoint-2']);
    await expect(writeFolderAtomically(dir, { '../x': 'no' })).rejects.toThrow('bad file name "../x"');
  });
});

describe('createNodeFolderReader ranged reads', () => {
  it('gives a file size and any byte range, and refuses names that leave the folder', async () => {
    const dir = path.join(scratch, 'ranged');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'f.bin'), Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    const reader = createNodeFolderReader(dir);
    expect(await reader.fileSize!('f.bin')).toBe(10);
    expect([...(await reader.readFileRange!('f.bin', 3, 4))]).toEqual([3, 4, 5, 6]);
    expect([...(await reader.readFileRange!('f.bin', 8, 5))]).toEqual([8, 9]); // past the end: what there is
    await expect(reader.readFileRange!('../f.bin', 0, 1)).rejects.toThrow('leaves the folder');
  });
});
