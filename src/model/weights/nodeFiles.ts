/**
 * Node-only: a `FolderReader` over a directory path, and writing a saved folder to disk.
 * The only file of src/model/weights that imports `fs` (the rest also runs in the browser).
 */
import { mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FolderReader } from './qwen3Folder';

/** Reads the regular files directly inside `dir` (no recursion). */
export function createNodeFolderReader(dir: string): FolderReader {
  const root = path.resolve(dir);
  return {
    async listFiles() {
      let entries;
      try {
        entries = await readdir(root, { withFileTypes: true });
      } catch (e) {
        throw new Error(`cannot list model folder ${root}: ${(e as Error).message}`);
      }
      return entries.filter((e) => e.isFile()).map((e) => e.name);
    },
    async readFile(name: string) {
      const full = path.resolve(root, name);
      if (path.dirname(full) !== root) throw new Error(`file name ${JSON.stringify(name)} leaves the folder ${root}`);
      return readWholeFile(full);
    },
  };
}

/** Writes `files` (name → text or bytes) into `dir`, creating it when needed. */
export async function writeFolderFiles(dir: string, files: Record<string, string | Uint8Array>): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    if (name.includes('/') || name.includes('\\') || name === '..') throw new Error(`bad file name ${JSON.stringify(name)}`);
    await writeFile(path.join(dir, name), content);
  }
}

/** fs.readFile refuses files over 2 GiB; read those in chunks into one Uint8Array. */
async function readWholeFile(file: string): Promise<Uint8Array> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size < 2 ** 31 - 1) {
      const buffer = await readFile(handle);
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    }
    const out = new Uint8Array(size);
    const chunkBytes = 1 << 28;
    for (let position = 0; position < size; ) {
      const { bytesRead } = await handle.read(out, position, Math.min(chunkBytes, size - position), position);
      if (bytesRead === 0) throw new Error(`${file} ended after ${position} of ${size} bytes`);
      position += bytesRead;
    }
    return out;
  } finally {
    await handle.close();
  }
}
