import { describe, expect, it } from 'vitest';
import { findLeak } from './leakage';
import { segmentTurnByRules } from './segment';
import { buildVerifiedTrace, extractObservationValue, isAnswerGrounded, runTeacher } from './teacher';
import {
  createFixtureExecutor,
  FIXTURE_TASKS,
  MULTI_HOP_TASK,
  PARALLEL_MULTI_TASK,
  PARALLEL_TASK,
  SINGLE_HOP_TASK,
} from './testFixtures';
import type { ExpertTrace } from './types';
import { verifyTrace } from './verify';

const PLAIN = { failedCallProb: 0, optionalStepProb: 0, previewProb: 0 };

const typesOf = (trace: ExpertTrace) => trace.turns.map((t) => t.chunks.map((c) => c.type));

describe('runTeacher: structure with every optional step off (hand-derived)', () => {
  it('single hop: restate, select, ground; then the final-answer turn', async () => {
    const trace = await runTeacher(SINGLE_HOP_TASK, createFixtureExecutor(), { seed: 1, ...PLAIN });
    expect(typesOf(trace)).toEqual([
      ['task_restate', 'tool_selection', 'required_arg_grounding'],
      ['final_answer_grounding'],
    ]);
    expect(trace.turns[0].calls).toEqual([{ name: 'get_capital', arguments: { country: 'Nordia' } }]);
    expect(trace.turns[0].observations).toEqual(['Varno']);
    // 3 safe chunks → [0, 1, 2, 3, 3]; the final turn has 1 → [0, 1, 1, 1, 1].
    expect(trace.turns.map((t) => t.prefixChunkCounts)).toEqual([
      [0, 1, 2, 3, 3],
      [0, 1, 1, 1, 1],
    ]);
    expect(trace.finalAnswer).toBe('Varno');
    expect(trace.turns[0].reasoning).toBe(trace.turns[0].chunks.map((c) => c.text).join(''));
    expect(trace).toMatchObject({ taskId: 'fx-single', source: 'teacher', verified: false });
  });

  it('multi hop: the second call takes its city from the first observation', async () => {
    const executor = createFixtureExecutor();
    const trace = await runTeacher(MULTI_HOP_TASK, executor, { seed: 1, ...PLAIN });
    expect(typesOf(trace)).toEqual([
      ['task_restate', 'tool_selection', 'required_arg_grounding'],
      ['tool_selection', 'required_arg_grounding'],
      ['final_answer_grounding'],
    ]);
    expect(executor.log).toEqual([
      { name: 'get_birthplace', arguments: { person: 'Ada Brel' } },
      { name: 'get_population', arguments: { city: 'Varno' } },
    ]);
    expect(trace.turns[1].chunks[1].text).toMatch(
      /city (should be|is) Varno, (from the previous observation|read from the last tool response)|For city, the earlier result gives Varno/,
    );
    // 2 safe chunks → [0, ceil(2/4)=1, ceil(4/4)=1, ceil(6/4)=2, 2].
    expect(trace.turns[1].prefixChunkCounts).toEqual([0, 1, 1, 2, 2]);
    expect(trace.finalAnswer).toBe('120500');
  });

  it('a broken first tool shows up: the wrong city flows into the next call and verification fails', async () => {
    const executor = createFixtureExecutor({ get_birthplace: () => JSON.stringify({ birthplace: 'Qarth' }) });
    const trace = await runTeacher(MULTI_HOP_TASK, executor, { seed: 1, ...PLAIN });
    expect(trace.turns[1].calls[0]).toEqual({ name: 'get_population', arguments: { city: 'Qarth' } });
    expect(trace.turns[1].observations[0]).toBe('Error: no city Qarth');
    expect(trace.finalAnswer).toBe('Error: no city Qarth');
    expect(verifyTrace(trace, MULTI_HOP_TASK).rejections.map((r) => r.code)).toEqual(['answer_not_verified']);
  });

  it('parallel tasks put independent calls in one turn', async () => {
    const single = await runTeacher(PARALLEL_TASK, createFixtureExecutor(), { seed: 2, ...PLAIN });
    expect(single.turns.map((t) => t.calls.length)).toEqual([2, 0]);
    expect(single.turns[0].observations).toEqual(['Varno', 'Lisk']);
    expect(single.finalAnswer).toBe('Varno, Lisk');
    // Birthplaces in parallel, then both populations (each needs one birthplace).
    const multi = await runTeacher(PARALLEL_MULTI_TASK, createFixtureExecutor(), { seed: 2, ...PLAIN });
    expect(multi.turns.map((t) => t.calls.map((c) => c.arguments))).toEqual([
      [{ person: 'Ada Brel' }, { person: 'Tom Vik' }],
      [{ city: 'Varno' }, { city: 'Lisk' }],
      [],
    ]);
  });

  it('parallel grouping follows dependency levels, not gold order', async () => {
    // Interleaved gold order: birthplace(Ada), population(Varno), birthplace(Tom), population(Lisk).
    // Levels 0, 1, 0, 1 → turns [birthplace ×2], [population ×2].
    const gold = PARALLEL_MULTI_TASK.goldCalls!;
    const task = { ...PARALLEL_MULTI_TASK, goldCalls: [gold[0], gold[2], gold[1], gold[3]] };
    const trace = await runTeacher(task, createFixtureExecutor(), { seed: 2, ...PLAIN });
    expect(trace.turns.map((t) => t.calls.map((c) => c.name))).toEqual([
      ['get_birthplace', 'get_birthplace'],
      ['get_population', 'get_population'],
      [],
    ]);
  });

  it('a deliberately failed call is followed by reflection, a fallback plan and a correct retry', async () => {
    const executor = createFixtureExecutor();
    const trace = await runTeacher(SINGLE_HOP_TASK, executor, { seed: 5, ...PLAIN, failedCallProb: 1 });
    expect(trace.turns).toHaveLength(3);
    const failed = trace.turns[0].calls[0];
    expect(failed.name).toBe('get_capital');
    expect(failed.arguments).not.toHaveProperty('country');
    expect(trace.turns[0].observations[0]).toMatch(
      /^Error: (missing required argument 'country'|unexpected argument 'country_name')$/,
    );
    expect(typesOf(trace)[1]).toEqual(['failure_reflection', 'fallback_plan', 'required_arg_grounding']);
    expect(trace.turns[1].calls).toEqual(SINGLE_HOP_TASK.goldCalls);
    expect(trace.finalAnswer).toBe('Varno');
    expect(verifyTrace(trace, SINGLE_HOP_TASK).isValid).toBe(true);
  });

  it('failures are skipped when the turn budget has no room for a retry', async () => {
    // maxTurns 4: hop 1 may fail (0 done + 2 groups + retry + final = 4 ≤ 4) → 2 turns;
    // hop 2 may not (2 + 1 + retry + final = 5 > 4) → 1 turn; then the final turn: 4.
    const trace = await runTeacher(MULTI_HOP_TASK, createFixtureExecutor(), {
      seed: 3,
      ...PLAIN,
      failedCallProb: 1,
      maxTurns: 4,
    });
    expect(trace.turns).toHaveLength(4);
    expect(typesOf(trace)[1][0]).toBe('failure_reflection');
    expect(typesOf(trace)[2][0]).toBe('tool_selection');
    expect(verifyTrace(trace, MULTI_HOP_TASK).isValid).toBe(true);
  });

  it('with previewProb 1 every call turn ends in a hidden explicit_call_preview', async () => {
    const trace = await runTeacher(MULTI_HOP_TASK, createFixtureExecutor(), { seed: 4, ...PLAIN, previewProb: 1 });
    for (const turn of trace.turns.slice(0, -1)) {
      const last = turn.chunks.at(-1)!;
      expect(last.type).toBe('explicit_call_preview');
      expect(last.keepForPrefix).toBe(false);
      expect(turn.prefixChunkCounts[4]).toBe(turn.chunks.length - 1);
    }
  });

  it('an executor that throws yields an error observation, not a crash', async () => {
    const trace = await runTeacher(
      SINGLE_HOP_TASK,
      async () => {
        throw new Error('sandbox down');
      },
      { seed: 1, ...PLAIN },
    );
    expect(trace.turns[0].observations).toEqual(['Error: sandbox down']);
  });

  it('a task without gold calls is a clear error', async () => {
    await expect(
      runTeacher({ ...SINGLE_HOP_TASK, goldCalls: [] }, createFixtureExecutor(), { seed: 1 }),
    ).rejects.toThrow(/fx-single has no goldCalls/);
  });
});

