import { describe, expect, it } from 'vitest';
import {
  type SearchCreditRollout,
  groupDiscoveriesByTurn,
  isCategoryConstrainedStep,
  toolSearcherAdvantages,
  toolSelectionReward,
} from './toolSearcherCredit';

describe('toolSelectionReward', () => {
  it('is set F1 plus the format bonus', () => {
    // selected {a,b,x}, gold {a,b,c}: P = 2/3, R = 2/3 → F1 = 2/3; + 0.1
    const r = toolSelectionReward(['a', 'b', 'x'], ['a', 'b', 'c'], true, 0.1);
    expect(r.f1).toBeCloseTo(2 / 3, 12);
    expect(r.reward).toBeCloseTo(2 / 3 + 0.1, 12);
    expect(toolSelectionReward(['a'], ['a'], false, 0.1)).toEqual({ reward: 1, f1: 1, format: 0 });
    expect(toolSelectionReward([], ['a'], true, 0.1).reward).toBeCloseTo(0.1, 12);
    expect(() => toolSelectionReward([], [], true, -1)).toThrow(/formatBonus/);
  });
});

describe('groupDiscoveriesByTurn', () => {
  it('lists the gold tools first found at each turn', () => {
    expect(groupDiscoveriesByTurn({ g: 0, h: 2, i: null, j: 0 }, 3)).toEqual([['g', 'j'], [], ['h']]);
  });
  it('names an impossible turn', () => {
    expect(() => groupDiscoveriesByTurn({ g: 3 }, 3)).toThrow(
      /firstFoundTurns\["g"\] = 3 is not a turn of a 3-turn rollout/,
    );
  });
});

/** Rounded to 5 decimals, −0 as 0. */
const round5 = (a: number) => Math.round(a * 1e5) / 1e5 + 0;

