import { describe, expect, it } from 'vitest';
import { createRng } from '../../core/rng';
import { hasToolList, parseToolList, resolveToolList } from './toolList';
import type { ToolRepository } from './types';

describe('parseToolList', () => {
  it('reads a JSON array of names', () => {
    expect(parseToolList('done <tool_list>["a_for_x", "b_for_y"]</tool_list>')).toEqual({
      isOk: true,
      names: ['a_for_x', 'b_for_y'],
    });
    expect(parseToolList('<tool_list>[{"name": "a"}, "b"]</tool_list>')).toEqual({ isOk: true, names: ['a', 'b'] });
  });
  it('reads comma, semicolon and newline separated names, stripping bullets and quotes', () => {
    expect(parseToolList('<tool_list>a, b ,c</tool_list>')).toEqual({ isOk: true, names: ['a', 'b', 'c'] });
    expect(parseToolList('<tool_list>\n- "a"\n2. `b`\n* c; d\n</tool_list>')).toEqual({
      isOk: true,
      names: ['a', 'b', 'c', 'd'],
    });
  });
  it('deduplicates, accepts an empty list and uses only the first block', () => {
    expect(parseToolList('<tool_list>a, a, b</tool_list>')).toEqual({ isOk: true, names: ['a', 'b'] });
    expect(parseToolList('<tool_list>  </tool_list>')).toEqual({ isOk: true, names: [] });
    expect(parseToolList('<tool_list>[]</tool_list>')).toEqual({ isOk: true, names: [] });
    expect(parseToolList('<tool_list>a</tool_list> <tool_list>b</tool_list>')).toEqual({ isOk: true, names: ['a'] });
  });
  it('ignores lists inside <think>', () => {
    const text = '<think>maybe <tool_list>["x"]</tool_list></think><tool_list>["y"]</tool_list>';
    expect(parseToolList(text)).toEqual({ isOk: true, names: ['y'] });
    expect(hasToolList('<think><tool_list>[]</tool_list></think> thinking only')).toBe(false);
  });
  it('returns clear errors for malformed lists', () => {
    expect(parseToolList('no list here')).toEqual({ isOk: false, error: 'tool list: no <tool_list> tag found' });
    expect(parseToolList('<tool_list>["a"]')).toEqual({
      isOk: false,
      error: 'tool list: <tool_list> is not closed by </tool_list>',
    });
    expect(parseToolList('<tool_list>["a", </tool_list>')).toMatchObject({
      isOk: false,
      error: expect.stringMatching(/^tool list: invalid JSON array/),
    });
    expect(parseToolList('<tool_list>["a", 3]</tool_list>')).toEqual({
      isOk: false,
      error: 'tool list: item 1 is 3, not a tool name',
    });
    expect(parseToolList('<tool_list>{"tools": ["a"]}</tool_list>')).toMatchObject({ isOk: false });
    expect(parseToolList('<tool_list><tool_list>a</tool_list>')).toEqual({
      isOk: false,
      error: 'tool list: nested <tool_list> tag',
    });
    expect(parseToolList(undefined as unknown as string)).toEqual({
      isOk: false,
      error: 'tool list: input is not a string',
    });
  });
  it('never throws on random and adversarial strings (fuzz, seeded)', () => {
    const pieces = [
      '<tool_list>',
      '</tool_list>',
      '<think>',
      '</think>',
      '[',
      ']',
      '{',
      '}',
      '"',
      ',',
      '\n',
      'a_for_x',
      'null',
      '3',
      '\\',
      '-',
      ' ',
      '`',
      ';',
      '<tool_call>',
      '\u0000',
      '😀',
    ];
    const rng = createRng('toolList-fuzz');
    let okCount = 0;
    for (let i = 0; i < 3000; i++) {
      const n = rng.int(12);
      let text = '';
      for (let j = 0; j < n; j++) text += pieces[rng.int(pieces.length)];
      const out = parseToolList(text);
      if (out.isOk) {
        okCount++;
        expect(out.names.every((name) => typeof name === 'string' && name.length > 0)).toBe(true);
      } else {
        expect(out.error).toMatch(/^tool list: /);
      }
    }
    expect(okCount).toBeGreaterThan(0);
  });
});

describe('resolveToolList', () => {
  const repo: ToolRepository = {
    source: 'test',
    categories: ['C'],
    collections: [],
    queries: [],
    tools: ['get_a_for_x', 'get_b_for_y'].map((id) => ({
      id,
      name: id,
      apiName: id,
      toolName: 't',
      category: 'C',
      description: '',
      requiredParameters: [],
      optionalParameters: [],
    })),
  };
  it('maps names to ids (exact, then case-insensitive) and reports unknown names', () => {
    expect(resolveToolList(['GET_A_FOR_X', 'get_b_for_y', 'nope', 'get_a_for_x'], repo)).toEqual({
      ids: ['get_a_for_x', 'get_b_for_y'],
      unknownNames: ['nope'],
    });
  });
});
