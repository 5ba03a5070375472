/**
 * The exported parquet files as VeRL reads them: VeRL's RLHFDataset loads them with
 * `datasets.load_dataset("parquet")`, which reads through pyarrow. pyarrow (not a Debian
 * bookworm package) reads the three files back equal to the export's JSON lines, the rows
 * parsed independently of the parquet writer; a NaN double (a held-out row's λa) is the JSON
 * lines' null. Runs when a python can import pyarrow: /usr/bin/python3 or python3, with
 * $PACT_PYARROW_PYTHONPATH on its path (a folder a pyarrow wheel was unpacked into with
 * `pip install --target`); else skips, saying so.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportVerl } from './exportVerl';

const ENV = process.env.PACT_PYARROW_PYTHONPATH
  ? { ...process.env, PYTHONPATH: process.env.PACT_PYARROW_PYTHONPATH }
  : process.env;

function findPyarrowPython(): { python?: string; reason?: string } {
  for (const python of ['/usr/bin/python3', 'python3']) {
    if (spawnSync(python, ['-c', 'import pyarrow.parquet'], { stdio: 'ignore', env: ENV }).status === 0)
      return { python };
  }
  return {
    reason:
      'no python3 can import pyarrow (not packaged in Debian bookworm): unpack a pyarrow wheel with ' +
      '`pip install --no-deps --target DIR pyarrow-….whl` and set PACT_PYARROW_PYTHONPATH=DIR',
  };
}

const found = findPyarrowPython();
if (!found.python) console.warn(`pyarrowRead.test.ts skipped: ${found.reason}`);

const READ = `
import json, math, sys
import pyarrow.parquet as pq
def clean(v):
    if isinstance(v, float) and math.isnan(v): return None
    if isinstance(v, dict): return {k: clean(x) for k, x in v.items()}
    if isinstance(v, list): return [clean(x) for x in v]
    return v
out = {}
for name in ("train", "test", "sft"):
    t = pq.read_table(f"{sys.argv[1]}/data/{name}.parquet")
    out[name] = {"columns": t.schema.names, "rows": clean(t.to_pylist())}
print(json.dumps(out))
`;

describe.skipIf(!found.python)('the exported parquet files through pyarrow', () => {
  it('read back equal to the JSON lines of the same rows (train, held-out, SFT)', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'pact-pyarrow-'));
    const configPath = path.join(root, 'tiny.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        name: 'tiny',
        base: {
          recipe: 'pact',
          tasks: { source: 'generated', trainSeed: 4, testSeed: 6, nTrain: 4, nTest: 3, categories: ['multi_hop'] },
          steps: 3,
          batchPrompts: 2,
          miniBatchPrompts: 1,
          rolloutsPerPrompt: 4,
        },
        runs: [{ name: 'pact' }],
        seeds: [2],
      }),
    );
    const dir = path.join(root, 'out');
    await exportVerl({ configPath, outDir: dir });
    const r = spawnSync(found.python!, ['-c', READ, dir], { encoding: 'utf8', env: ENV, maxBuffer: 256 << 20 });
    expect(r.status, r.stderr).toBe(0);
    const read = JSON.parse(r.stdout) as Record<string, { columns: string[]; rows: unknown[] }>;
    const lines = (name: string) =>
      readFileSync(path.join(dir, `data/${name}.json`), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const name of ['train', 'test', 'sft']) {
      const expected = lines(name);
      expect(read[name].rows.length, name).toBe(expected.length);
      expect(read[name].columns, name).toEqual(Object.keys(expected[0]));
      expect(read[name].rows, name).toEqual(expected);
    }
    expect(read.train.rows.length).toBe(6); // steps × batchPrompts
    expect(read.test.rows.length).toBe(3);
  }, 120_000);
});
