import { describe, expect, it } from 'vitest';
import {
  computeProgress,
  reasoningPrefixLevel,
  REASONING_SCHEDULES,
  TOOL_CALL_SCHEDULES,
  toAlgorithmStep,
  tokenKeepFraction,
  toolCallScale,
} from './schedules';

describe('toAlgorithmStep', () => {
  it('numbers the step with 0-based index i as s = i + 1 (Algorithm 1)', () => {
    expect([0, 23].map(toAlgorithmStep)).toEqual([1, 24]);
    expect(() => toAlgorithmStep(-1)).toThrow(/stepIndex/);
  });
  it('with S = 24 the 24th step reaches λa_end = 0.2 and L0 (0-based s ended at 0.225 and L1)', () => {
    expect(toolCallScale(toAlgorithmStep(23), { horizon: 24 })).toBeCloseTo(0.2, 12);
    expect(reasoningPrefixLevel(toAlgorithmStep(23), { horizon: 24 })).toBe(0);
    expect(reasoningPrefixLevel(toAlgorithmStep(0), { horizon: 24 })).toBe(4);
  });
});

describe('toolCallScale (PACT Eq. tool-call-annealing)', () => {
  it('anneals 0.8 → 0.2 linearly and holds after the horizon', () => {
    expect(toolCallScale(0, { horizon: 10 })).toBe(0.8);
    // 0.8 − 0.6·(5/10) = 0.5
    expect(toolCallScale(5, { horizon: 10 })).toBeCloseTo(0.5, 12);
    expect(toolCallScale(10, { horizon: 10 })).toBeCloseTo(0.2, 12);
    expect(toolCallScale(20, { horizon: 10 })).toBeCloseTo(0.2, 12);
    // start 1, end 0, S = 4, s = 1: 1 − 1·(1/4) = 0.75
    expect(toolCallScale(1, { start: 1, end: 0, horizon: 4 })).toBe(0.75);
  });

  it('rejects a non-positive horizon or a negative step', () => {
    expect(() => toolCallScale(0, { horizon: 0 })).toThrow(/horizon must be a finite number > 0/);
    expect(() => toolCallScale(-1, { horizon: 5 })).toThrow(/step must be/);
  });
});

describe('reasoningPrefixLevel (segment-level L4 → L0)', () => {
  it('spends an equal share of steps 1…S on each level: L4 at step 1, L0 at step S', () => {
    // S = 10, 5 stages of 2 steps: floor(5·(s − 1)/9) = 0,0,1,1,2,2,3,3,4,4 → L4,L4,L3,L3,L2,L2,L1,L1,L0,L0
    const levels = Array.from({ length: 10 }, (_, i) => reasoningPrefixLevel(i + 1, { horizon: 10 }));
    expect(levels).toEqual([4, 4, 3, 3, 2, 2, 1, 1, 0, 0]);
    expect(reasoningPrefixLevel(0, { horizon: 10 })).toBe(4); // the start, before step 1
    expect(reasoningPrefixLevel(100, { horizon: 10 })).toBe(0);
  });

  it('works on the paper horizon S = 24: L4 at step 1, L0 at step 24', () => {
    // s = 5: floor(20/23) = 0 → L4; s = 6: floor(25/23) = 1 → L3; s = 19: floor(90/23) = 3 → L1; s = 20: floor(95/23) = 4 → L0
    expect([1, 5, 6, 19, 20, 24].map((s) => reasoningPrefixLevel(s, { horizon: 24 }))).toEqual([4, 4, 3, 1, 0, 0]);
  });

  it('reaches both ends for a horizon shorter than the 5 levels: S = 4 → L4, L3, L1, L0; S = 1 → L0', () => {
    // floor(5·(s − 1)/3) = 0, 1, 3, 5 → clamped to 4
    expect([1, 2, 3, 4].map((s) => reasoningPrefixLevel(s, { horizon: 4 }))).toEqual([4, 3, 1, 0]);
    expect([0, 1, 2].map((s) => reasoningPrefixLevel(s, { horizon: 1 }))).toEqual([4, 0, 0]);
  });

  it('walks a custom range: L2 → L1 over 10 steps switches at s = 6', () => {
    // 2 stages: floor(2·4/9) = 0 → L2; floor(2·5/9) = 1 → L1
    expect(reasoningPrefixLevel(5, { horizon: 10, startLevel: 2, endLevel: 1 })).toBe(2);
    expect(reasoningPrefixLevel(6, { horizon: 10, startLevel: 2, endLevel: 1 })).toBe(1);
    expect(() => reasoningPrefixLevel(0, { horizon: 10, startLevel: 1, endLevel: 3 })).toThrow(
      /endLevel 3 is above startLevel 1/,
    );
    expect(() => reasoningPrefixLevel(0, { horizon: 10, startLevel: 5 })).toThrow(
      /startLevel must be an integer in 0..4/,
    );
  });
});

