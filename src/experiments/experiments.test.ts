import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../recipes/config';
import { expandExperiment } from '../run/experimentFile';
import { buildCurves, buildTable, computeMeanStd, pickTableMetrics, readFinalValue } from './aggregate';
import { formatCell, formatTableCsv, formatTableMarkdown } from './format';
import { compareRunMetrics, formatResultsJson, pickResumableRuns, toStepRecords, type RunResult } from './results';
import { SMOKE_OVERRIDES, shrinkForSmoke } from './smoke';

const CONFIG = resolveConfig({});

function run(
  name: string,
  seed: number,
  steps: { step: number; values: Record<string, number | null> }[],
  status: RunResult['status'] = 'finished',
  error?: string,
): RunResult {
  return { id: `${name}-s${seed}`, name, seed, status, error, config: CONFIG, seconds: 1, steps };
}

describe('computeMeanStd (sample std, n − 1)', () => {
  it('matches hand-computed numbers', () => {
    // mean (0.1 + 0.2 + 0.6) / 3 = 0.3; squared deviations 0.04, 0.01, 0.09 → 0.14 / (3 − 1) = 0.07; √0.07 = 0.2645751…
    const m = computeMeanStd([0.1, 0.2, 0.6]);
    expect(m.n).toBe(3);
    expect(m.mean).toBeCloseTo(0.3, 15);
    expect(m.std).toBeCloseTo(0.26457513110645906, 15);
    // two values 1 and 3: mean 2, deviations ±1 → 2 / 1 → std √2 (a population std would give 1)
    expect(computeMeanStd([1, 3]).std).toBeCloseTo(Math.SQRT2, 15);
  });

  it('leaves out NaN, reports n, and has no std for one value', () => {
    expect(computeMeanStd([Number.NaN, 0.5])).toEqual({ n: 1, mean: 0.5, std: Number.NaN });
    expect(computeMeanStd([])).toEqual({ n: 0, mean: Number.NaN, std: Number.NaN });
  });
});

// Two methods × three seeds, one failed; values chosen so the cells are easy to check by hand.
const RUNS: RunResult[] = [
  run('vanilla', 1, [{ step: 1, values: { reward: 0.0, 'eval/solve_f1': 0.1, 'eval/solve_r': 0.2, seconds: 5 } }]),
  run('vanilla', 2, [{ step: 1, values: { reward: 0.0, 'eval/solve_f1': 0.2, 'eval/solve_r': 0.2, seconds: 6 } }]),
  run('vanilla', 3, [
    { step: 1, values: { reward: 0.0, 'eval/solve_f1': 0.6, 'eval/solve_r': null, 'eval/f1': null, seconds: 7 } },
  ]),
  run('pact', 1, [
    { step: 1, values: { reward: 0.5, 'eval/solve_f1': 0.0 } },
    { step: 2, values: { reward: 1.0, 'eval/solve_f1': 0.4, 'eval/solve_r': 0.5 } },
  ]),
  run('pact', 2, [], 'failed', 'out of memory'),
  run('pact', 3, [
    { step: 1, values: { reward: 0.25 } },
    { step: 2, values: { reward: 0.75, 'eval/solve_f1': 0.2, 'eval/solve_r': 0.5 } },
  ]),
];

