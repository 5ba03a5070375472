/**
 * `npm run experiment -- experiments/NAME.json [--smoke] [--backend auto|webgpu|wasm]
 *                        [--out DIR] [--port N] [--dist DIR] [--run ID,…] [--base-url URL]
 *                        [--jobs N] [--resume]`
 *
 * Runs an experiment file through the app's real UI, in headless Chromium (Playwright), and writes
 * results/NAME/ (results.json, table.md and table.csv, figures, screenshots).
 * A failed run is recorded with its error and the others go on; the exit code is 1 when
 * any run failed. `--smoke` shrinks every run to about a minute (src/experiments/smoke.ts).
 * `runExperiment` is the library entry e2e/experiment.spec.ts calls.
 * Evaluation files (`"kind": "ftrl-eval"`, src/experiments/ftrlEvalConfig.ts) run
 * `runFtrlEvalExperiment` instead.
 *
 * The steps, --jobs, --resume and evaluation files: docs/runs.md.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isFtrlEvalPath, runFtrlEvalExperiment } from './experimentFtrlEval';
import type { BackendChoice, RunExperimentOptions } from './experimentSession';
import { runExperiment } from './experimentTraining';

export { FTRL_EVAL_RESULTS_FORMAT, runFtrlEvalExperiment, type FtrlEvalResults } from './experimentFtrlEval';
export type { BackendChoice, RunExperimentOptions } from './experimentSession';
export { runExperiment } from './experimentTraining';

const USAGE = `usage: npm run experiment -- experiments/NAME.json [--smoke] [--backend auto|webgpu|wasm]
                              [--out DIR] [--port N] [--dist DIR] [--run ID,…] [--base-url URL]
                              [--jobs N] [--resume]
Runs every (run, seed) of the file through the app's run setup in headless Chromium and
writes results/NAME/ (results.json, table.md, table.csv, figures/, screenshots/).
  --smoke        shrink every run to about a minute (2 steps, K 2, 1 prompt, first seed)
  --backend B    auto (default: WebGPU when a hardware adapter is offered, else wasm), webgpu or wasm
  --out DIR      output folder (default results/NAME)
  --port N       port of vite preview (default 4188); --dist DIR its build folder (default dist-experiment)
  --run IDS      only these run ids or names (comma-separated)
  --jobs N       N runs at once, each in its own browser context and worker (default 1)
  --resume       keep the finished runs in the output folder's runs/ whose config is unchanged
  --base-url URL use a server that already serves the built app (no build)
  --tasks PATH   evaluation files ("kind": "ftrl-eval") only: the FTRL task file (default $PACT_FTRL_TASKS)`;

export function parseArgs(argv: string[]): RunExperimentOptions {
  const opts: Partial<RunExperimentOptions> = {};
  const valueOf = (i: number, flag: string) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value\n${USAGE}`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--smoke') opts.isSmoke = true;
    else if (a === '--backend') {
      const b = valueOf(i++, a);
      if (!['auto', 'webgpu', 'wasm'].includes(b))
        throw new Error(`--backend must be auto, webgpu or wasm, got "${b}"`);
      opts.backend = b as BackendChoice;
    } else if (a === '--out') opts.outDir = valueOf(i++, a);
    else if (a === '--port') {
      const p = valueOf(i++, a);
      if (!/^\d+$/.test(p)) throw new Error(`--port must be a number, got "${p}"`);
      opts.port = Number(p);
    } else if (a === '--dist') opts.distDir = valueOf(i++, a);
    else if (a === '--run') opts.onlyRuns = valueOf(i++, a).split(',');
    else if (a === '--jobs') {
      const n = valueOf(i++, a);
      if (!/^[1-9]\d*$/.test(n)) throw new Error(`--jobs must be a whole number ≥ 1, got "${n}"`);
      opts.jobs = Number(n);
    } else if (a === '--resume') opts.resume = true;
    else if (a === '--base-url') opts.baseUrl = valueOf(i++, a);
    else if (a === '--tasks') opts.tasksPath = valueOf(i++, a);
    else if (a === '--help' || a === '-h') throw new Error(USAGE);
    else if (a.startsWith('--')) throw new Error(`unknown flag ${a}\n${USAGE}`);
    else if (opts.file) throw new Error(`one experiment file at a time (got ${opts.file} and ${a})`);
    else opts.file = a;
  }
  if (!opts.file) throw new Error(USAGE);
  return opts as RunExperimentOptions;
}

async function main(): Promise<void> {
  try {
    const options = parseArgs(process.argv.slice(2));
    if (await isFtrlEvalPath(options.file)) {
      await runFtrlEvalExperiment(options);
      process.exitCode = 0;
      return;
    }
    if (options.tasksPath !== undefined)
      throw new Error(`--tasks is for evaluation files ("kind": "ftrl-eval"); ${options.file} is a training file`);
    const results = await runExperiment(options);
    process.exitCode = results.runs.some((r) => r.status !== 'finished') ? 1 : 0;
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) void main();
