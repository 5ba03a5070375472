import { describe, expect, it } from 'vitest';
import {
  applyAnnotation,
  classifyParagraph,
  normalizeReasoning,
  segmentTrace,
  segmentTurn,
  splitParagraphs,
  type RawTurn,
} from './segment';

const CALL = { name: 'get_capital', arguments: { country: 'Nordia' } };

function makeRawTurn(paragraphs: string[]): RawTurn {
  return { reasoning: paragraphs.join('\n\n'), calls: [CALL], observations: ['Varno'] };
}

describe('normalizeReasoning and splitParagraphs', () => {
  it('removes role noise and think tags, unifies line breaks and blank lines', () => {
    const text = '<|im_start|>assistant\n<think>\r\nassistant: First.  \r\n\r\n\r\n\r\nSecond.\n</think><|im_end|>';
    // Tags removed, CRLF → LF, trailing spaces stripped, 3+ newlines → 2, trimmed.
    expect(normalizeReasoning(text)).toBe('First.\n\nSecond.');
  });

  it('paragraph spans cover the text exactly, separators included', () => {
    const text = 'A one.\n\nB two.\n \nC three.';
    const paragraphs = splitParagraphs(text);
    expect(paragraphs.map((p) => p.text)).toEqual(['A one.', 'B two.', 'C three.']);
    expect(paragraphs.map((p) => text.slice(p.start, p.end)).join('')).toBe(text);
  });
});

describe('deterministic rules', () => {
  it.each([
    ['The question asks: what is the capital of Nordia?', 'task_restate'],
    ['Looking at the available tools: get_capital and get_city_area.', 'tool_scan'],
    ['get_city_area is not relevant to this question.', 'irrelevant_tool_rejection'],
    ['I should use get_capital here.', 'tool_selection'],
    ['The required argument country comes from the question: Nordia.', 'required_arg_grounding'],
    ['The optional argument year can stay at its default.', 'optional_arg_analysis'],
    ['The previous call failed: missing country.', 'failure_reflection'],
    ['Instead, I will retry with the country included.', 'fallback_plan'],
    ['In summary, one lookup is enough.', 'decision_summary'],
    ['Based on the results, the answer is Varno.', 'final_answer_grounding'],
  ])('%j → %s', (text, type) => {
    expect(classifyParagraph(text)).toBe(type);
  });

  it('the earliest phrase decides: a question mentioning "failed" stays a restatement', () => {
    expect(classifyParagraph('The question asks: which merger failed in 1990?')).toBe('task_restate');
  });

  it('an unmatched paragraph gets null', () => {
    expect(classifyParagraph('Hmm, interesting.')).toBeNull();
  });

  it('a simple turn is segmented by rules, with the leak cut inside its paragraph', async () => {
    const raw = makeRawTurn([
      'The question asks: what is the capital of Nordia?',
      'I should use get_capital here.',
      'For country, the question gives Nordia. So the tool call would be: {"name": "get_capital", "arguments": {"country": "Nordia"}}',
    ]);
    const result = await segmentTurn(raw);
    expect(result.method).toBe('rules');
    expect(result.turn.chunks.map((c) => [c.type, c.keepForPrefix])).toEqual([
      ['task_restate', true],
      ['tool_selection', true],
      ['required_arg_grounding', true],
      ['explicit_call_preview', false],
    ]);
    expect(result.turn.chunks[2].text).toBe('For country, the question gives Nordia. ');
    // 3 safe chunks → [0, ceil(3/4)=1, ceil(6/4)=2, ceil(9/4)=3, 3].
    expect(result.turn.prefixChunkCounts).toEqual([0, 1, 2, 3, 3]);
  });
});

