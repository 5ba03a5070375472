// The ftrl-eval experiment file (validation naming the field, --smoke, the task path from the
// command line) and its tables (categories × Solve-R/P/F1), with numbers worked out by hand.
import { describe, expect, it } from 'vitest';
import {
  isFtrlEvalFile,
  parseFtrlEvalExperiment,
  resolveFtrlTasksPath,
  shrinkFtrlEvalForSmoke,
} from './ftrlEvalConfig';
import { formatFtrlEvalCsv, formatFtrlEvalMarkdown, formatScore } from './ftrlEvalTable';
import type { FtrlEvalSummary } from '../run/ftrlEval';

describe('parseFtrlEvalExperiment', () => {
  it('fills the defaults of pact eval-ftrl --model and keeps what the file gives', () => {
    expect(parseFtrlEvalExperiment({ kind: 'ftrl-eval' }, { defaultName: 'ftrl-eval' })).toEqual({
      kind: 'ftrl-eval',
      name: 'ftrl-eval',
      policy: 'warm-start',
      backend: 'auto',
      settings: { maxTurns: 6, maxResponseTokens: 512, toolTimeoutMs: 5000 },
    });
    const exp = parseFtrlEvalExperiment({
      kind: 'ftrl-eval',
      name: 'mine',
      description: 'd',
      policy: 'folder:/tmp/q',
      perCategory: 10,
      maxTurns: 3,
      backend: 'wasm',
    });
    expect(exp).toMatchObject({
      name: 'mine',
      description: 'd',
      policy: 'folder:/tmp/q',
      backend: 'wasm',
      settings: { perCategory: 10, maxTurns: 3, maxResponseTokens: 512 },
    });
    // perCategory null = every task
    expect(parseFtrlEvalExperiment({ kind: 'ftrl-eval', perCategory: null }).settings.perCategory).toBeUndefined();
  });

  it('names the field at fault', () => {
    const bad = (json: unknown) => () => parseFtrlEvalExperiment(json);
    expect(bad([])).toThrow('ftrl-eval: the file must hold a JSON object');
    expect(bad({ kind: 'train' })).toThrow('ftrl-eval.kind: must be "ftrl-eval", got "train"');
    expect(bad({ kind: 'ftrl-eval', perCategory: 0 })).toThrow(
      'ftrl-eval.perCategory: must be an integer from 1 to 100000, got 0',
    );
    expect(bad({ kind: 'ftrl-eval', maxTurns: 2.5 })).toThrow(
      'ftrl-eval.maxTurns: must be an integer from 1 to 32, got 2.5',
    );
    expect(bad({ kind: 'ftrl-eval', maxResponseTokens: '512' })).toThrow(
      'ftrl-eval.maxResponseTokens: must be an integer from 1 to 32768, got "512"',
    );
    expect(bad({ kind: 'ftrl-eval', toolTimeoutMs: 10 })).toThrow(
      'ftrl-eval.toolTimeoutMs: must be an integer from 100 to 600000, got 10',
    );
    expect(bad({ kind: 'ftrl-eval', policy: 'scratch' })).toThrow(
      'ftrl-eval.policy: must be "warm-start" or "folder:PATH" (a Qwen3 folder), got "scratch"',
    );
    expect(bad({ kind: 'ftrl-eval', policy: 'folder:' })).toThrow('ftrl-eval.policy');
    expect(bad({ kind: 'ftrl-eval', backend: 'cuda' })).toThrow(
      'ftrl-eval.backend: must be auto, webgpu or wasm, got "cuda"',
    );
    expect(bad({ kind: 'ftrl-eval', name: '' })).toThrow('ftrl-eval.name: must be a non-empty string');
    expect(bad({ kind: 'ftrl-eval', tasks: 'x.jsonl' })).toThrow(
      'ftrl-eval: unknown field "tasks" (the task file comes from the command line: --tasks PATH or $PACT_FTRL_TASKS)',
    );
    expect(bad({ kind: 'ftrl-eval', steps: 2 })).toThrow('ftrl-eval: unknown field "steps"; valid: kind, name,');
  });

  it('tells an evaluation file from a training file', () => {
    expect(isFtrlEvalFile({ kind: 'ftrl-eval' })).toBe(true);
    expect(isFtrlEvalFile({ base: { recipe: 'pact' } })).toBe(false);
    expect(isFtrlEvalFile(null)).toBe(false);
  });

  it('--smoke keeps at most 2 tasks per category, 2 turns, 64 response tokens', () => {
    const all = parseFtrlEvalExperiment({ kind: 'ftrl-eval' });
    expect(shrinkFtrlEvalForSmoke(all).settings).toEqual({
      perCategory: 2,
      maxTurns: 2,
      maxResponseTokens: 64,
      toolTimeoutMs: 5000,
    });
    const small = parseFtrlEvalExperiment({ kind: 'ftrl-eval', perCategory: 1, maxTurns: 1, maxResponseTokens: 16 });
    expect(shrinkFtrlEvalForSmoke(small).settings).toEqual({
      perCategory: 1,
      maxTurns: 1,
      maxResponseTokens: 16,
      toolTimeoutMs: 5000,
    });
  });

  it('takes the task file from --tasks, else $PACT_FTRL_TASKS, else says how to give it', () => {
    expect(resolveFtrlTasksPath('a.jsonl', { PACT_FTRL_TASKS: 'b.jsonl' })).toBe('a.jsonl');
    expect(resolveFtrlTasksPath(undefined, { PACT_FTRL_TASKS: 'b.jsonl' })).toBe('b.jsonl');
    expect(() => resolveFtrlTasksPath(undefined, {})).toThrow('pass --tasks PATH, or set PACT_FTRL_TASKS=PATH');
  });
});