describe('runTeacher: determinism and variety', () => {
  it('the same seed gives the same trace; different seeds give different traces', async () => {
    for (const task of FIXTURE_TASKS) {
      const a = await runTeacher(task, createFixtureExecutor(), { seed: 11 });
      const b = await runTeacher(task, createFixtureExecutor(), { seed: 11 });
      expect(b).toEqual(a);
    }
    const texts = new Set<string>();
    for (let seed = 0; seed < 10; seed++) {
      const trace = await runTeacher(MULTI_HOP_TASK, createFixtureExecutor(), { seed });
      texts.add(JSON.stringify(trace.turns.map((t) => t.reasoning)));
    }
    expect(texts.size).toBeGreaterThanOrEqual(8);
  });

  it('across 40 seeds: all phrasings of the opening, optional steps both taken and skipped, failures and previews', async () => {
    const openings = new Set<string>();
    const turn0Lengths = new Set<number>();
    let failures = 0;
    let previews = 0;
    for (let seed = 0; seed < 40; seed++) {
      const trace = await runTeacher(MULTI_HOP_TASK, createFixtureExecutor(), {
        seed,
        failedCallProb: 0.2,
        previewProb: 0.3,
      });
      openings.add(trace.turns[0].chunks[0].text.slice(0, 12));
      turn0Lengths.add(trace.turns[0].chunks.length);
      failures += trace.turns.filter((t) => t.chunks[0]?.type === 'failure_reflection').length;
      previews += trace.turns.filter((t) => t.chunks.some((c) => c.type === 'explicit_call_preview')).length;
    }
    expect(openings.size).toBe(3); // three task_restate phrasings
    expect(turn0Lengths.size).toBeGreaterThanOrEqual(3);
    expect(failures).toBeGreaterThan(0);
    expect(previews).toBeGreaterThan(0);
  });
});

