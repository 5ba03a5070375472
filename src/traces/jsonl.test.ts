import { describe, expect, it } from 'vitest';
import { exportTracesJsonl, importTracesJsonl, parseTracesJsonl } from './jsonl';
import { runTeacher } from './teacher';
import { createFixtureExecutor, FIXTURE_TASKS } from './testFixtures';
import type { ExpertTrace } from './types';

async function makeTraces(): Promise<ExpertTrace[]> {
  const traces: ExpertTrace[] = [];
  for (const [i, task] of FIXTURE_TASKS.entries())
    traces.push(await runTeacher(task, createFixtureExecutor(), { seed: i, failedCallProb: 0.5, previewProb: 0.5 }));
  const { finalAnswer: _dropped, ...withoutAnswer } = traces[0];
  traces.push({ ...withoutAnswer, taskId: 'no-answer', verified: true });
  return traces;
}

describe('JSONL export/import', () => {
  it('round-trips traces exactly, one per line', async () => {
    const traces = await makeTraces();
    const text = exportTracesJsonl(traces);
    expect(text.split('\n')).toHaveLength(traces.length + 1); // trailing newline
    const parsed = parseTracesJsonl(text);
    expect(parsed.errors).toEqual([]);
    expect(parsed.unlabeled).toEqual([]);
    expect(parsed.traces).toEqual(traces);
  });

  it('reports bad lines by line number and field path and skips them', async () => {
    const [good] = await makeTraces();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the edits reach into nested fields of a parsed trace
    const line = (edit: (t: Record<string, any>) => void) => {
      const copy = JSON.parse(JSON.stringify(good));
      edit(copy);
      return JSON.stringify(copy);
    };
    const text = [
      JSON.stringify(good), // 1: fine
      '{"taskId": "x", "turns": [', // 2: bad JSON
      line((t) => (t.turns[0].chunks[1].type = 'musing')), // 3: unknown chunk type
      line((t) => delete t.taskId), // 4: missing field
      line((t) => t.turns[0].observations.push('extra')), // 5: count mismatch
      '', // 6: blank lines are skipped silently
      line((t) => (t.turns[0].prefixChunkCounts = [0, 1, 1, 1, 99])), // 7: levels past the chunks
      line((t) => (t.turns[1].reasoning = 'changed')), // 8: chunks no longer cover the reasoning
      line((t) => delete t.turns[1].chunks), // 9: half labeled (turn 1 loses both labels)
      '[1, 2]', // 10: not an object
    ].join('\n');
    const parsed = parseTracesJsonl(text);
    expect(parsed.traces).toHaveLength(1);
    expect(parsed.errors.map((e) => [e.line, e.path])).toEqual([
      [2, ''],
      [3, 'turns.0.chunks.1.type'],
      [4, 'taskId'],
      [5, 'turns.0.observations'],
      [7, 'turns.0.prefixChunkCounts'],
      [8, 'turns.1.chunks'],
      [9, 'turns.1.chunks'],
      [10, ''],
    ]);
    expect(parsed.errors[0].message).toMatch(/^invalid JSON/);
    expect(parsed.errors[4].message).toMatch(/passes the \d+ safe chunk/);
  });

  it('imports unlabeled traces and segments them (rules, then the fallback)', async () => {
    const unlabeled = {
      taskId: 'imported-1',
      turns: [
        {
          reasoning:
            '<think>The question asks: what is the capital of Nordia?\n\nI should use get_capital here.\n\nSo the tool call would be: {"name": "get_capital", "arguments": {"country": "Nordia"}}</think>',
          calls: [{ name: 'get_capital', arguments: { country: 'Nordia' } }],
          observations: ['Varno'],
        },
        { reasoning: 'Hmm. Varno it is.', calls: [], observations: [] },
      ],
      finalAnswer: 'Varno',
    };
    const result = await importTracesJsonl(`${JSON.stringify(unlabeled)}\n`);
    expect(result.errors).toEqual([]);
    expect(result.traces).toHaveLength(1);
    const trace = result.traces[0];
    expect(trace).toMatchObject({ taskId: 'imported-1', source: 'imported', verified: false, finalAnswer: 'Varno' });
    expect(trace.turns[0].chunks.map((c) => c.type)).toEqual([
      'task_restate',
      'tool_selection',
      'explicit_call_preview',
    ]);
    expect(trace.turns[0].reasoning.startsWith('The question asks')).toBe(true); // <think> removed
    expect(result.segmentation[0].reports.map((r) => r.method)).toEqual(['rules', 'fallback']);
    expect(trace.turns[1].chunks.map((c) => c.type)).toEqual(['other']);
  });
});