describe('buildTable', () => {
  it("orders the papers' metrics first and the train reward last; no column without a value", () => {
    expect(pickTableMetrics(RUNS)).toEqual(['eval/solve_r', 'eval/solve_f1', 'reward']);
  });

  it("takes each run's last logged value and aggregates over finished seeds", () => {
    expect(readFinalValue(RUNS[3], 'eval/solve_f1')).toBe(0.4);
    expect(readFinalValue(RUNS[2], 'eval/solve_r')).toBeNaN(); // stored null = no value
    const t = buildTable(RUNS);
    expect(t.rows.map((r) => r.method)).toEqual(['vanilla', 'pact']);
    const [vanilla, pact] = t.rows;
    expect(vanilla.n).toBe(3);
    expect(vanilla.cells['eval/solve_f1'].mean).toBeCloseTo(0.3, 15); // 0.1, 0.2, 0.6 as above
    expect(vanilla.cells['eval/solve_f1'].std).toBeCloseTo(0.26457513110645906, 15);
    expect(vanilla.cells['eval/solve_r']).toEqual({ n: 2, mean: 0.2, std: 0 }); // the null left out
    expect(pact.n).toBe(2);
    expect(pact.failed).toEqual([{ id: 'pact-s2', error: 'out of memory' }]);
    // F1 0.4 and 0.2: mean 0.3, std √((0.01 + 0.01) / 1) = 0.1414214
    expect(pact.cells['eval/solve_f1'].mean).toBeCloseTo(0.3, 15);
    expect(pact.cells['eval/solve_f1'].std).toBeCloseTo(0.1414213562373095, 15);
    // reward at the last step: 1.0 and 0.75 → 0.875 ± √(2·0.125² / 1) = 0.1767767
    expect(pact.cells.reward.mean).toBe(0.875);
    expect(pact.cells.reward.std).toBeCloseTo(0.17677669529663687, 15);
  });

  it('writes table.md with rows, columns, the std convention and the failed runs', () => {
    const md = formatTableMarkdown(buildTable(RUNS), { title: 'test', notes: ['Backend: wasm.'] });
    const lines = md.split('\n');
    expect(lines[0]).toBe('# test');
    expect(lines[2]).toBe('| Method | n | Solve-R | Solve-F1 | Train reward (last step) |');
    expect(lines[3]).toBe('|---|---:|---:|---:|---:|');
    // ± is the standard error: vanilla F1 sd 0.2646 / √3 = 0.153; pact F1 0.1414 / √2 = 0.100, reward 0.1768 / √2 = 0.125
    expect(lines[4]).toBe('| vanilla | 3 | 0.200 ± 0.000 (n=2) | 0.300 ± 0.153 | 0.000 ± 0.000 |');
    expect(lines[5]).toBe('| pact | 2 | 0.500 ± 0.000 | 0.300 ± 0.100 | 0.875 ± 0.125 |');
    expect(md).toContain('mean ± standard error over the seeds that finished');
    expect(md).toContain('- pact-s2: out of memory');
    expect(md).toContain('Backend: wasm.');
  });

  it('says n=1 rather than a made-up ± 0, and – for no value', () => {
    expect(formatCell({ n: 1, mean: 0.25, std: Number.NaN }, 1)).toBe('0.250 (n=1)');
    expect(formatCell({ n: 0, mean: Number.NaN, std: Number.NaN }, 3)).toBe('–');
  });

  it('writes table.csv with full precision and empty std for n < 2', () => {
    const csv = formatTableCsv(buildTable(RUNS, ['eval/solve_f1', 'reward']));
    const lines = csv.trim().split('\n');
    expect(lines[0]).toBe(
      'method,n,eval/solve_f1_mean,eval/solve_f1_std,eval/solve_f1_se,eval/solve_f1_n,reward_mean,reward_std,reward_se,reward_n',
    );
    const pact = lines[2].split(',');
    expect(pact.slice(0, 2)).toEqual(['pact', '2']);
    expect(Number(pact[2])).toBeCloseTo(0.3, 15);
    expect(Number(pact[3])).toBeCloseTo(0.1414213562373095, 15);
    expect(Number(pact[4])).toBeCloseTo(0.1, 15); // 0.1414 / √2
    expect(pact[5]).toBe('2');
    expect(pact.slice(6, 8)).toEqual(['0.875', String(Math.sqrt(0.03125))]);
    expect(Number(pact[8])).toBeCloseTo(0.125, 15);
    expect(pact[9]).toBe('2');
    const one = formatTableCsv(buildTable([run('x', 1, [{ step: 1, values: { reward: 0.5 } }])]));
    expect(one.trim().split('\n')[1]).toBe('x,1,0.5,,,1');
  });
});

