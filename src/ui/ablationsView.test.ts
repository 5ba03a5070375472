import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ABLATIONS, describeAblation, specTablePath, TOOLSEARCHER_TABLE } from './ablationsView';
import { pairedInWords, parseEstimate, readMeasuredTable } from './table1View';

/** A table.md in `pact table`'s shape with the paired cells given: [row, Solve-F1, train reward]. */
function tableWith(rows: [string, string, string][]): string {
  return [
    '# toy',
    '',
    '| Method | n | Solve-F1 |',
    '|---|---:|---:|',
    ...rows.map(([name]) => `| ${name} | 3 | 0.600 ± 0.010 |`),
    '',
    '## Paired by seed',
    '',
    '| Row − control | Solve-F1 | Train reward (mean over steps) |',
    '|---|---:|---:|',
    ...rows.map(([name, f1, train]) => `| ${name} − frozen (held out: − vanilla) | ${f1} | ${train} |`),
    '| A − B | +0.900 ± 0.001 (3/3) | +0.900 ± 0.001 (3/3) |',
    '',
    'Held out: 200 tasks of the test world of seed 11, one greedy rollout each.',
  ].join('\n');
}

const SPEC = { name: 'toy', title: 'Toy', paperRow: 'paper', paperRowWords: 'the paper’s row' };

describe('describeAblation', () => {
  it('names the highest and lowest rows, the rows above in every seed, and where the paper’s row stands', () => {
    const t = readMeasuredTable(
      tableWith([
        ['paper', '-0.010 ± 0.020 (1/3)', '+0.090 ± 0.010 (3/3)'],
        ['up', '+0.050 ± 0.010 (3/3)', '+0.070 ± 0.010 (3/3)'],
        ['mixed', '+0.020 ± 0.030 (2/3)', '+0.010 ± 0.020 (2/3)'],
        ['down', '-0.100 ± 0.010 (0/3)', '+0.080 ± 0.010 (3/3)'],
      ]),
    );
    const r = describeAblation(t, SPEC);
    expect(r.problems).toEqual([]);
    // By hand: the highest Solve-F1 mean is "up" (+0.050), the lowest "down" (−0.100); only "up"
    // is above in 3 of 3; the paper's row is not the highest; "mixed" has a seed below on the
    // train reward; the largest train gain is the paper row's +0.090. The "A − B" row is not a
    // row against the frozen copy and is left out (its +0.900 would otherwise lead).
    expect(r.text).toContain('the highest of the 4 rows is up: +0.050 ± 0.010, 3 of 3 seeds above');
    expect(r.text).toContain('the lowest is down: -0.100 ± 0.010, 0 of 3 seeds above');
    expect(r.text).toContain('Above the warm start in every seed: up.');
    expect(r.text).toContain('is paper here, at -0.010 ± 0.020, 1 of 3 seeds above, below up in mean');
    expect(r.text).toContain("not every row's reward is above the frozen copy's in every seed");
    expect(r.text).toContain("the largest gain is paper's (+0.090 ± 0.010, 3 of 3 seeds above)");
    expect(r.text).not.toContain('0.900');
  });

  it('says when the paper’s row is the highest, and when no row is above in every seed', () => {
    const t = readMeasuredTable(
      tableWith([
        ['paper', '+0.010 ± 0.020 (2/3)', '+0.090 ± 0.010 (3/3)'],
        ['other', '-0.010 ± 0.020 (1/3)', '+0.080 ± 0.010 (3/3)'],
      ]),
    );
    const r = describeAblation(t, SPEC);
    expect(r.text).toContain("The paper's configuration, the paper’s row, is the highest here too.");
    expect(r.text).toContain('No row is above the warm start in every seed.');
    expect(r.text).toContain("every row's reward is above the frozen copy's in every seed");
  });

  it('gives no reading, and says why, when the table lacks the paper’s row or its paired table', () => {
    const noPaper = readMeasuredTable(
      tableWith([
        ['a', '+0.010 ± 0.020 (2/3)', '+0.090 ± 0.010 (3/3)'],
        ['b', '+0.020 ± 0.020 (2/3)', '+0.090 ± 0.010 (3/3)'],
      ]),
    );
    expect(describeAblation(noPaper, SPEC)).toEqual({
      text: null,
      problems: ['no paired row for the paper\'s configuration "paper"'],
    });
    const unpaired = readMeasuredTable('# x\n\n| Method | n |\n|---|---:|\n| a | 3 |\n');
    expect(describeAblation(unpaired, SPEC).problems).toEqual(['the file has no "Paired by seed" table']);
  });

  it('pairedInWords spells out the seed count', () => {
    expect(pairedInWords('+0.043 ± 0.011 (3/3)')).toBe('+0.043 ± 0.011, 3 of 3 seeds above');
    expect(pairedInWords('0.5 ± 0.1')).toBe('0.5 ± 0.1');
  });
});

