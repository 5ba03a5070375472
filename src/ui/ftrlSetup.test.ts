// Run setup's "loaded FTRL file" source (ftrlSetup.ts): the split in words, which recipes can
// run, how many prompts fit the window and what keeps Train off, on hand-written FTRL lines
// (src/run/ftrlTestLines.ts, not benchmark data) and hand-given token counts.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../recipes/config';
import { checkFtrlPromptWindow, splitFtrlTasks } from '../run/ftrlTaskSplit';
import { HAND_WRITTEN_FTRL, capitalCodeLine } from '../run/ftrlTestLines';
import {
  FTRL_DEFAULT_TRAIN_FRACTION,
  describeFtrlPolicy,
  describeFtrlSplit,
  measureFtrlFit,
  planFtrlSetup,
} from './ftrlSetup';
import { readDefaultValues, validateSetup } from './runSetup';

// Line 1: the capital of FR, line 2: the Nile, line 3: the capital of DE (no decoys).
const FILE = { name: 'tasks.jsonl', text: `${HAND_WRITTEN_FTRL}${capitalCodeLine({ code: 'DE', decoys: 0 })}\n` };
const NANO = { name: 'qwen3-nano', windowTokens: 2048 };
const FOLDER = { name: 'your folder "q"', windowTokens: 8192 };

function config(tasks: Record<string, unknown>, more: Record<string, unknown> = {}) {
  return resolveConfig({
    recipe: 'ftrl',
    maxResponseTokens: 576,
    tasks: { source: 'ftrl', path: FILE.name, ...tasks },
    ...more,
  });
}
const tokens = (t1: number, t2: number, t3: number) =>
  new Map([
    [1, t1],
    [2, t2],
    [3, t3],
  ]);

