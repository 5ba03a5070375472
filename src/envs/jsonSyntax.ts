/**
 * Where a JSON text first breaks JSON's grammar (RFC 8259), in words the project owns.
 *
 * Tool responses quote why a call's JSON did not parse, and the policy reads them. The
 * message of `JSON.parse`'s SyntaxError is the JavaScript engine's own and differs between
 * engines (Node 20: "Expected ',' or ']' after array element in JSON at position 84";
 * Chromium 156 adds " (line 1 column 85)"; Firefox and Safari word it otherwise), so the same
 * run gave different rollouts in Node and in the page. This scanner gives one message
 * everywhere: "at character N: expected …" (N counts UTF-16 code units from 1, as
 * `text.slice(N - 1)` starts at the fault).
 *
 * It accepts exactly what `JSON.parse` accepts (the tests compare the two on valid texts and
 * on thousands of corrupted ones); it only locates, it does not build values.
 */

export interface JsonSyntaxError {
  /** 1-based index of the offending character (text.length + 1 at an unexpected end). */
  at: number;
  /** What the grammar expected there, e.g. "',' or ']'", "a value", "the end of the text". */
  expected: string;
}

const WS = new Set([' ', '\t', '\n', '\r']);
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
const HEX = /^[0-9a-fA-F]$/;

class Fault extends Error {
  constructor(
    readonly at: number,
    readonly expected: string,
  ) {
    super(expected);
  }
}

/** The first syntax error of `text` as JSON, or null when `JSON.parse(text)` succeeds. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | null {
  let i = 0;
  const fail = (expected: string): never => {
    throw new Fault(i + 1, expected);
  };
  const skipWs = () => {
    while (i < text.length && WS.has(text[i])) i++;
  };
  const literal = (word: string) => {
    for (const ch of word) {
      if (text[i] !== ch) fail(`"${word}"`);
      i++;
    }
  };
  const digits = (what: string) => {
    if (!(text[i] >= '0' && text[i] <= '9')) fail(what);
    while (text[i] >= '0' && text[i] <= '9') i++;
  };
  const number = () => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else digits('a digit');
    if (text[i] === '.') {
      i++;
      digits('a digit after the decimal point');
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      digits('a digit in the exponent');
    }
  };
  const string = () => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) fail("a closing '\"'");
      const ch = text[i];
      if (ch === '"') {
        i++;
        return;
      }
      if (ch < ' ') fail('no control character inside a string (escape it)');
      if (ch === '\\') {
        i++;
        if (text[i] === 'u') {
          i++;
          for (let k = 0; k < 4; k++) {
            if (!HEX.test(text[i] ?? '')) fail('a hex digit of a \\u escape');
            i++;
          }
        } else if (ESCAPES.has(text[i])) i++;
        else fail('a valid escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
      } else i++;
    }
  };
  // Containers are kept on an explicit stack, not the call stack: a hostile text may nest
  // tens of thousands deep, which JSON.parse (iterative in V8) reads without overflowing.
  const stack: ('{' | '[')[] = [];
  const propertyName = () => {
    skipWs();
    if (text[i] !== '"') fail("a '\"' opening a property name");
    string();
    skipWs();
    if (text[i] !== ':') fail("':' after a property name");
    i++;
  };
  const scan = () => {
    for (;;) {
      // A value is due at i.
      skipWs();
      const ch = text[i];
      let isOpen = false;
      if (ch === '{') {
        i++;
        skipWs();
        if (text[i] === '}') i++;
        else {
          stack.push('{');
          propertyName();
          isOpen = true;
        }
      } else if (ch === '[') {
        i++;
        skipWs();
        if (text[i] === ']') i++;
        else {
          stack.push('[');
          isOpen = true;
        }
      } else if (ch === '"') string();
      else if (ch === '-' || (ch >= '0' && ch <= '9')) number();
      else if (ch === 't') literal('true');
      else if (ch === 'f') literal('false');
      else if (ch === 'n') literal('null');
      else fail('a value');
      if (isOpen) continue;
      // A value ended: close the containers it completes, up to the next one that wants more.
      for (;;) {
        if (stack.length === 0) return;
        skipWs();
        const top = stack[stack.length - 1];
        if (text[i] === ',') {
          i++;
          if (top === '{') propertyName();
          break;
        }
        if (top === '[' && text[i] === ']') {
          i++;
          stack.pop();
          continue;
        }
        if (top === '{' && text[i] === '}') {
          i++;
          stack.pop();
          continue;
        }
        fail(top === '[' ? "',' or ']' after an array element" : "',' or '}' after a property value");
      }
    }
  };
  try {
    scan();
    skipWs();
    if (i < text.length) fail('the end of the text');
    return null;
  } catch (e) {
    if (e instanceof Fault) return { at: e.at, expected: e.expected };
    throw e;
  }
}

/** "at character N: expected …" for a text JSON.parse refuses; "" when it parses. */
export function describeJsonSyntaxError(text: string): string {
  const fault = findJsonSyntaxError(text);
  if (!fault) return '';
  return fault.at > text.length
    ? `the text ends early: expected ${fault.expected}`
    : `at character ${fault.at}: expected ${fault.expected}`;
}
