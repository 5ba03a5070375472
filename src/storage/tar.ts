/**
 * A small tar writer and reader, so a checkpoint folder leaves the page as ONE file (the
 * Runs panel's "Export checkpoint") and comes back from one (its "Import checkpoint"), and
 * a VeRL export leaves the run setup as one (launch.sh with its executable bit: per-entry modes).
 * Writes POSIX ustar, byte-equal to GNU tar's `--format=ustar`; reads ustar, GNU and pax
 * archives of plain files, refusing unsafe names.
 *
 * Simplifies: no writing of files of 8 GiB or more (ustar's 11 octal digits), no sparse
 * files, no pax attributes beyond path and size, no compression (the checkpoint's
 * safetensors are float32 noise to gzip anyway).
 *
 * The format, header layout and what reading accepts: docs/runs.md.
 */

export const TAR_BLOCK = 512;
/** GNU tar's default record: 20 blocks. */
export const TAR_RECORD = 20 * TAR_BLOCK;

export interface TarEntry {
  /** '/'-separated path inside the archive (no leading './'). */
  name: string;
  data: Uint8Array;
  /** Permission bits of this entry when writing (0o755: an executable script); default: the archive's `mode`. */
  mode?: number;
}

export interface TarWriteOptions {
  /** Modification time of every entry, seconds since the epoch (default 0). */
  mtimeSeconds?: number;
  /** Permission bits of every entry without its own `mode` (default 0o644). */
  mode?: number;
}

import { excerptValue } from '../core/untrustedJson';

export class TarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarError';
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function writeString(header: Uint8Array, offset: number, length: number, bytes: Uint8Array): void {
  header.set(bytes.subarray(0, length), offset);
}

/** A zero-padded octal number of `length − 1` digits and a NUL. */
function writeOctal(
  header: Uint8Array,
  offset: number,
  length: number,
  value: number,
  field: string,
  entry: string,
): void {
  const digits = Math.floor(value).toString(8);
  if (!Number.isSafeInteger(value) || value < 0 || digits.length > length - 1) {
    throw new TarError(`tar: ${entry}: ${field} ${value} does not fit the ustar header`);
  }
  writeString(header, offset, length - 1, encoder.encode(digits.padStart(length - 1, '0')));
  header[offset + length - 1] = 0;
}

/** Splits a path into ustar's (prefix, name): GNU tar's rule, the longest prefix of ≤ 155 bytes ending at a '/'. */
function splitPath(path: Uint8Array, entry: string): { prefix: Uint8Array; name: Uint8Array } {
  if (path.length <= 100) return { prefix: new Uint8Array(0), name: path };
  const SLASH = 0x2f;
  for (let i = Math.min(path.length - 1, 155); i > 0; i--) {
    if (path[i] !== SLASH) continue;
    const name = path.subarray(i + 1);
    if (name.length === 0 || name.length > 100) break;
    return { prefix: path.subarray(0, i), name };
  }
  throw new TarError(
    `tar: path "${entry}" is too long for a ustar header (name ≤ 100 bytes after a '/'-split prefix ≤ 155 bytes)`,
  );
}

/** The sum of the header bytes with the chksum field (148..155) counted as spaces. */
function sumHeader(header: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < TAR_BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i];
  return sum;
}

/** One 512-byte ustar header for a regular file. */
export function buildTarHeader(name: string, size: number, options: TarWriteOptions = {}): Uint8Array {
  if (name.length === 0) throw new TarError('tar: an entry needs a name');
  if (name.startsWith('/') || name.split('/').includes('..'))
    throw new TarError(`tar: path "${name}" must be relative, without ".."`);
  const header = new Uint8Array(TAR_BLOCK);
  const parts = splitPath(encoder.encode(name), name);
  writeString(header, 0, 100, parts.name);
  writeOctal(header, 100, 8, options.mode ?? 0o644, 'mode', name);
  writeOctal(header, 108, 8, 0, 'uid', name);
  writeOctal(header, 116, 8, 0, 'gid', name);
  writeOctal(header, 124, 12, size, 'size', name);
  writeOctal(header, 136, 12, options.mtimeSeconds ?? 0, 'mtime', name);
  header[156] = 0x30; // typeflag '0': regular file
  writeString(header, 257, 6, encoder.encode('ustar\0'));
  writeString(header, 263, 2, encoder.encode('00'));
  writeOctal(header, 329, 8, 0, 'devmajor', name);
  writeOctal(header, 337, 8, 0, 'devminor', name);
  writeString(header, 345, 155, parts.prefix);
  // chksum: 6 octal digits, NUL, space.
  writeString(header, 148, 8, encoder.encode(sumHeader(header).toString(8).padStart(6, '0') + '\0 '));
  return header;
}

