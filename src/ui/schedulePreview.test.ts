import { describe, expect, it } from 'vitest';
import {
  computeSupervisionAt,
  pickChartSteps,
  pickTableSteps,
  readReasoningValue,
  readToolCallValue,
} from './schedulePreview';

const paper = {
  reasoningSchedule: 'segment',
  toolCallSchedule: 'scale',
  horizon: 10,
  toolCallStart: 0.8,
  toolCallEnd: 0.2,
};

describe("computeSupervisionAt (core schedules by the config's names)", () => {
  it('λa(5) = 0.8 − 0.6·min(5/10, 1) = 0.5 and the prefix level is L2 at step 5 of S = 10', () => {
    const p = computeSupervisionAt(5, paper);
    expect(readToolCallValue(p.toolCall)).toBeCloseTo(0.5, 12);
    // 5 stages (L4…L0) over steps 1…10: stage = floor(5·4/9) = 2 → L4 − 2 = L2
    expect(p.reasoning).toEqual({ kind: 'prefix-level', level: 2 });
  });

  it('holds λa at the end value and L0 past the horizon', () => {
    const p = computeSupervisionAt(15, paper);
    expect(readToolCallValue(p.toolCall)).toBeCloseTo(0.2, 12);
    expect(readReasoningValue(p.reasoning)).toBe(0);
  });

  it('fixed keeps λa = start and L4; token keeps 1 − s/S of the tokens', () => {
    const fixed = computeSupervisionAt(7, { ...paper, reasoningSchedule: 'fixed', toolCallSchedule: 'fixed' });
    expect(fixed.toolCall).toEqual({ kind: 'scale', scale: 0.8 });
    expect(fixed.reasoning).toEqual({ kind: 'prefix-level', level: 4 });
    const token = computeSupervisionAt(4, { ...paper, reasoningSchedule: 'token', toolCallSchedule: 'token' });
    expect(token.toolCall).toEqual({ kind: 'token-fraction', fraction: 0.6 }); // 1 − 4/10
    expect(token.reasoning).toEqual({ kind: 'token-fraction', fraction: 0.6 });
  });

  it('names the valid schedules for an unknown one', () => {
    expect(() => computeSupervisionAt(1, { ...paper, toolCallSchedule: 'cosine' })).toThrow(
      /valid: scale, fixed, token, none/,
    );
  });
});

describe('step picking', () => {
  it('draws every step of a short run', () => {
    expect(pickChartSteps(4, 4)).toEqual([0, 1, 2, 3, 4]);
  });
  it('samples a long run but keeps S and T', () => {
    const steps = pickChartSteps(10000, 3333, 100);
    expect(steps.length).toBeLessThanOrEqual(102);
    expect(steps).toContain(3333);
    expect(steps[steps.length - 1]).toBe(10000);
  });
  it('table rows: 0, ¼S, ½S, ¾S, S, T and the marked step, once each', () => {
    // S = 10: 0, 2.5→3 (Math.round), 5, 7.5→8, 10; T = 24; marked 5 is already there
    expect(pickTableSteps(24, 10, 5)).toEqual([0, 3, 5, 8, 10, 24]);
    expect(pickTableSteps(24, 10, 17)).toEqual([0, 3, 5, 8, 10, 17, 24]);
  });
});
