import { describe, expect, it } from 'vitest';
import { createRng } from '../core/rng';
import { describeJsonSyntaxError, findJsonSyntaxError } from './jsonSyntax';

describe('findJsonSyntaxError', () => {
  it('locates the fault by hand-counted character', () => {
    // {"a": [1 2]}: the '2' is character 10 (1-based), where ',' or ']' was due.
    expect(findJsonSyntaxError('{"a": [1 2]}')).toEqual({ at: 10, expected: "',' or ']' after an array element" });
    // {"name" "x"}: the second '"' (character 9) where ':' was due.
    expect(findJsonSyntaxError('{"name" "x"}')).toEqual({ at: 9, expected: "':' after a property name" });
    // {name: 1}: 'n' at character 2 should open a property name.
    expect(findJsonSyntaxError('{name: 1}')).toEqual({ at: 2, expected: "a '\"' opening a property name" });
    // {"a": 1,}: the '}' at character 9 where the next property name was due.
    expect(findJsonSyntaxError('{"a": 1,}')).toEqual({ at: 9, expected: "a '\"' opening a property name" });
    // {"a": 1: the text ends (character 8 = length + 1).
    expect(findJsonSyntaxError('{"a": 1')).toEqual({ at: 8, expected: "',' or '}' after a property value" });
    // 01: a leading zero, then '1' at character 2 where the text should end.
    expect(findJsonSyntaxError('01')).toEqual({ at: 2, expected: 'the end of the text' });
    expect(findJsonSyntaxError('"\\x"')).toEqual({
      at: 3,
      expected: 'a valid escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)',
    });
    expect(findJsonSyntaxError('')).toEqual({ at: 1, expected: 'a value' });
    expect(findJsonSyntaxError('tru')).toEqual({ at: 4, expected: '"true"' });
    expect(findJsonSyntaxError('{"a": [1, 2, {"b": null}], "c": -1.5e+3, "d": "\\u00e9\\n"}')).toBeNull();
  });

  it('reads any nesting depth JSON.parse reads (no recursion): 100,000 brackets', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(() => JSON.parse(deep)).not.toThrow();
    expect(findJsonSyntaxError(deep)).toBeNull();
    expect(findJsonSyntaxError('{"a":' + '['.repeat(50_000) + '}')).toEqual({
      at: 50_006,
      expected: 'a value',
    });
  });

  it('words the message the same whatever the engine', () => {
    expect(describeJsonSyntaxError('{"a": [1 2]}')).toBe("at character 10: expected ',' or ']' after an array element");
    expect(describeJsonSyntaxError('{"a": 1')).toBe("the text ends early: expected ',' or '}' after a property value");
    expect(describeJsonSyntaxError('[1]')).toBe('');
  });

  it('accepts exactly what JSON.parse accepts: valid texts and thousands of corrupted ones', () => {
    const seeds = [
      '{"name": "get_capital", "arguments": {"country": "Nordia"}}',
      '[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": [1, 2.5, -3e2, true, false, null]}}]',
      '{"s": "tab\\t quote\\" slash\\/ \\u00e9 back\\\\"}',
      '  [ 0 , -0.0 , 1E+2 , 1e-2 , "" , {} , [] ]  ',
    ];
    const alphabet = [
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '\\',
      ' ',
      '0',
      '1',
      '-',
      '.',
      'e',
      'x',
      'u',
      't',
      'n',
      '\n',
      '\u0001',
    ];
    const rng = createRng(11);
    let nBad = 0;
    for (const text of seeds) expect(findJsonSyntaxError(text)).toBeNull();
    for (let k = 0; k < 6000; k++) {
      let t = seeds[k % seeds.length];
      const edits = 1 + Math.floor(rng.next() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rng.next() * (t.length + 1));
        const op = rng.next();
        const ch = alphabet[Math.floor(rng.next() * alphabet.length)];
        if (op < 0.4) t = t.slice(0, at) + t.slice(at + 1);
        else if (op < 0.7) t = t.slice(0, at) + ch + t.slice(at);
        else t = t.slice(0, at) + ch + t.slice(at + 1);
      }
      let parses = true;
      try {
        JSON.parse(t);
      } catch {
        parses = false;
      }
      const fault = findJsonSyntaxError(t);
      expect(fault === null, JSON.stringify(t)).toBe(parses);
      if (fault) {
        nBad++;
        expect(fault.at).toBeGreaterThanOrEqual(1);
        expect(fault.at).toBeLessThanOrEqual(t.length + 1);
      }
    }
    expect(nBad).toBeGreaterThan(2000); // most corruptions break the text
  });
});