describe('toolSearcherAdvantages', () => {
  // K = 3, gold {g, h}.
  //   rollout 0: 3 turns, finds g and h at turn 0, R = 1.1
  //   rollout 1: 2 turns, finds g at turn 0,        R = 0.6
  //   rollout 2: 2 turns, finds nothing,            R = 0.1
  // f_g = [1,1,0]: mean 2/3, std = sqrt(((1/3)²·2 + (2/3)²)/2) = sqrt(1/3) = 0.57735
  //   z_g = [0.57735, 0.57735, −1.15470]
  // f_h = [1,0,0]: mean 1/3, same std → z_h = [1.15470, −0.57735, −0.57735]
  // R: mean 0.6, std = sqrt((0.25 + 0 + 0.25)/2) = 0.5 → A_out = [1, 0, −1]
  // Only rollout 0 found every gold tool: TCA's selection credit is 0 for rollouts 1 and 2,
  //   and rollout 0's R z-scored over the finished ones, a group of one (mean 0, std 1): 1.1
  const group: SearchCreditRollout[] = [
    { nTurns: 3, firstFoundTurns: { g: 0, h: 0 }, outcomeReward: 1.1 },
    { nTurns: 2, firstFoundTurns: { g: 0, h: null }, outcomeReward: 0.6 },
    { nTurns: 2, firstFoundTurns: {}, outcomeReward: 0.1 },
  ];
  const s3 = Math.sqrt(1 / 3);

  it('credits discovering turns with the largest aligned tool score, the selection turn only after a finished search', () => {
    const c = toolSearcherAdvantages(group, ['g', 'h']);
    expect(c.outcomeAdvantages.map((a) => round5(a))).toEqual([1, 0, -1]);
    expect(c.isSearchFinished).toEqual([true, false, false]);
    expect(c.selectionAdvantages.map((a) => round5(a))).toEqual([1.1, 0, 0]);
    expect(c.toolScores.g[0]).toBeCloseTo(1 / 3 / s3, 5);
    expect(c.toolScores.h[1]).toBeCloseTo(-1 / 3 / s3, 5);
    // rollout 0: turn 0 → max(z_g, z_h) = 1.15470; turn 1 found nothing → 0; turn 2 (selection) → 1.1
    expect(c.turnAdvantages[0][0]).toBeCloseTo(2 / 3 / s3, 5);
    expect(c.turnAdvantages[0][1]).toBe(0);
    expect(c.turnAdvantages[0][2]).toBeCloseTo(1.1, 5);
    // rollout 1: turn 0 → z_g = 0.57735; selection after an unfinished search → 0.
    // rollout 2: turn 0 → 0 (not negative); selection after an unfinished search → 0 (A_out would be −1)
    expect(c.turnAdvantages[1][0]).toBeCloseTo(1 / 3 / s3, 5);
    expect(c.turnAdvantages[1][1]).toBe(0);
    expect(c.turnAdvantages[2][0]).toBe(0);
    expect(c.turnAdvantages[2][1]).toBe(0);
  });

  it('z-scores the selection over the finished searches only', () => {
    // gold {g}: rollouts 0 and 1 found it (R 1.1 and 0.1), rollout 2 did not (R 0.1).
    // Finished: R = [1.1, 0.1], mean 0.6, std √0.5 → ±0.70711; unfinished → 0.
    // Search turn 0: f_g = [1, 1, 0] → z_g = 0.57735 for the two that found g.
    const single: SearchCreditRollout[] = [
      { nTurns: 2, firstFoundTurns: { g: 0 }, outcomeReward: 1.1 },
      { nTurns: 2, firstFoundTurns: { g: 0 }, outcomeReward: 0.1 },
      { nTurns: 1, firstFoundTurns: { g: null }, outcomeReward: 0.1 },
    ];
    const c = toolSearcherAdvantages(single, ['g']);
    expect(c.turnAdvantages.map((row) => row.map((a) => round5(a)))).toEqual([
      [0.57735, 0.70711],
      [0.57735, -0.70711],
      [0],
    ]);
  });

  it('gives mastered discoveries no credit', () => {
    // every rollout finds g at turn 0 → z_g = 0
    const all = group.map((r) => ({ ...r, firstFoundTurns: { g: 0 } }));
    const c = toolSearcherAdvantages(all, ['g']);
    expect(c.turnAdvantages.map((row) => row[0])).toEqual([0, 0, 0]);
  });

  it('without trajectory-aligned credit pays the raw discovery fraction |D|/|G|', () => {
    const c = toolSearcherAdvantages(group, ['g', 'h'], { isTrajectoryAligned: false });
    expect(c.turnAdvantages[0][0]).toBe(1); // 2 of 2 gold tools
    expect(c.turnAdvantages[1][0]).toBe(0.5); // 1 of 2
    expect(c.turnAdvantages[2][0]).toBe(0);
    expect(c.turnAdvantages[0][2]).toBeCloseTo(1, 5); // the final turn keeps A_out
  });

  it("without event-level search modelling puts A_out on the search turns, TCA's credit on the selection", () => {
    const c = toolSearcherAdvantages(group, ['g', 'h'], { isEventLevelSearch: false });
    expect(c.turnAdvantages.map((row) => row.map((a) => round5(a)))).toEqual([
      [1, 1, 1.1],
      [0, 0],
      [-1, 0],
    ]);
    // without both: A_out everywhere (Search-R1's credit)
    const neither = toolSearcherAdvantages(group, ['g', 'h'], {
      isEventLevelSearch: false,
      isTrajectoryAligned: false,
    });
    expect(neither.turnAdvantages.map((row) => row.map((a) => round5(a)))).toEqual([
      [1, 1, 1],
      [0, 0],
      [-1, -1],
    ]);
  });

  it('names a bad rollout', () => {
    expect(() => toolSearcherAdvantages([{ nTurns: 1, firstFoundTurns: { g: 4 }, outcomeReward: 0 }], ['g'])).toThrow(
      /group\[0\]/,
    );
    expect(() => toolSearcherAdvantages([{ nTurns: 1, firstFoundTurns: {}, outcomeReward: NaN }], ['g'])).toThrow(
      /group\[0\]\.outcomeReward/,
    );
  });
});

describe('isCategoryConstrainedStep', () => {
  it('constrains the first round(fraction · steps) steps (17 of 56 at 30%)', () => {
    expect(isCategoryConstrainedStep(16, 56, 0.3)).toBe(true);
    expect(isCategoryConstrainedStep(17, 56, 0.3)).toBe(false);
    expect(isCategoryConstrainedStep(0, 10, 0)).toBe(false);
    expect(() => isCategoryConstrainedStep(0, 10, 2)).toThrow(/fraction/);
  });
});
