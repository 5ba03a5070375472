import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../main';
import { evaluateFtrl } from './evalFtrl';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const dataDir = path.resolve(repoRoot, process.env.PACT_DATA_DIR ?? '../shared/data');
const ftrlTest = path.join(dataDir, 'ftrl', 'test.jsonl');
const hasData = existsSync(ftrlTest);
if (!hasData)
  console.warn(
    `evalFtrl.test: shared data missing at ${ftrlTest} (set PACT_DATA_DIR); the FTRL file tests are skipped`,
  );

function captureIO() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

// Tasks of ../shared/data/ftrl/test.jsonl used below (0-based line index):
//   0   self/single_hop           {historical_event_finder: ["2007-11-7"]}
//   1   self/single_hop           {political_successor_finder: ["Mishal Al-Ahmad Al-Jaber Al-Sabah."]}
//   50  self/multi_hop            6 tools, one answer each: port_amenity_locator "Seattle Port",
//                                 business_locator "Seattle Bait Store", regional_fish_identifier "Salmon", …
//   100 self/parallel_single_hop  {unified_specification_retriever: ["1,024", "1,024"]}
const predictionLines = [
  // task 0: 1 call solves 1 of 1 → P 1, R 1, F1 2·1/(1+1) = 1
  JSON.stringify({ index: 0, calls: [{ name: 'historical_event_finder', output: 'The leak happened on 2007-11-7.' }] }),
  // task 1: 2 calls solve 0 of 1 → P 0, R 0, F1 0
  JSON.stringify({
    index: 1,
    calls: [
      { name: 'political_successor_finder', output: 'unknown' },
      { name: 'other', output: 'x' },
    ],
  }),
  // task 50: 4 calls solve 3 of 6 (the second Salmon call finds nothing left) → P 3/4, R 3/6, F1 2·3/(4+6) = 0.6
  JSON.stringify({
    index: 50,
    calls: [
      { name: 'port_amenity_locator', output: 'Seattle Port' },
      { name: 'business_locator', output: 'the seattle bait store' },
      { name: 'regional_fish_identifier', output: 'Salmon' },
      { name: 'regional_fish_identifier', output: 'salmon' },
    ],
  }),
  'this line is not json', // line 4
  JSON.stringify({ index: 9999, calls: [] }), // line 5: no such task
  JSON.stringify({ index: 0, calls: [] }), // line 6: second prediction for task 0
  JSON.stringify({ index: 2, calls: 'x' }), // line 7: calls not an array
  // task 100 by id (its line index, the file has no id field); an object output is compared as its
  // JSON text '{"size":"1,024"}' → '{"size":"1024"}' contains '1024': 1 call solves 1 of 2
  // → P 1, R 1/2, F1 2·1/(1+2) = 2/3
  JSON.stringify({ id: '100', calls: [{ name: 'unified_specification_retriever', output: { size: '1,024' } }] }),
];
// per category: single_hop (tasks 0, 1): R (1+0)/2 = 0.5, P 0.5, F1 0.5
//               multi_hop (50): R 0.5, P 0.75, F1 0.6
//               parallel_single_hop (100): R 0.5, P 1, F1 2/3
// overall (4 tasks): R (1+0+0.5+0.5)/4 = 0.5, P (1+0+0.75+1)/4 = 0.6875,
//                    F1 (1+0+0.6+2/3)/4 = 0.5666…

