import { describe, expect, it } from 'vitest';
import { createRng } from '../core';
import { buildGateGrid, sampleStepGates } from './gatePreview';

describe("sampleStepGates: the run's gate stream", () => {
  it('draws step s from the stream keyed "<seed>/gates/step<s>", one draw per prompt, z = 1 when draw < q', () => {
    // Independent of split(): a root stream created from the full key is the same stream.
    const rng = createRng('7/gates/step3');
    const expected = Array.from({ length: 16 }, () => (rng.next() < 0.4 ? 1 : 0));
    expect(sampleStepGates(7, 3, 16, 0.4)).toEqual(expected);
  });

  it('gives each step its own stream, and the same gates on every call', () => {
    const a = sampleStepGates(1, 1, 64, 0.5);
    expect(sampleStepGates(1, 1, 64, 0.5)).toEqual(a);
    expect(sampleStepGates(1, 2, 64, 0.5)).not.toEqual(a);
    expect(sampleStepGates(2, 1, 64, 0.5)).not.toEqual(a);
  });

  it('rejects step 0 (steps are s = 1…T as in Algorithm 1)', () => {
    expect(() => sampleStepGates(1, 0, 4, 0.4)).toThrow(/step must be an integer ≥ 1/);
  });
});

describe('buildGateGrid', () => {
  it('counts anchors and the running fraction from the grid itself', () => {
    const grid = buildGateGrid(3, 5, 4, 0.4);
    expect(grid.gates).toHaveLength(5);
    expect(grid.gates[2]).toEqual(sampleStepGates(3, 3, 4, 0.4));
    const perStep = grid.gates.map((z) => z.filter((g) => g === 1).length);
    expect(grid.anchorsPerStep).toEqual(perStep);
    // running fraction after step 2 = (anchors in steps 1 and 2) / (2 steps · 4 prompts)
    expect(grid.runningFraction[1]).toBeCloseTo((perStep[0] + perStep[1]) / 8, 12);
    expect(grid.nAnchors).toBe(perStep.reduce((a, b) => a + b, 0));
    expect(grid.nGates).toBe(20);
  });

  it('q = 0 anchors nothing, q = 1 anchors everything', () => {
    expect(buildGateGrid(1, 3, 4, 0).nAnchors).toBe(0);
    expect(buildGateGrid(1, 3, 4, 1).nAnchors).toBe(12);
  });

  it('anchors about q of 100 steps × 64 prompts', () => {
    const grid = buildGateGrid(11, 100, 64, 0.4);
    // standard error √(0.4·0.6/6400) ≈ 0.006
    expect(Math.abs(grid.runningFraction[99] - 0.4)).toBeLessThan(0.025);
  });
});