describe('buildCurves', () => {
  it('averages finished seeds per step', () => {
    const [vanilla, pact] = buildCurves(RUNS, 'reward');
    expect(vanilla).toMatchObject({ method: 'vanilla', steps: [1], mean: [0] });
    // step 1: 0.5, 0.25 → 0.375; step 2: 1.0, 0.75 → 0.875
    expect(pact.steps).toEqual([1, 2]);
    expect(pact.mean).toEqual([0.375, 0.875]);
    expect(pact.std[0]).toBeCloseTo(Math.sqrt(2 * 0.125 ** 2), 15);
  });
});

describe('results.json and bit-for-bit comparison', () => {
  it('sorts steps, turns NaN into null, and writes JSON without NaN', () => {
    const steps = toStepRecords([
      { step: 2, values: { b: 1, a: Number.NaN } },
      { step: 1, values: { a: 0.1 } },
    ]);
    expect(steps).toEqual([
      { step: 1, values: { a: 0.1 } },
      { step: 2, values: { a: null, b: 1 } },
    ]);
    const text = formatResultsJson({ x: Number.NaN } as never);
    expect(text).toBe('{\n  "x": null\n}\n');
  });

  it('finds any differing bit, ignoring only the machine metrics', () => {
    const a = [run('p', 1, [{ step: 1, values: { reward: 0.1, seconds: 3, 'tokens/s': 9 } }])];
    const same = [run('p', 1, [{ step: 1, values: { reward: 0.1, seconds: 4, 'tokens/s': 7, 'time/update_s': 2 } }])];
    expect(compareRunMetrics(a, same)).toEqual([]);
    const off = [run('p', 1, [{ step: 1, values: { reward: 0.1 + 1e-17 * 2 ** 3, seconds: 3, 'tokens/s': 9 } }])];
    // 0.1 + 8e-17 is the next double after 0.1
    expect(compareRunMetrics(a, off)).toEqual([`p-s1 step 1: reward 0.1 vs ${0.1 + 8e-17}`]);
    const negZero = [run('p', 1, [{ step: 1, values: { reward: -0, seconds: 3, 'tokens/s': 9 } }])];
    const zero = [run('p', 1, [{ step: 1, values: { reward: 0, seconds: 3, 'tokens/s': 9 } }])];
    expect(compareRunMetrics(zero, negZero)).toHaveLength(1);
    expect(compareRunMetrics(a, [])).toContain('p-s1: missing in the second experiment');
  });
});

describe('--resume: pickResumableRuns', () => {
  const STEPS = [{ step: 1, values: { reward: 0.5 } }];
  const planned = [
    { id: 'pact-s1', config: CONFIG },
    { id: 'pact-s2', config: CONFIG },
    { id: 'grpo-s1', config: { ...CONFIG, lr: 5e-5 } },
    { id: 'sft-s1', config: CONFIG },
  ];
  const stored = (r: RunResult, backend = 'wasm'): RunResult => ({
    ...r,
    config: { ...r.config, backend } as RunResult['config'],
  });

  it('keeps finished runs whose stored config is the planned one on this backend, and nothing else', () => {
    // Key order of the stored config must not matter: rebuild it with its keys reversed.
    const reordered = stored(run('pact', 2, STEPS));
    reordered.config = Object.fromEntries(Object.entries(reordered.config).reverse()) as RunResult['config'];
    const kept = pickResumableRuns(
      planned,
      [
        stored(run('pact', 1, STEPS)), // finished, same config → kept
        reordered, // same config, other key order → kept
        stored(run('grpo', 1, STEPS)), // lr 2e-4 stored, 5e-5 planned → runs again
        stored(run('sft', 1, STEPS), 'webgpu'), // other backend → runs again
        stored(run('chord', 1, STEPS)), // not planned → ignored
        null,
        { id: 'x' },
      ],
      'wasm',
    );
    expect([...kept.keys()]).toEqual(['pact-s1', 'pact-s2']);
    expect(kept.get('pact-s1')?.steps).toEqual(STEPS);
  });

  it('runs a failed run again', () => {
    expect(pickResumableRuns(planned, [stored(run('pact', 1, STEPS, 'failed', 'boom'))], 'wasm').size).toBe(0);
  });

  it('keeps a run stored before a field was added (filled with its default), not one whose field changed or the schema rejects', () => {
    // A run written before toolsearcher.topK / resultLimits existed: its config lacks them.
    const older = stored(run('pact', 1, STEPS));
    const { topK: _topK, resultLimits: _limits, ...olderSearch } = older.config.toolsearcher;
    older.config = { ...older.config, toolsearcher: olderSearch } as RunResult['config'];
    expect([...pickResumableRuns(planned, [older], 'wasm').keys()]).toEqual(['pact-s1']);
    // The same field with another value than today's default: compared, so it runs again.
    const otherTopK = stored(run('pact', 1, STEPS));
    otherTopK.config = { ...otherTopK.config, toolsearcher: { ...otherTopK.config.toolsearcher, topK: 5 } };
    expect(pickResumableRuns(planned, [otherTopK], 'wasm').size).toBe(0);
    // A field the schema no longer has.
    const unknownField = stored(run('pact', 1, STEPS));
    unknownField.config = { ...unknownField.config, retired: 1 } as RunResult['config'];
    expect(pickResumableRuns(planned, [unknownField], 'wasm').size).toBe(0);
  });
});

