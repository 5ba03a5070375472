/**
 * Reading JSON that someone else wrote (task files, traces, configs, checkpoint files): the
 * few rules every importer shares, so one bad line costs that line and nothing more.
 * - `splitJsonlLines`: records of a JSONL text. A leading byte-order mark is dropped; lines
 *   end at LF, CRLF or a lone CR, and at U+2028 / U+2029 outside a JSON string (inside one
 *   they are text, as JSON allows; so after a line cut inside a string, the next U+2028 is
 *   text too, up to the next LF or CR).
 * - `findJsonHazard`: the first place where a parsed value nests deeper than a limit or holds
 *   a key "__proto__" (which a plain object assignment turns into a prototype swap), with its
 *   path. Iterative, so a 100,000-deep value costs no stack.
 * - `excerptValue` / `limitText`: values and messages cut to a short, visible excerpt (no 5 MB
 *   echo, no invisible character in an error).
 * - `getOwn` / `setOwn`: lookups and writes by a name from a file that never reach
 *   Object.prototype (`constructor`, `toString`, `__proto__` are names like any other).
 */

/** Deepest nesting accepted in an imported record: the deepest FTRL test task nests 12. */
export const MAX_JSON_DEPTH = 64;

const BOM = '\uFEFF';

export interface JsonlLine {
  /** 1-based line number. */
  line: number;
  text: string;
}

/**
 * The lines of a JSONL text, numbered from 1 (blank ones included, for the numbering).
 * U+2028 and U+2029 end a line only outside a JSON string: a string state is tracked per
 * LF/CR line, so an unterminated quote on a bad line never swallows the next line.
 */
export function splitJsonlLines(text: string): JsonlLine[] {
  const src = text.startsWith(BOM) ? text.slice(1) : text;
  const out: JsonlLine[] = [];
  let start = 0;
  let isInString = false;
  let isEscaped = false;
  const push = (end: number) => out.push({ line: out.length + 1, text: src.slice(start, end) });
  for (let i = 0; i < src.length; i++) {
    const c = src.charCodeAt(i);
    if (c === 0x0a || c === 0x0d) {
      push(i);
      if (c === 0x0d && src.charCodeAt(i + 1) === 0x0a) i++;
      start = i + 1;
      isInString = false;
      isEscaped = false;
    } else if (isInString) {
      if (isEscaped) isEscaped = false;
      else if (c === 0x5c) isEscaped = true;
      else if (c === 0x22) isInString = false;
    } else if (c === 0x22) {
      isInString = true;
    } else if (c === 0x2028 || c === 0x2029) {
      push(i);
      start = i + 1;
    }
  }
  if (start < src.length) push(src.length);
  return out;
}

export interface JsonHazard {
  /** Keys and indices from the root to the place at fault. */
  path: (string | number)[];
  message: string;
}

/**
 * The first hazard in a parsed JSON value, depth first: nesting deeper than `maxDepth`
 * (the root object is depth 1) or an own key "__proto__". Null when there is none.
 */
export function findJsonHazard(value: unknown, maxDepth: number = MAX_JSON_DEPTH): JsonHazard | null {
  if (value === null || typeof value !== 'object') return null;
  // Each frame: the container, its path, its depth, and the keys still to visit.
  const stack: { path: (string | number)[]; depth: number; node: object }[] = [{ path: [], depth: 1, node: value }];
  while (stack.length > 0) {
    const { path, depth, node } = stack.pop()!;
    if (depth > maxDepth) return { path, message: `nests deeper than ${maxDepth} levels` };
    const isArray = Array.isArray(node);
    const keys = isArray ? null : Object.keys(node);
    const n = isArray ? (node as unknown[]).length : keys!.length;
    for (let i = n - 1; i >= 0; i--) {
      const key: string | number = isArray ? i : keys![i];
      if (key === '__proto__')
        return {
          path: [...path, key],
          message: 'a key named "__proto__" is not allowed (it would replace an object\'s prototype)',
        };
      const child = (node as Record<string | number, unknown>)[key];
      if (child !== null && typeof child === 'object')
        stack.push({ path: [...path, key], depth: depth + 1, node: child });
    }
  }
  return null;
}

// Characters that print as nothing or move text: C0/C1 controls, soft hyphen, zero-width and
// direction marks, line/paragraph separators, word joiners, the BOM, interlinear annotations,
// and lone surrogate halves.
/* eslint-disable no-control-regex -- matching control characters is the point */
const INVISIBLE =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff\ufff9-\ufffb]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/* eslint-enable no-control-regex */

/** `text` with every invisible character written as `\uXXXX`. */
export function showInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** At most `maxChars` characters of `text` (then `… (N chars)`), invisible characters shown. */
export function limitText(text: string, maxChars = 300): string {
  if (text.length <= maxChars) return showInvisible(text);
  let cut = maxChars;
  if (/[\ud800-\udbff]/.test(text[cut - 1])) cut--; // do not split a surrogate pair
  return `${showInvisible(text.slice(0, cut))}… (${text.length} chars)`;
}

/**
 * A short, visible rendering of any value for an error message: strings quoted and cut,
 * numbers, booleans and null as JSON, arrays and objects by kind and size (never serialised:
 * they may be huge or deep).
 */
export function excerptValue(value: unknown, maxChars = 60): string {
  if (typeof value === 'string') {
    const quoted = value.length <= maxChars ? value : value.slice(0, maxChars);
    const body = showInvisible(JSON.stringify(quoted).slice(1, -1));
    return value.length <= maxChars ? `"${body}"` : `"${body}…" (${value.length} chars)`;
  }
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return `an object with ${Object.keys(value).length} key(s)`;
  return typeof value;
}

/** `obj[key]` when `key` is obj's own property, else undefined (never a prototype's member). */
export function getOwn<T>(obj: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Defines `obj[key] = value` as an own data property, even for "__proto__". */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
