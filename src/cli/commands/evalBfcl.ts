/**
 * `pact eval-bfcl --data DIR/BFCL_v4_multi_turn_base.json --bfcl-src DIR --model DIR`:
 * a policy checkpoint on BFCL v4 multi-turn entries with BFCL's accuracy rule, per file
 * (category) and overall. The loop and the rule: src/run/bfclEval.ts, src/envs/bfcl/.
 *
 * BFCL's data (entries, possible_answer/, multi_turn_func_doc/) is read beside the --data
 * file; BFCL's function backends are BFCL's own Python source, read from --bfcl-src (the
 * user's copy; PACT Lab ships none) and run in the Pyodide sandbox
 * (src/envs/ftrl/pyodideExecutorNode.ts). Node-only (tfjs on wasm/cpu).
 */
import path from 'node:path';
import { parseFlags, registerCommand, type CliIO } from '../registry';
import type { BfclEvalSummary } from '../../run/bfclEval';
import { loadModelFolder, prepareTfjs } from './score';

export interface BfclCliOptions {
  dataFiles: string[];
  bfclSrc: string;
  pyPackages: string[];
  modelDir: string;
  limit?: number;
  maxResponseTokens: number;
  maxSteps: number;
  backend: 'wasm' | 'cpu';
  toolTimeoutMs: number;
}

export interface BfclCliResult {
  summary: BfclEvalSummary;
  backend: string;
  /** Backend classes that did not import (class → error). */
  classProblems: Record<string, string>;
  contextTokens: number;
}

export async function evaluatePolicyOnBfclFiles(options: BfclCliOptions, io: CliIO): Promise<BfclCliResult> {
  const { readBfclBackendSources, readBfclFile } = await import('../../envs/bfcl/nodeSource');
  const { BfclBackends } = await import('../../envs/bfcl/pythonBackend');
  const sources = readBfclBackendSources(options.bfclSrc, options.pyPackages);
  const files = options.dataFiles.map((f) => {
    const data = readBfclFile(f);
    return options.limit === undefined ? data : { ...data, pairs: data.pairs.slice(0, options.limit) };
  });
  const sel = await prepareTfjs(options.backend);
  const { createNodePyodideExecutor } = await import('../../envs/ftrl/pyodideExecutorNode');
  const { evaluatePolicyOnBfcl } = await import('../../run/bfclEval');
  const { loadQwen3TokenizerFromPackage } = await import('../../model/tokenizer/nodeLoader');
  const { model, tokenizer } = await loadModelFolder(options.modelDir);
  if (!tokenizer)
    throw new Error(
      `--model ${options.modelDir}: no tokenizer (needs pruned_vocab.json, tokenizer.json, or Qwen3's full vocabulary)`,
    );
  const source = await loadQwen3TokenizerFromPackage();
  const executor = createNodePyodideExecutor({ timeoutMs: options.toolTimeoutMs });
  try {
    const backends = new BfclBackends(executor, sources);
    const loaded = await backends.load();
    const involved = new Set(files.flatMap((f) => f.pairs.flatMap((p) => p.entry.involved_classes)));
    const classProblems: Record<string, string> = {};
    for (const cls of involved) {
      const problem = cls in loaded ? loaded[cls] : `no module in --bfcl-src defines class ${cls}`;
      if (problem === null) continue;
      classProblems[cls] = problem;
      const hint = /No module named '(\w+)'/.exec(problem);
      io.err(
        `eval-bfcl: class ${cls} does not load (${problem}); its entries count as errors` +
          (hint
            ? ` (pass --py-package with the folder of the pure-Python package ${hint[1]}, e.g. site-packages/${hint[1]})`
            : ''),
      );
    }
    const contextTokens = model.config.max_position_embeddings;
    const total = files.reduce((n, f) => n + f.pairs.length, 0);
    io.err(
      `eval-bfcl: ${total} entries from ${files.length} file(s); window ${contextTokens} tokens; backend ${sel.backend}`,
    );
    const summary = await evaluatePolicyOnBfcl(
      files,
      {
        // Only ids the tokenizer can decode (a folder's embedding may have padding rows past its vocabulary).
        policy: { generate: (p, o) => model.generate(p, { ...o, vocabLimit: tokenizer.vocabSize }) },
        tokenizer,
        renderChat: (messages, o) => source.renderChat(messages, o),
        backends,
        contextTokens,
        maxResponseTokens: options.maxResponseTokens,
        maxStepsPerTurn: options.maxSteps,
      },
      (r, done, n) =>
        io.err(
          `  [${done}/${n}] ${r.id}: ${r.valid ? 'correct' : (r.errorType ?? r.status)}${r.turn !== undefined ? ` (turn ${r.turn})` : ''}; ${r.steps} steps, ${r.generatedTokens} tokens`,
        ),
    );
    return { summary, backend: sel.backend, classProblems, contextTokens };
  } finally {
    executor.close();
    model.dispose();
  }
}

