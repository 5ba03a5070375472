import { describe, expect, it } from 'vitest';
import {
  CHART_SPECS,
  buildAlignedSeries,
  computeYAxisSize,
  describeEvalPoints,
  fitFlatRange,
  formatTickValue,
  formatCsvCell,
  formatMetricValue,
  formatMetricsCsv,
  mergeMetricPoints,
  readLatestValues,
  selectChartKeys,
  toFileName,
  toMetricPoint,
  type RunMetrics,
} from './metricSeries';
import type { StepMetrics } from '../recipes/types';

const spec = (id: string) => CHART_SPECS.find((s) => s.id === id)!;

describe('metric rows → points', () => {
  it('keeps the numeric fields of a step row and drops the recipe name', () => {
    const row = { step: 3, recipe: 'pact', reward: 0.5, 'loss/Lh': Number.NaN } as unknown as StepMetrics;
    const p = toMetricPoint(row);
    expect(p.step).toBe(3);
    expect(Object.keys(p.values).sort()).toEqual(['loss/Lh', 'reward']);
    expect(p.values.reward).toBe(0.5);
  });

  it('merges eval rows into their step, later values winning, sorted by step', () => {
    const merged = mergeMetricPoints(
      [
        { step: 2, values: { reward: 0.2 } },
        { step: 1, values: { reward: 0.1 } },
      ],
      [{ step: 2, values: { 'eval/solve_f1': 0.4, reward: 0.25 } }],
    );
    expect(merged).toEqual([
      { step: 1, values: { reward: 0.1 } },
      { step: 2, values: { reward: 0.25, 'eval/solve_f1': 0.4 } },
    ]);
    expect(() => mergeMetricPoints([{ step: Number.NaN, values: {} }])).toThrow('non-numeric step');
  });
});

describe('aligned chart series', () => {
  const a: RunMetrics = {
    runId: 'a',
    label: 'run A',
    points: [
      { step: 1, values: { reward: 0.1, 'loss/Lx': 1.5, 'loss/Lh': Number.NaN } },
      { step: 2, values: { reward: 0.3, 'loss/Lx': 1.25 } },
    ],
  };
  const b: RunMetrics = {
    runId: 'b',
    label: 'run B',
    points: [
      { step: 2, values: { reward: 0.5, 'loss/Lh': 2 } },
      { step: 4, values: { reward: 0.75 } },
    ],
  };

  it('aligns two runs on the union of their steps with null gaps', () => {
    const d = buildAlignedSeries([a, b], spec('reward').keys);
    // steps {1,2} ∪ {2,4} = [1, 2, 4]
    expect(d.xs).toEqual([1, 2, 4]);
    expect(d.series.map((s) => [s.label, s.ys])).toEqual([
      ['run A', [0.1, 0.3, null]],
      ['run B', [null, 0.5, 0.75]],
    ]);
  });

  it('draws only loss terms with data; NaN is a gap, not a zero', () => {
    const keys = selectChartKeys(spec('loss'), [a, b]);
    expect(keys.map((k) => k.key)).toEqual(['loss/Lx', 'loss/Lh']); // no run has loss/SFT
    const d = buildAlignedSeries([a, b], keys);
    // Lx at steps 1,2 (run A); Lh only at step 2 (run B; run A's NaN at 1 is a gap) → xs [1, 2]
    expect(d.xs).toEqual([1, 2]);
    expect(d.series.map((s) => [s.runId, s.key, s.ys])).toEqual([
      ['a', 'loss/Lx', [1.5, 1.25]],
      ['b', 'loss/Lh', [null, 2]],
    ]);
    expect(d.series[0].label).toBe('run A — L^x_RL (prompt-only)');
  });

  it('shows Solve-R/P/F1 for a tool-use run and selection metrics for a tool-search run', () => {
    const toolUse: RunMetrics = {
      runId: 't',
      label: 't',
      points: [{ step: 4, values: { 'eval/solve_r': 0.5, 'eval/solve_p': 1, 'eval/solve_f1': 2 / 3 } }],
    };
    const search: RunMetrics = {
      runId: 's',
      label: 's',
      points: [{ step: 4, values: { 'eval/f1': 0.2, 'eval/recall': 0.3, 'eval/solve_f1': Number.NaN } }],
    };
    expect(selectChartKeys(spec('eval'), [toolUse]).map((k) => k.label)).toEqual(['Solve-R', 'Solve-P', 'Solve-F1']);
    expect(selectChartKeys(spec('eval'), [search]).map((k) => k.label)).toEqual(['selection F1', 'selection recall']);
  });

  it('reads the latest finite value of each series', () => {
    const d = buildAlignedSeries([a, b], spec('reward').keys);
    expect(readLatestValues(d)).toEqual([
      { label: 'run A', step: 2, value: 0.3 },
      { label: 'run B', step: 4, value: 0.75 },
    ]);
  });
});