describe.skipIf(!hasData)('pact eval-ftrl on ../shared/data/ftrl/test.jsonl', () => {
  let dir = '';
  let predictions = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pact-eval-ftrl-'));
    predictions = path.join(dir, 'predictions.jsonl');
    await writeFile(predictions, predictionLines.join('\n') + '\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('--json gives the hand-computed per-category and overall numbers', async () => {
    const { io, out, err } = captureIO();
    const code = await main(['eval-ftrl', '--tasks', ftrlTest, '--predictions', predictions, '--json'], io);
    expect(code).toBe(0);
    const report = JSON.parse(out.join('\n'));
    const byName = Object.fromEntries(report.categories.map((c: { category: string }) => [c.category, c]));
    expect(Object.keys(byName)).toEqual(['self/multi_hop', 'self/parallel_single_hop', 'self/single_hop']);
    expect(byName['self/single_hop']).toEqual({
      category: 'self/single_hop',
      tasks: 2,
      solveR: 0.5,
      solveP: 0.5,
      solveF1: 0.5,
    });
    expect(byName['self/multi_hop']).toEqual({
      category: 'self/multi_hop',
      tasks: 1,
      solveR: 0.5,
      solveP: 0.75,
      solveF1: 0.6,
    });
    expect(byName['self/parallel_single_hop'].solveP).toBe(1);
    expect(byName['self/parallel_single_hop'].solveF1).toBeCloseTo(2 / 3, 12);
    expect(report.overall.tasks).toBe(4);
    expect(report.overall.solveR).toBe(0.5);
    expect(report.overall.solveP).toBe(0.6875);
    expect(report.overall.solveF1).toBeCloseTo((1 + 0 + 0.6 + 2 / 3) / 4, 12);
    expect(report.tasksWithoutPrediction).toBe(196); // 200 − 4
    // the malformed lines are reported with their line numbers and skipped
    expect(report.problems.map((p: { line: number }) => p.line)).toEqual([4, 5, 6, 7]);
    expect(err).toContain('predictions line 5: no task at index 9999 (skipped)');
    expect(err).toContain('predictions line 6: a second prediction for task 0 (skipped)');
    expect(err.some((l) => l.startsWith('predictions line 4: invalid JSON'))).toBe(true);
    expect(err.some((l) => l.startsWith('predictions line 7: calls must be an array'))).toBe(true);
  });

  it('prints a table in percent', async () => {
    const { io, out } = captureIO();
    expect(await main(['eval-ftrl', '--tasks', ftrlTest, '--predictions', predictions], io)).toBe(0);
    expect(out[0]).toMatch(/^category\s+tasks\s+Solve-R\s+Solve-P\s+Solve-F1$/);
    expect(out).toContain(`${'self/multi_hop'.padEnd(24)}      1     50.00     75.00     60.00`);
    // overall: 50.00, 68.75, 56.67
    expect(out[out.length - 1]).toMatch(/^overall\s+4\s+50\.00\s+68\.75\s+56\.67$/);
  });

  it('--missing-as-empty scores the other 196 tasks as making no calls (P 1, R 0, F1 0 each)', async () => {
    const { io, out } = captureIO();
    expect(
      await main(['eval-ftrl', '--tasks', ftrlTest, '--predictions', predictions, '--json', '--missing-as-empty'], io),
    ).toBe(0);
    const { overall } = JSON.parse(out.join('\n'));
    // P (2.75 + 196)/200 = 0.99375; R 2/200 = 0.01; F1 (1 + 0.6 + 2/3)/200
    expect(overall.tasks).toBe(200);
    expect(overall.solveP).toBeCloseTo(0.99375, 12);
    expect(overall.solveR).toBeCloseTo(0.01, 12);
    expect(overall.solveF1).toBeCloseTo((1.6 + 2 / 3) / 200, 12);
  });
});

describe('pact eval-ftrl on small hand-made files', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'pact-eval-ftrl-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts unsolved_set as an object, finds tasks by id, and skips a bad task line', async () => {
    const tasks = path.join(dir, 'tasks.jsonl');
    const preds = path.join(dir, 'preds.jsonl');
    await writeFile(
      tasks,
      [
        JSON.stringify({ id: 't1', category: 'demo', unsolved_set: { f: ['A', 'B'] } }),
        JSON.stringify({ id: 't2', data_source: 'demo', unsolved_set: '{not json' }),
        '',
        JSON.stringify({ id: 't3', unsolved_set: { g: [1] } }),
      ].join('\n'),
    );
    // t1: 3 calls solve 2 of 2 → P 2/3, R 1, F1 2·2/(3+2) = 0.8
    await writeFile(
      preds,
      JSON.stringify({
        id: 't1',
        calls: [
          { name: 'f', output: 'b' },
          { name: 'f', output: 'x' },
          { name: 'f', output: 'a' },
        ],
      }) + '\n',
    );
    const { io, out, err } = captureIO();
    expect(await main(['eval-ftrl', '--tasks', tasks, '--predictions', preds, '--json'], io)).toBe(0);
    const report = JSON.parse(out.join('\n'));
    expect(report.categories).toHaveLength(1);
    expect(report.categories[0].solveP).toBeCloseTo(2 / 3, 12);
    expect(report.overall).toMatchObject({ tasks: 1, solveR: 1, solveF1: 0.8 });
    expect(err).toContain('tasks line 2: unsolved_set is a string but not valid JSON (skipped)');
    expect(err).toContain('tasks line 4: unsolved_set["g"] must be an array of strings (skipped)');
  });

  it('scores an empty prediction file as nothing scored (exit 1) without dying', () => {
    const report = evaluateFtrl(JSON.stringify({ unsolved_set: { f: ['a'] } }), '');
    expect(report.overall.tasks).toBe(0);
    expect(report.tasksWithoutPrediction).toBe(1);
  });

  it('names a missing file and a missing flag', async () => {
    const a = captureIO();
    expect(
      await main(
        ['eval-ftrl', '--tasks', path.join(dir, 'nope.jsonl'), '--predictions', path.join(dir, 'nope2.jsonl')],
        a.io,
      ),
    ).toBe(2);
    expect(a.err.join('\n')).toMatch(/cannot read --tasks .*nope\.jsonl: ENOENT/);
    const b = captureIO();
    expect(await main(['eval-ftrl', '--tasks', 'x.jsonl'], b.io)).toBe(2);
    expect(b.err.join('\n')).toMatch(/needs --tasks FILE.jsonl and either --predictions FILE.jsonl or --model DIR/);
  });

  it('is listed in pact --help', async () => {
    const { io, out } = captureIO();
    await main(['--help'], io);
    expect(out.join('\n')).toMatch(/eval-ftrl\s+score FTRL predictions/);
  });
});