describe('tokenKeepFraction / computeProgress', () => {
  it('is 1 − min(s/S, 1)', () => {
    expect(tokenKeepFraction(3, 12)).toBe(0.75);
    expect(tokenKeepFraction(30, 12)).toBe(0);
    expect(computeProgress(6, 12)).toBe(0.5);
  });
});

describe('schedule registries (PACT App. D: Seg A / Fix / Token A / Scale A / None)', () => {
  const o = { horizon: 10 };
  it('reasoning schedules', () => {
    expect(REASONING_SCHEDULES.names()).toEqual(['segment', 'fixed', 'token', 'none']);
    expect(REASONING_SCHEDULES.get('segment')(3, o)).toEqual({ kind: 'prefix-level', level: 3 }); // floor(5·2/9) = 1
    expect(REASONING_SCHEDULES.get('fixed')(9, o)).toEqual({ kind: 'prefix-level', level: 4 });
    expect(REASONING_SCHEDULES.get('token')(5, o)).toEqual({ kind: 'token-fraction', fraction: 0.5 });
    expect(REASONING_SCHEDULES.get('none')(0, o)).toEqual({ kind: 'prefix-level', level: 0 });
  });

  it('tool-call schedules', () => {
    expect(TOOL_CALL_SCHEDULES.names()).toEqual(['scale', 'fixed', 'token', 'none']);
    const scale = TOOL_CALL_SCHEDULES.get('scale')(5, o);
    expect(scale.kind).toBe('scale');
    expect(scale.kind === 'scale' && scale.scale).toBeCloseTo(0.5, 12); // 0.8 − 0.6·0.5
    expect(TOOL_CALL_SCHEDULES.get('fixed')(9, o)).toEqual({ kind: 'scale', scale: 0.8 });
    expect(TOOL_CALL_SCHEDULES.get('fixed')(9, { ...o, toolCallStart: 1 })).toEqual({ kind: 'scale', scale: 1 });
    expect(TOOL_CALL_SCHEDULES.get('token')(2, o)).toEqual({ kind: 'token-fraction', fraction: 0.8 });
    expect(TOOL_CALL_SCHEDULES.get('none')(2, o)).toEqual({ kind: 'scale', scale: 0 });
    expect(() => TOOL_CALL_SCHEDULES.get('cosine')).toThrow(
      /unknown tool-call schedule "cosine"; valid: scale, fixed, token, none/,
    );
  });
});

describe('schedule registry metadata', () => {
  it("each entry's kind is the kind it returns, and its reads are exactly the λa knobs that change its output", () => {
    const base = { horizon: 8, toolCallStart: 0.8, toolCallEnd: 0.2 };
    for (const name of REASONING_SCHEDULES.names()) {
      const schedule = REASONING_SCHEDULES.get(name);
      for (let s = 1; s <= 8; s++) expect(schedule(s, base).kind, `${name} @${s}`).toBe(schedule.kind);
    }
    for (const name of TOOL_CALL_SCHEDULES.names()) {
      const schedule = TOOL_CALL_SCHEDULES.get(name);
      const changes = (knob: 'toolCallStart' | 'toolCallEnd') =>
        [1, 4, 8].some(
          (s) => JSON.stringify(schedule(s, base)) !== JSON.stringify(schedule(s, { ...base, [knob]: base[knob] / 2 })),
        );
      for (let s = 1; s <= 8; s++) expect(schedule(s, base).kind, `${name} @${s}`).toBe(schedule.kind);
      expect([...schedule.reads].sort(), name).toEqual(
        (['toolCallEnd', 'toolCallStart'] as const).filter((k) => changes(k)),
      );
    }
    // The panel's readings by name, checked once: scale reads both, fixed the start, token and none neither.
    expect(TOOL_CALL_SCHEDULES.get('scale').reads).toEqual(['toolCallStart', 'toolCallEnd']);
    expect(TOOL_CALL_SCHEDULES.get('token').kind).toBe('token-fraction');
    expect(REASONING_SCHEDULES.get('token').kind).toBe('token-fraction');
  });
});
