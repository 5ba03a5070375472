import { describe, expect, it } from 'vitest';
import { buildTable } from './aggregate';
import { formatTableMarkdown } from './format';
import { resolveConfig } from '../recipes/config';
import {
  buildSeedPairs,
  defaultSeedPairs,
  formatSeedPairCell,
  MEAN_TRAIN_ANSWER_F1,
  MEAN_TRAIN_REWARD,
  nameRunReward,
  pairedControl,
} from './seedPairs';
import type { RunResult } from './types';

function run(name: string, seed: number, steps: RunResult['steps'], status: RunResult['status'] = 'finished') {
  return { id: `${name}-s${seed}`, name, seed, status, config: {} as never, seconds: 1, steps } satisfies RunResult;
}
// Held-out F1 at the last evaluation, and train rewards at steps 1–2, chosen to check by hand.
const RUNS: RunResult[] = [
  run('frozen', 1, [
    { step: 1, values: { reward: 1.0 } },
    { step: 2, values: { reward: 0.8 } },
  ]),
  run('frozen', 2, [
    { step: 1, values: { reward: 0.6 } },
    { step: 2, values: { reward: 1.0 } },
  ]),
  run('frozen', 3, [
    { step: 1, values: { reward: 0.5 } },
    { step: 2, values: { reward: 0.5 } },
  ]),
  run('vanilla', 1, [{ step: 0, values: { 'eval/solve_f1': 0.5 } }]),
  run('vanilla', 2, [{ step: 0, values: { 'eval/solve_f1': 0.5 } }]),
  run('vanilla', 3, [{ step: 0, values: { 'eval/solve_f1': 0.5 } }]),
  run('pact', 1, [
    { step: 1, values: { reward: 1.2 } },
    { step: 2, values: { reward: 1.0, 'eval/solve_f1': 0.6 } },
  ]),
  run('pact', 2, [
    { step: 1, values: { reward: 0.6 } },
    { step: 2, values: { reward: 0.8, 'eval/solve_f1': 0.4 } },
  ]),
  run('pact', 3, [], 'failed'),
  run('matchtir', 1, [{ step: 2, values: { reward: 0.9, 'eval/solve_f1': 0.5 } }]),
  run('matchtir', 2, [{ step: 2, values: { reward: 0.9, 'eval/solve_f1': 0.5 } }]),
];

