import { describe, expect, it } from 'vitest';
import { gdpoAdvantages } from './gdpo';
import { groupAdvantages } from './advantages';

describe('gdpoAdvantages', () => {
  // One group, K = 3, components [f1, format]: f1 = [1, 0.5, 0], format = [1, 1, 0].
  // z_f1: mean 0.5, std sqrt((0.25 + 0 + 0.25)/2) = 0.5 → [1, 0, −1]
  // z_fmt: mean 2/3, std sqrt(1/3) → [√(1/3), √(1/3), −2√(1/3)]
  // sum = [1 + √(1/3), √(1/3), −1 − 2√(1/3)]; batch mean 0; Σ sum² = 4 + 2√3 → std = √(2 + √3)
  const group = [
    [1, 1],
    [0.5, 1],
    [0, 0],
  ];
  const r = Math.sqrt(1 / 3);
  const sums = [1 + r, r, -1 - 2 * r];

  it('z-scores each component within the group, sums, then normalises over the batch', () => {
    const [adv] = gdpoAdvantages([group]);
    const std = Math.sqrt(2 + Math.sqrt(3));
    adv.forEach((a, k) => expect(a).toBeCloseTo(sums[k] / std, 5));
    // not GRPO on the summed reward [2, 1.5, 0]
    const grpo = groupAdvantages([2, 1.5, 0]);
    expect(Math.abs(grpo[0] - adv[0])).toBeGreaterThan(0.01);
  });

  it('returns the raw decoupled sum without batch normalisation, and applies weights', () => {
    const [raw] = gdpoAdvantages([group], { isBatchNormalized: false });
    raw.forEach((a, k) => expect(a).toBeCloseTo(sums[k], 5));
    const [weighted] = gdpoAdvantages([group], { isBatchNormalized: false, weights: [2, 0] });
    expect(weighted.map((a) => Math.round(a * 1e5) / 1e5 + 0)).toEqual([2, 0, -2]);
  });

  it('rewards a rarer component success more, where GRPO on the sum would not', () => {
    // c1 = [1,0,0,0], c2 = [0,1,0,0]: symmetric → rollouts 0 and 1 tie
    const [adv] = gdpoAdvantages(
      [
        [
          [1, 0],
          [0, 1],
          [0, 0],
          [0, 0],
        ],
      ],
      { isBatchNormalized: false },
    );
    expect(adv[0]).toBeCloseTo(adv[1], 9);
    // c1 = [1,0,0,0]: mean 0.25, std 0.5 → [1.5, −0.5, −0.5, −0.5]
    // c2 = [0,1,1,0]: mean 0.5, std √(1/3) → [−0.866, 0.866, 0.866, −0.866]
    // sums [0.634, 0.366, 0.366, −1.366], while GRPO on the sums [1,1,1,0] ties rollouts 0–2
    const [adv2] = gdpoAdvantages(
      [
        [
          [1, 0],
          [0, 1],
          [0, 1],
          [0, 0],
        ],
      ],
      { isBatchNormalized: false },
    );
    expect(adv2[0]).toBeCloseTo(1.5 - 0.5 / Math.sqrt(1 / 3), 5);
    expect(adv2[1]).toBeCloseTo(-0.5 + 0.5 / Math.sqrt(1 / 3), 5);
  });

  it('normalises across groups with batch statistics', () => {
    const batch = gdpoAdvantages([
      group,
      [
        [1, 1],
        [0, 0],
      ],
    ]);
    // group 2: z = [1/√2·…]: each component z = [0.70711, −0.70711]; sum [1.41421, −1.41421]
    const second = [Math.SQRT2, -Math.SQRT2];
    const all = [...sums, ...second];
    const std = Math.sqrt(all.reduce((s, x) => s + x * x, 0) / (all.length - 1)); // mean 0
    expect(batch[1][0]).toBeCloseTo(Math.SQRT2 / std, 5);
    expect(batch[0][2]).toBeCloseTo(sums[2] / std, 5);
  });

  it('names inconsistent input', () => {
    expect(() => gdpoAdvantages([[[1, 2], [1]]])).toThrow(/rewardParts\[0\]\[1\] has 1 components, expected 2/);
    expect(() => gdpoAdvantages([[[1, NaN]]])).toThrow(/rewardParts\[0\]\[0\]\[1\]/);
    expect(() => gdpoAdvantages([[[1, 2]]], { weights: [1] })).toThrow(/weights must be 2/);
  });
});