/** The accuracy table (markdown). */
export function formatBfclTable(summary: BfclEvalSummary): string {
  const lines = [
    '| file | category | entries | correct | accuracy | prompt over window | errors |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of [...summary.rows, summary.overall])
    lines.push(
      `| ${r.name} | ${r.category} | ${r.entries} | ${r.correct} | ${(100 * r.accuracy).toFixed(1)}% | ${r.promptTooLong} | ${r.errors} |`,
    );
  return lines.join('\n');
}

function readPositiveInt(flags: Record<string, string | boolean>, name: string, fallback?: number): number | undefined {
  const v = flags[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (typeof v !== 'string' || !Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

const USAGE = `pact eval-bfcl --data FILE[,FILE…] --bfcl-src DIR --model DIR [options]

Evaluates a Qwen3 policy on BFCL v4 multi-turn entries (Berkeley Function Calling
Leaderboard) with BFCL's accuracy rule: per turn, the model's backend instances must end in
the ground truth's state, and the ground truth's execution results of the turn must be among
the model's. Prints accuracy per file (category) and overall.

  --data FILE[,FILE…]   BFCL_v4_multi_turn_<category>.json; possible_answer/ and
                        multi_turn_func_doc/ are read beside it
  --bfcl-src DIR        your own copy of BFCL's source: the gorilla repository
                        (berkeley-function-call-leaderboard) or the unpacked bfcl-eval
                        package; its bfcl_eval/eval_checker/multi_turn_eval/func_source_code
                        holds the backends (GorillaFileSystem, TwitterAPI, …)
  --py-package DIR[,…]  pure-Python packages a backend imports that Pyodide lacks
                        (MathAPI imports mpmath: …/site-packages/mpmath)
  --model DIR           Qwen3 folder (config.json + model.safetensors [+ tokenizer])
  --limit N             the first N entries of each file
  --max-response-tokens N  new tokens per step (default 512)
  --max-steps N         steps with calls per turn before the entry is force-terminated
                        (BFCL's MAXIMUM_STEP_LIMIT, default 20)
  --tool-timeout-ms N   per backend request (default 10000)
  --backend wasm|cpu    tfjs backend (default wasm)
  --json                print the summary (rows, overall, one result per entry) as JSON

BFCL multi-turn prompts with their function docs run to several thousand tokens: a model
with a 2,048-token window (qwen3-nano) cannot take them (docs/envs.md).`;

registerCommand({
  name: 'eval-bfcl',
  summary: "Evaluate a Qwen3 policy on BFCL v4 multi-turn entries with BFCL's accuracy rule",
  usage: USAGE,
  async run(args: string[], io: CliIO): Promise<number> {
    const { flags, positional } = parseFlags(args, {
      values: [
        'data',
        'bfcl-src',
        'py-package',
        'model',
        'limit',
        'max-response-tokens',
        'max-steps',
        'tool-timeout-ms',
        'backend',
      ],
      booleans: ['json'],
    });
    if (positional.length > 0) throw new Error(`unexpected argument ${positional[0]}`);
    if (typeof flags['bfcl-src'] !== 'string') {
      const { BFCL_SOURCE_HELP } = await import('../../envs/bfcl/nodeSource');
      io.err(`eval-bfcl: --bfcl-src DIR is required. ${BFCL_SOURCE_HELP}`);
      return 2;
    }
    if (typeof flags.data !== 'string' || typeof flags.model !== 'string') {
      io.err(`eval-bfcl: --data and --model are required\n\n${USAGE}`);
      return 2;
    }
    const backend = (flags.backend ?? 'wasm') as string;
    if (backend !== 'wasm' && backend !== 'cpu') throw new Error(`--backend must be wasm or cpu, got "${backend}"`);
    const list = (v: string | boolean | undefined) =>
      typeof v === 'string'
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '')
        : [];
    const result = await evaluatePolicyOnBfclFiles(
      {
        dataFiles: list(flags.data).map((f) => path.resolve(f)),
        bfclSrc: flags['bfcl-src'],
        pyPackages: list(flags['py-package']),
        modelDir: flags.model,
        limit: readPositiveInt(flags, 'limit'),
        maxResponseTokens: readPositiveInt(flags, 'max-response-tokens', 512)!,
        maxSteps: readPositiveInt(flags, 'max-steps', 20)!,
        backend,
        toolTimeoutMs: readPositiveInt(flags, 'tool-timeout-ms', 10_000)!,
      },
      io,
    );
    if (flags.json === true) {
      io.out(
        JSON.stringify(
          {
            model: flags.model,
            backend: result.backend,
            contextTokens: result.contextTokens,
            classProblems: result.classProblems,
            ...result.summary,
          },
          null,
          2,
        ),
      );
    } else {
      io.out(
        `policy ${flags.model} on BFCL v4 multi-turn, greedy, window ${result.contextTokens} tokens, ${result.backend}`,
      );
      io.out(formatBfclTable(result.summary));
    }
    return result.summary.overall.entries === 0 ? 1 : 0;
  },
});
