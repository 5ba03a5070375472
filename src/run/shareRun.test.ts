import { afterEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expandExperiment } from './experimentFile';
import { shareRun } from './shareRun';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Two experiment files in a temp dir; A's row "full" and B's row "same" differ only in name, B's "other" in lr. */
function setup(): { dir: string; a: string; b: string; results: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'share-run-'));
  dirs.push(dir);
  const base = { model: { preset: 'qwen3-nano' }, steps: 2, lr: 3e-5, pact: { anchorProb: 0 } };
  const a = path.join(dir, 'A.json');
  const b = path.join(dir, 'B.json');
  fs.writeFileSync(a, JSON.stringify({ name: 'exp-a', base, runs: [{ name: 'full', recipe: 'pact' }], seeds: [1] }));
  fs.writeFileSync(
    b,
    JSON.stringify({
      name: 'exp-b',
      base,
      runs: [
        { name: 'Seg A + Scale A', recipe: 'pact' },
        { name: 'other', recipe: 'pact', lr: 1e-4 },
      ],
      seeds: [1],
    }),
  );
  const results = path.join(dir, 'results');
  return { dir, a, b, results };
}

/** A finished run of A's "full-s1" as the study queue leaves it, config.json without `fieldToDrop`. */
function finishRun(a: string, results: string, fieldToDrop?: string): string {
  const ex = expandExperiment(JSON.parse(fs.readFileSync(a, 'utf8')));
  const run = ex.runs.find((r) => r.id === 'full-s1')!;
  const src = path.join(results, 'exp-a', 'runs', 'full-s1');
  fs.mkdirSync(src, { recursive: true });
  const config = { ...(run.config as unknown as Record<string, unknown>) };
  if (fieldToDrop?.includes('.')) {
    const [outer, inner] = fieldToDrop.split('.');
    const nested = { ...(config[outer] as Record<string, unknown>) };
    delete nested[inner];
    config[outer] = nested;
  } else if (fieldToDrop) delete config[fieldToDrop];
  fs.writeFileSync(path.join(src, 'config.json'), JSON.stringify(config));
  fs.writeFileSync(path.join(src, 'metrics.jsonl'), '{"step":1,"reward":0.5}\n{"step":2,"eval/solve_f1":0.61}\n');
  fs.writeFileSync(path.join(src, 'provenance.json'), JSON.stringify({ commit: 'b04d4d8', engine: 'cpu-engine' }));
  return src;
}

describe('shareRun', () => {
  it("copies a finished run into the other file's row of the same configuration, renamed, with where it came from", () => {
    const { a, b, results } = setup();
    finishRun(a, results);
    const r = shareRun(a, 'full-s1', b, 'Seg A + Scale A-s1', results);
    const dst = path.join(results, 'exp-b', 'runs', 'Seg A + Scale A-s1');
    expect(r.to).toBe(dst);
    expect(fs.readFileSync(path.join(dst, 'metrics.jsonl'), 'utf8')).toBe(
      '{"step":1,"reward":0.5}\n{"step":2,"eval/solve_f1":0.61}\n',
    );
    const config = JSON.parse(fs.readFileSync(path.join(dst, 'config.json'), 'utf8'));
    expect(config.name).toBe('Seg A + Scale A');
    expect(config.lr).toBe(3e-5);
    expect(config.recipe).toBe('pact');
    expect(JSON.parse(fs.readFileSync(path.join(dst, 'provenance.json'), 'utf8'))).toEqual({
      commit: 'b04d4d8',
      engine: 'cpu-engine',
      same_run_as: 'exp-a/full-s1',
    });
  });

  it('refuses rows whose configurations differ, naming the field', () => {
    const { a, b, results } = setup();
    finishRun(a, results);
    expect(() => shareRun(a, 'full-s1', b, 'other-s1', results)).toThrow(/differ in lr: run it/);
    expect(fs.existsSync(path.join(results, 'exp-b'))).toBe(false);
  });

  it('refuses a run that has not finished, and an unknown run id', () => {
    const { a, b, results } = setup();
    expect(() => shareRun(a, 'full-s1', b, 'Seg A + Scale A-s1', results)).toThrow(/has no metrics.jsonl/);
    expect(() => shareRun(a, 'full-s9', b, 'Seg A + Scale A-s1', results)).toThrow(/has no run "full-s9"/);
  });

  it("accepts a config.json without a field added after the run's commit, but not one that records another value", () => {
    const { a, b, results } = setup();
    const src = finishRun(a, results, 'engineKernels');
    expect(() => shareRun(a, 'full-s1', b, 'Seg A + Scale A-s1', results)).not.toThrow();
    const config = JSON.parse(fs.readFileSync(path.join(src, 'config.json'), 'utf8'));
    fs.writeFileSync(path.join(src, 'config.json'), JSON.stringify({ ...config, lr: 1e-4 }));
    expect(() => shareRun(a, 'full-s1', b, 'Seg A + Scale A-s1', results)).toThrow(/config.json is not .* \(lr\)/);
  });

  it('ignores a nested field added after the run (tasks.testSplit), not a nested value it recorded', () => {
    const { a, b, results } = setup();
    const src = finishRun(a, results, 'tasks.testSplit');
    expect(JSON.parse(fs.readFileSync(path.join(src, 'config.json'), 'utf8')).tasks.testSplit).toBeUndefined();
    expect(() => shareRun(a, 'full-s1', b, 'Seg A + Scale A-s1', results)).not.toThrow();
    const config = JSON.parse(fs.readFileSync(path.join(src, 'config.json'), 'utf8'));
    fs.writeFileSync(
      path.join(src, 'config.json'),
      JSON.stringify({ ...config, tasks: { ...config.tasks, testSeed: 99 } }),
    );
    expect(() => shareRun(a, 'full-s1', b, 'Seg A + Scale A-s1', results)).toThrow(
      /config.json is not .* \(tasks\.testSeed\)/,
    );
  });
});
