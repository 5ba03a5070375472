/**
 * `pact train --config` on an FTRL source (src/run/ftrlTaskSplit.ts): a random full-vocabulary
 * Qwen3 on two hand-written FTRL lines trains one step, evaluates on the held-out line and
 * writes task-split.json beside metrics.jsonl.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../model/backend';
import { getNodeWasmPaths } from '../../model/qwen3/node';
import { writeRandomFtrlFixture } from '../../run/ftrlTestLines';
import { main } from '../main';

let dir: string;
let folder: string;
let tasksFile: string;

beforeAll(async () => {
  await selectBackend('wasm', { wasmPaths: getNodeWasmPaths() });
  ({ dir, folder, tasksFile } = await writeRandomFtrlFixture('pact-ftrl-cli-'));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('pact train on an FTRL file', () => {
  it('pact train --config: an FTRL source trains, evaluates and writes task-split.json beside metrics.jsonl', async () => {
    const experiment = {
      name: 'ftrl-cli',
      base: {
        recipe: 'ftrl',
        model: { init: folder },
        tasks: { source: 'ftrl', path: tasksFile, trainLines: '2', testLines: '1' },
        batchPrompts: 1,
        miniBatchPrompts: 1,
        rolloutsPerPrompt: 2,
        maxTurns: 2,
        maxPromptTokens: 512,
        maxResponseTokens: 16,
        steps: 1,
        evalEvery: 1,
        checkpointEvery: 0,
      },
    };
    const file = path.join(dir, 'ftrl-cli.json');
    writeFileSync(file, JSON.stringify(experiment));
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['train', '--config', file, '--out', path.join(dir, 'runs'), '--threads', '1'], {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    });
    expect(err.filter((l) => l.includes('failed'))).toEqual([]);
    expect(code).toBe(0);
    const runDir = path.join(dir, 'runs', 'ftrl-cli', 'ftrl-s1');
    const split = JSON.parse(readFileSync(path.join(runDir, 'task-split.json'), 'utf8'));
    expect(split).toMatchObject({ trainFile: tasksFile, testFile: tasksFile, trainLines: [2], testLines: [1] });
    expect(out.join('\n')).toContain(
      `Trained on lines 2 of ${tasksFile} (1 tasks); evaluated on lines 1 of ${tasksFile}`,
    );
    const rows = readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.type)).toEqual(['step', 'eval']);
    expect(Number.isFinite(rows[0].loss)).toBe(true);
    expect(rows[1].nTasks).toBe(1);
  }, 120_000);
});
