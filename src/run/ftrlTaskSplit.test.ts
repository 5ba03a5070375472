// FTRL files as a training source: the split (deterministic, disjoint, reported), the config
// rules, which recipes run on FTRL tasks, and the window check's message. On FTRL's own test
// file too when it is present ($PACT_DATA_DIR or ../shared/data; skipped, and said so, without).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../recipes/config';
import { getRecipe, listRecipes } from '../recipes/allRecipes';
import {
  checkFtrlPromptWindow,
  checkFtrlRecipe,
  formatLineRanges,
  parseLineRanges,
  readFtrlTaskFile,
  splitFtrlTasks,
} from './ftrlTaskSplit';
import { HAND_WRITTEN_FTRL, capitalLine, riverLine } from './ftrlTestLines';

const dataDir = process.env.PACT_DATA_DIR ?? '../shared/data';
const ftrlFile = path.join(dataDir, 'ftrl', 'test.jsonl');
const hasData = existsSync(ftrlFile);
if (!hasData)
  console.warn(
    `[ftrlTaskSplit.test] FTRL data not found at ${ftrlFile}: the test.jsonl checks are skipped (set PACT_DATA_DIR)`,
  );

const tasksOf = (input: Record<string, unknown>) =>
  resolveConfig({ recipe: 'ftrl', tasks: { source: 'ftrl', ...input } }).tasks;

function configIssues(input: unknown): string[] {
  try {
    resolveConfig(input);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).issues;
  }
  throw new Error(`accepted: ${JSON.stringify(input)}`);
}

/** Ten distinct hand-written tasks (the capital task with ten codes in the question). */
const TEN = Array.from({ length: 10 }, (_, i) =>
  capitalLine().replace('with the code FR?', `with the code FR (variant ${i + 1})?`),
).join('\n');

describe('line ranges', () => {
  it('parse and format back', () => {
    expect(parseLineRanges('3, 7-9,1', 'f')).toEqual([1, 3, 7, 8, 9]);
    expect(formatLineRanges([9, 1, 2, 3, 7])).toBe('1-3, 7, 9');
    expect(formatLineRanges([1, 3, 5, 7, 9, 11], 8)).toBe('1, 3, 5, … (6 lines)');
    expect(() => parseLineRanges('5-2', 'config.tasks.trainLines')).toThrow(
      'config.tasks.trainLines: the range 5-2 runs backwards',
    );
    expect(() => parseLineRanges('0-2', 'f')).toThrow('lines count from 1');
  });
});

describe('the config of an FTRL source', () => {
  it('must say which tasks train and which evaluate', () => {
    expect(configIssues({ recipe: 'ftrl', tasks: { source: 'ftrl' } })[0]).toMatch(
      /^config\.tasks: an FTRL source must say which tasks train and which evaluate: trainFraction/,
    );
    expect(configIssues({ tasks: { source: 'ftrl', trainLines: '1-5' } })[0]).toMatch(/^config\.tasks: an FTRL source/);
    expect(configIssues({ tasks: { source: 'ftrl', trainFraction: 0.5, trainLines: '1-2', testLines: '3' } })).toEqual([
      'config.tasks.trainFraction: give either trainFraction (a seeded split) or trainLines and testLines, not both',
    ]);
    expect(configIssues({ tasks: { source: 'ftrl', trainFraction: 1 } })[0]).toMatch(/^config\.tasks\.trainFraction: /);
    expect(configIssues({ tasks: { source: 'ftrl', trainLines: '1-x', testLines: '3' } })[0]).toMatch(
      /^config\.tasks\.trainLines: must be 1-based line numbers and ranges/,
    );
    // Accepted: each of the three rules.
    expect(tasksOf({ trainFraction: 0.8 }).trainFraction).toBe(0.8);
    expect(tasksOf({ trainLines: '1-150', testLines: '151-200' }).testLines).toBe('151-200');
    expect(tasksOf({ testPath: 'other.jsonl' }).testPath).toBe('other.jsonl');
  });

  it('refuses the FTRL fields on a generated source, naming each', () => {
    expect(configIssues({ tasks: { source: 'generated', trainFraction: 0.5, testPath: 'x' } })).toEqual([
      'config.tasks.testPath: is read only with tasks.source "ftrl" (this config\'s source is "generated")',
      'config.tasks.trainFraction: is read only with tasks.source "ftrl" (this config\'s source is "generated")',
    ]);
  });

  it('leaves a generated config as it was (no new key in its JSON)', () => {
    expect(Object.keys(resolveConfig({}).tasks).sort()).toEqual(['nTest', 'nTrain', 'source', 'testSeed', 'trainSeed']);
  });
});

