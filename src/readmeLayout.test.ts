/**
 * The README's Layout section names the folders that exist: every folder it lists is there, and
 * every folder of src/ and every top-level folder of the repository that git tracks (but the two
 * that hold tooling) is listed. A new folder without a line, or a line for a folder that moved,
 * fails here.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Tracked top-level folders that hold tooling, not the project's code or data. */
const UNLISTED_TOP = new Set(['.ci', 'bin']);

function readLayout(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const m = /## Layout\n\n```\n([\s\S]*?)```/.exec(readme);
  if (!m) throw new Error('README.md has no "## Layout" code block');
  return m[1]
    .split('\n')
    .map((line) => /^(\S+\/)\s/.exec(line)?.[1])
    .filter((x): x is string => x !== undefined)
    .map((x) => x.replace(/\/$/, ''));
}

/** The folders that hold tracked files, as `src/<name>` for src/ and `<name>` at the top (git's view: nothing ignored). */
function listTrackedFolders(): string[] {
  const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 }).split('\n');
  const folders = new Set<string>();
  for (const f of files) {
    const parts = f.split('/');
    if (parts.length < 2) continue;
    if (parts[0] === 'src') {
      if (parts.length > 2) folders.add(`src/${parts[1]}`);
    } else if (!UNLISTED_TOP.has(parts[0])) folders.add(parts[0]);
  }
  return [...folders];
}

describe("README's Layout section", () => {
  const listed = readLayout();

  it('lists only folders that exist', () => {
    const missing = listed.filter((p) => {
      try {
        return !statSync(path.join(ROOT, p)).isDirectory();
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });

  it('lists every folder of src/ and every top-level folder of the project', () => {
    expect(
      listTrackedFolders()
        .filter((p) => !listed.includes(p))
        .sort(),
    ).toEqual([]);
  });
});