describe('buildSeedPairs', () => {
  it('pairs every row with the frozen control by seed (held out: with vanilla), and pact with matchtir', () => {
    expect(defaultSeedPairs(['vanilla', 'pact', 'matchtir', 'frozen'])).toEqual([
      { run: 'pact', control: 'frozen', heldOutControl: 'vanilla' },
      { run: 'matchtir', control: 'frozen', heldOutControl: 'vanilla' },
      { run: 'pact', control: 'matchtir' },
    ]);
    expect(defaultSeedPairs(['vanilla', 'sft', 'grpo'])).toEqual([
      { run: 'sft', control: 'vanilla' },
      { run: 'grpo', control: 'vanilla' },
    ]);
    expect(defaultSeedPairs(['a', 'b'])).toEqual([]);
  });

  it('takes held-out differences at the last evaluation and train-reward differences step by step, per seed', () => {
    const [pactVanilla, pactFrozen, pactMatchtir] = buildSeedPairs(
      RUNS,
      ['eval/solve_f1', MEAN_TRAIN_REWARD],
      [
        { run: 'pact', control: 'vanilla' },
        { run: 'pact', control: 'frozen' },
        { run: 'pact', control: 'matchtir' },
      ],
    );
    // F1: seed 1 0.6 − 0.5 = +0.1, seed 2 0.4 − 0.5 = −0.1 (seed 3 failed): mean 0, sd √0.02, 1 of 2 above.
    const f1 = pactVanilla.cells['eval/solve_f1'];
    expect(f1.diff.n).toBe(2);
    expect(f1.diff.mean).toBeCloseTo(0, 15);
    expect(f1.diff.std).toBeCloseTo(Math.sqrt(0.02), 15);
    expect(f1.positive).toBe(1);
    // The per-seed differences behind the summary, by seed.
    expect(f1.values.map(({ seed, d }) => [seed, Number(d.toFixed(12))])).toEqual([
      [1, 0.1],
      [2, -0.1],
    ]);
    // vanilla logged no train reward: nothing to pair.
    expect(pactVanilla.cells[MEAN_TRAIN_REWARD].diff.n).toBe(0);
    expect(pactVanilla.cells[MEAN_TRAIN_REWARD].values).toEqual([]);
    // Train reward against frozen: seed 1 steps (1.2 − 1.0, 1.0 − 0.8) → mean 0.2; seed 2 (0.0, −0.2) → −0.1.
    const r = pactFrozen.cells[MEAN_TRAIN_REWARD];
    expect(r.diff.n).toBe(2);
    expect(r.diff.mean).toBeCloseTo(0.05, 12);
    expect(r.diff.std).toBeCloseTo(Math.sqrt(((0.2 - 0.05) ** 2 + (-0.1 - 0.05) ** 2) / 1), 12);
    expect(r.positive).toBe(1);
    expect(r.values.map(({ seed, d }) => [seed, Number(d.toFixed(12))])).toEqual([
      [1, 0.2],
      [2, -0.1],
    ]);
    // pact − matchtir: F1 +0.1 and −0.1; train reward only step 2 is shared: +0.1 and −0.1.
    expect(pactMatchtir.cells['eval/solve_f1'].diff.mean).toBeCloseTo(0, 15);
    expect(pactMatchtir.cells[MEAN_TRAIN_REWARD].diff.mean).toBeCloseTo(0, 15);
  });

  it('with a held-out control: train reward against frozen, held-out metrics against vanilla, by seed', () => {
    const [pair] = buildSeedPairs(
      RUNS,
      ['eval/solve_f1', MEAN_TRAIN_REWARD],
      defaultSeedPairs(['vanilla', 'pact', 'frozen']),
    );
    expect(pair).toMatchObject({ run: 'pact', control: 'frozen', heldOutControl: 'vanilla' });
    // F1 against vanilla: +0.1, −0.1 (as pact − vanilla above); reward against frozen: +0.2, −0.1.
    expect(pair.cells['eval/solve_f1'].diff.n).toBe(2);
    expect(pair.cells['eval/solve_f1'].diff.mean).toBeCloseTo(0, 15);
    expect(pair.cells[MEAN_TRAIN_REWARD].diff.mean).toBeCloseTo(0.05, 12);
    // The control each metric was paired with, as the figure labels it.
    expect(pairedControl(pair, 'eval/solve_f1')).toBe('vanilla');
    expect(pairedControl(pair, MEAN_TRAIN_REWARD)).toBe('frozen');
    expect(pairedControl(pair, MEAN_TRAIN_ANSWER_F1)).toBe('frozen');
    expect(pairedControl({ run: 'pact', control: 'matchtir' }, 'eval/solve_f1')).toBe('matchtir');
    const md = formatTableMarkdown(buildTable(RUNS, ['eval/solve_f1', 'reward']), { pairs: [pair] });
    expect(md).toContain('| pact − frozen (held out: − vanilla) | 0.000 ± 0.100 (1/2) | +0.050 ± 0.150 (1/2) |');
  });

  it('formats a cell as mean ± standard error (seeds above / n), signed', () => {
    expect(formatSeedPairCell({ diff: { n: 4, mean: 0.031, std: 0.024 }, positive: 3 })).toBe('+0.031 ± 0.012 (3/4)');
    expect(formatSeedPairCell({ diff: { n: 1, mean: -0.2, std: Number.NaN }, positive: 0 })).toBe('-0.200 (0/1)');
    expect(formatSeedPairCell({ diff: { n: 0, mean: Number.NaN, std: Number.NaN }, positive: 0 })).toBe('–');
  });

  it('adds the paired table under table.md', () => {
    const table = buildTable(RUNS, ['eval/solve_f1', 'reward']);
    const pairs = buildSeedPairs(RUNS, ['eval/solve_f1', MEAN_TRAIN_REWARD], [{ run: 'pact', control: 'frozen' }]);
    const md = formatTableMarkdown(table, { pairs });
    expect(md).toContain('## Paired by seed');
    expect(md).toContain('| Row − control | Solve-F1 | Train reward (mean over steps) |');
    // frozen has no F1: –; reward +0.05, sd √(0.15² + 0.15²) = 0.212, se 0.212/√2 = 0.150, 1 of 2 above.
    expect(md).toContain('| pact − frozen | – | +0.050 ± 0.150 (1/2) |');
  });

  it('pairs train rewards only between runs trained on the same reward function, and the train answer F1 across them', () => {
    const cfg = (recipe: string, extra: Record<string, unknown> = {}) => resolveConfig({ recipe, ...extra });
    // The recipes' own names: pact and matchtir share MatchTIR's matched turn rewards; GRPO's is the answer F1;
    // greedy matching is another function of a rollout.
    expect(nameRunReward(cfg('pact'))).toBe(nameRunReward(cfg('matchtir')));
    expect(nameRunReward(cfg('pact'))).toBe(nameRunReward(cfg('sft_then_matchtir')));
    expect(nameRunReward(cfg('grpo'))).toBe(nameRunReward(cfg('chord')));
    expect(nameRunReward(cfg('grpo'))).not.toBe(nameRunReward(cfg('matchtir')));
    expect(nameRunReward(cfg('pact', { matching: 'greedy' }))).not.toBe(nameRunReward(cfg('pact')));
    expect(nameRunReward(cfg('toolrl'))).not.toBe(nameRunReward(cfg('ftrl')));
    const withConfig = (r: RunResult, recipe: string): RunResult => ({ ...r, config: cfg(recipe) });
    const steps = (rewards: number[], f1s: number[]) =>
      rewards.map((reward, i) => ({ step: i + 1, values: { reward, 'reward/answer_f1': f1s[i] } }));
    const runs = [
      withConfig(run('frozen', 1, steps([1.0, 1.2], [0.1, 0.1])), 'pact'),
      withConfig(run('grpo', 1, steps([0.2, 0.4], [0.2, 0.4])), 'grpo'),
      withConfig(run('matchtir', 1, steps([1.5, 1.5], [0.1, 0.3])), 'matchtir'),
    ];
    const [grpo, matchtir] = buildSeedPairs(
      runs,
      [MEAN_TRAIN_REWARD, MEAN_TRAIN_ANSWER_F1],
      [
        { run: 'grpo', control: 'frozen' },
        { run: 'matchtir', control: 'frozen' },
      ],
      { rewardName: nameRunReward },
    );
    // GRPO's reward (answer F1 0.2, 0.4) minus MatchTIR's (1.0, 1.2) would read −0.8: not paired, and said why.
    expect(grpo.cells[MEAN_TRAIN_REWARD].diff.n).toBe(0);
    expect(grpo.notes).toEqual([
      'grpo − frozen: train rewards not paired (grpo: answer-f1; frozen: matchtir(hungarian, unmatched 0))',
    ]);
    // Its answer F1 pairs: (0.2 − 0.1, 0.4 − 0.1) → +0.2.
    expect(grpo.cells[MEAN_TRAIN_ANSWER_F1].diff.mean).toBeCloseTo(0.2, 12);
    // MatchTIR's reward is frozen's function: (1.5 − 1.0, 1.5 − 1.2) → +0.4; answer F1 (0, +0.2) → +0.1.
    expect(matchtir.cells[MEAN_TRAIN_REWARD].diff.mean).toBeCloseTo(0.4, 12);
    expect(matchtir.cells[MEAN_TRAIN_ANSWER_F1].diff.mean).toBeCloseTo(0.1, 12);
    expect(matchtir.notes).toBeUndefined();
    const md = formatTableMarkdown(buildTable(runs, ['reward']), { pairs: [grpo, matchtir] });
    expect(md).toContain('| Row − control | Train reward (mean over steps) | Train answer F1 (mean over steps) |');
    expect(md).toContain('| grpo − frozen | – | +0.200 (1/1) |');
    expect(md).toContain('- grpo − frozen: train rewards not paired (grpo: answer-f1;');
  });
});