describe('splitFtrlTasks', () => {
  it('trainFraction: a seeded split, the same for the same seed, disjoint, covering the file, reported', () => {
    const run = (seed: number, extra: Record<string, unknown> = {}) =>
      splitFtrlTasks({
        train: { name: 'ten.jsonl', text: TEN },
        tasks: tasksOf({ trainFraction: 0.7, trainSeed: seed, ...extra }),
      });
    const a = run(1);
    expect(run(1).split).toEqual(a.split);
    expect(a.split.trainLines).toHaveLength(7);
    expect(a.split.testLines).toHaveLength(3);
    expect(a.split.trainLines.filter((l) => a.split.testLines.includes(l))).toEqual([]);
    expect([...a.split.trainLines, ...a.split.testLines].sort((x, y) => x - y)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
    expect(a.train.map((t) => t.line).sort((x, y) => x - y)).toEqual(a.split.trainLines);
    // Another seed, another cut (of these 120 possible ones, seed 2 happens to differ).
    expect(run(2).split.trainLines).not.toEqual(a.split.trainLines);
    expect(a.split.statement).toBe(
      `Trained on lines ${formatLineRanges(a.split.trainLines)} of ten.jsonl (7 tasks); evaluated on lines ${formatLineRanges(a.split.testLines)} of ten.jsonl (3 tasks), disjoint from the training lines. ` +
        'Split: trainFraction 0.7 of the 10 tasks of ten.jsonl, by a permutation seeded by trainSeed 1: 7 train, 3 held out.',
    );
    // nTest caps the evaluated lines and says so; the cap never moves a line into training.
    const capped = run(1, { nTest: 2, nTrain: 4 });
    expect(capped.split.testLines).toHaveLength(2);
    expect(capped.split.trainLines).toHaveLength(4);
    expect(capped.split.testLines.every((l) => a.split.testLines.includes(l))).toBe(true);
    expect(capped.split.statement).toContain('(2 tasks (the first 2 of 3 held out, nTest 2))');
  });

  it('trainLines / testLines: exactly those lines; a shared line or a line without a task is refused', () => {
    const text = `${capitalLine()}\n\n${riverLine()}\nnot json\n`;
    const s = splitFtrlTasks({ train: { name: 'f', text }, tasks: tasksOf({ trainLines: '1', testLines: '3' }) });
    expect(s.train.map((t) => t.task.answer)).toEqual(['Paris']);
    expect(s.test.map((t) => t.task.answer)).toEqual(['6,650']);
    expect(s.split.lineErrors).toEqual([
      'f line 4, field (line): not valid JSON (' + s.split.lineErrors[0].split('JSON (')[1],
    ]);
    expect(() =>
      splitFtrlTasks({ train: { name: 'f', text }, tasks: tasksOf({ trainLines: '1-3', testLines: '3' }) }),
    ).toThrow(
      "config.tasks.trainLines: line 2 of f holds no task (blank or past the end); the file's tasks are on lines 1, 3",
    );
    expect(() =>
      splitFtrlTasks({ train: { name: 'f', text }, tasks: tasksOf({ trainLines: '1', testLines: '4' }) }),
    ).toThrow('config.tasks.testLines: line 4 of f holds no task (1 could not be read');
    expect(() =>
      splitFtrlTasks({ train: { name: 'f', text }, tasks: tasksOf({ trainLines: '1,3', testLines: '3' }) }),
    ).toThrow('config.tasks: trainLines and testLines share line 3 of f; a held-out task must not be trained on');
  });

  it('testPath: the whole train file trains, the other file evaluates; a task in both is refused', () => {
    const s = splitFtrlTasks({
      train: { name: 'a.jsonl', text: capitalLine() },
      test: { name: 'b.jsonl', text: riverLine() },
      tasks: tasksOf({ testPath: 'b.jsonl' }),
    });
    expect(s.split.statement).toMatch(
      /^Trained on lines 1 of a\.jsonl \(1 tasks\); evaluated on lines 1 of b\.jsonl \(1 tasks\)/,
    );
    expect(() =>
      splitFtrlTasks({
        train: { name: 'a.jsonl', text: HAND_WRITTEN_FTRL },
        test: { name: 'b.jsonl', text: riverLine() },
        tasks: tasksOf({ testPath: 'b.jsonl' }),
      }),
    ).toThrow(
      'config.tasks: held-out line 1 of b.jsonl is the same task (question, answer and tools) as train line 2 of a.jsonl; a held-out task must not be trained on',
    );
  });

  it.skipIf(!hasData)("FTRL's test file: trainFraction 0.8 splits its 200 lines 160 / 40, disjoint", () => {
    const text = readFileSync(ftrlFile, 'utf8');
    const { items } = readFtrlTaskFile(text);
    const s = splitFtrlTasks({
      train: { name: ftrlFile, text },
      tasks: tasksOf({ trainFraction: 0.8, nTrain: 1000, nTest: 1000 }),
    });
    expect(s.split.trainLines.length + s.split.testLines.length).toBe(items.length);
    expect(s.split.trainLines.length).toBe(Math.round(0.8 * items.length));
    const train = new Set(s.split.trainLines);
    expect(s.split.testLines.some((l) => train.has(l))).toBe(false);
  });
});

describe('checkFtrlRecipe', () => {
  const tasks = (text: string) => readFtrlTaskFile(text).items.map((i) => i.task);

  it('every registered recipe either runs on FTRL tasks or is refused with its reason', () => {
    const plain = tasks(HAND_WRITTEN_FTRL);
    const verdicts = Object.fromEntries(listRecipes().map((name) => [name, checkFtrlRecipe(getRecipe(name), plain)]));
    expect(verdicts.ftrl).toBeNull();
    expect(verdicts.grpo).toBeNull();
    for (const name of ['pact', 'sft', 'chord', 'sft_then_matchtir'])
      expect(verdicts[name]).toMatch(
        new RegExp(`^recipe "${name}" cannot train on FTRL tasks: it needs expert traces h\\*`),
      );
    for (const name of ['matchtir', 'toolrl'])
      expect(verdicts[name]).toMatch(
        new RegExp(`^recipe "${name}" cannot train on FTRL tasks: .*gold calls, and 2 of 2 train tasks carry none`),
      );
    const search = listRecipes().filter((name) => getRecipe(name).env === 'tool-search');
    expect(search.length).toBeGreaterThan(0);
    for (const name of search) expect(verdicts[name]).toMatch(/it runs on the tool-search environment/);
    // Only the checked recipes run: a recipe without a verdict above fails here.
    const runs = Object.keys(verdicts).filter((name) => verdicts[name] === null);
    expect(runs.sort()).toEqual(['ftrl', 'grpo']);
  });

  it('matchtir and toolrl run when every train task carries gold calls from the file', () => {
    const gold = tasks(`${capitalLine({ goldArgs: { code: 'FR' } })}\n${riverLine({ goldArgs: { name: 'Nile' } })}`);
    expect(gold[0].goldCalls).toEqual([{ name: 'country_capital', arguments: { code: 'FR' } }]);
    expect(checkFtrlRecipe(getRecipe('matchtir'), gold)).toBeNull();
    expect(checkFtrlRecipe(getRecipe('toolrl'), gold)).toBeNull();
    expect(checkFtrlRecipe(getRecipe('toolrl'), [gold[0], ...tasks(riverLine())])).toMatch(
      /1 of 2 train tasks carry none/,
    );
  });
});

describe('checkFtrlPromptWindow', () => {
  const base = { maxResponseTokens: 512, model: 'folder q' };
  it('passes when every prompt fits and the window holds prompt + response', () => {
    expect(
      checkFtrlPromptWindow({
        ...base,
        train: [{ line: 1, tokens: 900 }],
        test: [{ line: 2, tokens: 1000 }],
        maxPromptTokens: 1024,
        windowTokens: 2048,
      }),
    ).toBeNull();
  });

  it('names how many fit and the window the longest needs', () => {
    const message = checkFtrlPromptWindow({
      ...base,
      model: 'qwen3-nano',
      train: [
        { line: 1, tokens: 900 },
        { line: 3, tokens: 4800 },
      ],
      test: [{ line: 2, tokens: 2600 }],
      maxPromptTokens: 1024,
      windowTokens: 2048,
    });
    expect(message).toBe(
      '1 of 3 FTRL tasks fit maxPromptTokens 1,024 (train 1 of 2, held out 0 of 1); the longest prompt is 4,800 tokens; ' +
        "qwen3-nano's window is 2,048 tokens, and training on them needs maxPromptTokens ≥ 4,800 with maxResponseTokens 512, a window of at least 5,312: " +
        'qwen3-nano (2,048) and qwen3-micro (4,096) are too small; it needs your own Qwen3 folder with a window of at least 5,312 tokens ' +
        '(model.init = its path; Qwen3-0.6B (40,960) has one). Choose lines that fit (trainLines / testLines) or a model with a longer window.',
    );
  });

  it('with a long enough window, asks for a larger maxPromptTokens only', () => {
    const message = checkFtrlPromptWindow({
      ...base,
      train: [{ line: 1, tokens: 3000 }],
      test: [],
      maxPromptTokens: 1024,
      windowTokens: 40960,
    });
    expect(message).toMatch(
      /^0 of 1 FTRL tasks fit .*; set maxPromptTokens to at least 3,000 \(folder q's window of 40,960 holds it/,
    );
  });
});