describe('fallback and the LLM annotator', () => {
  const hardTurn = makeRawTurn([
    'Hmm, where to start.',
    'I should use get_capital here.',
    'Okay, let me call get_capital with country Nordia now.',
  ]);

  it('without an annotator an uncovered turn falls back to one `other` chunk per paragraph, leak still cut', async () => {
    const result = await segmentTurn(hardTurn);
    expect(result.method).toBe('fallback');
    expect(result.fallbackReason).toBe('paragraph 0 matched no rule; no annotator');
    expect(result.turn.chunks.map((c) => [c.type, c.keepForPrefix])).toEqual([
      ['other', true],
      ['other', true],
      ['explicit_call_preview', false],
    ]);
    expect(result.turn.chunks[2].text).toBe('Okay, let me call get_capital with country Nordia now.');
    // 2 safe chunks → [0, ceil(2/4)=1, ceil(4/4)=1, ceil(6/4)=2, 2].
    expect(result.turn.prefixChunkCounts).toEqual([0, 1, 1, 2, 2]);
  });

  const validAnswer = {
    turn_pattern: 'initial_attempt',
    cleaning_actions: [],
    chunks: [
      {
        chunk_id: 'C1',
        chunk_type: 'task_restate',
        paragraph_ids: [0],
        split_paragraph_id: null,
        cut_before_text: null,
        summary: 's',
        keep_for_prefix: true,
        hint_strength: 'weak',
      },
      {
        chunk_id: 'C2',
        chunk_type: 'tool_selection',
        paragraph_ids: [1, 2],
        split_paragraph_id: null,
        cut_before_text: null,
        keep_for_prefix: true,
      },
      {
        chunk_id: 'C3',
        chunk_type: 'explicit_call_preview',
        paragraph_ids: [2],
        split_paragraph_id: 2,
        cut_before_text: 'let me call',
        keep_for_prefix: false,
      },
    ],
    dangerous_spans: [{ type: 'explicit_call_preview', paragraph_id: 2, cut_before_text: 'let me call' }],
    recommended_prefix_levels: [
      { level: 'L0', visible_chunks: [] },
      { level: 'L1', visible_chunks: [] },
      { level: 'L2', visible_chunks: ['C1'] },
      { level: 'L3', visible_chunks: ['C1'] },
      { level: 'L4', visible_chunks: ['C1', 'C2'] },
    ],
    quality_flags: ['clean_structure'],
  };

  it('a valid annotation (with an intra-paragraph split) is used as given', async () => {
    const result = await segmentTurn(hardTurn, { annotator: async () => JSON.stringify(validAnswer) });
    expect(result.method).toBe('llm');
    expect(result.turnPattern).toBe('initial_attempt');
    // The annotator cuts paragraph 2 before "let me call"; the leak detector's hit starts at
    // the sentence start "Okay, …", earlier, so C2 is cut again there: "Okay, " becomes a
    // preview chunk of its own and is hidden with everything after it.
    expect(result.turn.chunks.map((c) => [c.type, c.text, c.keepForPrefix])).toEqual([
      ['task_restate', 'Hmm, where to start.\n\n', true],
      ['tool_selection', 'I should use get_capital here.\n\n', true],
      ['explicit_call_preview', 'Okay, ', false],
      ['explicit_call_preview', 'let me call get_capital with country Nordia now.', false],
    ]);
    // The recommended levels (none | C1 | C1 | C1,C2) stay within the 2 safe chunks: used as
    // given, not the default rule's [0, 1, 1, 2, 2].
    expect(result.turn.prefixChunkCounts).toEqual([0, 0, 1, 1, 2]);
  });

  it('the leak detector cuts where the annotator did not', async () => {
    const answer = structuredClone(validAnswer);
    answer.chunks = [
      {
        chunk_id: 'C1',
        chunk_type: 'task_restate',
        paragraph_ids: [0],
        split_paragraph_id: null,
        cut_before_text: null,
        keep_for_prefix: true,
      },
      {
        chunk_id: 'C2',
        chunk_type: 'tool_selection',
        paragraph_ids: [1, 2],
        split_paragraph_id: null,
        cut_before_text: null,
        keep_for_prefix: true,
      },
    ] as typeof answer.chunks;
    answer.dangerous_spans = [];
    delete (answer as Partial<typeof answer>).recommended_prefix_levels;
    const result = await segmentTurn(hardTurn, { annotator: async () => answer });
    expect(result.method).toBe('llm');
    expect(result.turn.chunks.map((c) => [c.type, c.keepForPrefix])).toEqual([
      ['task_restate', true],
      ['tool_selection', true],
      ['explicit_call_preview', false],
    ]);
    expect(result.turn.chunks[2].text).toBe('Okay, let me call get_capital with country Nordia now.');
  });

  it('invalid recommended levels are replaced by the default rule, with a note', async () => {
    const answer = structuredClone(validAnswer);
    answer.recommended_prefix_levels[4].visible_chunks = ['C1', 'C2', 'C3'];
    const result = await segmentTurn(hardTurn, { annotator: async () => answer });
    expect(result.method).toBe('llm');
    expect(result.notes[0]).toMatch(/annotator levels ignored: .*passes the 2 safe chunk/);
    // Default rule for 2 safe chunks: [0, ceil(2/4)=1, ceil(4/4)=1, ceil(6/4)=2, 2].
    expect(result.turn.prefixChunkCounts).toEqual([0, 1, 1, 2, 2]);
  });

  it('recommended levels that are not left prefixes are replaced, with a note', async () => {
    const answer = structuredClone(validAnswer);
    answer.recommended_prefix_levels[2].visible_chunks = ['C2'];
    const result = await segmentTurn(hardTurn, { annotator: async () => answer });
    expect(result.notes[0]).toMatch(/L2 visible_chunks \["C2"\] is not a left prefix/);
    expect(result.turn.prefixChunkCounts).toEqual([0, 1, 1, 2, 2]);
  });

  const invalidCases: Array<[string, (a: typeof validAnswer) => unknown, RegExp]> = [
    ['bad JSON', () => '{"turn_pattern": "initial_attempt", chunks: [', /^annotator answer invalid: bad JSON/],
    [
      'unknown chunk type',
      (a) => ({ ...a, chunks: [{ ...a.chunks[0], chunk_type: 'musing' }, ...a.chunks.slice(1)] }),
      /schema: chunks\.0\.chunk_type/,
    ],
    ['unknown turn pattern', (a) => ({ ...a, turn_pattern: 'wandering' }), /schema: turn_pattern/],
    [
      'non-contiguous chunks',
      (a) => ({ ...a, chunks: [a.chunks[0], { ...a.chunks[1], paragraph_ids: [2] }] }),
      /not contiguous \(starts at paragraph 2, expected 1\)/,
    ],
    [
      'gap inside paragraph_ids',
      (a) => ({ ...a, chunks: [{ ...a.chunks[0], paragraph_ids: [0, 2] }] }),
      /paragraph_ids \[0,2\] are not contiguous/,
    ],
    [
      'chunks stop early',
      (a) => ({ ...a, chunks: [a.chunks[0]] }),
      /chunks end at paragraph 0 but the turn has 3 paragraphs/,
    ],
    [
      'cut text not found',
      (a) => ({ ...a, chunks: [a.chunks[0], a.chunks[1], { ...a.chunks[2], cut_before_text: 'So the call is' }] }),
      /cut_before_text "So the call is" not found in paragraph 2/,
    ],
    [
      'dangerous span text not found',
      (a) => ({ ...a, dangerous_spans: [{ type: 'explicit_call_preview', paragraph_id: 1, cut_before_text: 'nope' }] }),
      /dangerous_spans\.0: cut_before_text not found/,
    ],
    [
      'paragraph out of range',
      (a) => ({ ...a, chunks: [{ ...a.chunks[0], paragraph_ids: [0, 1, 2, 3] }] }),
      /paragraph id 3 out of range/,
    ],
  ];

  it.each(invalidCases)('invalid answer (%s) → fallback with the reason', async (_name, mutate, reason) => {
    const result = await segmentTurn(hardTurn, { annotator: async () => mutate(structuredClone(validAnswer)) });
    expect(result.method).toBe('fallback');
    expect(result.fallbackReason).toMatch(reason);
    expect(result.turn.chunks.map((c) => c.type)).toEqual(['other', 'other', 'explicit_call_preview']);
  });

  it('an annotator that throws → fallback with the error', async () => {
    const result = await segmentTurn(hardTurn, {
      annotator: async () => {
        throw new Error('rate limited');
      },
    });
    expect(result.fallbackReason).toBe('annotator threw: rate limited');
  });

  it('applyAnnotation reports an unparsable answer without throwing', () => {
    const result = applyAnnotation(hardTurn, 'not json');
    expect(result.ok).toBe(false);
  });

  it('segmentTrace passes turn indices to the annotator and marks the trace imported and unverified', async () => {
    const seen: number[] = [];
    const { trace, reports } = await segmentTrace(
      { taskId: 't1', turns: [hardTurn, hardTurn], finalAnswer: 'Varno' },
      {
        annotator: async (input) => {
          seen.push(input.turnIndex);
          expect(input.paragraphs.map((p) => p.id)).toEqual([0, 1, 2]);
          return validAnswer;
        },
      },
    );
    expect(seen).toEqual([0, 1]);
    expect(reports.map((r) => r.method)).toEqual(['llm', 'llm']);
    expect(trace).toMatchObject({ taskId: 't1', source: 'imported', verified: false, finalAnswer: 'Varno' });
  });
});
