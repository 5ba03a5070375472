/**
 * `pact eval-ftrl --model DIR --tasks FILE.jsonl`: evaluates a policy
 * checkpoint on FTRL test tasks. For each selected task, one greedy prompt-only rollout
 * (the trainer's batched collector, src/recipes/rollouts/rollouts.ts, temperature 0) against the
 * task's own Python tools, executed in Pyodide (src/envs/ftrl, LanguageRoutingExecutor);
 * then the episode's calls become an FTRL prediction line `{index, calls: [{name, output}]}`
 * and are scored by the same `evaluateFtrl` as `--predictions` files: Solve-R / Solve-P /
 * Solve-F1 per category (data_source) and overall (FTRL's metrics, src/core/metrics.ts).
 *
 * The loop itself is src/run/ftrlEval.ts, shared with the trainer worker (the app's
 * Task files panel); this file loads the policy and Pyodide the Node way.
 * Node-only (Pyodide in worker_threads, tfjs on wasm/cpu).
 *
 * Tasks whose prompt does not fit the window: docs/runs.md.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CliIO } from '../registry';
import type { EvalFtrlReport } from '../../envs/ftrl/ftrlScore';
import type { FtrlEvalSummary } from '../../run/ftrlEval';
import { loadModelFolder, prepareTfjs } from './score';

export { selectPerCategory } from '../../envs/ftrl/ftrlScore';

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
  /** The shared loop's summary (per-category rows with their promptTooLong counts, tool-call counts). */
  summary: FtrlEvalSummary;
  /** Tasks selected, tasks whose prompt was over the window. */
  selected: number;
  promptTooLong: number;
  backend: string;
}

export async function evaluatePolicyOnFtrl(options: FtrlPolicyEvalOptions, io: CliIO): Promise<FtrlPolicyEvalResult> {
  const tasksText = await readFile(options.tasksPath, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new Error(`cannot read --tasks ${options.tasksPath}: ${e.code ?? e.message}`);
  });
  const sel = await prepareTfjs(options.backend);
  const { createNodePyodideExecutor } = await import('../../envs/ftrl/pyodideExecutorNode');
  const { LanguageRoutingExecutor } = await import('../../envs/ftrl/languageExecutor');
  const { createWorkerExecutor } = await import('../../envs/sandbox');
  const { loadQwen3TokenizerFromPackage } = await import('../../model/tokenizer/nodeLoader');
  const { bindRenderChat } = await import('../../recipes/policyVocab');
  const { evaluatePolicyOnFtrlTasks } = await import('../../run/ftrlEval');

  const { model, tokenizer } = await loadModelFolder(options.modelDir);
  if (!tokenizer)
    throw new Error(
      `--model ${options.modelDir}: no tokenizer (needs pruned_vocab.json, tokenizer.json, or Qwen3's full vocabulary)`,
    );
  const source = await loadQwen3TokenizerFromPackage();
  const python = createNodePyodideExecutor({ timeoutMs: options.toolTimeoutMs });
  // A task file's tool code is hostile: JavaScript tools go to the sandbox process, never in-process.
  const executor = new LanguageRoutingExecutor({ javascript: await createWorkerExecutor(), python });
  const maxPromptTokens = model.config.max_position_embeddings - options.maxResponseTokens;
  try {
    const summary = await evaluatePolicyOnFtrlTasks({
      tasksText,
      // Only ids the tokenizer can decode (a folder's embedding may have padding rows past its vocabulary).
      policy: { generate: (p, o) => model.generate(p, { ...o, vocabLimit: tokenizer.vocabSize }) },
      tokenizer,
      contextTokens: model.config.max_position_embeddings,
      renderChat: bindRenderChat(source),
      executor,
      perCategory: options.perCategory,
      maxTurns: options.maxTurns,
      maxResponseTokens: options.maxResponseTokens,
      readToolCounts: () => ({ ...executor.pythonCounts }),
      onProgress: (p) => {
        if (p.done === 0) {
          io.err(
            `eval-ftrl: ${p.selected} tasks selected, ${p.total} fit the window of ${maxPromptTokens} prompt tokens; backend ${sel.backend}`,
          );
        } else io.err(`  [${p.done}/${p.total}] line ${p.line} (${p.category}): ${p.calls} calls`);
      },
    });
    for (const e of summary.lineErrors) io.err(`tasks ${e} (skipped)`);
    const report: EvalFtrlReport = {
      categories: summary.rows.map(({ promptTooLong: _, ...r }) => r),
      overall: (({ promptTooLong: _, ...r }) => r)(summary.overall),
      tasksWithoutPrediction: summary.selected - summary.predictions.length,
      problems: [],
    };
    return {
      report,
      summary,
      predictions: summary.predictions,
      selected: summary.selected,
      promptTooLong: summary.promptTooLong,
      backend: sel.backend,
    };
  } finally {
    executor.dispose();
    model.dispose();
  }
}