describe('the committed ablation tables', () => {
  for (const spec of ABLATIONS) {
    const path = new URL(`../../results/${spec.name}/table-with-frozen.md`, import.meta.url);
    it(`${spec.name}: every row has 3 seeds, and the reading holds the highest row's own cell`, () => {
      expect(existsSync(path), `${path.pathname} is missing: run pact table (docs/results.md)`).toBe(true);
      const t = readMeasuredTable(readFileSync(path, 'utf8'));
      const n = t.main.header.indexOf('n');
      for (const r of t.main.rows) expect(r[n], `row ${r[0]}`).toBe('3');
      expect(t.heldOut).toMatch(/^Held out: 200 tasks/);
      const reading = describeAblation(t, spec);
      expect(reading.problems).toEqual([]);
      // The highest row, found here independently of the reader: the paired row with the largest Solve-F1 mean.
      const col = t.paired!.header.indexOf('Solve-F1');
      const best = t
        .paired!.rows.filter((r) => r[0].endsWith(' − frozen (held out: − vanilla)'))
        .map((r) => ({ name: r[0].split(' − frozen')[0], cell: r[col], mean: parseEstimate(r[col])!.mean }))
        .sort((a, b) => b.mean - a.mean)[0];
      expect(reading.text).toContain(`is ${best.name}: ${pairedInWords(best.cell)}`);
    });
  }
});

describe('the committed ToolSearcher table', () => {
  const path = new URL(`../../${specTablePath(TOOLSEARCHER_TABLE)}`, import.meta.url);
  it('is read by F1 as the ablations are by Solve-F1: its highest row, its rows above in every seed, its paper row', () => {
    expect(existsSync(path), `${path.pathname} is missing: run pact table on results/toolsearcher/runs`).toBe(true);
    const t = readMeasuredTable(readFileSync(path, 'utf8'));
    const n = t.main.header.indexOf('n');
    for (const r of t.main.rows) expect(r[n], `row ${r[0]}`).toBe('3');
    expect(t.heldOut).toMatch(/^Held out: 200 queries/);
    const reading = describeAblation(t, TOOLSEARCHER_TABLE);
    expect(reading.problems).toEqual([]);
    // Found here from the F1 cells, independently of the reader: the largest mean, and the rows whose
    // seeds are all above the warm start.
    const col = t.paired!.header.indexOf('F1');
    const rows = t
      .paired!.rows.filter((r) => r[0].endsWith(' − frozen (held out: − vanilla)'))
      .map((r) => ({ name: r[0].split(' − frozen')[0], cell: r[col], e: parseEstimate(r[col])! }));
    const best = [...rows].sort((a, b) => b.e.mean - a.e.mean)[0];
    expect(reading.text).toContain('against the warm start (F1, paired by seed)');
    expect(reading.text).toContain(`is ${best.name}: ${pairedInWords(best.cell)}`);
    const all = rows.filter((r) => r.e.paired !== null && r.e.above === r.e.paired).map((r) => r.name);
    for (const name of all) expect(reading.text).toContain(name);
    expect(reading.text).toContain('ToolSearcher itself');
  });
});
