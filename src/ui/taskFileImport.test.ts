import { describe, expect, it } from 'vitest';
import { describeBinaryContent, readFtrlFile, summarizeFtrlFile } from './taskFileImport';

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

describe('readFtrlFile', () => {
  it('refuses a binary file with one line saying it is not a JSONL text file, instead of a row per garbled line', async () => {
    // A gzip header (1f 8b 08 00 …) then bytes with newlines in them, as a .jsonl.gz picked by mistake.
    const gz = new Uint8Array([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x0a, 0xab, 0x0a, 0xcd]);
    await expect(readFtrlFile(new File([gz], 'tasks.jsonl.gz'))).rejects.toThrow(
      'tasks.jsonl.gz is not a JSONL text file (it holds a NUL byte at byte 3): expected one FTRL task (JSON object) per line',
    );
    // Latin-1 bytes without NUL are not UTF-8 either.
    expect(describeBinaryContent(new Uint8Array([0x7b, 0xe9, 0x7d]))).toBe('bytes that are not UTF-8 text');
  });

  it('reads a UTF-8 JSONL file (non-ASCII text included) as before', async () => {
    const text = line(1, 'single_hop', { f: ['é'] });
    const { summary } = await readFtrlFile(new File([text], 'ok.jsonl'));
    expect(summary.tasks.length).toBe(1);
    expect(describeBinaryContent(new TextEncoder().encode(text))).toBeNull();
  });
});