/** Headers, data and padding of `entries`, names checked against `seen` (and added to it); with their byte length. */
function writeEntryChunks(
  entries: readonly TarEntry[],
  seen: Set<string>,
  options: TarWriteOptions,
): { chunks: Uint8Array[]; length: number } {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (const e of entries) {
    if (seen.has(e.name)) throw new TarError(`tar: two entries are named "${e.name}"`);
    seen.add(e.name);
    const header = buildTarHeader(e.name, e.data.length, e.mode === undefined ? options : { ...options, mode: e.mode });
    chunks.push(header, e.data);
    const pad = (TAR_BLOCK - (e.data.length % TAR_BLOCK)) % TAR_BLOCK;
    if (pad > 0) chunks.push(new Uint8Array(pad));
    length += TAR_BLOCK + e.data.length + pad;
  }
  return { chunks, length };
}

/** End of archive after `length` bytes: two zero blocks, then zeros up to a whole record. */
function endOfArchive(length: number): Uint8Array {
  const end = 2 * TAR_BLOCK;
  return new Uint8Array(end + ((TAR_RECORD - ((length + end) % TAR_RECORD)) % TAR_RECORD));
}

/**
 * The archive as a list of chunks (headers, file data, padding), so a caller can make a
 * Blob of it without copying the file data into one more buffer. The last chunk is the
 * end-of-archive (zero blocks), so appendTarChunks can add entries after the others.
 */
export function writeTarChunks(entries: readonly TarEntry[], options: TarWriteOptions = {}): Uint8Array[] {
  const { chunks, length } = writeEntryChunks(entries, new Set(), options);
  return [...chunks, endOfArchive(length)];
}

/**
 * The chunks of an archive written by writeTarChunks (whose entries are `names`) with
 * `entries` added at its end: its end-of-archive chunk is replaced by their headers and
 * data and a new end. The original chunks are shared, not copied. Throws a TarError when
 * the last chunk is not an end-of-archive, or a name is taken.
 */
export function appendTarChunks(
  archive: readonly Uint8Array[],
  names: readonly string[],
  entries: readonly TarEntry[],
  options: TarWriteOptions = {},
): Uint8Array[] {
  const body = archive.slice(0, -1);
  const last = archive[archive.length - 1];
  const length = body.reduce((s, c) => s + c.length, 0);
  if (last === undefined || last.length < 2 * TAR_BLOCK || length % TAR_BLOCK !== 0 || !isZeroBlock(last))
    throw new TarError('tar: the archive does not end with its end-of-archive blocks; nothing can be appended');
  const added = writeEntryChunks(entries, new Set(names), options);
  return [...body, ...added.chunks, endOfArchive(length + added.length)];
}

