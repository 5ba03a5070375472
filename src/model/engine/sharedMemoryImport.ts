/**
 * The kernels for a shared memory, made from the build for a private one. AssemblyScript's
 * `--sharedMemory` build of the kernels differs from the private build only in its memory import:
 * limits `00 min` (a minimum, no maximum) become `03 min max` (shared, with a maximum), and the
 * import section's size grows by the maximum's bytes (scripts/buildKernels.test.ts compares this
 * rewrite with asc's own shared build, for both kernel builds). So kernelsWasm.ts and
 * kernelsWasmRelaxed.ts embed two binaries, not four, and the worker threads run the same code as the calling thread.
 */

/** Unsigned LEB128 at `pos`: [value, next position]. */
function readLeb(bytes: Uint8Array, pos: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (pos >= bytes.length) throw new Error('sharedMemoryImport: a LEB128 number runs past the module');
    const b = bytes[pos++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) return [value, pos];
  }
}

function leb(value: number): number[] {
  const out: number[] = [];
  do {
    let b = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) b |= 0x80;
    out.push(b);
  } while (value > 0);
  return out;
}

/** Skips a name (a length and its bytes). */
function skipName(bytes: Uint8Array, pos: number): number {
  const [length, at] = readLeb(bytes, pos);
  return at + length;
}

const IMPORT_SECTION = 2;
const MEMORY_IMPORT = 2;

/**
 * `bytes` (a module that imports one unshared memory with a minimum and no maximum) with that
 * import made shared, with `maximumPages` as its maximum. Throws when the module has no such
 * import (a kernels build for another form would fail here, not at instantiation).
 */
export function withSharedMemoryImport(bytes: Uint8Array, maximumPages: number): Uint8Array {
  let pos = 8;
  while (pos < bytes.length) {
    const sectionStart = pos;
    const id = bytes[pos++];
    const [size, bodyStart] = readLeb(bytes, pos);
    const next = bodyStart + size;
    if (id === IMPORT_SECTION) {
      let [count, at] = readLeb(bytes, bodyStart);
      for (; count > 0; count--) {
        at = skipName(bytes, skipName(bytes, at));
        const kind = bytes[at++];
        if (kind !== MEMORY_IMPORT) {
          // Functions and tags carry one index; tables and globals are not in the kernels.
          if (kind === 0 || kind === 4) [, at] = readLeb(bytes, at + (kind === 4 ? 1 : 0));
          else throw new Error(`sharedMemoryImport: an import of kind ${kind} is not expected in the kernels`);
          continue;
        }
        if (bytes[at] !== 0) throw new Error(`sharedMemoryImport: the memory's limits flags are ${bytes[at]}, not 0`);
        const [, afterMin] = readLeb(bytes, at + 1);
        const body = [
          ...bytes.subarray(bodyStart, at),
          0x03,
          ...bytes.subarray(at + 1, afterMin),
          ...leb(maximumPages),
          ...bytes.subarray(afterMin, next),
        ];
        const out = new Uint8Array(bytes.length - (next - sectionStart) + 1 + leb(body.length).length + body.length);
        out.set(bytes.subarray(0, sectionStart), 0);
        out.set([IMPORT_SECTION, ...leb(body.length), ...body], sectionStart);
        out.set(bytes.subarray(next), sectionStart + 1 + leb(body.length).length + body.length);
        return out;
      }
    }
    pos = next;
  }
  throw new Error('sharedMemoryImport: the module imports no memory');
}
