import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TASK_CATEGORIES } from '../types';
import { extractFtrlQuestion, formatFtrlLineError, parseFtrlJsonl, renderFtrlUserMessage } from './importFtrl';

const dataDir = process.env.PACT_DATA_DIR ?? '../shared/data';
const testFile = path.resolve(dataDir, 'ftrl/test.jsonl');
const hasData = existsSync(testFile);
if (!hasData)
  console.warn(
    `[importFtrl.test] FTRL data not found at ${testFile}: the test.jsonl checks are skipped (set PACT_DATA_DIR)`,
  );

const tool = (name: string, props: Record<string, unknown> = { q: { type: 'string' } }) => ({
  type: 'function',
  function: {
    name,
    description: `${name} tool`,
    parameters: { type: 'object', properties: props, required: Object.keys(props) },
  },
});

/** A well-formed FTRL record: fields as JSON strings, the way FTRL's files store them. */
function makeRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    messages: [{ role: 'user', content: renderFtrlUserMessage('Who founded Ätna Corp?') }],
    tools: JSON.stringify([tool('founder_finder'), tool('noise_tool')]),
    codes: JSON.stringify({
      founder_finder: 'def founder_finder(q):\n    return "Zoë"\n',
      noise_tool: 'def noise_tool(q):\n    return q\n',
    }),
    unsolved_set: JSON.stringify({ founder_finder: ['Zoë'] }),
    solve_rate: 0.5,
    data_source: 'self/single_hop',
    split: 'test',
    answer: 'Zoë',
    ...overrides,
  };
}

describe('parseFtrlJsonl on hand-made lines', () => {
  it('imports a good line: question, tools, Python implementations, unsolved set, category, id', () => {
    const { tasks, errors } = parseFtrlJsonl(JSON.stringify(makeRecord()) + '\n');
    expect(errors).toEqual([]);
    expect(tasks).toHaveLength(1);
    const t = tasks[0];
    expect(t.id).toBe('ftrl-0');
    expect(t.question).toBe('Who founded Ätna Corp?');
    expect(t.tools.map((x) => x.function.name)).toEqual(['founder_finder', 'noise_tool']);
    expect(t.tools[0].function.parameters.required).toEqual(['q']);
    expect(t.implementations.founder_finder).toEqual({
      language: 'python',
      source: 'def founder_finder(q):\n    return "Zoë"\n',
    });
    expect(t.unsolvedSet).toEqual({ founder_finder: ['Zoë'] });
    expect(t.answer).toBe('Zoë');
    expect(t.category).toBe('single_hop');
    expect(t.source).toBe('ftrl:self/single_hop');
    expect(t.goldCalls).toBeUndefined();
  });

  it('accepts tools, codes and unsolved_set as objects as well as JSON strings', () => {
    const rec = makeRecord({
      tools: [tool('a')],
      codes: { a: 'def a(q):\n    return 1\n' },
      unsolved_set: { a: ['1', 2] },
      data_source: 'self/parallel_multi_hop',
      id: 'custom-7',
    });
    const { tasks, errors } = parseFtrlJsonl(JSON.stringify(rec));
    expect(errors).toEqual([]);
    expect(tasks[0].id).toBe('custom-7');
    expect(tasks[0].unsolvedSet).toEqual({ a: ['1', '2'] });
    expect(tasks[0].category).toBe('parallel_multi_hop');
  });

  it('reads assistant tool_calls in messages as gold calls', () => {
    const rec = makeRecord({
      messages: [
        { role: 'user', content: 'Question: q?' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ type: 'function', function: { name: 'founder_finder', arguments: '{"q": "Ätna"}' } }],
        },
      ],
    });
    const { tasks, errors } = parseFtrlJsonl(JSON.stringify(rec));
    expect(errors).toEqual([]);
    expect(tasks[0].goldCalls).toEqual([{ name: 'founder_finder', arguments: { q: 'Ätna' } }]);
  });

  it('reports each bad line with its 1-based number and field, and keeps the good ones', () => {
    const lines = [
      JSON.stringify(makeRecord()), // line 1: good
      '{"messages": [', // line 2: not JSON
      '', // line 3: blank, skipped
      JSON.stringify(makeRecord({ codes: JSON.stringify({ founder_finder: 'def founder_finder(q): return 1' }) })), // line 4: noise_tool has no code
      JSON.stringify(makeRecord({ unsolved_set: JSON.stringify({ ghost_tool: ['x'] }) })), // line 5
      JSON.stringify(makeRecord({ data_source: 'self/triple_hop' })), // line 6
      JSON.stringify(makeRecord({ tools: '[{"type": "function", "function": {"description": "no name"}}]' })), // line 7
      JSON.stringify(makeRecord({ unsolved_set: '{not json' })), // line 8
      JSON.stringify(makeRecord({ messages: [{ role: 'system', content: 'x' }] })), // line 9
      JSON.stringify(makeRecord({ answer: 'Zoë' })), // line 10: good
    ];
    const { tasks, errors } = parseFtrlJsonl(lines.join('\r\n'));
    expect(tasks.map((t) => t.id)).toEqual(['ftrl-0', 'ftrl-9']);
    expect(errors.map((e) => [e.line, e.field])).toEqual([
      [2, '(line)'],
      [4, 'codes.noise_tool'],
      [5, 'unsolved_set.ghost_tool'],
      [6, 'data_source'],
      [7, 'tools[0].function.name'],
      [8, 'unsolved_set'],
      [9, 'messages'],
    ]);
    expect(formatFtrlLineError(errors[2])).toBe('line 5, field unsolved_set.ghost_tool: names no tool in tools');
    expect(errors[0].message).toMatch(/not valid JSON/);
  });

  it('takes the text after the last "Question:" marker', () => {
    expect(extractFtrlQuestion('Intro.\nQuestion: What is X?')).toBe('What is X?');
    expect(extractFtrlQuestion('  no marker here ')).toBe('no marker here');
  });
});

