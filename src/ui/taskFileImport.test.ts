import { describe, expect, it } from 'vitest';
import { summarizeFtrlFile } from './taskFileImport';

// Two hand-written FTRL-format lines (not benchmark data): one single_hop task with two
// expected answers, one parallel_multi_hop task with one; then a line that is not JSON.
const tool = (name: string) => ({
  type: 'function',
  function: {
    name,
    description: `${name} tool`,
    parameters: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] },
  },
});
const line = (id: number, category: string, unsolved: Record<string, string[]>) =>
  JSON.stringify({
    messages: [{ role: 'user', content: `Question: q${id}?` }],
    tools: Object.keys(unsolved).map(tool),
    codes: Object.fromEntries(Object.keys(unsolved).map((n) => [n, `def ${n}(x):\n    return x`])),
    unsolved_set: JSON.stringify(unsolved),
    answer: 'a',
    data_source: category,
  });

describe('summarizeFtrlFile', () => {
  it('counts tasks per category and sub-questions, and reports a bad line by number', () => {
    const text = [
      line(1, 'single_hop', { f: ['a', 'b'] }),
      line(2, 'parallel_multi_hop', { g: ['c'] }),
      '{not json',
    ].join('\n');
    const s = summarizeFtrlFile('mine.jsonl', text);
    expect(s.tasks.length).toBe(2);
    expect(s.byCategory).toEqual({ single_hop: 1, parallel_multi_hop: 1 });
    expect(s.nSubQuestions).toBe(3); // 2 + 1
    expect(s.errors.length).toBe(1);
    expect(s.errors[0]).toMatch(/^line 3/);
  });
});
