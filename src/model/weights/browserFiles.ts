/**
 * A `FolderReader` over files the user picked in the browser (an `<input type="file"
 * webkitdirectory>` folder pick or a multi-file pick). No network: only the picked files.
 * Works with any `File` (Node 20 has the same global class, which is how it is tested).
 */
import type { FolderReader } from './qwen3Folder';

/**
 * Files from a folder pick carry `webkitRelativePath` = "<folder>/<name>"; the common top folder
 * is stripped so names match `config.json`, `model.safetensors`, …. Files of a plain multi-file
 * pick use their `name`; two files of the same name are refused (neither silently wins).
 */
export function createFileListReader(picked: Iterable<File>): FolderReader {
  const list = [...picked];
  const relativeNames = list.map((f) => (f.webkitRelativePath || f.name).split('/'));
  const top = relativeNames[0]?.[0];
  const shareTop = list.length > 0 && relativeNames.every((parts) => parts.length > 1 && parts[0] === top);
  const byName = new Map<string, File>();
  list.forEach((file, i) => {
    const name = (shareTop ? relativeNames[i].slice(1) : relativeNames[i]).join('/');
    if (byName.has(name))
      throw new Error(`two picked files are both named ${JSON.stringify(name)}; pick one folder's files`);
    byName.set(name, file);
  });
  const pick = (name: string): File => {
    const file = byName.get(name);
    if (file === undefined) throw new Error(`no picked file named ${JSON.stringify(name)}`);
    return file;
  };
  return {
    async listFiles() {
      return [...byName.keys()];
    },
    async readFile(name: string) {
      return new Uint8Array(await pick(name).arrayBuffer());
    },
    async fileSize(name: string) {
      return pick(name).size;
    },
    async readFileRange(name: string, offset: number, length: number) {
      return new Uint8Array(
        await pick(name)
          .slice(offset, offset + length)
          .arrayBuffer(),
      );
    },
  };
}
