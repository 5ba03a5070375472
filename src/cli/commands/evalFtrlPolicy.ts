/**
 * `pact eval-ftrl --model DIR --tasks FILE.jsonl` (issue 7 "ftrl-eval"): evaluates a policy
 * checkpoint on FTRL test tasks. For each selected task, one greedy prompt-only rollout
 * (the trainer's batched collector, src/recipes/rollouts.ts, temperature 0) against the
 * task's own Python tools, executed in Pyodide (src/envs/ftrl, LanguageRoutingExecutor);
 * then the episode's calls become an FTRL prediction line `{index, calls: [{name, output}]}`
 * and are scored by the same `evaluateFtrl` as `--predictions` files: Solve-R / Solve-P /
 * Solve-F1 per category (data_source) and overall (FTRL's metrics, src/core/metrics.ts).
 *
 * A task whose prompt does not fit the model's window (max_position_embeddings minus the
 * response budget) is not run; it is scored as making no calls and counted in
 * `promptTooLong`, so the table never silently drops tasks.
 *
 * Node-only (Pyodide in worker_threads, tfjs on wasm/cpu).
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { CliIO } from '../registry';
import { evaluateFtrl, type EvalFtrlReport } from './evalFtrl';
import { loadModelFolder, prepareTfjs } from './score';

export interface FtrlPolicyEvalOptions {
  modelDir: string;
  tasksPath: string;
  /** The first N tasks of each category, in file order; undefined = every task. */
  perCategory?: number;
  maxTurns: number;
  maxResponseTokens: number;
  backend: 'wasm' | 'cpu';
  /** Per tool call, ms. */
  toolTimeoutMs: number;
}

export interface FtrlPolicyEvalResult {
  report: EvalFtrlReport;
  /** Prediction lines (JSONL), one per evaluated task. */
  predictions: string[];
  /** Tasks selected, tasks run, tasks whose prompt was over the window. */
  selected: number;
  promptTooLong: number;
  backend: string;
}

/** Picks the first `perCategory` tasks of each category (data_source), keeping file order. */
export function selectPerCategory<T extends { category: string }>(items: readonly T[], perCategory: number | undefined): T[] {
  if (perCategory === undefined) return [...items];
  const seen = new Map<string, number>();
  return items.filter((t) => {
    const n = seen.get(t.category) ?? 0;
    seen.set(t.category, n + 1);
    return n < perCategory;
  });
}

export async function evaluatePolicyOnFtrl(options: FtrlPolicyEvalOptions, io: CliIO): Promise<FtrlPolicyEvalResult> {
  const tasksText = await readFile(options.tasksPath, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new Error(`cannot read --tasks ${options.tasksPath}: ${e.code ?? e.message}`);
  });
  const sel = await prepareTfjs(options.backend);
  const { parseFtrlJsonl, formatFtrlLineError } = await import('../../envs/ftrl/importFtrl');
  const { createNodePyodideExecutor } = await import('../../envs/ftrl/pyodideExecutorNode');
  const { LanguageRoutingExecutor } = await import('../../envs/ftrl/languageExecutor');
  const { InProcessExecutor } = await import('../../envs/sandbox');
  const { loadQwen3TokenizerFromPackage } = await import('../../model/tokenizer/nodeLoader');
  const { bindRenderChat } = await import('../../recipes/policyVocab');
  const { collectToolUseRollouts } = await import('../../recipes/rollouts');
  const { listCallOutputs, RolloutEnv } = await import('../../envs/rollout');
  const { createRng } = await import('../../core/rng');

  // Line by line, so each task keeps its 0-based line index: the prediction's `index`.
  const withCategory: { task: import('../../envs/types').Task; category: string; index: number }[] = [];
  tasksText.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const { tasks, errors } = parseFtrlJsonl(line);
    for (const e of errors) io.err(`tasks ${formatFtrlLineError({ ...e, line: index + 1 })} (skipped)`);
    for (const task of tasks) withCategory.push({ task, category: task.source ?? task.category, index });
  });
  const chosen = selectPerCategory(withCategory, options.perCategory);

  const { model, tokenizer } = await loadModelFolder(options.modelDir);
  if (!tokenizer) throw new Error(`--model ${options.modelDir}: no tokenizer (needs pruned_vocab.json, tokenizer.json, or Qwen3's full vocabulary)`);
  const source = await loadQwen3TokenizerFromPackage();
  const renderChat = bindRenderChat(source);
  const python = createNodePyodideExecutor({ timeoutMs: options.toolTimeoutMs });
  const executor = new LanguageRoutingExecutor({ javascript: new InProcessExecutor(), python });
  const maxPromptTokens = model.config.max_position_embeddings - options.maxResponseTokens;

  const predictions: string[] = [];
  let promptTooLong = 0;
  try {
    const fits = chosen.filter(({ task }) => {
      const { promptText } = new RolloutEnv({ executor, renderChat }).reset(task);
      const isFit = tokenizer.encode(promptText).length <= maxPromptTokens;
      if (!isFit) promptTooLong++;
      return isFit;
    });
    io.err(`eval-ftrl: ${chosen.length} tasks selected, ${fits.length} fit the window of ${maxPromptTokens} prompt tokens; backend ${sel.backend}`);
    for (const [k, item] of fits.entries()) {
      // One task at a time: FTRL prompts are long and the KV cache is sized by the batch.
      const [group] = await collectToolUseRollouts({
        prompts: [{ kind: 'tool-use', index: 0, task: item.task }],
        rolloutsPerPrompt: 1,
        policy: model,
        tokenizer,
        executor,
        renderChat,
        maxTurns: options.maxTurns,
        maxPromptTokens,
        maxResponseTokens: options.maxResponseTokens,
        temperature: 0,
        topP: 1,
        rng: createRng('ftrl-eval'),
        isGreedy: true,
      });
      const transcript = group.rollouts[0].transcript;
      const calls = transcript ? listCallOutputs(transcript) : [];
      predictions.push(JSON.stringify({ index: item.index, calls }));
      io.err(`  [${k + 1}/${fits.length}] ${item.task.id} (${item.category}): ${calls.length} calls`);
    }
  } finally {
    executor.dispose();
    model.dispose();
  }
  // Score every selected task: those not run count as making no calls.
  const selectedLines = new Set(chosen.map((c) => c.index));
  const selectedTasksText = tasksText
    .split(/\r?\n/)
    .map((line, i) => (selectedLines.has(i) ? line : ''))
    .join('\n');
  const report = evaluateFtrl(selectedTasksText, predictions.join('\n'), { isMissingScoredEmpty: true });
  return { report, predictions, selected: chosen.length, promptTooLong, backend: sel.backend };
}

export async function writePredictions(path: string, predictions: readonly string[]): Promise<void> {
  await writeFile(path, predictions.join('\n') + '\n');
}
