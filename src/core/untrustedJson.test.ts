import { describe, expect, it } from 'vitest';
import {
  excerptValue,
  findJsonHazard,
  getOwn,
  limitText,
  setOwn,
  showInvisible,
  splitJsonlLines,
} from './untrustedJson';

describe('splitJsonlLines', () => {
  it('drops a leading BOM and splits at LF, CRLF and a lone CR, numbering from 1', () => {
    expect(splitJsonlLines('\uFEFF{"a":1}\r\n{"b":2}\r{"c":3}\n\n{"d":4}')).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, text: '{"b":2}' },
      { line: 3, text: '{"c":3}' },
      { line: 4, text: '' },
      { line: 5, text: '{"d":4}' },
    ]);
    // Only a leading BOM is dropped; a trailing newline adds no line.
    expect(splitJsonlLines('{"a":1}\n\uFEFF{"b":2}\n')).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, text: '\uFEFF{"b":2}' },
    ]);
  });

  it('ends a line at U+2028 / U+2029 outside a string and keeps them inside one', () => {
    const text = '{"q":"a\u2028b"}\u2028{"q":"c\\"\u2029d"}\u2029{"q":1}';
    expect(splitJsonlLines(text).map((l) => l.text)).toEqual(['{"q":"a\u2028b"}', '{"q":"c\\"\u2029d"}', '{"q":1}']);
    for (const l of splitJsonlLines(text)) expect(() => JSON.parse(l.text)).not.toThrow();
  });

  it('an unterminated string on a bad line does not swallow the next line', () => {
    expect(splitJsonlLines('{"q":"open\u2028\n{"q":2}\u2028{"q":3}').map((l) => l.text)).toEqual([
      '{"q":"open\u2028',
      '{"q":2}',
      '{"q":3}',
    ]);
  });
});

describe('findJsonHazard', () => {
  it('finds the first place deeper than the limit, with its path, without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: [deep] };
    const hazard = findJsonHazard({ x: deep }, 5);
    // root 1, x 2, a 3, [0] 4, a 5, [0] 6 > 5
    expect(hazard).toEqual({ path: ['x', 'a', 0, 'a', 0], message: 'nests deeper than 5 levels' });
    expect(findJsonHazard({ a: { b: { c: 1 } } }, 3)).toBeNull();
    expect(findJsonHazard({ a: { b: { c: {} } } }, 3)?.path).toEqual(['a', 'b', 'c']);
    expect(findJsonHazard('text', 0)).toBeNull();
  });

  it('finds an own "__proto__" key anywhere (as JSON.parse makes it)', () => {
    expect(findJsonHazard(JSON.parse('{"a":[{"ok":1},{"__proto__":{"x":1}}]}'))).toEqual({
      path: ['a', 1, '__proto__'],
      message: 'a key named "__proto__" is not allowed (it would replace an object\'s prototype)',
    });
    expect(findJsonHazard(JSON.parse('{"constructor":{"prototype":{}}}'))).toBeNull();
  });
});

describe('excerpts', () => {
  it('cuts long strings and shows invisible characters', () => {
    expect(excerptValue('x'.repeat(5_000_000), 10)).toBe('"xxxxxxxxxx…" (5000000 chars)');
    expect(excerptValue('\uFEFFa\u202Eb"c')).toBe('"\\ufeffa\\u202eb\\"c"');
    expect(excerptValue({ a: 1, b: 2 })).toBe('an object with 2 key(s)');
    expect(excerptValue([1, 2, 3])).toBe('an array of 3');
    expect(excerptValue(null)).toBe('null');
    expect(excerptValue(1e999)).toBe('Infinity');
    expect(limitText('ab\u0000c', 10)).toBe('ab\\u0000c');
    expect(limitText('abcdef', 3)).toBe('abc… (6 chars)');
    expect(limitText('a😀b', 2)).toBe('a… (4 chars)'); // the pair is not split
    expect(showInvisible('\ud800x')).toBe('\\ud800x');
    expect(showInvisible('😀')).toBe('😀');
  });
});

describe('own-property access', () => {
  it('getOwn never returns a prototype member; setOwn keeps "__proto__" as a key', () => {
    const obj: Record<string, number> = { a: 1 };
    expect(getOwn(obj, 'a')).toBe(1);
    expect(getOwn(obj, 'constructor')).toBeUndefined();
    expect(getOwn(obj, 'toString')).toBeUndefined();
    const target: Record<string, unknown> = {};
    setOwn(target, '__proto__', { polluted: true });
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(Object.keys(target)).toEqual(['__proto__']);
    expect((target as { polluted?: boolean }).polluted).toBeUndefined();
  });
});