export async function writePredictions(file: string, predictions: readonly string[]): Promise<void> {
  await writeFile(file, predictions.join('\n') + '\n');
}

/**
 * An evaluation experiment file (`"kind": "ftrl-eval"`, src/experiments/ftrlEvalConfig.ts)
 * headless in Node: `pact eval-ftrl --config experiments/ftrl-eval.json --tasks FILE` (also
 * reached from `pact train --config`). The file's policy ("warm-start" = `<publicDir>/warm-start`,
 * or "folder:PATH") and sizes; the backend is wasm (the file's auto/webgpu are browser choices).
 * Prints the same table.md the experiment runner writes; with `outDir`, writes table.md,
 * table.csv and results.json there.
 */
export async function runFtrlEvalConfig(
  configPath: string,
  json: unknown,
  options: { tasks?: string; isSmoke?: boolean; outDir?: string; publicDir?: string; backend?: 'wasm' | 'cpu' },
  io: CliIO,
): Promise<number> {
  const { parseFtrlEvalExperiment, resolveFtrlTasksPath, shrinkFtrlEvalForSmoke } =
    await import('../../experiments/ftrlEvalConfig');
  const { formatFtrlEvalCsv, formatFtrlEvalMarkdown } = await import('../../experiments/ftrlEvalTable');
  const parsed = parseFtrlEvalExperiment(json, { defaultName: path.basename(configPath, '.json') });
  const exp = options.isSmoke ? shrinkFtrlEvalForSmoke(parsed) : parsed;
  const tasksPath = resolveFtrlTasksPath(options.tasks, process.env);
  const backend = options.backend ?? 'wasm';
  await prepareTfjs(backend); // before recipes/warmStart, which loads tfjs
  const { WARM_START_DIR } = await import('../../recipes/warmStart/index');
  const modelDir =
    exp.policy === 'warm-start'
      ? path.join(options.publicDir ?? 'public', WARM_START_DIR)
      : exp.policy.slice('folder:'.length);
  const result = await evaluatePolicyOnFtrl({ modelDir, tasksPath, ...exp.settings, backend }, io);
  const { summary } = result;
  const notes = [
    `Policy: ${modelDir}. Tasks: ${tasksPath}, ${exp.settings.perCategory === undefined ? 'every task' : `the first ${exp.settings.perCategory} of each category`}; ` +
      `up to ${exp.settings.maxTurns} turns and ${exp.settings.maxResponseTokens} response tokens, greedy; tool time limit ${exp.settings.toolTimeoutMs} ms. ` +
      `Node (pact), backend ${result.backend}.${options.isSmoke ? ' Smoke run (--smoke): at most 2 tasks per category; not a result.' : ''}`,
  ];
  const markdown = formatFtrlEvalMarkdown(summary, { title: `${exp.name}${options.isSmoke ? ' (smoke)' : ''}`, notes });
  io.out(markdown.trimEnd());
  if (options.outDir) {
    await mkdir(options.outDir, { recursive: true });
    await writeFile(path.join(options.outDir, 'table.md'), markdown);
    await writeFile(path.join(options.outDir, 'table.csv'), formatFtrlEvalCsv(summary));
    const results = {
      format: 'pact-lab-ftrl-eval-results/1',
      experiment: {
        name: exp.name,
        file: configPath,
        isSmoke: Boolean(options.isSmoke),
        tasksFile: tasksPath,
        policy: exp.policy,
        settings: exp.settings,
      },
      runner: 'pact (Node)',
      backend: result.backend,
      summary,
    };
    await writeFile(path.join(options.outDir, 'results.json'), JSON.stringify(results, null, 2) + '\n');
    io.err(`wrote ${path.join(options.outDir, 'table.md')}, table.csv, results.json`);
  }
  return summary.overall.tasks === 0 ? 1 : 0;
}
