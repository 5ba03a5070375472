import { describe, expect, it } from 'vitest';
import { checkToolCall, parseAssistantTurn, parseToolCallJson } from './toolCallParser';
import type { ToolSchema } from './types';

const CALL = '<tool_call>\n{"name": "get_capital", "arguments": {"country": "Velmora"}}\n</tool_call>';

describe('parseAssistantTurn', () => {
  it('splits reasoning, a call and control text with exact spans', () => {
    const text = `<think>\nfind it\n</think>\n\n${CALL}`;
    const p = parseAssistantTurn(text);
    // "<think>" is 0..7, "\nfind it\n" (9 chars) is 7..16, "</think>" 16..24, "\n\n" 24..26, the call 26..end.
    expect(p.pieces).toEqual([
      { kind: 'control', start: 0, end: 7 },
      { kind: 'reasoning', start: 7, end: 16 },
      { kind: 'control', start: 16, end: 26 },
      { kind: 'tool_call', start: 26, end: 26 + CALL.length },
    ]);
    expect(p.reasoning).toBe('find it');
    expect(p.reasoningSpans).toEqual([{ start: 7, end: 16 }]);
    expect(p.calls).toEqual([
      {
        index: 0,
        span: { start: 26, end: text.length },
        call: { name: 'get_capital', arguments: { country: 'Velmora' } },
      },
    ]);
    expect(p.errors).toEqual([]);
    expect(p.answer).toBeUndefined();
  });

  it('reads several calls, an answer and a trailing <|im_end|>', () => {
    const text = `<think>two</think>${CALL}\n${CALL}\n<answer> Tolton </answer><|im_end|>`;
    const p = parseAssistantTurn(text);
    expect(p.calls.map((c) => c.call?.name)).toEqual(['get_capital', 'get_capital']);
    expect(p.answer).toBe('Tolton');
    const answerStart = text.indexOf('<answer>');
    expect(p.answerSpan).toEqual({ start: answerStart, end: answerStart + '<answer> Tolton </answer>'.length });
    expect(p.pieces.map((x) => x.kind)).toEqual([
      'control',
      'reasoning',
      'control',
      'tool_call',
      'control',
      'tool_call',
      'control',
      'answer',
      'control',
    ]);
    expect(text.slice(p.pieces[8].start, p.pieces[8].end)).toBe('<|im_end|>');
  });

  it('takes text before a lone </think> as reasoning (the template wrote <think>)', () => {
    const p = parseAssistantTurn('I should look it up.\n</think>\n\n<answer>x</answer>');
    expect(p.reasoning).toBe('I should look it up.');
    expect(p.pieces[0]).toEqual({ kind: 'reasoning', start: 0, end: 21 }); // "I should look it up.\n" is 21 characters
    expect(p.answer).toBe('x');
  });

  it('keeps tags inside <think> as reasoning', () => {
    const p = parseAssistantTurn(`<think>maybe ${CALL}</think>`);
    expect(p.calls).toEqual([]);
    expect(p.reasoning).toBe(`maybe ${CALL}`);
  });

  it('reports bad JSON, a missing name, and non-object arguments without throwing', () => {
    const bad = parseAssistantTurn('<tool_call>{"name": "f", "arguments": {</tool_call>');
    expect(bad.calls[0].call).toBeUndefined();
    expect(bad.errors[0]).toMatch(/^<tool_call> #1: the <tool_call> block is not valid JSON \(/);
    // The project's words, not the engine's SyntaxError (which Node and Chromium word differently):
    // the policy reads this text, so it must be the same in every runtime.
    expect(parseToolCallJson('{"name": "f", "arguments": [1 2]}').error).toBe(
      "the <tool_call> block is not valid JSON (at character 31: expected ',' or ']' after an array element)",
    );
    expect(bad.pieces).toEqual([{ kind: 'tool_call', start: 0, end: bad.text.length }]);

    expect(parseToolCallJson('{"arguments": {}}').error).toBe('the tool call has no "name"');
    expect(parseToolCallJson('{"name": "", "arguments": {}}').error).toBe('"name" must be a non-empty string');
    expect(parseToolCallJson('{"name": "f", "arguments": [1]}').error).toBe(
      '"arguments" of the call to "f" must be a JSON object, got array',
    );
    expect(parseToolCallJson('{"name": "f", "arguments": "{}"}').error).toBe(
      '"arguments" of the call to "f" must be a JSON object, got string',
    );
    expect(parseToolCallJson('{"name": "f"}').error).toBe('the call to "f" has no "arguments" (use {} for none)');
    expect(parseToolCallJson('[1, 2]').error).toBe(
      'the <tool_call> block must be a JSON object {"name": …, "arguments": {…}}',
    );
    expect(parseToolCallJson('  ').error).toBe('the <tool_call> block is empty');
  });

  it('reports unclosed tags and recovers at the next <tool_call>', () => {
    const text = `<tool_call>{"name": "f", ${CALL}`;
    const p = parseAssistantTurn(text);
    expect(p.errors).toEqual(['unclosed <tool_call> #1: no </tool_call> before the next <tool_call>']);
    expect(p.calls[0]).toEqual({ index: 0, span: { start: 0, end: 25 }, error: p.errors[0] }); // '<tool_call>{"name": "f", ' is 25 characters
    expect(p.calls[1].call?.name).toBe('get_capital');
    expect(p.pieces.map((x) => x.kind)).toEqual(['control', 'tool_call']);

    expect(parseAssistantTurn('<think>forever').errors).toEqual(['unclosed <think>: the reasoning has no </think>']);
    expect(parseAssistantTurn('<answer>42').errors).toEqual(['unclosed <answer>: no </answer>']);
    expect(parseAssistantTurn('<answer>42').answer).toBeUndefined();
    expect(parseAssistantTurn('<tool_call>{}').errors).toEqual([
      'unclosed <tool_call> #1: no </tool_call> before the end of the turn',
    ]);
  });

  it('only the first answer counts', () => {
    const p = parseAssistantTurn('<answer>a</answer><answer>b</answer>');
    expect(p.answer).toBe('a');
    expect(p.pieces).toEqual([{ kind: 'answer', start: 0, end: 36 }]); // two 18-character blocks, merged
  });

  it('covers an empty or tag-free text', () => {
    expect(parseAssistantTurn('').pieces).toEqual([]);
    expect(parseAssistantTurn('Hello').pieces).toEqual([{ kind: 'control', start: 0, end: 5 }]);
  });
});

const TOOLS: ToolSchema[] = [
  {
    type: 'function',
    function: {
      name: 'get_population',
      description: 'Population of a city.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          unit: { type: 'string', enum: ['people', 'thousands'], default: 'people' },
          year: { type: 'integer' },
          weights: { type: 'array', items: { type: 'number' } },
        },
        required: ['city'],
      },
    },
  },
];

