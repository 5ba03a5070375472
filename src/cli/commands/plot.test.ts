// pact plot over metrics.jsonl files written as pact train writes them (ToolSearcher Fig. 5:
// search rounds per episode over training steps, with and without ESM).
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getCommand } from '../registry';
import { meanOverRuns, metricPoints, parseMetricsJsonl } from './plot';

// The PNG comes from Chromium (rasterize.ts); here a stand-in records the call and writes a marker file.
const rasterized = vi.hoisted(() => [] as { svg: string; outPath: string }[]);
vi.mock('../rasterize', () => ({
  rasterizeSvg: async (svg: string, outPath: string) => {
    rasterized.push({ svg, outPath });
    const { writeFile: write } = await import('node:fs/promises');
    await write(outPath, 'png');
  },
}));

let root: string;
const runsDir = () => path.join(root, 'toolsearcher', 'runs');
const metricsOf = (id: string) => path.join(runsDir(), id, 'metrics.jsonl');

/** A run's metrics.jsonl: one step line per value (null = not logged), an eval line after step 2. */
function jsonl(run: string, searchRounds: (number | null)[]): string {
  const lines = searchRounds.map((v, i) =>
    JSON.stringify({ type: 'step', run, step: i + 1, reward: 0.5, 'reward/search_rounds': v }),
  );
  lines.splice(2, 0, JSON.stringify({ type: 'eval', run, step: 2, 'eval/search_rounds': 3 }));
  return lines.join('\n') + '\n';
}

async function plot(...args: string[]): Promise<{ code: number; out: string[] }> {
  const out: string[] = [];
  const code = await getCommand('plot').run(args, { out: (l) => out.push(l), err: () => {} });
  return { code, out };
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'pact-plot-'));
  for (const [id, values] of [
    ['toolsearcher-s1', [2, 3, 3.5, 4]],
    ['toolsearcher without ESM-s1', [2, 2.5, null, 2]],
    ['toolsearcher-s2', [4, 5, 1.5, 6]],
    ['toolsearcher without ESM-s2', [4, 3.5, 9, 4]],
  ] as const) {
    await mkdir(path.dirname(metricsOf(id)), { recursive: true });
    await writeFile(metricsOf(id), jsonl(id, [...values]));
  }
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('pact plot', () => {
  it('reads one metric of a run in step order, leaving out steps without it', async () => {
    const file = metricsOf('toolsearcher without ESM-s1');
    const rows = parseMetricsJsonl(await readFile(file, 'utf8'), file);
    expect(metricPoints(rows, 'reward/search_rounds')).toEqual([
      [1, 2],
      [2, 2.5],
      [4, 2],
    ]);
    expect(metricPoints(rows, 'eval/search_rounds')).toEqual([[2, 3]]);
  });

  it('draws one metric of two runs, each series named by its run id', async () => {
    const png = path.join(root, 'fig5-ids.png');
    const files = `${metricsOf('toolsearcher-s1')},${metricsOf('toolsearcher without ESM-s1')}`;
    const { code, out } = await plot('--metrics', files, '--metric', 'reward/search_rounds', '--out', png);
    expect(code).toBe(0);
    expect(out).toEqual([`wrote ${png.replace(/\.png$/, '.svg')} and ${png} (2 series)`]);
    const svg = await readFile(png.replace(/\.png$/, '.svg'), 'utf8');
    expect(rasterized.at(-1)).toEqual({ svg, outPath: png });
    expect(svg).toContain('>toolsearcher-s1</text>');
    expect(svg).toContain('>toolsearcher without ESM-s1</text>');
  });

  it('--labels names the series, one label per file in order', async () => {
    const png = path.join(root, 'fig5.png');
    const files = `${metricsOf('toolsearcher-s1')},${metricsOf('toolsearcher without ESM-s1')}`;
    const args = ['--metrics', files, '--metric', 'reward/search_rounds', '--out', png];
    expect((await plot(...args, '--labels', 'ToolSearcher,w/o ESM')).code).toBe(0);
    const svg = await readFile(path.join(root, 'fig5.svg'), 'utf8');
    expect(svg).toContain('>ToolSearcher</text>');
    expect(svg).toContain('>w/o ESM</text>');
    expect(svg).not.toContain('toolsearcher-s1');
    // one file, one label: the label, not the metric, names the series
    expect(
      (
        await plot(
          '--metrics',
          metricsOf('toolsearcher-s1'),
          '--metric',
          'reward/search_rounds',
          '--out',
          png,
          '--labels',
          'ToolSearcher',
        )
      ).code,
    ).toBe(0);
    expect(await readFile(path.join(root, 'fig5.svg'), 'utf8')).toContain('>ToolSearcher</text>');
    await expect(plot(...args, '--labels', 'ToolSearcher')).rejects.toThrow(
      '--labels needs one non-empty label per --metrics file (2), got "ToolSearcher"',
    );
    await expect(plot(...args, '--labels', 'ToolSearcher,')).rejects.toThrow('--labels needs one non-empty label');
  });

  it('files with one label are seeds of a row: one series, their mean at the steps all of them have', async () => {
    // By hand: s1 [2, 3, 3.5, 4] and s2 [4, 5, 1.5, 6] → [3, 4, 2.5, 5]; without ESM, s1 lacks step 3,
    // so steps 1, 2, 4 of [2, 2.5, –, 2] and [4, 3.5, 9, 4] → [3, 3, 3] and step 3 is left out.
    const read = async (id: string) =>
      metricPoints(parseMetricsJsonl(await readFile(metricsOf(id), 'utf8'), id), 'reward/search_rounds');
    expect(meanOverRuns([await read('toolsearcher-s1'), await read('toolsearcher-s2')])).toEqual([
      [1, 3],
      [2, 4],
      [3, 2.5],
      [4, 5],
    ]);
    expect(
      meanOverRuns([await read('toolsearcher without ESM-s1'), await read('toolsearcher without ESM-s2')]),
    ).toEqual([
      [1, 3],
      [2, 3],
      [4, 3],
    ]);
    const png = path.join(root, 'fig5-seeds.png');
    const ids = ['toolsearcher-s1', 'toolsearcher without ESM-s1', 'toolsearcher-s2', 'toolsearcher without ESM-s2'];
    const { code, out } = await plot(
      '--metrics',
      ids.map(metricsOf).join(','),
      '--metric',
      'reward/search_rounds',
      '--labels',
      'ToolSearcher,w/o ESM,ToolSearcher,w/o ESM',
      '--out',
      png,
    );
    expect(code).toBe(0);
    expect(out[0]).toContain('(2 series)');
    const svg = await readFile(path.join(root, 'fig5-seeds.svg'), 'utf8');
    expect(svg).toContain('>ToolSearcher (mean of 2 runs)</text>');
    expect(svg).toContain('>w/o ESM (mean of 2 runs)</text>');
  });
});
