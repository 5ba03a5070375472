/**
 * Safetensors reader and writer (the Hugging Face format, https://github.com/huggingface/safetensors).
 *
 * Layout: 8 bytes little-endian u64 N, then N bytes of UTF-8 JSON header, then the byte buffer.
 * The header maps tensor name → {dtype, shape, data_offsets: [begin, end]} (offsets relative to
 * the start of the byte buffer) plus an optional "__metadata__" string→string map.
 *
 * Simplifies: integer / F64 / F8 dtypes are recognised (for offset checks) but not decoded.
 *
 * Reading (and refusing hostile files) and writing: docs/model.md.
 */

import { excerptValue, limitText, setOwn } from '../../core/untrustedJson';

/** An error in a safetensors file or index; `tensorName` is set when one tensor is at fault. */
export class SafetensorsError extends Error {
  readonly tensorName?: string;
  constructor(message: string, tensorName?: string) {
    super(tensorName === undefined ? message : `tensor ${excerptValue(tensorName)}: ${message}`);
    this.name = 'SafetensorsError';
    this.tensorName = tensorName;
  }
}

export type FloatDtype = 'F32' | 'F16' | 'BF16';

export interface SafetensorsTensor {
  /** The dtype stored in the file; `data` is always float32. */
  dtype: FloatDtype;
  shape: number[];
  data: Float32Array;
}

export interface ParsedSafetensors {
  metadata: Record<string, string>;
  tensors: Map<string, SafetensorsTensor>;
}

/** One header entry, validated, before any data is decoded. */
export interface SafetensorsHeaderEntry {
  name: string;
  dtype: string;
  shape: number[];
  /** Absolute byte range in the file (header included). */
  byteBegin: number;
  byteEnd: number;
}

export interface SafetensorsHeader {
  metadata: Record<string, string>;
  entries: SafetensorsHeaderEntry[];
}

export interface ParseOptions {
  /** Largest accepted JSON header, bytes. Default 100 MB (the Python library's limit). */
  maxHeaderBytes?: number;
  /** What to do with a tensor whose dtype is valid safetensors but not F32/F16/BF16. Default 'error'. */
  onUnsupportedDtype?: 'error' | 'skip';
}

export interface WritableTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

const DEFAULT_MAX_HEADER_BYTES = 100_000_000;

/** Bytes per element of every safetensors dtype (from the format's Dtype enum). */
const DTYPE_BYTES: Readonly<Record<string, number>> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
  U64: 8,
};

function isFloatDtype(dtype: string): dtype is FloatDtype {
  return dtype === 'F32' || dtype === 'F16' || dtype === 'BF16';
}

/** Reads and validates the header; allocates nothing proportional to the claimed sizes. */
export function readSafetensorsHeader(bytes: Uint8Array, options: ParseOptions = {}): SafetensorsHeader {
  const headerBytes = readHeaderLength(bytes.subarray(0, 8), bytes.length, options);
  return checkHeader(bytes.subarray(8, 8 + headerBytes), bytes.length);
}

/** `length` bytes of a file from byte `offset` (a Blob slice, a file handle read). */
export type ReadRange = (offset: number, length: number) => Promise<Uint8Array>;

/**
 * Reads and validates the header of a file of `fileBytes` bytes through ranged reads: the
 * 8-byte length, then the header, never the tensor data.
 */
export async function readSafetensorsHeaderOf(
  readRange: ReadRange,
  fileBytes: number,
  options: ParseOptions = {},
): Promise<SafetensorsHeader> {
  const first = fileBytes < 8 ? new Uint8Array(0) : await readRange(0, 8);
  const headerBytes = readHeaderLength(first, fileBytes, options);
  const header = await readRange(8, headerBytes);
  if (header.length !== headerBytes)
    throw new SafetensorsError(`header: read ${header.length} of ${headerBytes} bytes`);
  return checkHeader(header, fileBytes);
}

/** The header length N from the first 8 bytes, checked against the limit and the file size. */
function readHeaderLength(first: Uint8Array, fileBytes: number, options: ParseOptions): number {
  const maxHeaderBytes = options.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
  if (fileBytes < 8 || first.length < 8) {
    throw new SafetensorsError(`file is ${fileBytes} bytes, shorter than the 8-byte header length`);
  }
  const view = new DataView(first.buffer, first.byteOffset, 8);
  const lengthLow = view.getUint32(0, true);
  const lengthHigh = view.getUint32(4, true);
  const headerBytes = lengthHigh * 2 ** 32 + lengthLow;
  if (headerBytes > maxHeaderBytes) {
    throw new SafetensorsError(`header length ${headerBytes} exceeds the limit of ${maxHeaderBytes} bytes`);
  }
  if (headerBytes > fileBytes - 8) {
    throw new SafetensorsError(
      `header length ${headerBytes} runs past the end of the file (${fileBytes - 8} bytes after the length field)`,
    );
  }
  return headerBytes;
}

