import { describe, expect, it } from 'vitest';
import { buildSftMaskAtStep, SFT_DESIGNS } from './sftSchedule';
import type { TokenTag } from './types';

// one turn: reasoning chunks 0, 0, 1 then a 2-token tool call and an observation;
// prefix levels L0..L4 reveal 0, 1, 1, 2, 2 chunks
const tags: TokenTag[] = [
  { kind: 'prompt', turn: -1 },
  { kind: 'reasoning', turn: 0, segment: 0 },
  { kind: 'reasoning', turn: 0, segment: 0 },
  { kind: 'reasoning', turn: 0, segment: 1 },
  { kind: 'tool_call', turn: 0 },
  { kind: 'tool_call', turn: 0 },
  { kind: 'observation', turn: 0 },
];
const counts = [[0, 1, 1, 2, 2]];
const o = { horizon: 10 };

describe('buildSftMaskAtStep', () => {
  it("PACT's seg+scale: L4 and λa 0.8 at s = 0, L2 and λa 0.8 − 0.6·0.6 = 0.44 at s = 6", () => {
    expect(buildSftMaskAtStep(tags, counts, 0, 'seg+scale', o)).toEqual([0, 1, 1, 1, 0.8, 0.8, 0]);
    // s = 6: floor(5·5/9) = 2 → L2 → chunk 0 only
    const m = buildSftMaskAtStep(tags, counts, 6, 'seg+scale', o);
    expect(m.slice(0, 4)).toEqual([0, 1, 1, 0]);
    expect(m[4]).toBeCloseTo(0.44, 12);
    // s ≥ S: L0 and λa = 0.2
    expect(buildSftMaskAtStep(tags, counts, 10, 'seg+scale', o).map((x) => +x.toFixed(12))).toEqual([
      0, 0, 0, 0, 0.2, 0.2, 0,
    ]);
  });

  it('full-token keeps floor(f·5) of the 5 reasoning + tool-call tokens: f = 0.6 at s = 4 → 3', () => {
    expect(buildSftMaskAtStep(tags, counts, 4, 'full-token', o)).toEqual([0, 1, 1, 1, 0, 0, 0]);
  });

  it('fixed+scale and seg+none', () => {
    expect(
      buildSftMaskAtStep(tags, counts, 9, 'fixed+scale', { ...o, toolCallStart: 1, toolCallEnd: 0 }).map(
        (x) => +x.toFixed(12),
      ),
    ).toEqual([0, 1, 1, 1, 0.1, 0.1, 0]);
    expect(buildSftMaskAtStep(tags, counts, 0, 'seg+none', o)).toEqual([0, 1, 1, 1, 0, 0, 0]);
  });

  it('lists the designs and rejects an unknown one', () => {
    expect(SFT_DESIGNS.names()).toContain('seg+scale');
    expect(() => buildSftMaskAtStep(tags, counts, 0, 'cosine', o)).toThrow(
      /unknown SFT schedule design "cosine"; valid: seg\+scale, /,
    );
  });
});