describe('CSV', () => {
  it('quotes text with commas or quotes and leaves non-finite numbers empty', () => {
    expect(formatCsvCell('pact, q=0.4')).toBe('"pact, q=0.4"');
    expect(formatCsvCell('say "hi"')).toBe('"say ""hi"""');
    expect(formatCsvCell(Number.NaN)).toBe('');
    expect(formatCsvCell(0.1)).toBe('0.1');
    expect(formatCsvCell(undefined)).toBe('');
  });

  it('writes one line per run and step, metric columns sorted, blanks where absent', () => {
    const csv = formatMetricsCsv([
      { runId: 'r1', label: 'pact, seed 1', points: [{ step: 1, values: { reward: 0.5, kl: 0.001 } }] },
      {
        runId: 'r2',
        label: 'grpo',
        points: [
          { step: 1, values: { reward: 0.25 } },
          { step: 2, values: { reward: Number.NaN, kl: 2e-3 } },
        ],
      },
    ]);
    expect(csv).toBe(
      'run_id,run_label,step,kl,reward\n' +
        'r1,"pact, seed 1",1,0.001,0.5\n' +
        'r2,grpo,1,,0.25\n' +
        'r2,grpo,2,0.002,\n',
    );
  });

  it('writes the step once when the stored values also hold it (the worker stores step in them)', () => {
    // Rows as the worker stores them: the step's values include `step`, a resumed run's too.
    const csv = formatMetricsCsv([
      {
        runId: 'r',
        label: 'pact',
        points: [
          { step: 0, values: { step: 0, 'eval/solve_f1': 0.5 } },
          { step: 1, values: { step: 1, reward: 0.25 } },
          { step: 2, values: { reward: 0.5 } },
        ],
      },
    ]);
    expect(csv).toBe('run_id,run_label,step,eval/solve_f1,reward\nr,pact,0,0.5,\nr,pact,1,,0.25\nr,pact,2,,0.5\n');
  });
});

describe('formatting', () => {
  it('gives 4 significant digits, e-notation outside [1e-3, 1e5)', () => {
    expect(formatMetricValue(0.123456)).toBe('0.1235');
    expect(formatMetricValue(1234.5)).toBe('1235'); // 1234.5 → 4 s.f. rounds half up: 1235
    expect(formatMetricValue(0.0001234)).toBe('1.23e-4');
    expect(formatMetricValue(Number.NaN)).toBe('—');
    expect(formatMetricValue(0)).toBe('0');
  });

  it('makes safe file names', () => {
    expect(toFileName('pact · run 3/4')).toBe('pact-run-3-4');
    expect(toFileName('···')).toBe('export');
  });
});

describe('chart axes', () => {
  it('gives a flat series a range around its value, not 0–100, and leaves varying data to the library', () => {
    expect(fitFlatRange(0, 0)).toEqual([0, 1]);
    expect(fitFlatRange(0.2, 0.2)).toEqual([0.1, 0.30000000000000004]);
    expect(fitFlatRange(-2, -2)).toEqual([-3, -1]);
    expect(fitFlatRange(0, 0.5)).toBeNull();
    expect(fitFlatRange(null, null)).toBeNull();
  });

  it('writes ticks short and sizes the y axis to its widest tick label', () => {
    expect(formatTickValue(0.0002)).toBe('0.0002');
    expect(formatTickValue(0.30000000000000004)).toBe('0.3');
    expect(formatTickValue(1.5e-7)).toBe('1.5e-7');
    // tick 10 + gap 5 + 47.3 px of text + 2 = 64.3 → 65
    expect(computeYAxisSize(47.3, { tickPx: 10, gapPx: 5 })).toBe(65);
  });
});

describe('what the held-out points are', () => {
  const run = (values: Record<string, number>[], label = 'run A'): RunMetrics => ({
    runId: label,
    label,
    points: values.map((v, i) => ({ step: i * 2, values: v })),
  });

  it('says how many tasks each point averages, and that flat lines at 1 are measured', () => {
    const solved = { 'eval/solve_r': 1, 'eval/solve_p': 1, 'eval/solve_f1': 1, nTasks: 4, nRollouts: 4 };
    expect(describeEvalPoints([run([solved, solved, solved], 'recorded demo run (pact)')])).toEqual([
      '4 held-out tasks per point, one greedy rollout each (step 0, 2, 4). Every task is solved at every evaluation: the lines at 1 are measured, not a placeholder.',
    ]);
  });

  it('explains Solve-P 1 with Solve-R 0 as no tool call at all, only where it happens, run by run', () => {
    const noCalls = { 'eval/solve_r': 0, 'eval/solve_p': 1, 'eval/solve_f1': 0, nTasks: 8, nRollouts: 16 };
    const some = { 'eval/solve_r': 0.5, 'eval/solve_p': 0.75, 'eval/solve_f1': 0.6, nTasks: 8, nRollouts: 16 };
    expect(describeEvalPoints([run([{ reward: 1 }, some, noCalls]), run([some], 'run B')])).toEqual([
      'run A: 8 held-out tasks per point, 2 sampled rollouts each (step 2, 4). Step 4: Solve-P 1 with Solve-R 0 means no tool call on any task (a task without calls has Solve-P 1).',
      'run B: 8 held-out tasks per point, 2 sampled rollouts each (step 0).',
    ]);
    expect(describeEvalPoints([run([{ reward: 1 }])])).toEqual([]);
  });
});
