/**
 * Node-only: the file operations of a `pact train` run folder that must survive a kill.
 *
 * `writeFileAtomically` replaces a file (metrics.jsonl when a run resumes) so that it holds
 * either its old text or the whole new one whenever the process dies: the text goes into a
 * temporary sibling `.partial-<name>-XXXXXX`, which is fsynced and renamed over the file, and
 * the folder is fsynced so the rename itself is durable.
 *
 * `removeStalePartialFolders` removes what a killed write left behind: `.partial-…` siblings
 * of checkpoint folders (writeFolderAtomically) and of files (writeFileAtomically). One is
 * stale when nothing in it has changed for `STALE_PARTIAL_MS` (a write in progress, by this
 * process or another one training the same folder, keeps touching its files); a younger one
 * is left to its writer, and removed by a later call. A `.partial-checkpoint-<step>-….old`
 * folder (the previous checkpoint-<step>, moved aside while a new one replaced it) is kept
 * while checkpoint-<step> is missing: a kill between the two renames left it the only copy.
 */
import { lstat, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { PARTIAL_FOLDER_PREFIX } from '../model/weights/nodeFiles';

/** A `.partial-…` entry untouched this long (ms) is a dead write's leftover. */
export const STALE_PARTIAL_MS = 10 * 60_000;

/** Replaces `file` with `content` atomically (see the file header). */
export async function writeFileAtomically(file: string, content: string | Uint8Array): Promise<void> {
  const target = path.resolve(file);
  const dir = path.dirname(target);
  const suffix = Math.floor(Math.random() * 36 ** 6)
    .toString(36)
    .padStart(6, '0');
  const temp = path.join(dir, `${PARTIAL_FOLDER_PREFIX}${path.basename(target)}-${suffix}`);
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (e) {
    await rm(temp, { force: true });
    throw e;
  }
  await syncFolder(dir);
}

/** fsync of a directory's entries; skipped where the platform cannot open a directory for it. */
async function syncFolder(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EISDIR' || code === 'EPERM' || code === 'EACCES') return;
    throw e;
  }
  try {
    await handle.sync();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EPERM' && code !== 'EBADF') throw e;
  } finally {
    await handle.close();
  }
}

/** The newest mtime (ms) of an entry and, for a folder, of the entries directly in it. */
async function newestChange(entry: string): Promise<number> {
  const s = await lstat(entry);
  let newest = s.mtimeMs;
  if (s.isDirectory()) {
    for (const name of await readdir(entry)) {
      const t = await lstat(path.join(entry, name)).then(
        (c) => c.mtimeMs,
        () => 0,
      );
      newest = Math.max(newest, t);
    }
  }
  return newest;
}

/**
 * Removes the stale `.partial-…` entries of a run folder (see the file header); returns the
 * names removed and those kept (in use, or the only copy of a checkpoint).
 */
export async function removeStalePartialFolders(
  runDir: string,
  options: { now?: number; staleAfterMs?: number } = {},
): Promise<{ removed: string[]; kept: string[] }> {
  const now = options.now ?? Date.now();
  const staleAfterMs = options.staleAfterMs ?? STALE_PARTIAL_MS;
  const removed: string[] = [];
  const kept: string[] = [];
  let names: string[];
  try {
    names = await readdir(runDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { removed, kept };
    throw e;
  }
  for (const name of names.filter((n) => n.startsWith(PARTIAL_FOLDER_PREFIX)).sort()) {
    const entry = path.join(runDir, name);
    let changed: number;
    try {
      changed = await newestChange(entry);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // its writer renamed or removed it
      throw e;
    }
    if (now - changed < staleAfterMs) {
      kept.push(name);
      continue;
    }
    const aside = /^\.partial-(checkpoint-\d+)-[^/]*\.old$/.exec(name);
    if (aside) {
      const isReplaced = await stat(path.join(runDir, aside[1])).then(
        () => true,
        () => false,
      );
      if (!isReplaced) {
        kept.push(name);
        continue;
      }
    }
    await rm(entry, { recursive: true, force: true });
    removed.push(name);
  }
  return { removed, kept };
}
