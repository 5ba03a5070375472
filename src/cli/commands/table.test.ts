import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getCommand } from '../registry';
import './table';

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

  it('names a folder without runs', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'pact-table-'));
    dirs.push(root);
    await expect(getCommand('table').run(['--runs', root], { out: () => {}, err: () => {} })).rejects.toThrow(
      /no run folders/,
    );
  });
});