describe('the setup of an FTRL source', () => {
  it("adds the loaded file as tasks.path and a seeded 80 % split, drops the run size's task kinds", () => {
    const values = { ...readDefaultValues(), recipe: 'ftrl', tasks: 'ftrl' };
    const v = validateSetup(values, '', { size: 'quick', ftrlFileName: 'tasks.jsonl' });
    expect(v.fieldErrors).toEqual({});
    expect(v.config!.tasks).toMatchObject({
      source: 'ftrl',
      path: 'tasks.jsonl',
      trainFraction: FTRL_DEFAULT_TRAIN_FRACTION,
      trainSeed: 1,
      nTest: 8, // the quick size's
    });
    expect(v.config!.tasks.categories).toBeUndefined();
    // A rule in the overrides replaces the default one.
    const lines = validateSetup(values, '{"tasks": {"trainLines": "1", "testLines": "2"}}', {
      size: 'quick',
      ftrlFileName: 'tasks.jsonl',
    });
    expect(lines.config!.tasks).toMatchObject({ path: 'tasks.jsonl', trainLines: '1', testLines: '2' });
    expect(lines.config!.tasks.trainFraction).toBeUndefined();
  });

  it('says which lines train and which are held out, by which rule, and that held-out lines are never trained on', () => {
    const c = config({ trainLines: '1, 3', testLines: '2' });
    expect(describeFtrlSplit(c, splitFtrlTasks({ train: FILE, tasks: c.tasks }).split)).toBe(
      '2 lines of tasks.jsonl train (lines 1, 3); 1 is held out and evaluated (line 2). ' +
        'Split by the line ranges of the config overrides: trainLines "1, 3", testLines "2". ' +
        'The held-out lines are never trained on: the run refuses a split whose parts share a line or a task, ' +
        'and reports scores on the held-out lines only.',
    );
    // trainFraction 0.8 of 3 tasks: round(2.4) = 2 train, 1 held out; which ones, the seeded permutation says.
    const f = config({ trainFraction: 0.8 });
    const { split } = splitFtrlTasks({ train: FILE, tasks: f.tasks });
    expect([...split.trainLines, ...split.testLines].sort()).toEqual([1, 2, 3]);
    expect(describeFtrlSplit(f, split)).toContain(
      "Split by a permutation of the file's 3 task lines seeded by trainSeed 1 (trainFraction 0.8: 2 train, 1 held out).",
    );
    expect(describeFtrlSplit(f, split)).toMatch(/^2 lines of tasks\.jsonl train \(lines \d, \d\); 1 is held out/);
  });

  it('names the nTrain / nTest caps and the lines that hold no task', () => {
    // 5 task lines and one that is not JSON (line 4): trainFraction 0.8 of 5 = 4 train, 1 held out; nTrain 3.
    const text = [
      capitalCodeLine({ code: 'FR', decoys: 0 }),
      capitalCodeLine({ code: 'DE', decoys: 0 }),
      capitalCodeLine({ code: 'BE', decoys: 0 }),
      'not json',
      capitalCodeLine({ code: 'FR', decoys: 1 }),
      capitalCodeLine({ code: 'DE', decoys: 1 }),
    ].join('\n');
    const c = config({ trainFraction: 0.8, nTrain: 3 });
    const words = describeFtrlSplit(c, splitFtrlTasks({ train: { name: 'f.jsonl', text }, tasks: c.tasks }).split);
    expect(words).toMatch(
      /^The first 3 of 4 train lines of f\.jsonl train \(nTrain 3; lines [\d, -]+\); 1 is held out/,
    );
    expect(words).toContain('(trainFraction 0.8: 4 train, 1 held out)');
    expect(words).toContain('1 line of the file holds no task (skipped).');
  });

  it('lists the recipes that can train on the file and why the others cannot', () => {
    const plan = planFtrlSetup({
      file: FILE,
      config: config({ trainLines: '1, 3', testLines: '2' }),
      model: NANO,
      promptTokens: tokens(100, 100, 100),
    });
    expect(plan.recipesText).toBe(
      "Recipes that train on this file: GRPO (the answer F1 against the task's answer); FTRL (FTRL's compute_solve_f1 per turn over the task's unsolved_set and answer). " +
        'Not: SFT, SFT → MatchTIR, CHORD, PACT need expert traces h*, which an FTRL file does not carry; ' +
        'MatchTIR, ToolRL need gold calls on every train task (0 of 2 carry them); ' +
        'ToolSearcher, Search-R1, GSPO, GDPO run on the tool-search environment.',
    );
    expect(plan.recipeProblem).toBeNull();
    expect(plan.blockReason).toBeNull();
    // PACT is refused with checkFtrlRecipe's reason, which keeps Train off whatever the window.
    const pact = planFtrlSetup({
      file: FILE,
      config: config({ trainLines: '1, 3', testLines: '2' }, { recipe: 'pact' }),
      model: NANO,
      promptTokens: tokens(100, 100, 100),
    });
    expect(pact.recipeProblem).toMatch(/^recipe "pact" cannot train on FTRL tasks: it needs expert traces h\*/);
    expect(pact.blockReason).toBe(pact.recipeProblem);
  });

  it('with the shipped qwen3-nano: no prompt fits, says what is needed, and Train is off', () => {
    // 2,048 positions − 576 response tokens = 1,472 prompt tokens; the prompts are 2,464–2,465.
    const plan = planFtrlSetup({
      file: FILE,
      config: config({ trainLines: '1, 3', testLines: '2' }),
      model: NANO,
      promptTokens: tokens(2465, 2464, 2464),
    });
    expect(plan.fit).toMatchObject({ total: 3, nFit: 0, promptBudget: 1472, shortest: 2464, longest: 2465 });
    expect(plan.fitText).toBe(
      "No prompt of this file fits qwen3-nano: its window of 2,048 positions leaves 1,472 prompt tokens beside 576 response tokens, and the run's 3 prompts are 2,464–2,465 tokens.",
    );
    // 2,465 + 576 = 3,041
    expect(plan.needText).toBe(
      "Training on this file needs a Qwen3 folder whose window holds its longest prompt and a response: at least 3,041 tokens, counted in qwen3-nano's vocabulary. " +
        "In Qwen3's full vocabulary, which a real Qwen3 folder has, FTRL's own test prompts run to 6,447 tokens, so a window of about 7,000 (Qwen3-0.6B's is 40,960): " +
        'pick such a folder under "Your Qwen3 folder". At real sizes it needs WebGPU: on a CPU (wasm) the memory check refuses rows that long.',
    );
    expect(plan.blockReason).toBe(
      "No FTRL prompt fits qwen3-nano's window (2,048 positions; these prompts are 2,464–2,465 tokens): pick a Qwen3 folder with a window of at least 3,041 tokens.",
    );
    expect(plan.suggestedMaxPromptTokens).toBeNull();
  });

  it('counts the prompts that fit, train and held out apart', () => {
    // Budget 1,472: only line 3 (900) fits; train = lines 1, 3 → 1 of 2; held out = line 2 → 0 of 1.
    const plan = planFtrlSetup({
      file: FILE,
      config: config({ trainLines: '1, 3', testLines: '2' }),
      model: NANO,
      promptTokens: tokens(1500, 1700, 900),
    });
    expect(plan.fit).toMatchObject({ total: 3, nFit: 1, train: { fit: 1, of: 2 }, heldOut: { fit: 0, of: 1 } });
    expect(plan.fitText).toBe(
      "1 of the run's 3 prompts fit qwen3-nano (train 1 of 2, held out 0 of 1): its window of 2,048 positions leaves 1,472 prompt tokens beside 576 response tokens, and the prompts are 900–1,700 tokens. A run needs every one of them to fit.",
    );
    // 1,700 + 576 = 2,276
    expect(plan.blockReason).toBe(
      "2 of the run's 3 prompts do not fit qwen3-nano's window: choose lines that fit (tasks.trainLines and tasks.testLines in the config overrides) or a Qwen3 folder with a window of at least 2,276 tokens.",
    );
  });

  it('with a long window: every prompt fits, and maxPromptTokens is set to the longest', () => {
    const input = (maxPromptTokens: number) => ({
      file: FILE,
      config: config({ trainLines: '1, 3', testLines: '2' }, { maxPromptTokens }),
      model: FOLDER,
      promptTokens: tokens(1671, 1671, 1600),
    });
    const low = planFtrlSetup(input(1024));
    expect(low.fitText).toBe(
      'All 3 of the run\'s prompts fit your folder "q": the longest is 1,671 tokens, and 1,671 + 576 response tokens ≤ its window of 8,192. ' +
        'But maxPromptTokens 1,024 is below the longest prompt (1,671 tokens): set it to 1,671.',
    );
    expect(low.suggestedMaxPromptTokens).toBe(1671);
    expect(low.blockReason).toBe(
      'maxPromptTokens 1,024 is below the longest prompt (1,671 tokens): set maxPromptTokens to 1,671.',
    );
    // 8,000 + 576 = 8,576 > 8,192: the window, not the prompts, is past.
    expect(planFtrlSetup(input(8000)).blockReason).toBe(
      'maxPromptTokens 8,000 + 576 response tokens is past the window of 8,192: set maxPromptTokens to 1,671.',
    );
    const ok = planFtrlSetup(input(1671));
    expect(ok.blockReason).toBeNull();
    expect(ok.fitText).toContain('maxPromptTokens 1,671 holds every prompt.');
  });

  it('blocks exactly when the run itself would refuse the window (checkFtrlPromptWindow)', () => {
    for (const window of [2048, 4096, 8192])
      for (const maxPromptTokens of [512, 1671, 3000, 7616, 8000])
        for (const t of [tokens(300, 400, 500), tokens(1671, 1671, 1600), tokens(2465, 2464, 3500)]) {
          const c = config({ trainLines: '1, 3', testLines: '2' }, { maxPromptTokens });
          const model = { name: 'm', windowTokens: window };
          const { split } = splitFtrlTasks({ train: FILE, tasks: c.tasks });
          const fit = measureFtrlFit(split, t, c, model)!;
          const refused = checkFtrlPromptWindow({
            train: [1, 3].map((line) => ({ line, tokens: t.get(line)! })),
            test: [{ line: 2, tokens: t.get(2)! }],
            maxPromptTokens,
            maxResponseTokens: 576,
            windowTokens: window,
            model: 'm',
          });
          const plan = planFtrlSetup({ file: FILE, config: c, model, promptTokens: t });
          expect(fit.problem).toBe(refused);
          expect(plan.blockReason === null).toBe(refused === null);
        }
  });

  it('keeps Train off while the prompts are counted, and for a testPath the page cannot read', () => {
    const pending = planFtrlSetup({
      file: FILE,
      config: config({ trainLines: '1', testLines: '2' }),
      model: NANO,
      promptTokens: null,
    });
    expect(pending.fitText).toBe("Counting the prompts' tokens in qwen3-nano's vocabulary…");
    expect(pending.blockReason).toBe("counting the prompts' tokens first");
    const other = planFtrlSetup({
      file: FILE,
      config: config({ testPath: 'other.jsonl' }),
      model: NANO,
      promptTokens: tokens(1, 1, 1),
    });
    expect(other.blockReason).toMatch(
      /^tasks\.testPath "other\.jsonl": a run in the page trains and evaluates on the one loaded file/,
    );
    // A line range naming no task is the split's own refusal.
    const missing = planFtrlSetup({
      file: FILE,
      config: config({ trainLines: '1', testLines: '9' }),
      model: NANO,
      promptTokens: tokens(1, 1, 1),
    });
    expect(missing.blockReason).toMatch(/^config\.tasks\.testLines: line 9 of tasks\.jsonl holds no task/);
  });

  it("measures prompts in the policy's own vocabulary and window", () => {
    expect(describeFtrlPolicy({ folder: null, preset: 'qwen3-nano', init: 'warm-start' })).toEqual({
      model: { name: 'qwen3-nano', windowTokens: 2048 },
      vocab: { key: 'warm-start', isWarmStart: true },
      isLowerBound: false,
    });
    // Random weights: their vocabulary is built in the worker; Qwen3's full one gives a lower bound.
    expect(describeFtrlPolicy({ folder: null, preset: 'qwen3-micro', init: 'scratch' })).toEqual({
      model: { name: 'qwen3-micro', windowTokens: 4096 },
      vocab: { key: 'full' },
      isLowerBound: true,
    });
    const folder = { name: 'Qwen3-0.6B', config: { max_position_embeddings: 40960 } };
    expect(describeFtrlPolicy({ folder, preset: 'qwen3-nano', init: 'warm-start' })).toEqual({
      model: { name: 'your folder "Qwen3-0.6B"', windowTokens: 40960 },
      vocab: { key: 'full' },
      isLowerBound: false,
    });
    const pruned = { ...folder, prunedVocab: { keptIds: [0, 1, 2] } };
    expect(describeFtrlPolicy({ folder: pruned, preset: 'x', init: 'x' })!.vocab).toEqual({
      key: 'folder:Qwen3-0.6B/3',
      mapping: { keptIds: [0, 1, 2] },
    });
    expect(describeFtrlPolicy({ folder: null, preset: 'nope', init: 'scratch' })).toBeNull();
  });
});