describe.skipIf(!hasData)('parseFtrlJsonl on ../shared/data/ftrl/test.jsonl', () => {
  it('imports every line, with the category counts the raw data_source field gives', () => {
    const text = readFileSync(testFile, 'utf8');
    // Independent reference: count lines and data_source values straight from the JSON.
    const raw = text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { data_source: string; unsolved_set: string });
    const expectedCounts = Object.fromEntries(
      TASK_CATEGORIES.map((c) => [c, raw.filter((r) => r.data_source === `self/${c}`).length]),
    );
    const expectedAnswers = raw.reduce(
      (n, r) =>
        n + Object.values(JSON.parse(r.unsolved_set) as Record<string, string[]>).reduce((m, a) => m + a.length, 0),
      0,
    );

    const { tasks, errors, warnings } = parseFtrlJsonl(text);
    expect(errors).toEqual([]);
    expect(tasks).toHaveLength(raw.length);
    expect(tasks).toHaveLength(200); // FTRL's test.jsonl has 200 tasks
    const counts = Object.fromEntries(TASK_CATEGORIES.map((c) => [c, tasks.filter((t) => t.category === c).length]));
    expect(counts).toEqual(expectedCounts);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(200);
    const answers = tasks.reduce((n, t) => n + Object.values(t.unsolvedSet).reduce((m, a) => m + a.length, 0), 0);
    expect(answers).toBe(expectedAnswers);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(200);
    for (const t of tasks) {
      expect(t.question.length).toBeGreaterThan(0);
      for (const tl of t.tools) expect(t.implementations[tl.function.name]?.language).toBe('python');
    }
    // Remarks of the project's task schema on FTRL's own data are warnings, not errors.
    console.log(
      `[importFtrl.test] ${tasks.length} tasks, categories ${JSON.stringify(counts)}, ${answers} expected answers, ${warnings.length} schema warnings`,
    );
    for (const w of warnings) console.log(`  warning: ${formatFtrlLineError(w)}`);
  });
});
