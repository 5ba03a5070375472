import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeTable1, parseEstimate, readCell, readMeasuredTable } from './table1View';

const TABLE1 = readFileSync(new URL('../../results/table1/table.md', import.meta.url), 'utf8');

describe('parseEstimate', () => {
  it('reads mean ± se, paired counts, single seeds and "–"', () => {
    expect(parseEstimate('0.593 ± 0.015')).toEqual({ mean: 0.593, se: 0.015, above: null, paired: null });
    expect(parseEstimate('+0.078 ± 0.017 (5/5)')).toEqual({ mean: 0.078, se: 0.017, above: 5, paired: 5 });
    expect(parseEstimate('-0.000 ± 0.015 (3/5)')).toMatchObject({ se: 0.015, above: 3 });
    expect(parseEstimate('−0.006 ± 0.013')).toMatchObject({ mean: -0.006 });
    expect(parseEstimate('0.250 (n=1)')).toEqual({ mean: 0.25, se: null, above: null, paired: null });
    expect(parseEstimate('0.3 ± 0.1 (n=3)')).toMatchObject({ mean: 0.3, se: 0.1 });
    expect(parseEstimate('–')).toBeNull();
    expect(() => parseEstimate('about 0.5')).toThrow('not a table cell: "about 0.5"');
  });
});

describe('results/table1/table.md', () => {
  const t = readMeasuredTable(TABLE1);

  it('has the 10 rows (9 methods + frozen), the paired table and its header lines', () => {
    const names = t.main.rows.map((r) => r[0]);
    expect(names).toHaveLength(10);
    expect(names).toContain('pact');
    expect(names).toContain('frozen');
    expect(t.main.header.slice(0, 2)).toEqual(['Method', 'n']);
    expect(t.main.header).toContain('Solve-F1');
    expect(readCell(t.main, 'pact', 'Solve-F1')).toMatch(/^\d\.\d{3} ± \d\.\d{3}$/);
    expect(t.paired?.rows.map((r) => r[0])).toContain('pact − matchtir');
    expect(t.numerics).toMatch(/^Numerics: /);
    expect(t.commits).toMatch(/^Runs made at commit /);
    expect(t.heldOut).toMatch(/^Held out: \d+ tasks/);
    expect(t.mainNote).toMatch(/^Cells: /);
    expect(t.pairedNote).toMatch(/^Each cell: /);
    // Every cell of both tables reads as an estimate or "–".
    for (const table of [t.main, t.paired!]) for (const r of table.rows) r.slice(1).forEach((c) => parseEstimate(c));
  });

  it("is read true: every claim of the reading holds, and its numbers are the table's cells", () => {
    const reading = describeTable1(t);
    expect(reading.failedClaims).toEqual([]);
    expect(reading.whatItShows).toContain(readCell(t.main, 'sft', 'Solve-F1'));
    for (const [row, column] of [
      ['pact − frozen', 'Solve-F1'],
      ['pact − matchtir', 'Solve-F1'],
      ['pact − frozen', 'Train reward (mean over steps)'],
    ]) {
      const [, estimate, above, paired] = /^(.+) \((\d+)\/(\d+)\)$/.exec(readCell(t.paired!, row, column))!;
      expect(reading.whatItShows).toContain(`${estimate}, ${above} of ${paired} seeds above`);
    }
    expect(reading.howToRead).toContain(readCell(t.main, 'pact', 'Solve-F1'));
    expect(reading.howToRead).toContain(`Held out: ${/\d+ tasks/.exec(t.heldOut!)![0]}`);
  });

  it('withholds the reading when the table no longer bears it out', () => {
    const changed = TABLE1.replace(
      /^\| sft \| 5 \| [^|]+\| [^|]+\| [^|]+\|/m,
      '| sft | 5 | 0.1 ± 0.01 | 0.1 ± 0.01 | 0.100 ± 0.010 |',
    );
    expect(changed).not.toBe(TABLE1);
    const reading = describeTable1(readMeasuredTable(changed));
    expect(reading.whatItShows).toBeNull();
    expect(reading.failedClaims[0]).toMatch(/^the rows with the highest Solve-F1 are sft_then_matchtir, chord/);
  });
});
