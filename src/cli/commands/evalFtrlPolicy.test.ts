// `pact eval-ftrl --model`: a policy's greedy rollouts on FTRL tasks, scored per category.
// Needs ../shared/data/ftrl/test.jsonl (or PACT_DATA_DIR); skipped, and said so, without it.
//
// - LanguageRoutingExecutor runs an FTRL task's Python tool in Pyodide through the
//   ToolExecutor interface the rollout env uses (line 1's tool with the arguments its
//   source needs, read by hand: replay.test.ts).
// - The command, on a tiny random Qwen3 folder over a vocabulary pruned to the selected
//   tasks' text: every selected task is run (or counted over the window), a prediction line
//   per task carries the task's 0-based line index, and the table has one row per category.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../main';
import { selectPerCategory } from './evalFtrlPolicy';
import { selectBackend } from '../../model/backend';
import { loadQwen3TokenizerFromPackage } from '../../model/tokenizer/nodeLoader';
import { selectKeptIds } from '../../model/tokenizer/prunedVocab';
import { createRandomQwen3Tensors, createTinyQwen3Config, writeQwen3Folder } from '../../model/weights/testFolders';
import { parseFtrlJsonl } from '../../envs/ftrl/importFtrl';
import { createNodePyodideExecutor } from '../../envs/ftrl/pyodideExecutorNode';
import { LanguageRoutingExecutor } from '../../envs/ftrl/languageExecutor';
import { InProcessExecutor } from '../../envs/sandbox';
import { RolloutEnv } from '../../envs/rollout';
import { bindRenderChat } from '../../recipes/policyVocab';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const dataDir = path.resolve(repoRoot, process.env.PACT_DATA_DIR ?? '../shared/data');
const ftrlTest = path.join(dataDir, 'ftrl', 'test.jsonl');
const hasData = existsSync(ftrlTest);
if (!hasData)
  console.warn(`evalFtrlPolicy.test: FTRL data missing at ${ftrlTest} (set PACT_DATA_DIR); these tests are skipped`);

describe('selectPerCategory', () => {
  it('keeps the first N of each category in file order', () => {
    const items = ['a', 'b', 'a', 'a', 'c', 'b', 'b'].map((category, i) => ({ category, i }));
    expect(selectPerCategory(items, 2).map((x) => x.i)).toEqual([0, 1, 2, 4, 5]);
    expect(selectPerCategory(items, undefined)).toHaveLength(7);
  });
});

describe.skipIf(!hasData)('pact eval-ftrl --model on ../shared/data/ftrl/test.jsonl', () => {
  const lines = hasData ? readFileSync(ftrlTest, 'utf8').split('\n') : [];
  let dir: string;
  let tasksFile: string;

  beforeAll(async () => {
    await selectBackend('cpu');
    const source = await loadQwen3TokenizerFromPackage();
    dir = mkdtempSync(path.join(os.tmpdir(), 'pact-ftrl-eval-'));
    // Lines 0 (self/single_hop) and 100 (self/parallel_single_hop); the other lines blank, so
    // the indexes stay those of the shared file.
    tasksFile = path.join(dir, 'tasks.jsonl');
    writeFileSync(
      tasksFile,
      lines
        .slice(0, 101)
        .map((l, i) => (i === 0 || i === 100 ? l : ''))
        .join('\n'),
    );
    const tasks = parseFtrlJsonl(readFileSync(tasksFile, 'utf8')).tasks;
    const env = new RolloutEnv({ executor: new InProcessExecutor(), renderChat: bindRenderChat(source) });
    const mapping = selectKeptIds(
      source,
      tasks.map((t) => env.reset(t).promptText),
    );
    const config = createTinyQwen3Config({
      vocab_size: mapping.keptIds.length,
      max_position_embeddings: 4096,
      initializer_range: 0.5,
    });
    const tensors = await createRandomQwen3Tensors(config, 3);
    await writeQwen3Folder(path.join(dir, 'model'), { config, tensors, prunedVocab: mapping });
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('routes a Python tool to Pyodide and a missing executor to an error observation', async () => {
    const task = parseFtrlJsonl(lines[0]).tasks[0];
    const python = createNodePyodideExecutor({ timeoutMs: 10_000 });
    const routed = new LanguageRoutingExecutor({ python });
    try {
      const impl = task.implementations.historical_event_finder;
      const r = await routed.execute(impl, 'historical_event_finder', {
        keywords: 'wikileaks leak the standard us army protocol at guantanamo bay',
      });
      expect(r.ok).toBe(true);
      expect(r.output).toContain('2007-11-7');
      const bad = await routed.execute(impl, 'historical_event_finder', { no_such_argument: 1 });
      expect(bad.ok).toBe(false);
      expect(bad.output).toMatch(/^an error occured when call historical_event_finder: /);
    } finally {
      routed.dispose();
    }
    const jsOnly = new LanguageRoutingExecutor({});
    const none = await jsOnly.execute({ language: 'python', source: 'def f(): pass' }, 'f', {});
    expect(none).toEqual({
      ok: false,
      output: 'an error occured when call f: Python tools need the Pyodide executor, and none was given',
    });
  }, 120_000);

  it('runs the policy on each selected task and scores one row per category', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const predictionsFile = path.join(dir, 'predictions.jsonl');
    const code = await main(
      [
        'eval-ftrl',
        '--tasks',
        tasksFile,
        '--model',
        path.join(dir, 'model'),
        '--max-turns',
        '1',
        '--max-response-tokens',
        '4',
        '--backend',
        'cpu',
        '--write-predictions',
        predictionsFile,
        '--json',
      ],
      { out: (l) => out.push(l), err: (l) => err.push(l) },
    );
    expect(err.join('\n')).toContain('2 tasks selected, 2 fit the window');
    expect(code).toBe(0);
    const report = JSON.parse(out.join('\n'));
    expect(report.selected).toBe(2);
    expect(report.promptTooLong).toBe(0);
    expect(report.categories.map((c: { category: string; tasks: number }) => [c.category, c.tasks])).toEqual([
      ['self/parallel_single_hop', 1],
      ['self/single_hop', 1],
    ]);
    expect(report.overall.tasks).toBe(2);
    const predictions = readFileSync(predictionsFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(predictions.map((p: { index: number }) => p.index)).toEqual([0, 100]);
  }, 300_000);
});
