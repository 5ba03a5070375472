/**
 * Node-only: a `FolderReader` over a directory path, and writing a saved folder to disk
 * (in place, or atomically: a temporary folder, every file fsynced, then one rename).
 * The only file of src/model/weights that imports `fs` (the rest also runs in the browser).
 */
import { mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
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
      return readWholeFile(resolveInside(root, name));
    },
    async fileSize(name: string) {
      return (await stat(resolveInside(root, name))).size;
    },
    async readFileRange(name: string, offset: number, length: number) {
      const handle = await open(resolveInside(root, name), 'r');
      try {
        const out = new Uint8Array(length);
        let at = 0;
        while (at < length) {
          const { bytesRead } = await handle.read(out, at, length - at, offset + at);
          if (bytesRead === 0) break;
          at += bytesRead;
        }
        return at === length ? out : out.subarray(0, at);
      } finally {
        await handle.close();
      }
    },
  };
}

/** `root/name`, refusing a name that leaves the folder. */
function resolveInside(root: string, name: string): string {
  const full = path.resolve(root, name);
  if (path.dirname(full) !== root) throw new Error(`file name ${JSON.stringify(name)} leaves the folder ${root}`);
  return full;
}

/** Writes `files` (name → text or bytes) into `dir`, creating it when needed. */
export async function writeFolderFiles(dir: string, files: Record<string, string | Uint8Array>): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    checkFileName(name);
    await writeFile(path.join(dir, name), content);
  }
}

function checkFileName(name: string): void {
  if (name === '' || name.includes('/') || name.includes('\\') || name === '.' || name === '..')
    throw new Error(`bad file name ${JSON.stringify(name)}`);
}

/** Prefix of the temporary sibling a folder is written into before its rename. */
export const PARTIAL_FOLDER_PREFIX = '.partial-';

/**
 * Writes `files` as the folder `dir` so that `dir` is either absent, the old folder, or the
 * whole new one, even if the process is killed or the machine loses power: the files go into
 * a temporary sibling `.partial-<name>-XXXXXX`, each is fsynced, the folder is fsynced, then
 * renamed to `dir` (an existing `dir` is first moved aside and removed after), and the parent
 * is fsynced so the rename itself is durable.
 */
export async function writeFolderAtomically(dir: string, files: Record<string, string | Uint8Array>): Promise<void> {
  const target = path.resolve(dir);
  const parent = path.dirname(target);
  for (const name of Object.keys(files)) checkFileName(name);
  await mkdir(parent, { recursive: true });
  const partial = await mkdtemp(path.join(parent, `${PARTIAL_FOLDER_PREFIX}${path.basename(target)}-`));
  try {
    for (const [name, content] of Object.entries(files)) {
      const handle = await open(path.join(partial, name), 'wx');
      try {
        await handle.writeFile(content);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    await syncFolder(partial);
    const old = await stat(target).then(
      () => `${partial}.old`,
      (e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : Promise.reject(e)),
    );
    if (old) await rename(target, old);
    await rename(partial, target);
    await syncFolder(parent);
    if (old) await rm(old, { recursive: true, force: true });
  } catch (e) {
    await rm(partial, { recursive: true, force: true });
    throw e;
  }
}

/** fsync of a directory (its entries); platforms that cannot open a directory for it are skipped. */
async function syncFolder(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EISDIR' || (e as NodeJS.ErrnoException).code === 'EPERM') return;
    throw e;
  }
  try {
    await handle.sync();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EPERM' && code !== 'EISDIR') throw e;
  } finally {
    await handle.close();
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
    for (let position = 0; position < size;) {
      const { bytesRead } = await handle.read(out, position, Math.min(chunkBytes, size - position), position);
      if (bytesRead === 0) throw new Error(`${file} ended after ${position} of ${size} bytes`);
      position += bytesRead;
    }
    return out;
  } finally {
    await handle.close();
  }
}
