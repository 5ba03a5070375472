import { describe, expect, it } from 'vitest';
import { buildChunksWithLeak, findLeak, findSentenceStart } from './leakage';

const CALL = { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } };

describe('findLeak', () => {
  it('finds a literal JSON preview and cuts at the start of its sentence', () => {
    const text = 'I know the city. Then {"name": "get_weather", "arguments": {"city": "Paris"}} is next.';
    const hit = findLeak(text, [CALL]);
    expect(hit?.kind).toBe('json_preview');
    // "I know the city. " is 17 characters, so the sentence holding the JSON starts at 17.
    expect(hit?.start).toBe(17);
    expect(text.slice(hit!.start).startsWith('Then {"name"')).toBe(true);
  });

  it('finds "So the tool call would be:" before the JSON on the next line', () => {
    const text = 'The city is Paris.\nSo, the tool call would be:\n{"name": "get_weather"}';
    const hit = findLeak(text, [CALL]);
    expect(hit?.detector).toBe('call_would_be');
    // "The city is Paris.\n" is 19 characters.
    expect(hit?.start).toBe(19);
  });

  it.each([
    ['I will call get_weather with city Paris.', 'i_will_call_x_with'],
    ['Let me invoke `get_weather` using the city we found.', 'i_will_call_x_with'],
    ['Calling get_weather with the city now.', 'calling_x_with'],
    ['Here is the call I will make.', 'here_is_the_call'],
    ['My final call is: weather for Paris.', 'call_is_colon'],
    ['Action: get_weather\nAction Input: {"city": "Paris"}', 'action_label'],
    ['I am ready to make the following call.', 'make_the_call'],
    ['get_weather(city="Paris", unit="celsius")', 'kwarg_call'],
    ['Use it with the arguments: city and unit.', 'with_arguments_literal'],
  ])('phrase preview %j → %s', (text, detector) => {
    expect(findLeak(text, [CALL])?.detector).toBe(detector);
  });

  it('a tool name followed by all its argument values in one sentence is a preview', () => {
    const text = 'Grounding is done. So get_weather for Paris in celsius is what I need.';
    const hit = findLeak(text, [CALL]);
    expect(hit?.kind).toBe('name_with_args');
    expect(hit?.start).toBe('Grounding is done. '.length);
  });

  it('no leak: the name and the values in different sentences, or values missing', () => {
    const clean = [
      'The right tool for this step is get_weather. Its description says: weather of a city.',
      'For city, the question gives Paris. The unit can stay at celsius.',
      'get_weather needs a city; I still need to find it.',
      'The previous call failed: missing required argument city. I will retry.',
    ].join('\n\n');
    expect(findLeak(clean, [CALL])).toBeNull();
  });

  it('the earliest of several hits wins', () => {
    const text = 'First I will call get_weather with Paris. Later: {"name": "x"}';
    expect(findLeak(text, [CALL])?.start).toBe(0);
  });
});

describe('findSentenceStart', () => {
  it('stops at ". " and at line breaks, skipping leading spaces', () => {
    const text = 'One. Two three.\n  Four';
    expect(findSentenceStart(text, text.indexOf('three'))).toBe(5);
    expect(findSentenceStart(text, text.indexOf('Four'))).toBe(text.indexOf('Four'));
    expect(findSentenceStart('a 3.5 b', 6)).toBe(0); // "3.5" has no space after the dot
  });
});

describe('buildChunksWithLeak', () => {
  it('splits the chunk holding the leak; the tail is a preview and all later chunks are hidden', () => {
    const reasoning = 'Task.\n\nCity is Paris. So the tool call would be: X\n\nAfter.';
    const p2 = reasoning.indexOf('City');
    const p3 = reasoning.indexOf('After');
    const spans = [
      { type: 'task_restate' as const, start: 0, end: p2 },
      { type: 'required_arg_grounding' as const, start: p2, end: p3 },
      { type: 'decision_summary' as const, start: p3, end: reasoning.length },
    ];
    const leak = findLeak(reasoning, []);
    const chunks = buildChunksWithLeak(reasoning, spans, leak!.start);
    expect(chunks.map((c) => [c.id, c.type, c.keepForPrefix])).toEqual([
      ['C1', 'task_restate', true],
      ['C2', 'required_arg_grounding', true],
      ['C3', 'explicit_call_preview', false],
      ['C4', 'decision_summary', false],
    ]);
    expect(chunks[1].text).toBe('City is Paris. ');
    expect(chunks[2].text).toBe('So the tool call would be: X\n\n');
    expect(chunks.map((c) => c.text).join('')).toBe(reasoning);
  });

  it('without a leak the spans are kept as they are', () => {
    const chunks = buildChunksWithLeak(
      'ab',
      [
        { type: 'other', start: 0, end: 1 },
        { type: 'other', start: 1, end: 2 },
      ],
      null,
    );
    expect(chunks.map((c) => [c.text, c.keepForPrefix])).toEqual([
      ['a', true],
      ['b', true],
    ]);
  });
});
