import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { getCommand } from '../registry';
import './table';

// --plot's PNG comes from Chromium (rasterize.ts); here a stand-in records the call and writes a marker file.
const rasterized = vi.hoisted(() => [] as { svg: string; size: { width: number; height: number } }[]);
vi.mock('../rasterize', () => ({
  rasterizeSvg: async (svg: string, outPath: string, size: { width: number; height: number }) => {
    rasterized.push({ svg, size });
    const { writeFile: write } = await import('node:fs/promises');
    await write(outPath, 'png');
  },
}));

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

// The frozen control is PACT at lr 1e-12: both rows train on MatchTIR's reward, so their train rewards pair.
const config = (name: string, seed: number, steps = 2) => ({
  name,
  recipe: 'pact',
  matching: 'hungarian',
  unmatchedPenalty: 0,
  seed,
  steps,
  evalSamples: 0,
  tasks: { nTest: 200, testSeed: 3 },
});
const lines = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

describe('pact table', () => {
  it('reads pact train run folders into the table and pairs each row with the frozen control by seed', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'pact-table-'));
    dirs.push(root);
    const runs = path.join(root, 'pilot', 'runs');
    const write = async (id: string, cfg: object, rows: object[]) => {
      await mkdir(path.join(runs, id), { recursive: true });
      await writeFile(path.join(runs, id, 'config.json'), JSON.stringify(cfg));
      await writeFile(path.join(runs, id, 'metrics.jsonl'), lines(rows));
    };
    // Train rewards at steps 1–2 and held-out F1 at step 2, easy to pair by hand.
    await write('frozen-s1', config('frozen', 1), [
      { type: 'step', step: 1, reward: 1.0 },
      { type: 'step', step: 2, reward: 0.8 },
    ]);
    await write('frozen-s2', config('frozen', 2), [
      { type: 'step', step: 1, reward: 0.6 },
      { type: 'step', step: 2, reward: 1.0 },
    ]);
    await write('pact-s1', config('pact', 1), [
      { type: 'step', step: 1, reward: 1.2 },
      { type: 'step', step: 2, reward: 1.0 },
      { type: 'eval', step: 2, 'eval/solve_f1': 0.6 },
    ]);
    await write('pact-s2', config('pact', 2), [
      { type: 'step', step: 1, reward: 0.6 },
      { type: 'step', step: 2, reward: 0.8 },
      { type: 'eval', step: 2, 'eval/solve_f1': 0.4 },
    ]);
    // An unfinished run is reported as such and left out of the cells.
    await write('pact-s3', config('pact', 3), [{ type: 'step', step: 1, reward: 0.1 }]);
    const out: string[] = [];
    const file = path.join(root, 'table.md');
    const code = await getCommand('table').run(['--runs', runs, '--out', file], {
      out: (l) => out.push(l),
      err: () => {},
    });
    expect(code).toBe(0);
    const md = await readFile(file, 'utf8');
    expect(md).toContain('| Method | n | Solve-F1 | Train reward (last step) |');
    // pact F1 0.6, 0.4: 0.5 ± 0.1414/√2 = 0.100; reward at the last step 1.0, 0.8: 0.9 ± 0.100
    expect(md).toContain('| pact | 2 | 0.500 ± 0.100 | 0.900 ± 0.100 |');
    expect(md).toContain('- pact-s3: unfinished: last step 1 of 2');
    // pact − frozen, train reward step by step: seed 1 (+0.2, +0.2) → +0.2, seed 2 (0, −0.2) → −0.1:
    // mean +0.05, sd 0.2121, se 0.150, 1 of 2 above.
    expect(md).toContain('| pact − frozen | – | +0.050 ± 0.150 (1/2) |');
    expect(md).toContain('Held out: 200 tasks of the test world of seed 3, one greedy rollout each.');
    // A train-split held-out world is named as such, and a table mixing it with the test world warns.
    await write('frozen-s3', { ...config('frozen', 3), tasks: { nTest: 200, testSeed: 12, testSplit: 'train' } }, []);
    await getCommand('table').run(['--runs', runs, '--out', file], { out: () => {}, err: () => {} });
    expect(await readFile(file, 'utf8')).toContain(
      "Warning: the runs' held-out sets differ (200 tasks of the test world of seed 3; 200 tasks of the train-split world of seed 12).",
    );
  });

  it('search runs: held-out queries of the training repository, search rounds, and the train F1 paired by seed', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'pact-table-'));
    dirs.push(root);
    const write = async (id: string, cfg: object, rows: object[]) => {
      await mkdir(path.join(root, id), { recursive: true });
      await writeFile(path.join(root, id, 'config.json'), JSON.stringify(cfg));
      await writeFile(path.join(root, id, 'metrics.jsonl'), lines(rows));
    };
    const search = (name: string, seed: number) => ({
      ...config(name, seed),
      recipe: 'toolsearcher',
      toolsearcher: { formatBonus: 0.1 },
      tasks: { source: 'generated', nTest: 200, trainSeed: 4, testSeed: 11 },
    });
    const step = (s: number, reward: number, f1: number) => ({ type: 'step', step: s, reward, 'reward/f1': f1 });
    const evalRow = (f1: number) => ({ type: 'eval', step: 2, 'eval/f1': f1, 'eval/search_rounds': 2 });
    await write('frozen-s1', search('frozen', 1), [step(1, 0.5, 0.4), step(2, 0.5, 0.4)]);
    await write('toolsearcher-s1', search('toolsearcher', 1), [step(1, 0.6, 0.5), step(2, 0.7, 0.6), evalRow(0.7)]);
    await write('vanilla-s1', { ...search('vanilla', 1), steps: 0 }, [evalRow(0.65)]);
    const file = path.join(root, 'table.md');
    await getCommand('table').run(['--runs', root, '--out', file], { out: () => {}, err: () => {} });
    const md = await readFile(file, 'utf8');
    // The held-out queries come from the repository of trainSeed (testSeed is not read by search runs).
    expect(md).toContain('Held out: 200 queries held out of the tool repository generated from seed 4, one greedy');
    expect(md).toContain('| Method | n | F1 | Search rounds | Train reward (last step) |');
    // Train F1 by step: (0.5 − 0.4, 0.6 − 0.4) → +0.150; held out: 0.7 − 0.65 = +0.050. No answer-F1 column.
    expect(md).toContain(
      '| Row − control | F1 | Search rounds | Train reward (mean over steps) | Train F1 (mean over steps) |',
    );
    expect(md).toContain(
      '| toolsearcher − frozen (held out: − vanilla) | +0.050 (1/1) | 0.000 (0/1) | +0.150 (1/1) | +0.150 (1/1) |',
    );
    expect(md).not.toContain('Train answer F1');
  });

  it('names a train-split held-out world', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'pact-table-'));
    dirs.push(root);
    const dir = path.join(root, 'pact-s1');
    await mkdir(dir, { recursive: true });
    const cfg = { ...config('pact', 1), tasks: { nTest: 200, testSeed: 12, testSplit: 'train' } };
    await writeFile(path.join(dir, 'config.json'), JSON.stringify(cfg));
    await writeFile(path.join(dir, 'metrics.jsonl'), lines([{ type: 'eval', step: 2, 'eval/solve_f1': 0.5 }]));
    const file = path.join(root, 'table.md');
    await getCommand('table').run(['--runs', root, '--out', file], { out: () => {}, err: () => {} });
    expect(await readFile(file, 'utf8')).toContain(
      "Held out: 200 tasks of the train-split world of seed 12 (testSplit 'train': names from the training pool), one greedy rollout each.",
    );
  });

  it('pools several folders (links to run folders count) and refuses a run id found twice', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'pact-table-'));
    dirs.push(root);
    const write = async (dir: string, id: string, cfg: object, rows: object[]) => {
      await mkdir(path.join(root, dir, id), { recursive: true });
      await writeFile(path.join(root, dir, id, 'config.json'), JSON.stringify(cfg));
      await writeFile(path.join(root, dir, id, 'metrics.jsonl'), lines(rows));
    };
    await write('control', 'frozen-s1', config('frozen', 1), [
      { type: 'step', step: 1, reward: 1.0 },
      { type: 'step', step: 2, reward: 0.8 },
    ]);
    await write('store', 'pact-s1', config('pact', 1), [
      { type: 'step', step: 1, reward: 1.3 },
      { type: 'step', step: 2, reward: 1.1 },
    ]);
    await mkdir(path.join(root, 'ablation'));
    await symlink(path.join(root, 'store', 'pact-s1'), path.join(root, 'ablation', 'pact-s1'));
    const out: string[] = [];
    const run = (runs: string) => getCommand('table').run(['--runs', runs], { out: (l) => out.push(l), err: () => {} });
    expect(await run(`${path.join(root, 'ablation')},${path.join(root, 'control')}`)).toBe(0);
    // pact − frozen, seed 1: (+0.3, +0.3) → +0.3; one seed, no standard error.
    expect(out.join('\n')).toContain('| pact − frozen | +0.300 (1/1) |');
    await expect(run(`${path.join(root, 'ablation')},${path.join(root, 'store')}`)).rejects.toThrow(
      /run pact-s1 is in both/,
    );
  });

  it('--plot draws one metric of the paired rows as a forest plot, each labelled with the control it was paired with', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'pact-table-'));
    dirs.push(root);
    const runs = path.join(root, 'study', 'runs');
    const write = async (id: string, cfg: object, rows: object[]) => {
      await mkdir(path.join(runs, id), { recursive: true });
      await writeFile(path.join(runs, id, 'config.json'), JSON.stringify(cfg));
      await writeFile(path.join(runs, id, 'metrics.jsonl'), lines(rows));
    };
    for (const seed of [1, 2]) {
      await write(`vanilla-s${seed}`, config('vanilla', seed, 0), [{ type: 'eval', step: 0, 'eval/solve_f1': 0.5 }]);
      await write(`frozen-s${seed}`, config('frozen', seed), [
        { type: 'step', step: 1, reward: 1.0 },
        { type: 'step', step: 2, reward: 1.0 },
      ]);
    }
    // pact: F1 0.6, 0.4 (d = +0.1, −0.1 against vanilla); reward +0.2, +0.4 above frozen.
    // matchtir: one seed, F1 0.55 (d = +0.05), reward +0.1.
    const trained = (name: string, seed: number, f1: number, reward: number) =>
      write(`${name}-s${seed}`, config(name, seed), [
        { type: 'step', step: 1, reward },
        { type: 'step', step: 2, reward },
        { type: 'eval', step: 2, 'eval/solve_f1': f1 },
      ]);
    await trained('pact', 1, 0.6, 1.2);
    await trained('pact', 2, 0.4, 1.4);
    await trained('matchtir', 1, 0.55, 1.1);
    const out: string[] = [];
    const run = (...extra: string[]) =>
      getCommand('table').run(['--runs', runs, ...extra], { out: (l) => out.push(l), err: () => {} });
    const png = path.join(root, 'fig.png');
    expect(await run('--plot', png)).toBe(0);
    expect(out.at(-1)).toBe(`wrote ${path.join(root, 'fig.svg')} and ${png} (eval/solve_f1, 3 rows)`);
    expect(await readFile(png, 'utf8')).toBe('png');
    const svg = await readFile(path.join(root, 'fig.svg'), 'utf8');
    expect(rasterized.at(-1)!.svg).toBe(svg);
    // The PNG is taken at the SVG's own size.
    const [, width, height] = /<svg [^>]*width="(\d+)" height="(\d+)"/.exec(svg)!;
    expect(rasterized.at(-1)!.size).toEqual({ width: Number(width), height: Number(height) });
    // Held-out rows read "− vanilla" (the table's "pact − frozen (held out: − vanilla)"), in the table's order.
    const labels = [...svg.matchAll(/text-anchor="end" dominant-baseline="middle" fill="#111">([^<]*)</g)].map(
      (m) => m[1],
    );
    expect(labels).toEqual(['matchtir − vanilla', 'pact − vanilla', 'pact − matchtir']);
    // matchtir − vanilla: 0.55 − 0.5; pact − matchtir pairs seed 1 only (0.6 − 0.55): both one seed.
    expect(svg.match(/>\+0\.050, n=1<\/text>/g)).toHaveLength(2);
    expect(svg).toContain('>0.000 ± 0.100, n=2</text>');
    // The subtitle, wrapped over several lines: what the marks are, n, and which control.
    const text = [...svg.matchAll(/>([^<]*)<\/text>/g)].map((m) => m[1]).join(' ');
    expect(text).toContain('study: Solve-F1, each row minus its control, paired by seed');
    expect(text).toContain('(n = 1–2 seeds per row, given at right)');
    expect(text).toContain('Diamond and bar: mean ± 1 standard error (sd / √n); whisker: ± 2 SE');
    expect(text).toContain('vanilla (the warm start, evaluated) stands in for frozen, which is never evaluated');

    // A train metric is paired with frozen, and its rows say so.
    expect(await run('--plot', png, '--plot-metric', 'reward/mean_over_steps')).toBe(0);
    const reward = await readFile(path.join(root, 'fig.svg'), 'utf8');
    expect(reward).toContain('>pact − frozen</text>');
    expect(reward).toContain('>+0.300 ± 0.100, n=2</text>'); // (+0.2, +0.4)
    expect(reward).not.toContain('stands in for');

    await expect(run('--plot', png, '--plot-metric', 'eval/nope')).rejects.toThrow(
      '--plot-metric eval/nope: not a paired metric here; one of: eval/solve_f1, reward/mean_over_steps,',
    );
    await expect(run('--plot', path.join(root, 'fig.svg'))).rejects.toThrow('--plot must end in .png');
    await expect(run('--plot-metric', 'eval/solve_f1')).rejects.toThrow('--plot-metric needs --plot FIG.png');
  });

  describe('numerics: which engine, backend, kernels and commit the runs were made with', () => {
    const provenance = (over: object = {}) => ({
      commit: 'b04d4d86622d4320ba3d97bc0185ea81de254b4b',
      engine: 'cpu-engine',
      backend: 'wasm',
      threads: 1,
      cpu: 'AMD EPYC',
      node: 'v20.20.2',
      ...over,
    });
    const finished = [
      { type: 'step', step: 1, reward: 1.0 },
      { type: 'step', step: 2, reward: 0.8 },
    ];
    /** frozen-s1, frozen-s2, pact-s1, pact-s2: each with config.json (plus `config`), metrics and provenance.json (null: none). */
    const table = async (runsOf: Record<string, { config?: object; provenance: object | string | null }>) => {
      const root = await mkdtemp(path.join(tmpdir(), 'pact-table-'));
      dirs.push(root);
      const runs = path.join(root, 'study', 'runs');
      for (const [id, { config: extra, provenance: prov }] of Object.entries(runsOf)) {
        const [name, seed] = id.split('-s');
        await mkdir(path.join(runs, id), { recursive: true });
        await writeFile(
          path.join(runs, id, 'config.json'),
          JSON.stringify({ ...config(name, Number(seed)), ...extra }),
        );
        await writeFile(path.join(runs, id, 'metrics.jsonl'), lines(finished));
        if (prov !== null)
          await writeFile(
            path.join(runs, id, 'provenance.json'),
            typeof prov === 'string' ? prov : JSON.stringify(prov),
          );
      }
      const out: string[] = [];
      const err: string[] = [];
      const file = path.join(root, 'table.md');
      const code = await getCommand('table').run(['--runs', runs, '--out', file], {
        out: (l) => out.push(l),
        err: (l) => err.push(l),
      });
      expect(code).toBe(0);
      const md = await readFile(file, 'utf8');
      // The header: between the title and the table.
      const header = md.slice(0, md.indexOf('| Method |')).trim().split('\n\n').slice(1);
      return { md, header, err };
    };

    it('all on simd kernels (config.json with the field or without): one line says which numerics, no warning', async () => {
      const { header, err, md } = await table({
        'frozen-s1': { provenance: provenance() },
        'frozen-s2': { config: { engineKernels: 'simd' }, provenance: provenance() },
        'pact-s1': { provenance: provenance() },
        // Threads do not change the bits: no warning on them.
        'pact-s2': { config: { engineKernels: 'simd' }, provenance: provenance({ threads: 2 }) },
      });
      expect(header).toEqual([
        'Numerics: cpu-engine, wasm, simd kernels, 1–2 threads (the same bits on any count) (all 4 runs).',
        'Runs made at commit b04d4d8 (4 runs).',
      ]);
      expect(err).toEqual([]);
      expect(md).not.toMatch(/warning/i);
      expect(md).toContain('| pact | 2 |');
    });

    it('one run on fma kernels: a warning naming it and its row, on stderr and in the header', async () => {
      const { header, err } = await table({
        'frozen-s1': { provenance: provenance() },
        'frozen-s2': { provenance: provenance() },
        'pact-s1': { config: { engineKernels: 'simd' }, provenance: provenance() },
        'pact-s2': { config: { engineKernels: 'fma' }, provenance: provenance({ engine: 'cpu-engine+fma' }) },
      });
      const warning =
        'the runs were not all made with the same numerics, so these rows are not comparable bit for bit: ' +
        'engine kernels fma in pact-s2 (row pact), simd in frozen-s1, frozen-s2, pact-s1 (rows frozen, pact).';
      expect(header[0]).toBe(`Warning: ${warning}`);
      expect(header).not.toContainEqual(expect.stringMatching(/^Numerics:/));
      expect(err).toEqual([`warning: ${warning}`]);
      // "+fma" is the kernels; the engine is the same cpu-engine.
      expect(header[0]).not.toContain('engine cpu-engine');
    });

    it('a different engine or backend is named too, and kernels the folder contradicts are said', async () => {
      const { header, err } = await table({
        'frozen-s1': { provenance: provenance() },
        'frozen-s2': { provenance: provenance({ backend: 'cpu' }) },
        'pact-s1': { provenance: provenance() },
        // An old config (no engineKernels) whose provenance says fma; a config that says simd where provenance says fma.
        'pact-s2': { config: { engineKernels: 'simd' }, provenance: provenance({ engine: 'cpu-engine+fma' }) },
      });
      expect(header[0]).toContain('backend cpu in frozen-s2 (row frozen), wasm in frozen-s1, pact-s1, pact-s2');
      expect(header[0]).not.toContain('engine kernels');
      expect(header[1]).toBe(
        "Warning: pact-s2's config.json says engineKernels simd but its provenance.json's engine is cpu-engine+fma (fma kernels); the table takes simd.",
      );
      expect(err).toHaveLength(2);
      const old = await table({
        'frozen-s1': { provenance: provenance() },
        'pact-s1': { provenance: provenance({ engine: 'cpu-engine+fma' }) },
      });
      expect(old.header[0]).toContain('engine kernels simd in frozen-s1 (row frozen), fma in pact-s1 (row pact).');
    });

    it('runs without provenance.json: said so, in the header and on stderr, and the rest still described', async () => {
      const some = await table({
        'frozen-s1': { provenance: null },
        'frozen-s2': { provenance: provenance() },
        'pact-s1': { provenance: '{"commit": "b04d4d8", ' }, // cut short: read as none
        'pact-s2': { provenance: provenance() },
      });
      expect(some.header).toEqual([
        'Numerics: cpu-engine, wasm, simd kernels, 1 thread (engine and backend as the 2 runs with provenance.json record them).',
        'Runs made at commit b04d4d8 (2 runs); 2 runs record no commit: frozen-s1, pact-s1.',
        "No provenance.json in frozen-s1, pact-s1 (2 of 4 runs): the commit, engine and backend they ran on are not recorded (scripts/studyQueue.sh writes it); their engine kernels are config.json's.",
      ]);
      expect(some.err).toHaveLength(2);
      expect(some.err[0]).toMatch(/^warning: .*pact-s1\/provenance\.json does not read as JSON/);
      expect(some.err[1]).toBe(`note: ${some.header[2]}`);
      const none = await table({ 'frozen-s1': { provenance: null }, 'pact-s1': { provenance: null } });
      expect(none.header).toEqual([
        'Numerics: engine not recorded, backend not recorded, simd kernels (engine kernels from config.json; engine and backend not recorded).',
        'No run records the commit it was made at.',
        "No provenance.json in any of the 2 runs: the commit, engine and backend they ran on are not recorded (scripts/studyQueue.sh writes it); their engine kernels are config.json's.",
      ]);
      expect(none.md).toContain('| pact | 1 |');
    });

    it('lists each commit with its run count (a short hash and its full form are one commit)', async () => {
      const { header, err } = await table({
        'frozen-s1': { provenance: provenance() },
        'frozen-s2': { provenance: provenance({ commit: 'b04d4d8' }) },
        'pact-s1': { provenance: provenance() },
        'pact-s2': { provenance: provenance({ commit: '232f19c0000000000000000000000000000000ab' }) },
      });
      expect(header).toEqual([
        'Numerics: cpu-engine, wasm, simd kernels, 1 thread (all 4 runs).',
        'Runs made at commits b04d4d8 (3 runs), 232f19c (1 run).',
      ]);
      // Commits alone are no numerics difference.
      expect(err).toEqual([]);
    });
  });

  it('names a folder without runs', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'pact-table-'));
    dirs.push(root);
    await expect(getCommand('table').run(['--runs', root], { out: () => {}, err: () => {} })).rejects.toThrow(
      /no run folders/,
    );
  });
});
