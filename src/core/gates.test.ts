import { describe, expect, it } from 'vitest';
import { sampleAnchorGates } from './gates';
import { createRng } from './rng';

describe('sampleAnchorGates (PACT Eq. prompt-routing-gate)', () => {
  it('sets z_i = 1 when the stream draw is below q', () => {
    // createRng(42) draws 0.5258, 0.1867, 0.4050, 0.8641 (see rng.test.ts)
    expect(sampleAnchorGates(createRng(42), 4)).toEqual([0, 1, 0, 0]); // q = 0.4
    expect(sampleAnchorGates(createRng(42), 4, 0.5)).toEqual([0, 1, 1, 0]);
    expect(sampleAnchorGates(createRng(42), 3, 0)).toEqual([0, 0, 0]);
    expect(sampleAnchorGates(createRng(42), 3, 1)).toEqual([1, 1, 1]);
    expect(sampleAnchorGates(createRng(42), 0)).toEqual([]);
  });

  it('has mean ≈ q over many prompts', () => {
    const gates = sampleAnchorGates(createRng('gates').split('x'), 10000, 0.4);
    const mean = gates.reduce<number>((s, z) => s + z, 0) / gates.length;
    // standard error √(0.4·0.6/10000) ≈ 0.005
    expect(Math.abs(mean - 0.4)).toBeLessThan(0.02);
  });

  it('rejects bad arguments', () => {
    expect(() => sampleAnchorGates(createRng(1), 2, 1.5)).toThrow(/q must be in \[0, 1\]/);
    expect(() => sampleAnchorGates(createRng(1), -1)).toThrow(/nPrompts/);
  });
});