describe('teacher traces agree with the verifier, the leak detector and the segmentation rules', () => {
  it('over 4 tasks × 30 seeds', async () => {
    for (const task of FIXTURE_TASKS) {
      for (let seed = 0; seed < 30; seed++) {
        const { trace, verdict } = await buildVerifiedTrace(task, createFixtureExecutor(), {
          seed,
          failedCallProb: 0.3,
          previewProb: 0.5,
        });
        expect(verdict.rejections).toEqual([]);
        expect(trace.verified).toBe(true);
        for (const turn of trace.turns) {
          const firstPreview = turn.chunks.findIndex((c) => c.type === 'explicit_call_preview');
          const previewStart =
            firstPreview === -1 ? null : turn.chunks.slice(0, firstPreview).reduce((n, c) => n + c.text.length, 0);
          expect(findLeak(turn.reasoning, turn.calls)?.start ?? null).toBe(previewStart);
          const byRules = segmentTurnByRules({
            reasoning: turn.reasoning,
            calls: turn.calls,
            observations: turn.observations,
          });
          expect('turn' in byRules).toBe(true);
          if ('turn' in byRules) expect(byRules.turn.chunks).toEqual(turn.chunks);
        }
      }
    }
  });
});

describe('observation helpers', () => {
  it.each([
    ['Varno', 'Varno'],
    ['"Varno"', 'Varno'],
    ['120500', '120500'],
    ['{"birthplace": "Varno"}', 'Varno'],
    ['{"city": "Varno", "result": 3}', '3'],
    ['["x"]', 'x'],
    ['line one\nline two', 'line one'],
  ])('extractObservationValue(%j) = %j', (observation, value) => {
    expect(extractObservationValue(observation)).toBe(value);
  });

  it('skips fields that echo the call arguments and prefers the field named in the tool name', () => {
    const capital = { name: 'get_capital', arguments: { country: 'Kelfeti' } };
    expect(extractObservationValue('{"country": "Kelfeti", "capital": "Ildanville"}', capital)).toBe('Ildanville');
    const elevation = { name: 'get_elevation', arguments: { city: 'Zodoburg' } };
    expect(extractObservationValue('{"city": "Zodoburg", "elevation": 6509, "unit": "meters"}', elevation)).toBe(
      '6509',
    );
  });

  it('isAnswerGrounded needs every part of the answer in some observation', () => {
    expect(isAnswerGrounded('Varno, Lisk', ['Varno', 'Lisk'])).toBe(true);
    expect(isAnswerGrounded('Varno, Lisk', ['Varno'])).toBe(false);
    expect(isAnswerGrounded('', ['Varno'])).toBe(false);
  });
});