describe('--smoke', () => {
  it('keeps the runs and their knobs, takes the first seed, and shrinks the size', () => {
    const file = {
      base: {
        recipe: 'pact',
        steps: 24,
        rolloutsPerPrompt: 8,
        maxResponseTokens: 256,
        tasks: { nTrain: 256, nTest: 32, trainSeed: 5 },
      },
      runs: [
        { name: 'q0', pact: { anchorProb: 0 } },
        { name: 'big', maxResponseTokens: 512 },
      ],
      seeds: [7, 8, 9],
    };
    const smoke = shrinkForSmoke(file);
    expect(smoke.file.seeds).toEqual([7]);
    const ex = expandExperiment(smoke.file, { overrides: smoke.overrides });
    expect(ex.runs.map((r) => r.id)).toEqual(['q0-s7', 'big-s7']);
    for (const r of ex.runs) {
      expect(r.config).toMatchObject({
        steps: 2,
        rolloutsPerPrompt: 2,
        batchPrompts: 1,
        miniBatchPrompts: 1,
        evalEvery: 2,
        checkpointEvery: 0,
      });
      expect(r.config.tasks).toMatchObject({ nTrain: 8, nTest: 2, trainSeed: 5 });
    }
    // Turns and tokens: at most the Quick size's 4 and 576, a run's own when smaller (the base's 256).
    expect(ex.runs.map((r) => [r.config.maxTurns, r.config.maxResponseTokens])).toEqual([
      [4, 256],
      [4, 512],
    ]);
    expect(ex.runs[0].config.pact.anchorProb).toBe(0);
    expect(shrinkForSmoke({}).file.seeds).toEqual([1]);
    expect(SMOKE_OVERRIDES.steps).toBe(2);
  });

  it('a search recipe keeps its turns and response tokens under --smoke; a tool-use one keeps at most 4 turns and 576 tokens', () => {
    const file = {
      name: 'mixed',
      base: { maxTurns: 4, maxResponseTokens: 1536, maxPromptTokens: 512, tasks: { nTrain: 128, nTest: 200 } },
      runs: [
        { name: 'ts', recipe: 'toolsearcher' },
        { name: 'r1', recipe: 'search_r1', maxTurns: 3 },
        { name: 'pact' },
      ],
    };
    const smoke = shrinkForSmoke(file);
    const ex = expandExperiment(smoke.file, { overrides: smoke.overrides });
    const byName = new Map(ex.runs.map((r) => [r.name, r.config]));
    expect(byName.get('ts')).toMatchObject({ maxTurns: 4, maxResponseTokens: 1536, steps: 2, rolloutsPerPrompt: 2 });
    expect(byName.get('r1')).toMatchObject({ maxTurns: 3, maxResponseTokens: 1536, steps: 2 });
    expect(byName.get('pact')).toMatchObject({ maxTurns: 4, maxResponseTokens: 576, steps: 2 });
    for (const c of byName.values()) expect(c.tasks).toMatchObject({ nTrain: 8, nTest: 2 });
  });
});