/** The archive as one byte array. */
export function writeTar(entries: readonly TarEntry[], options: TarWriteOptions = {}): Uint8Array {
  const chunks = writeTarChunks(entries, options);
  const out = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

// ---- reading ------------------------------------------------------------------------------

function readString(block: Uint8Array, offset: number, length: number): string {
  const field = block.subarray(offset, offset + length);
  const nul = field.indexOf(0);
  return decoder.decode(nul < 0 ? field : field.subarray(0, nul));
}

/** An octal field (spaces/NULs around it allowed), or GNU's base-256 when the high bit is set. */
function readNumber(block: Uint8Array, offset: number, length: number, field: string, where: string): number {
  if (block[offset] & 0x80) {
    let value = block[offset] & 0x7f;
    for (let i = 1; i < length; i++) value = value * 256 + block[offset + i];
    if (!Number.isSafeInteger(value)) throw new TarError(`tar: ${where}: ${field} is too large`);
    return value;
  }
  const text = readString(block, offset, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarError(`tar: ${where}: ${field} field "${text}" is not an octal number`);
  return parseInt(text, 8);
}

function isZeroBlock(block: Uint8Array): boolean {
  for (let i = 0; i < block.length; i++) if (block[i] !== 0) return false;
  return true;
}

/** True when `bytes` starts with a tar header (the ustar magic at offset 257). */
export function looksLikeTar(bytes: Uint8Array): boolean {
  return bytes.length >= TAR_BLOCK && readString(bytes, 257, 5) === 'ustar';
}

/** pax extended-header records: "<len> <key>=<value>\n" each. */
function parsePaxRecords(data: Uint8Array, where: string): Map<string, string> {
  const out = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const len = space < 0 ? NaN : Number(decoder.decode(data.subarray(at, space)));
    if (!Number.isInteger(len) || len <= 0 || at + len > data.length)
      throw new TarError(`tar: ${where}: malformed pax header record`);
    const record = decoder.decode(data.subarray(space + 1, at + len - 1));
    const eq = record.indexOf('=');
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    at += len;
  }
  return out;
}

/**
 * An entry's name as a relative path of '/'-separated parts ('.' and empty parts folded
 * away), or a TarError naming it when it is absolute, climbs out with '..' or is empty.
 */
function normalizeEntryName(raw: string, source: string): string {
  const shown = `${excerptValue(raw, 120)} (${source})`;
  if (raw.includes('\0')) throw new TarError(`tar: entry ${shown}: a name with a NUL byte is refused`);
  if (/^([/\\]|[A-Za-z]:)/.test(raw))
    throw new TarError(`tar: entry ${shown}: an absolute path is refused; archive names must be relative`);
  const parts = raw.split(/[/\\]/).filter((p) => p !== '' && p !== '.');
  if (parts.includes('..'))
    throw new TarError(`tar: entry ${shown}: a ".." part is refused; archive names must stay inside the archive`);
  if (parts.length === 0) throw new TarError(`tar: entry ${shown}: the name is empty`);
  return parts.join('/');
}

const LINK_TYPES: Readonly<Record<string, string>> = { '1': 'a hard link', '2': 'a symbolic link' };

/**
 * The regular files of an archive, in order. Throws a TarError naming the entry (or byte
 * offset) at fault: a bad checksum, a size past the end, an unsupported entry type, a link,
 * an absolute or climbing path, two entries of one name.
 */
export function readTar(bytes: Uint8Array): TarEntry[] {
  if (bytes.length < TAR_BLOCK)
    throw new TarError(`tar: ${bytes.length} bytes is shorter than one 512-byte tar header`);
  const out: TarEntry[] = [];
  let at = 0;
  let longName: string | null = null;
  let pax: Map<string, string> | null = null;
  let isEnded = false;
  const seen = new Set<string>();
  while (at + TAR_BLOCK <= bytes.length) {
    const block = bytes.subarray(at, at + TAR_BLOCK);
    if (isZeroBlock(block)) {
      isEnded = true;
      break;
    }
    const where = `entry at byte ${at}`;
    let stored: number;
    try {
      stored = readNumber(block, 148, 8, 'chksum', where);
    } catch {
      throw new TarError(`tar: ${where}: the header checksum field is unreadable; not a tar archive, or a damaged one`);
    }
    let unsigned = 0;
    let signed = 0;
    for (let i = 0; i < TAR_BLOCK; i++) {
      const b = i >= 148 && i < 156 ? 0x20 : block[i];
      unsigned += b;
      signed += b > 127 ? b - 256 : b;
    }
    if (stored !== unsigned && stored !== signed) {
      throw new TarError(
        `tar: ${where}: header checksum ${stored} does not match its bytes (${unsigned}); not a tar archive, or a damaged one`,
      );
    }
    const magic = readString(block, 257, 6);
    const prefix = magic === 'ustar' ? readString(block, 345, 155) : '';
    const source = longName !== null ? 'GNU long name' : pax?.has('path') ? 'pax path' : 'header';
    const rawName =
      longName ?? pax?.get('path') ?? (prefix ? `${prefix}/${readString(block, 0, 100)}` : readString(block, 0, 100));
    const name = excerptValue(rawName, 120); // quoted, cut, for messages
    const size = pax?.has('size') ? Number(pax.get('size')) : readNumber(block, 124, 12, 'size', `${where} (${name})`);
    if (!Number.isSafeInteger(size) || size < 0)
      throw new TarError(`tar: ${name}: bad size ${excerptValue(pax?.get('size') ?? size, 40)}`);
    const dataStart = at + TAR_BLOCK;
    if (dataStart + size > bytes.length) {
      throw new TarError(
        `tar: ${name} says it holds ${size} bytes but the archive ends ${bytes.length - dataStart} bytes after its header (truncated download?)`,
      );
    }
    const data = bytes.subarray(dataStart, dataStart + size);
    at = dataStart + Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
    const type = String.fromCharCode(block[156] || 0x30);
    if (type === 'L') {
      longName = readString(data, 0, data.length);
      continue;
    }
    if (type === 'x') {
      pax = parsePaxRecords(data, where);
      continue;
    }
    longName = null;
    pax = null;
    if (type === 'g') continue;
    const path = normalizeEntryName(rawName, source);
    if (type === '5') continue; // a directory: its files carry the full path
    if (Object.hasOwn(LINK_TYPES, type)) {
      throw new TarError(
        `tar: ${name} is ${LINK_TYPES[type]} (to ${excerptValue(readString(block, 157, 100), 120)}); links are refused, only files are read`,
      );
    }
    if (type !== '0' && type !== '7')
      throw new TarError(`tar: ${name} is not a regular file (type '${type}'); only files are read`);
    if (seen.has(path))
      throw new TarError(
        `tar: two entries are named "${path}"; an archive with a repeated name is refused (which one would count?)`,
      );
    seen.add(path);
    out.push({ name: path, data: data.slice() });
  }
  if (!isEnded && out.length === 0) throw new TarError('tar: no end-of-archive marker and no complete entry');
  return out;
}