/** Validates the JSON header (its N bytes) of a file of `fileBytes` bytes. */
function checkHeader(headerUtf8: Uint8Array, fileBytes: number): SafetensorsHeader {
  const headerBytes = headerUtf8.length;
  let headerText: string;
  try {
    headerText = new TextDecoder('utf-8', { fatal: true }).decode(headerUtf8);
  } catch {
    throw new SafetensorsError('header is not valid UTF-8');
  }
  let header: unknown;
  try {
    header = JSON.parse(headerText);
  } catch (e) {
    throw new SafetensorsError(`header is not valid JSON (${(e as Error).message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new SafetensorsError(`header must be a JSON object, found ${describeJson(header)}`);
  }

  const dataStart = 8 + headerBytes;
  const dataLength = fileBytes - dataStart;
  let metadata: Record<string, string> = {};
  const entries: SafetensorsHeaderEntry[] = [];
  const relative: { name: string; begin: number; end: number }[] = [];
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      metadata = readMetadata(raw);
      continue;
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new SafetensorsError(`entry must be an object, found ${describeJson(raw)}`, name);
    }
    const info = raw as Record<string, unknown>;
    const dtype = info.dtype;
    if (typeof dtype !== 'string' || !Object.hasOwn(DTYPE_BYTES, dtype)) {
      throw new SafetensorsError(
        `unknown dtype ${excerptValue(dtype)} (known: ${Object.keys(DTYPE_BYTES).join(', ')})`,
        name,
      );
    }
    const shape = readShape(info.shape, name);
    const offsets = info.data_offsets;
    if (
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      !offsets.every((o) => Number.isSafeInteger(o) && (o as number) >= 0)
    ) {
      throw new SafetensorsError(
        `data_offsets must be two non-negative integers, found ${describeArray(offsets)}`,
        name,
      );
    }
    const [begin, end] = offsets as [number, number];
    if (end < begin) throw new SafetensorsError(`data_offsets [${begin}, ${end}] end before they begin`, name);
    if (end > dataLength) {
      throw new SafetensorsError(
        `data_offsets [${begin}, ${end}] run past the end of the data (${dataLength} bytes)`,
        name,
      );
    }
    const numel = shape.reduce((a, b) => a * b, 1);
    const expectedBytes = numel * DTYPE_BYTES[dtype];
    if (!Number.isSafeInteger(expectedBytes) || expectedBytes !== end - begin) {
      throw new SafetensorsError(
        `shape [${shape.join(', ')}] × ${dtype} (${DTYPE_BYTES[dtype]} bytes) needs ${expectedBytes} bytes ` +
          `but data_offsets [${begin}, ${end}] hold ${end - begin}`,
        name,
      );
    }
    relative.push({ name, begin, end });
    entries.push({ name, dtype, shape, byteBegin: dataStart + begin, byteEnd: dataStart + end });
  }

  // The byte buffer must be entirely indexed with no holes or overlaps (as the format requires).
  relative.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let cursor = 0;
  for (const r of relative) {
    if (r.begin < cursor) {
      throw new SafetensorsError(
        `data_offsets [${r.begin}, ${r.end}] overlap the previous tensor (ends at ${cursor})`,
        r.name,
      );
    }
    if (r.begin > cursor) {
      throw new SafetensorsError(`data_offsets [${r.begin}, ${r.end}] leave a hole after byte ${cursor}`, r.name);
    }
    cursor = r.end;
  }
  if (cursor !== dataLength) {
    throw new SafetensorsError(`tensors index ${cursor} bytes of data but the file holds ${dataLength}`);
  }
  return { metadata, entries };
}

/** Decodes one validated entry of `bytes` to float32 (a fresh copy). */
export function decodeSafetensorsEntry(bytes: Uint8Array, entry: SafetensorsHeaderEntry): SafetensorsTensor {
  const { dtype, name } = entry;
  if (!isFloatDtype(dtype)) {
    throw new SafetensorsError(`dtype ${dtype} is not supported (only F32, F16, BF16 are decoded)`, name);
  }
  const raw = bytes.subarray(entry.byteBegin, entry.byteEnd);
  let data: Float32Array;
  if (dtype === 'F32') data = decodeF32(raw);
  else if (dtype === 'F16') data = decodeF16(raw);
  else data = decodeBF16(raw);
  return { dtype, shape: entry.shape.slice(), data };
}

/** Parses a whole safetensors file; F16 and BF16 are converted to F32. */
export function parseSafetensors(bytes: Uint8Array, options: ParseOptions = {}): ParsedSafetensors {
  const header = readSafetensorsHeader(bytes, options);
  const tensors = new Map<string, SafetensorsTensor>();
  for (const entry of header.entries) {
    if (!isFloatDtype(entry.dtype) && options.onUnsupportedDtype === 'skip') continue;
    tensors.set(entry.name, decodeSafetensorsEntry(bytes, entry));
  }
  return { metadata: header.metadata, tensors };
}

/** Serialises float32 tensors; keys sorted as the Python library sorts them. */
export function writeSafetensors(tensors: WritableTensor[], metadata?: Record<string, string>): Uint8Array {
  const seen = new Set<string>();
  for (const t of tensors) {
    if (typeof t.name !== 'string' || t.name.length === 0)
      throw new SafetensorsError('tensor name must be a non-empty string');
    if (t.name === '__metadata__') throw new SafetensorsError('the name "__metadata__" is reserved', t.name);
    if (seen.has(t.name)) throw new SafetensorsError('name appears twice', t.name);
    seen.add(t.name);
    const shape = readShape(t.shape, t.name);
    const numel = shape.reduce((a, b) => a * b, 1);
    if (!(t.data instanceof Float32Array)) throw new SafetensorsError('data must be a Float32Array', t.name);
    if (numel !== t.data.length) {
      throw new SafetensorsError(
        `shape [${shape.join(', ')}] has ${numel} elements but data has ${t.data.length}`,
        t.name,
      );
    }
  }
  if (metadata !== undefined) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string') throw new SafetensorsError(`__metadata__ value of "${k}" must be a string`);
    }
  }
  const sorted = tensors.slice().sort((a, b) => compareUtf8(a.name, b.name));
  // Header JSON in the Python library's (serde_json, compact) form: metadata first, then tensors in data order.
  const parts: string[] = [];
  if (metadata !== undefined && Object.keys(metadata).length > 0) {
    parts.push(`"__metadata__":${JSON.stringify(metadata)}`);
  }
  let offset = 0;
  for (const t of sorted) {
    const size = t.data.length * 4;
    parts.push(
      `${JSON.stringify(t.name)}:{"dtype":"F32","shape":${JSON.stringify(t.shape)},"data_offsets":[${offset},${offset + size}]}`,
    );
    offset += size;
  }
  const headerJson = new TextEncoder().encode(`{${parts.join(',')}}`);
  const paddedLength = Math.ceil(headerJson.length / 8) * 8;
  const out = new Uint8Array(8 + paddedLength + offset);
  const view = new DataView(out.buffer);
  view.setUint32(0, paddedLength % 2 ** 32, true);
  view.setUint32(4, Math.floor(paddedLength / 2 ** 32), true);
  out.set(headerJson, 8);
  out.fill(0x20, 8 + headerJson.length, 8 + paddedLength);
  let cursor = 8 + paddedLength;
  for (const t of sorted) {
    writeF32(out, cursor, t.data);
    cursor += t.data.length * 4;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Sharded checkpoints: model.safetensors.index.json = {"metadata": {...}, "weight_map": {tensor: file}}

export type ReadFile = (name: string) => Promise<Uint8Array>;

export interface SafetensorsIndex {
  metadata: Record<string, unknown>;
  weightMap: Map<string, string>;
}

/** Validates the JSON of a `model.safetensors.index.json`. */
export function parseSafetensorsIndex(json: unknown): SafetensorsIndex {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new SafetensorsError(`index must be a JSON object, found ${describeJson(json)}`);
  }
  const obj = json as Record<string, unknown>;
  const map = obj.weight_map;
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    throw new SafetensorsError(`index field "weight_map" must be an object, found ${describeJson(map)}`);
  }
  const weightMap = new Map<string, string>();
  for (const [tensor, file] of Object.entries(map as Record<string, unknown>)) {
    if (typeof file !== 'string' || file.length === 0) {
      throw new SafetensorsError(`index weight_map entry must be a file name, found ${describeJson(file)}`, tensor);
    }
    if (file.startsWith('/') || file.includes('\\') || file.split('/').includes('..')) {
      throw new SafetensorsError(`index weight_map names a file outside the folder: ${JSON.stringify(file)}`, tensor);
    }
    weightMap.set(tensor, file);
  }
  const metadata = obj.metadata;
  return {
    metadata:
      metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata)
        ? (metadata as Record<string, unknown>)
        : {},
    weightMap,
  };
}

/**
 * Loads a sharded checkpoint: reads each shard named in the index once (one at a time), and
 * checks every tensor of the weight map is in the shard that the map names.
 */
export async function loadShardedSafetensors(
  indexJson: unknown,
  readFile: ReadFile,
  options: ParseOptions = {},
): Promise<ParsedSafetensors> {
  const index = parseSafetensorsIndex(indexJson);
  const files = [...new Set(index.weightMap.values())].sort();
  const tensors = new Map<string, SafetensorsTensor>();
  const metadata: Record<string, string> = {};
  for (const file of files) {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(file);
    } catch (e) {
      throw new SafetensorsError(`cannot read shard "${file}" named in the index: ${(e as Error).message}`);
    }
    let shard: ParsedSafetensors;
    try {
      shard = parseSafetensors(bytes, options);
    } catch (e) {
      if (e instanceof SafetensorsError) throw new SafetensorsError(`shard "${file}": ${e.message}`, undefined);
      throw e;
    }
    Object.assign(metadata, shard.metadata);
    for (const [name, tensor] of shard.tensors) {
      if (tensors.has(name)) throw new SafetensorsError(`appears in more than one shard (again in "${file}")`, name);
      tensors.set(name, tensor);
    }
  }
  for (const [name, file] of index.weightMap) {
    if (!tensors.has(name))
      throw new SafetensorsError(`index says it is in "${file}" but that shard does not hold it`, name);
  }
  return { metadata, tensors };
}

// ---------------------------------------------------------------------------------------------
// Dtype conversion

const IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function decodeF32(raw: Uint8Array): Float32Array {
  const n = raw.length / 4;
  if (IS_LITTLE_ENDIAN && raw.byteOffset % 4 === 0) return new Float32Array(raw.buffer, raw.byteOffset, n).slice();
  const out = new Float32Array(n);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  for (let i = 0; i < n; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

function readU16(raw: Uint8Array): Uint16Array {
  const n = raw.length / 2;
  if (IS_LITTLE_ENDIAN && raw.byteOffset % 2 === 0) return new Uint16Array(raw.buffer, raw.byteOffset, n);
  const out = new Uint16Array(n);
  for (let i = 0; i < n; i++) out[i] = raw[2 * i] | (raw[2 * i + 1] << 8);
  return out;
}

/** bfloat16 is the top half of a float32: shift the 16 bits up. */
function decodeBF16(raw: Uint8Array): Float32Array {
  const halves = readU16(raw);
  const out = new Float32Array(halves.length);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < halves.length; i++) bits[i] = halves[i] << 16;
  return out;
}

let f16Table: Float32Array | undefined;

/** IEEE 754 binary16 → number: sign, 5-bit exponent (bias 15), 10-bit fraction. */
export function convertHalfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024); // zero and subnormals
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

function decodeF16(raw: Uint8Array): Float32Array {
  if (f16Table === undefined) {
    f16Table = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) f16Table[h] = convertHalfToFloat(h);
  }
  const table = f16Table;
  const halves = readU16(raw);
  const out = new Float32Array(halves.length);
  for (let i = 0; i < halves.length; i++) out[i] = table[halves[i]];
  return out;
}

function writeF32(out: Uint8Array, byteOffset: number, data: Float32Array): void {
  if (IS_LITTLE_ENDIAN) {
    out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), byteOffset);
    return;
  }
  const view = new DataView(out.buffer, out.byteOffset + byteOffset, data.byteLength);
  for (let i = 0; i < data.length; i++) view.setFloat32(i * 4, data[i], true);
}

// ---------------------------------------------------------------------------------------------
// Helpers

function readShape(raw: unknown, name: string): number[] {
  if (!Array.isArray(raw) || !raw.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) {
    throw new SafetensorsError(`shape must be an array of non-negative integers, found ${describeArray(raw)}`, name);
  }
  return (raw as number[]).slice();
}

function readMetadata(raw: unknown): Record<string, string> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new SafetensorsError(`"__metadata__" must be an object of strings, found ${describeJson(raw)}`);
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof v !== 'string')
      throw new SafetensorsError(`"__metadata__".${excerptValue(k)} must be a string, found ${describeJson(v)}`);
    setOwn(out, k, v);
  }
  return out;
}

/** A short array of scalars as JSON (`[0, -1]`), anything else as a bounded excerpt (it may be deep or huge). */
function describeArray(v: unknown): string {
  const isShort = Array.isArray(v) && v.length <= 8 && v.every((e) => e === null || typeof e !== 'object');
  return isShort ? limitText(JSON.stringify(v), 120) : excerptValue(v);
}

function describeJson(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}

/** Compares strings by code point (= UTF-8 byte order, as Rust's String ordering). */
function compareUtf8(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(j)!;
    if (ca !== cb) return ca - cb;
    i += ca > 0xffff ? 2 : 1;
    j += cb > 0xffff ? 2 : 1;
  }
  return a.length - i - (b.length - j);
}