// Two categories. self/a: task 1 ran, 1 of 4 expected answers found with 2 calls (R 1/4, P 1/2,
// F1 2·1/(2+4) = 1/3); task 2 over the window (no calls: R 0, P 1, F1 0) → R 1/8, P 3/4, F1 1/6.
// self/b: one task, 2 of 2 answers with 4 calls (R 1, P 1/2, F1 4/6 = 2/3).
// overall (3 tasks): R (1/4 + 0 + 1)/3 = 5/12, P (1/2 + 1 + 1/2)/3 = 2/3, F1 (1/3 + 0 + 2/3)/3 = 1/3.
const SUMMARY: FtrlEvalSummary = {
  rows: [
    { category: 'self/a', tasks: 2, promptTooLong: 1, solveR: 1 / 8, solveP: 3 / 4, solveF1: 1 / 6 },
    { category: 'self/b', tasks: 1, promptTooLong: 0, solveR: 1, solveP: 1 / 2, solveF1: 2 / 3 },
  ],
  overall: { category: 'overall', tasks: 3, promptTooLong: 1, solveR: 5 / 12, solveP: 2 / 3, solveF1: 1 / 3 },
  selected: 3,
  promptTooLong: 1,
  maxPromptTokens: 1536,
  lineErrors: [],
  predictions: [],
  toolCalls: { calls: 6, errors: 1, timeouts: 1 },
};

describe('the ftrl-eval tables', () => {
  it('formatScore keeps 3 decimals and marks no value', () => {
    expect(formatScore(1 / 6)).toBe('0.167');
    expect(formatScore(5 / 12)).toBe('0.417');
    expect(formatScore(Number.NaN)).toBe('–');
  });

  it('table.md: categories as rows, then overall; Solve-R/P/F1 as columns; the over-window count said', () => {
    const md = formatFtrlEvalMarkdown(SUMMARY, { title: 'ftrl-eval (smoke)', notes: ['Policy: warm start.'] });
    const lines = md.split('\n');
    expect(lines.slice(0, 7)).toEqual([
      '# ftrl-eval (smoke)',
      '',
      '| Category | Tasks | Prompt too long | Solve-R | Solve-P | Solve-F1 |',
      '|---|---:|---:|---:|---:|---:|',
      '| self/a | 2 | 1 | 0.125 | 0.750 | 0.167 |',
      '| self/b | 1 | 0 | 1.000 | 0.500 | 0.667 |',
      '| **overall** | 3 | 1 | 0.417 | 0.667 | 0.333 |',
    ]);
    expect(md).toContain("1 of 3 tasks had a prompt over the model's budget of 1536 prompt tokens");
    expect(md).toContain('Tool calls: 6 (1 answered with an error, 1 past the time limit).');
    expect(md).toContain('has Solve-P 1 (no wrong call');
    expect(md.trimEnd().endsWith('Policy: warm start.')).toBe(true);
  });

  it('table.csv keeps full precision, one row per category then overall', () => {
    expect(formatFtrlEvalCsv(SUMMARY).split('\n')).toEqual([
      'category,tasks,prompt_too_long,solve_r,solve_p,solve_f1',
      'self/a,2,1,0.125,0.75,0.16666666666666666',
      'self/b,1,0,1,0.5,0.6666666666666666',
      'overall,3,1,0.4166666666666667,0.6666666666666666,0.3333333333333333',
      '',
    ]);
  });
});
