import { describe, expect, it } from 'vitest';
import { createRng, sampleStepGates } from '../../core/index';
import { resolveConfig } from '../config';
import { PACT_RECIPE } from './pact';
import type { RolloutGroup } from '../types';
import type { ExpertTrace } from '../../traces/types';
import type { Task } from '../../envs/types';

const trace: ExpertTrace = { taskId: 't', turns: [], source: 'teacher', verified: true };
const task = { id: 't' } as Task;
const groups = (n: number, withTrace = true): RolloutGroup[] =>
  Array.from({ length: n }, (_, index) => ({
    prompt: { kind: 'tool-use', index, task, trace: withTrace ? trace : undefined },
    rollouts: [],
  }));
const ctxOf = (step: number, pact: Record<string, unknown>, seed = 7) => ({
  step,
  config: resolveConfig({ seed, pact }),
  rng: createRng(0),
});

describe('pact routing (PACT Eq. prompt-routing-gate, overall-objective; Table 2 objectives)', () => {
  it('draws the same gates as the UI preview: stream seed/gates/step(s+1)', () => {
    const routes = PACT_RECIPE.routePrompts(groups(16), ctxOf(2, { anchorProb: 0.4 }));
    expect(routes.map((r) => r.gate)).toEqual(sampleStepGates(7, 3, 16, 0.4));
  });

  it('z = 1 → prompt-only L^x with no SFT; z = 0 → L^h + β_SFT·L_SFT (full PACT)', () => {
    const routes = PACT_RECIPE.routePrompts(groups(16), ctxOf(0, { anchorProb: 0.5, betaSft: 0.1 }));
    for (const r of routes) {
      if (r.gate === 1) expect(r).toEqual({ rl: 'x', rlWeight: 1, sftWeight: 0, sftMask: 'component', gate: 1 });
      else expect(r).toEqual({ rl: 'h', rlWeight: 1, sftWeight: 0.1, sftMask: 'component', gate: 0 });
    }
    expect(new Set(routes.map((r) => r.gate))).toEqual(new Set([0, 1])); // both kinds occur at q = 0.5 over 16 prompts
  });

  it('q = 0 routes every traced prompt to trace co-training, q = 1 to the anchor', () => {
    expect(PACT_RECIPE.routePrompts(groups(5), ctxOf(0, { anchorProb: 0 })).map((r) => r.rl)).toEqual([
      'h',
      'h',
      'h',
      'h',
      'h',
    ]);
    expect(PACT_RECIPE.routePrompts(groups(5), ctxOf(0, { anchorProb: 1 })).map((r) => r.rl)).toEqual([
      'x',
      'x',
      'x',
      'x',
      'x',
    ]);
  });

  it('the Table 2 objectives pick the ratio context and the SFT term', () => {
    const at = (objective: string) =>
      PACT_RECIPE.routePrompts(groups(1), ctxOf(0, { anchorProb: 0, objective, betaSft: 0.1 }))[0];
    expect([at('Lx').rl, at('Lx').sftWeight]).toEqual(['x', 0]);
    expect([at('Lh').rl, at('Lh').sftWeight]).toEqual(['h', 0]);
    expect([at('Lx+SFT').rl, at('Lx+SFT').sftWeight]).toEqual(['x', 0.1]);
    expect([at('Lh+SFT').rl, at('Lh+SFT').sftWeight]).toEqual(['h', 0.1]);
  });

  it('a prompt without an expert trace is always anchored', () => {
    expect(PACT_RECIPE.routePrompts(groups(3, false), ctxOf(0, { anchorProb: 0 })).map((r) => r.gate)).toEqual([
      1, 1, 1,
    ]);
  });
});
