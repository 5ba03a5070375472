/**
 * FTRL task files as a training source (`tasks.source: 'ftrl'`): which lines train and which
 * evaluate, which recipes can train on them, and whether their prompts fit the model. The
 * same code in Node (`pact train`, src/run/runAssets.ts) and on the page (Run setup), so
 * the run setup shows before Train what the run would refuse.
 *
 * - The split. FTRL ships one test file, so the config says how it is cut (config.ts
 *   `tasks`): `trainFraction` (a permutation of the file's task lines seeded by trainSeed:
 *   its first round(f·n) train, the rest is held out), or `trainLines` + `testLines`
 *   (1-based ranges of one file), or `testPath` (another file evaluates; the whole `path`
 *   file, or its trainLines, trains). nTrain / nTest cap each part. A held-out task is never
 *   trained on: the two parts may share no line of one file and no task (same question,
 *   answer and tools) across files, else the run is refused naming the lines.
 *   `FtrlTaskSplit.statement` says "trained on lines …, evaluated on lines …" for the run's
 *   outputs (pact train prints it and writes task-split.json).
 * - The recipes. FTRL lines hold the user turn, the tools with their Python code, the
 *   expected sub-answers (unsolved_set) and the answer; no expert trace and, in FTRL's test
 *   file, no gold call. `ftrl` (compute_solve_f1 over unsolved_set and answer) and `grpo`
 *   (answer F1) run; `matchtir` and `toolrl` only when every train task carries gold calls
 *   (assistant tool_calls in the file); the trace recipes (pact, sft, chord,
 *   sft_then_matchtir) and the tool-search recipes are refused (checkFtrlRecipe).
 * - The window. A task whose rendered prompt is over maxPromptTokens, or a window shorter
 *   than maxPromptTokens + maxResponseTokens, is refused before training with how many tasks
 *   fit and the window the longest needs (checkFtrlPromptWindow).
 *
 * Platform-free and tfjs-free (the page imports it).
 */
import { createRng, permutation } from '../core/rng';
import { limitText, splitJsonlLines } from '../core/untrustedJson';
import { FtrlFieldError, formatFtrlLineError, parseFtrlRecord } from '../envs/ftrl/importFtrl';
import { RolloutEnv, type RenderChat } from '../envs/rollout';
import type { ToolExecutor } from '../envs/sandbox/types';
import type { Task } from '../envs/types';
import { QWEN3_PRESETS } from '../model/qwen3/config';
import type { TextTokenizer } from '../model/tokenizer/types';
import type { TrainConfig } from '../recipes/config';
import type { Recipe } from '../recipes/types';

/** One task of an FTRL file with its 1-based line. */
export interface FtrlTaskLine {
  task: Task;
  line: number;
}

/**
 * The tasks of an FTRL file, each with its 1-based line (ids as the importer gives them: the
 * record's own, else `ftrl-<0-based line>`); lines that hold no task are listed.
 */
export function readFtrlTaskFile(text: string): { items: FtrlTaskLine[]; lineErrors: string[]; badLines: number[] } {
  const items: FtrlTaskLine[] = [];
  const lineErrors: string[] = [];
  const badLines: number[] = [];
  const fail = (line: number, field: string, message: string) => {
    lineErrors.push(formatFtrlLineError({ line, field, message: limitText(message, 300) }));
    badLines.push(line);
  };
  for (const { line, text: lineText } of splitJsonlLines(text)) {
    if (lineText.trim() === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(lineText);
    } catch (e) {
      fail(line, '(line)', `not valid JSON (${(e as Error).message})`);
      continue;
    }
    try {
      items.push({ task: parseFtrlRecord(record, line - 1), line });
    } catch (e) {
      if (e instanceof FtrlFieldError) fail(line, e.field, e.message.slice(e.field.length + 2));
      else fail(line, '(line)', `could not be read (${(e as Error).message})`);
    }
  }
  return { items, lineErrors, badLines };
}

