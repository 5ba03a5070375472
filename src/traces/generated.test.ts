/**
 * Integration: expert traces for tasks from the built-in generator (src/envs), their
 * stubs run by the in-process sandbox executor.
 */
import { describe, expect, it } from 'vitest';
import { generateTasks } from '../envs/generator';
import { InProcessExecutor } from '../envs/sandbox';
import { TASK_CATEGORIES } from '../envs/types';
import { exportTracesJsonl, parseTracesJsonl } from './jsonl';
import { findLeak } from './leakage';
import { describePrefixCountsError } from './prefixLevels';
import { segmentTurnByRules } from './segment';
import { bindTaskRunner, buildVerifiedTrace, runTeacher } from './teacher';
import type { ExpertTrace } from './types';
import { verifyTrace } from './verify';

const executor = new InProcessExecutor();

describe('teacher on generated tasks', () => {
  it('every trace of 80 short and 24 long tasks (all categories, both splits) verifies and is self-consistent', async () => {
    const tasks = [
      ...generateTasks({ seed: 3, n: 40, split: 'train' }),
      ...generateTasks({ seed: 4, n: 40, split: 'test' }),
      ...generateTasks({ seed: 5, n: 24, length: 'long' }),
    ];
    expect(new Set(tasks.map((t) => t.category))).toEqual(new Set(TASK_CATEGORIES));
    const traces: ExpertTrace[] = [];
    for (const [i, task] of tasks.entries()) {
      const { trace, verdict } = await buildVerifiedTrace(task, bindTaskRunner(task, executor), {
        seed: i,
        failedCallProb: 0.3,
        previewProb: 0.4,
      });
      expect(verdict.rejections, `${task.id}: ${JSON.stringify(verdict.rejections)}`).toEqual([]);
      // Every gold call was issued with its gold arguments (a successful call per gold call).
      const issued = trace.turns.flatMap((t) => t.calls.map((c) => JSON.stringify(c)));
      for (const gold of task.goldCalls ?? []) expect(issued).toContain(JSON.stringify(gold));
      for (const turn of trace.turns) {
        expect(describePrefixCountsError(turn.prefixChunkCounts, turn.chunks)).toBeNull();
        const firstPreview = turn.chunks.findIndex((c) => c.type === 'explicit_call_preview');
        const previewStart =
          firstPreview === -1 ? null : turn.chunks.slice(0, firstPreview).reduce((n, c) => n + c.text.length, 0);
        expect(findLeak(turn.reasoning, turn.calls)?.start ?? null, turn.reasoning).toBe(previewStart);
        const byRules = segmentTurnByRules({
          reasoning: turn.reasoning,
          calls: turn.calls,
          observations: turn.observations,
        });
        expect('turn' in byRules && byRules.turn.chunks, turn.reasoning).toEqual(turn.chunks);
      }
      traces.push(trace);
    }
    const parsed = parseTracesJsonl(exportTracesJsonl(traces));
    expect(parsed.errors).toEqual([]);
    expect(parsed.traces).toEqual(traces);
  });

  it('a tool that returns a wrong entity breaks the multi-hop chain and the trace is filtered out', async () => {
    const task = generateTasks({ seed: 6, n: 8, categories: ['multi_hop'] })[0];
    const gold = task.goldCalls!;
    const firstAnswer = task.unsolvedSet[gold[0].name][0];
    const honest = bindTaskRunner(task, executor);
    let calls = 0;
    const broken = async (call: Parameters<typeof honest>[0]) => {
      const output = await honest(call);
      return calls++ === 0 ? output.split(firstAnswer).join('Nowhere Zzyx') : output;
    };
    const trace = await runTeacher(task, broken, { seed: 1, failedCallProb: 0, previewProb: 0 });
    const secondCall = trace.turns[1].calls[0];
    expect(Object.values(secondCall.arguments)).toContain('Nowhere Zzyx');
    expect(verifyTrace(trace, task).rejections.map((r) => r.code)).toContain('answer_not_verified');
  });

  it('a calculator reads its numbers from the branch observations: a broken branch shows up', async () => {
    const task = generateTasks({ seed: 6, n: 12, categories: ['parallel_single_hop'] }).find(
      (t) => t.goldCalls!.at(-1)!.name === 'calculator',
    );
    expect(task, 'no calculator task among the first 12').toBeDefined();
    const gold = task!.goldCalls!;
    const firstAnswer = task!.unsolvedSet[gold[0].name][0];
    const honest = bindTaskRunner(task!, executor);
    const broken = async (call: Parameters<typeof honest>[0]) => {
      const output = await honest(call);
      return JSON.stringify(call) === JSON.stringify(gold[0]) ? output.split(firstAnswer).join('777') : output;
    };
    const clean = await runTeacher(task!, honest, { seed: 1, failedCallProb: 0 });
    expect(clean.turns.at(-2)!.calls.at(-1)).toEqual(gold.at(-1));
    const trace = await runTeacher(task!, broken, { seed: 1, failedCallProb: 0 });
    const calculatorCall = trace.turns.flatMap((t) => t.calls).find((c) => c.name === 'calculator')!;
    expect(calculatorCall.arguments.numbers).toContain(777);
    expect(verifyTrace(trace, task!).rejections.map((r) => r.code)).toContain('answer_not_verified');
  });
});
