import { describe, expect, it } from 'vitest';
import { InProcessExecutor } from '../envs/sandbox';
import { revealPrefix } from '../traces/prefixLevels';
import type { ReasoningChunk, TraceTurn } from '../traces/types';
import {
  EXAMPLE_TASK_COUNT,
  describeTaskOption,
  parseSeedText,
  summarizeTraceAtLevel,
  viewTurnAtLevel,
} from './prefixView';
import { buildExampleTrace, generateExampleTasks, listFailedObservations } from './traceExamples';

function chunk(id: string, type: ReasoningChunk['type'], text: string, keepForPrefix = true): ReasoningChunk {
  return { id, type, text, keepForPrefix };
}

const chunks = [
  chunk('C1', 'task_restate', 'Find the capital.\n\n'),
  chunk('C2', 'tool_selection', 'Use get_capital.\n\n'),
  chunk('C3', 'required_arg_grounding', 'country is Nordia.\n\n'),
  chunk('C4', 'explicit_call_preview', 'Call get_capital now.\n\n', false),
  chunk('C5', 'decision_summary', 'Then read the result.', false),
];
const TURN: TraceTurn = {
  reasoning: chunks.map((c) => c.text).join(''),
  chunks,
  calls: [{ name: 'get_capital', arguments: { country: 'Nordia' } }],
  observations: ['Varno'],
  prefixChunkCounts: [0, 1, 2, 3, 3],
};

describe('viewTurnAtLevel', () => {
  it('L2 reveals the first 2 chunks, exactly revealPrefix, and marks the leak and what follows it', () => {
    const view = viewTurnAtLevel(TURN, 0, 2);
    expect(view.revealedCount).toBe(2);
    expect(view.safeCount).toBe(3);
    expect(view.revealedText).toBe('Find the capital.\n\nUse get_capital.'); // trailing separator trimmed
    expect(view.revealedText).toBe(revealPrefix(TURN, 2));
    expect(view.chunks.map((c) => c.status)).toEqual(['revealed', 'revealed', 'hidden-at-level', 'leak', 'after-leak']);
    expect(view.chunks[3].statusLabel).toBe('leak: hidden from every level');
    expect(view.chunks[2].statusLabel).toBe('hidden at L2');
    expect(view.chunks[2].typeLabel).toBe('required arg grounding');
  });

  it('L0 reveals nothing; L4 stops before the leak', () => {
    expect(viewTurnAtLevel(TURN, 0, 0).chunks.filter((c) => c.status === 'revealed')).toEqual([]);
    expect(viewTurnAtLevel(TURN, 0, 0).revealedText).toBe('');
    const l4 = viewTurnAtLevel(TURN, 0, 4);
    expect(l4.chunks.map((c) => c.status)).toEqual(['revealed', 'revealed', 'revealed', 'leak', 'after-leak']);
  });

  it('refuses counts that would reveal the leak', () => {
    expect(() => viewTurnAtLevel({ ...TURN, prefixChunkCounts: [0, 1, 2, 3, 4] }, 0, 4)).toThrow(
      /passes the 3 safe chunk/,
    );
  });
});

describe('example tasks and traces', () => {
  it('12 tasks, three of each of the four categories, same seed → same tasks', () => {
    const tasks = generateExampleTasks(1);
    expect(tasks).toHaveLength(EXAMPLE_TASK_COUNT);
    const byCategory = new Map<string, number>();
    for (const t of tasks) byCategory.set(t.category, (byCategory.get(t.category) ?? 0) + 1);
    expect([...byCategory.values()]).toEqual([3, 3, 3, 3]);
    expect(generateExampleTasks(1).map((t) => t.question)).toEqual(tasks.map((t) => t.question));
    expect(describeTaskOption(tasks[0], 0)).toMatch(/^#0 single hop — /);
  });

  it("builds the teacher's verified trace; the per-level totals add up the turns' counts", async () => {
    const tasks = generateExampleTasks(1);
    const { trace, verdict } = await buildExampleTrace(tasks[1], 1, 1, new InProcessExecutor());
    expect(verdict.isValid).toBe(true);
    expect(trace.verified).toBe(true);
    const l2 = summarizeTraceAtLevel(trace, 2);
    expect(l2.revealed).toBe(trace.turns.reduce((a, t) => a + t.prefixChunkCounts[2], 0));
    expect(l2.safe).toBe(trace.turns.reduce((a, t) => a + t.prefixChunkCounts[4], 0));
    // one flag per observation, in the trace's shape
    expect(listFailedObservations(trace).map((row) => row.length)).toEqual(
      trace.turns.map((t) => t.observations.length),
    );
  });

  it('parses the seed box or says what is wrong', () => {
    expect(parseSeedText(' 7 ')).toEqual({ seed: 7 });
    expect(parseSeedText('-1')).toEqual({ error: 'Seed must be a whole number ≥ 0 (got "-1")' });
    expect(() => generateExampleTasks(-3)).toThrow(/seed must be a whole number/);
  });
});