/** "1-150" / "3, 7-9" → the sorted distinct 1-based lines; throws naming `field`. */
export function parseLineRanges(text: string, field: string): number[] {
  const lines = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!m) throw new Error(`${field}: "${part.trim()}" is not a line number or a range such as "1-150"`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 1) throw new Error(`${field}: lines count from 1, got ${from}`);
    if (to < from) throw new Error(`${field}: the range ${from}-${to} runs backwards`);
    if (to - from > 1_000_000) throw new Error(`${field}: the range ${from}-${to} is longer than any task file`);
    for (let k = from; k <= to; k++) lines.add(k);
  }
  return [...lines].sort((a, b) => a - b);
}

/** Sorted 1-based lines as ranges: [1,2,3,7,9,10] → "1-3, 7, 9-10"; cut after `maxChars` with "… (N lines)". */
export function formatLineRanges(lines: readonly number[], maxChars = Infinity): string {
  const sorted = [...new Set(lines)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j === i ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  const text = parts.join(', ');
  if (text.length <= maxChars) return text;
  let cut = parts[0];
  for (const part of parts.slice(1)) {
    if (cut.length + 2 + part.length > maxChars) break;
    cut += `, ${part}`;
  }
  return `${cut}, … (${sorted.length} lines)`;
}

/** Which lines of which files a run trains and evaluates on (written to the run's task-split.json). */
export interface FtrlTaskSplit {
  trainFile: string;
  testFile: string;
  /** 1-based lines of trainFile whose tasks train (after the nTrain cap), ascending. */
  trainLines: number[];
  /** 1-based lines of testFile whose tasks are evaluated (after the nTest cap), ascending. */
  testLines: number[];
  /** Train tasks the rule chose, before the nTrain cap (the trained lines are the first nTrain of them). */
  trainChosen: number;
  /** Held-out tasks before the nTest cap (the evaluated lines are the first nTest of them). */
  heldOut: number;
  /** How the lines were chosen (the config's rule). */
  rule: string;
  /** "Trained on lines … of FILE (N tasks); evaluated on lines … of FILE (M tasks) …". */
  statement: string;
  /** Lines of the files that hold no task ("line N, field F: reason"); a split by fraction skips them. */
  lineErrors: string[];
}

export interface FtrlSplitInput {
  /** The `path` file: its name (for the report) and text. */
  train: { name: string; text: string };
  /** The `testPath` file, when the config names one. */
  test?: { name: string; text: string };
  tasks: Pick<
    TrainConfig['tasks'],
    'trainSeed' | 'nTrain' | 'nTest' | 'trainFraction' | 'trainLines' | 'testLines' | 'testPath'
  >;
}

/** A task's identity across files: question, answer, expected sub-answers and tool names. */
function taskKey(task: Task): string {
  return JSON.stringify([task.question, task.answer, task.unsolvedSet, task.tools.map((t) => t.function.name).sort()]);
}

function pickLines(
  items: readonly FtrlTaskLine[],
  wanted: readonly number[],
  field: string,
  file: string,
  badLines: readonly number[],
): FtrlTaskLine[] {
  const byLine = new Map(items.map((it) => [it.line, it]));
  const missing = wanted.filter((l) => !byLine.has(l));
  if (missing.length > 0) {
    const bad = missing.filter((l) => badLines.includes(l));
    throw new Error(
      `config.tasks.${field}: line${missing.length > 1 ? 's' : ''} ${formatLineRanges(missing, 120)} of ${file} hold${missing.length > 1 ? '' : 's'} no task` +
        (bad.length > 0
          ? ` (${bad.length} could not be read; see the file's line errors)`
          : ' (blank or past the end)') +
        `; the file's tasks are on lines ${formatLineRanges(
          items.map((it) => it.line),
          120,
        )}`,
    );
  }
  return wanted.map((l) => byLine.get(l)!);
}

/**
 * The train and held-out tasks of an FTRL source (see the file header); throws, naming the
 * field, when the config's lines hold no task or the two parts share a line or a task.
 */
export function splitFtrlTasks(input: FtrlSplitInput): {
  train: FtrlTaskLine[];
  test: FtrlTaskLine[];
  split: FtrlTaskSplit;
} {
  const cfg = input.tasks;
  const trainFile = readFtrlTaskFile(input.train.text);
  const testFile = input.test ? readFtrlTaskFile(input.test.text) : trainFile;
  const trainName = input.train.name;
  const testName = input.test?.name ?? trainName;
  const isOneFile = input.test === undefined;
  if (trainFile.items.length === 0)
    throw new Error(
      `config.tasks.path: ${trainName} holds no FTRL task${trainFile.lineErrors.length > 0 ? `: ${trainFile.lineErrors.slice(0, 3).join('; ')}` : ''}`,
    );
  if (!isOneFile && testFile.items.length === 0)
    throw new Error(
      `config.tasks.testPath: ${testName} holds no FTRL task${testFile.lineErrors.length > 0 ? `: ${testFile.lineErrors.slice(0, 3).join('; ')}` : ''}`,
    );
  let train: FtrlTaskLine[];
  let test: FtrlTaskLine[];
  let rule: string;
  if (cfg.trainFraction !== undefined && isOneFile) {
    const n = trainFile.items.length;
    if (n < 2) throw new Error(`config.tasks.trainFraction: ${trainName} holds ${n} task; a split needs at least 2`);
    const k = Math.min(n - 1, Math.max(1, Math.round(cfg.trainFraction * n)));
    const order = permutation(n, createRng(`ftrl-split/${cfg.trainSeed}`)).map((i) => trainFile.items[i]);
    train = order.slice(0, k);
    test = order.slice(k);
    rule = `trainFraction ${cfg.trainFraction} of the ${n} tasks of ${trainName}, by a permutation seeded by trainSeed ${cfg.trainSeed}: ${k} train, ${n - k} held out`;
  } else {
    const trainWanted =
      cfg.trainLines !== undefined ? parseLineRanges(cfg.trainLines, 'config.tasks.trainLines') : null;
    const testWanted = cfg.testLines !== undefined ? parseLineRanges(cfg.testLines, 'config.tasks.testLines') : null;
    if (isOneFile && (!trainWanted || !testWanted))
      throw new Error(
        'config.tasks: an FTRL source must say which tasks train and which evaluate: trainFraction, trainLines and testLines, or testPath',
      );
    train = trainWanted
      ? pickLines(trainFile.items, trainWanted, 'trainLines', trainName, trainFile.badLines)
      : trainFile.items;
    test = testWanted
      ? pickLines(testFile.items, testWanted, 'testLines', testName, testFile.badLines)
      : testFile.items;
    rule = isOneFile
      ? `trainLines ${cfg.trainLines} and testLines ${cfg.testLines} of ${trainName}`
      : `${cfg.trainLines !== undefined ? `trainLines ${cfg.trainLines}` : 'every task'} of ${trainName}; ${cfg.testLines !== undefined ? `testLines ${cfg.testLines}` : 'every task'} of ${testName}`;
  }
  // A held-out task is never trained on: no shared line of one file, no shared task across files.
  if (isOneFile) {
    const trainSet = new Set(train.map((t) => t.line));
    const shared = test.filter((t) => trainSet.has(t.line)).map((t) => t.line);
    if (shared.length > 0)
      throw new Error(
        `config.tasks: trainLines and testLines share line${shared.length > 1 ? 's' : ''} ${formatLineRanges(shared, 120)} of ${trainName}; a held-out task must not be trained on`,
      );
  }
  const trainKeys = new Map(train.map((t) => [taskKey(t.task), t.line]));
  for (const t of test) {
    const at = trainKeys.get(taskKey(t.task));
    if (at !== undefined)
      throw new Error(
        `config.tasks: held-out line ${t.line} of ${testName} is the same task (question, answer and tools) as train line ${at} of ${trainName}; a held-out task must not be trained on`,
      );
  }
  const trainChosen = train.length;
  const heldOut = test.length;
  train = train.slice(0, cfg.nTrain);
  test = test.slice(0, cfg.nTest);
  const trainLines = train.map((t) => t.line).sort((a, b) => a - b);
  const testLines = test.map((t) => t.line).sort((a, b) => a - b);
  const capped = test.length < heldOut ? ` (the first ${test.length} of ${heldOut} held out, nTest ${cfg.nTest})` : '';
  const statement =
    `Trained on lines ${formatLineRanges(trainLines)} of ${trainName} (${trainLines.length} tasks); ` +
    `evaluated on lines ${formatLineRanges(testLines)} of ${testName} (${testLines.length} tasks${capped}), ` +
    `disjoint from the training lines. Split: ${rule}.`;
  const lineErrors = [
    ...trainFile.lineErrors.map((e) => `${trainName} ${e}`),
    ...(isOneFile ? [] : testFile.lineErrors.map((e) => `${testName} ${e}`)),
  ];
  return {
    train,
    test,
    split: {
      trainFile: trainName,
      testFile: testName,
      trainLines,
      testLines,
      trainChosen,
      heldOut,
      rule,
      statement,
      lineErrors,
    },
  };
}

/** The recipes that train on FTRL tasks, and what their reward reads there. */
export const FTRL_TRAINABLE_RECIPES: Readonly<Record<string, string>> = {
  ftrl: "FTRL's compute_solve_f1 per turn over the task's unsolved_set and answer",
  grpo: "the answer F1 against the task's answer",
};

/** Recipes whose reward matches the policy's calls against gold calls: they run when every train task carries some. */
export const FTRL_GOLD_CALL_RECIPES: Readonly<Record<string, string>> = {
  matchtir: "MatchTIR's turn rewards match the policy's calls against gold calls",
  toolrl: "ToolRL's reward compares the policy's calls with gold calls",
};

/**
 * Why `recipe` cannot train on these FTRL tasks, or null when it can. `trainTasks` (when
 * known) decides the gold-call recipes.
 */
export function checkFtrlRecipe(
  recipe: Pick<Recipe, 'name' | 'env' | 'needsTraces'>,
  trainTasks?: readonly Task[],
): string | null {
  const runs = `recipes that train on FTRL tasks: ${Object.keys(FTRL_TRAINABLE_RECIPES).join(', ')} (and ${Object.keys(FTRL_GOLD_CALL_RECIPES).join(', ')} on files whose tasks carry gold calls)`;
  const head = `recipe "${recipe.name}" cannot train on FTRL tasks`;
  if (recipe.env !== 'tool-use')
    return `${head}: it runs on the ${recipe.env} environment (tool-repository queries), and FTRL tasks are tool-use tasks; ${runs}`;
  if (recipe.needsTraces)
    return (
      `${head}: it needs expert traces h* (SFT terms or the privileged context c^h), and an FTRL file carries none ` +
      `(its lines hold the user turn, the tools with their Python code, the expected sub-answers and the answer); ` +
      `PACT's prompt-only anchor alone (anchorProb 1) is MatchTIR, which needs gold calls; ${runs}`
    );
  if (Object.hasOwn(FTRL_GOLD_CALL_RECIPES, recipe.name)) {
    if (!trainTasks) return null;
    const without = trainTasks.filter((t) => !t.goldCalls || t.goldCalls.length === 0).length;
    if (without === 0) return null;
    return (
      `${head}: ${FTRL_GOLD_CALL_RECIPES[recipe.name]}, and ${without} of ${trainTasks.length} train tasks carry none ` +
      `(FTRL's test file has no assistant tool_calls; src/envs/ftrl/goldCallSearch.ts reconstructs calls from the answers for replay, ` +
      `but searched calls are not recorded gold and are not used as training targets); ${runs}`
    );
  }
  if (Object.hasOwn(FTRL_TRAINABLE_RECIPES, recipe.name)) return null;
  return `${head}: its reward is not checked against FTRL's task fields; ${runs}`;
}

/** An executor for prompt rendering only: RolloutEnv.reset runs no tool. */
const RENDER_ONLY: ToolExecutor = {
  execute: () => Promise.reject(new Error('prompt rendering runs no tool')),
  dispose: () => {},
};

/** Tokens of a task's rendered prompt x (system prompt, tools, user turn), as a rollout starts it. */
export function countPromptTokens(task: Task, tokenizer: TextTokenizer, renderChat: RenderChat): number {
  const { promptText } = new RolloutEnv({ executor: RENDER_ONLY, renderChat }).reset(task);
  return tokenizer.encode(promptText).length;
}

export interface FtrlWindowInput {
  /** Prompt tokens of the train and held-out tasks, each with its 1-based line. */
  train: readonly { line: number; tokens: number }[];
  test: readonly { line: number; tokens: number }[];
  maxPromptTokens: number;
  maxResponseTokens: number;
  /** The model's window (max_position_embeddings). */
  windowTokens: number;
  /** The model, for the message ("qwen3-nano", "folder ./Qwen3-0.6B"). */
  model: string;
}

/** The presets by window, for the message: "qwen3-nano (2,048)". */
function describePresets(need: number): { small: string[]; large: string[] } {
  const entries = Object.entries(QWEN3_PRESETS).map(([name, c]) => ({ name, window: c.max_position_embeddings }));
  const show = (e: { name: string; window: number }) => `${e.name} (${e.window.toLocaleString('en-US')})`;
  return {
    small: entries.filter((e) => e.window < need).map(show),
    large: entries.filter((e) => e.window >= need).map(show),
  };
}

/**
 * Whether every train and held-out prompt fits maxPromptTokens and the model's window holds
 * maxPromptTokens + maxResponseTokens; null when they do, else what fits and what is needed.
 */
export function checkFtrlPromptWindow(input: FtrlWindowInput): string | null {
  const { maxPromptTokens, maxResponseTokens, windowTokens } = input;
  const all = [...input.train, ...input.test];
  if (all.length === 0) return null;
  const fits = (t: { tokens: number }) => t.tokens <= maxPromptTokens;
  const longest = all.reduce((a, b) => (b.tokens > a.tokens ? b : a));
  const isPromptOk = all.every(fits);
  const isWindowOk = maxPromptTokens + maxResponseTokens <= windowTokens;
  if (isPromptOk && isWindowOk) return null;
  const fmt = (n: number) => n.toLocaleString('en-US');
  const promptNeed = Math.max(longest.tokens, isPromptOk ? maxPromptTokens : 0);
  const need = promptNeed + maxResponseTokens;
  const count =
    `${all.filter(fits).length} of ${all.length} FTRL tasks fit maxPromptTokens ${fmt(maxPromptTokens)} ` +
    `(train ${input.train.filter(fits).length} of ${input.train.length}, held out ${input.test.filter(fits).length} of ${input.test.length}); ` +
    `the longest prompt is ${fmt(longest.tokens)} tokens`;
  const { small, large } = describePresets(need);
  const window =
    need > windowTokens
      ? `; ${input.model}'s window is ${fmt(windowTokens)} tokens, and training on them needs maxPromptTokens ≥ ${fmt(promptNeed)} ` +
        `with maxResponseTokens ${fmt(maxResponseTokens)}, a window of at least ${fmt(need)}: ` +
        `${small.length > 0 ? `${small.join(' and ')} ${small.length > 1 ? 'are' : 'is'} too small; ` : ''}` +
        `it needs your own Qwen3 folder with a window of at least ${fmt(need)} tokens (model.init = its path${large.length > 0 ? `; ${large.join(', ')} has one` : ''})`
      : `; set maxPromptTokens to at least ${fmt(longest.tokens)} (${input.model}'s window of ${fmt(windowTokens)} holds it with maxResponseTokens ${fmt(maxResponseTokens)})`;
  return `${count}${window}. Choose lines that fit (trainLines / testLines) or a model with a longer window.`;
}

/**
 * An FTRL run's train and held-out lines, as `pact train` (runAssets.ts) and `pact export verl`
 * (export/verl/ftrlTasks.ts) both take them: the recipe refused before the file is read if it
 * cannot train on FTRL tasks at all, the file(s) read and split (splitFtrlTasks), then refused if
 * the train tasks lack what it needs (checkFtrlRecipe).
 */
export async function readFtrlRunSplit(
  recipe: Recipe,
  config: TrainConfig,
  readTaskFile: (path: string | undefined) => Promise<{ name: string; text: string }>,
): Promise<{ train: FtrlTaskLine[]; test: FtrlTaskLine[]; split: FtrlTaskSplit }> {
  const early = checkFtrlRecipe(recipe);
  if (early) throw new Error(`config.recipe: ${early}`);
  const train = await readTaskFile(config.tasks.path);
  const test = config.tasks.testPath !== undefined ? await readTaskFile(config.tasks.testPath) : undefined;
  const result = splitFtrlTasks({ train, test, tasks: config.tasks });
  const late = checkFtrlRecipe(
    recipe,
    result.train.map((t) => t.task),
  );
  if (late) throw new Error(`config.recipe: ${late}`);
  return result;
}