describe('checkToolCall', () => {
  const check = (args: Record<string, unknown>, name = 'get_population') =>
    checkToolCall({ name, arguments: args }, TOOLS);

  it('accepts a valid call with optional arguments', () => {
    expect(check({ city: 'Tolton' })).toBeNull();
    expect(check({ city: 'Tolton', unit: 'thousands', year: 2020, weights: [1, 2.5] })).toBeNull();
  });

  it('names the problem: unknown tool, missing argument, unknown argument, type, enum, item', () => {
    expect(check({}, 'get_pop')).toBe('unknown tool "get_pop"; available tools: get_population');
    expect(check({ unit: 'people' })).toBe('missing required argument "city" of get_population');
    expect(check({ city: 'T', town: 'T' })).toBe(
      'unknown argument "town" of get_population; valid arguments: city, unit, year, weights',
    );
    expect(check({ city: 7 })).toBe('argument "city" of get_population must be string, got number 7');
    expect(check({ city: 'T', year: 2020.5 })).toBe(
      'argument "year" of get_population must be integer, got number 2020.5',
    );
    expect(check({ city: 'T', year: '2020' })).toBe(
      'argument "year" of get_population must be integer, got string "2020"',
    );
    expect(check({ city: 'T', unit: 'millions' })).toBe(
      'argument "unit" of get_population must be one of "people", "thousands"; got string "millions"',
    );
    expect(check({ city: 'T', weights: [1, 'x'] })).toBe(
      'argument "weights"[1] of get_population must be number, got string "x"',
    );
  });

  it('treats prototype keys as ordinary unknown arguments', () => {
    const args = JSON.parse('{"city": "T", "__proto__": {"polluted": true}}') as Record<string, unknown>;
    expect(check(args)).toBe(
      'unknown argument "__proto__" of get_population; valid arguments: city, unit, year, weights',
    );
    expect(check({ city: 'T', constructor: 1 })).toMatch(/^unknown argument "constructor"/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects numbers out of range', () => {
    const args = JSON.parse('{"city": "T", "weights": [1e999]}') as Record<string, unknown>;
    expect(check(args)).toBe('argument "weights"[0] of get_population must be number, got a number out of range');
  });
});
