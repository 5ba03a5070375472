/**
 * `pact train --config experiments/NAME.json [--steps N] [--backend wasm|cpu]
 *             [--out DIR] [--run ID] [--eval-every N] [--public DIR]`
 *
 * Runs every run of an experiment file (src/recipes/experiment.ts: base + runs × seeds;
 * `"recipe": "*"` = every registered recipe) with the same Trainer the worker uses.
 * Per run, under DIR/<experiment>/<run id>/:
 *   metrics.jsonl       one JSON object per line: {type: 'step', run, …StepMetrics} or
 *                       {type: 'eval', run, …EvalMetrics} (NaN written as null)
 *   checkpoint-<step>/  config.json + model.safetensors + pruned_vocab.json (Hugging Face
 *                       Qwen3 folder) + optimizer.safetensors + reference.safetensors +
 *                       trainer_state.json, every `checkpointEvery` steps and at the end
 * Progress: a bar redrawn in place on a TTY, one line per step otherwise.
 */
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expandExperiment, type ExperimentRun } from '../../recipes/experiment';
import { isFtrlEvalFile } from '../../experiments/ftrlEvalConfig';
import type { EvalMetrics, StepMetrics } from '../../recipes/types';
import { parseFlags, registerCommand, type CliIO } from '../registry';
import { prepareTfjs } from './score';

/** The tfjs-dependent modules, imported after prepareTfjs registered Node's resolve hook. */
async function importTrainingModules() {
  const [recipes, checkpoint, nodeRun, nodeFiles] = await Promise.all([
    import('../../recipes/index'),
    import('../../recipes/checkpoint'),
    import('../../recipes/nodeRun'),
    import('../../model/weights/nodeFiles'),
  ]);
  return { ...recipes, ...checkpoint, ...nodeRun, ...nodeFiles };
}
type TrainingModules = Awaited<ReturnType<typeof importTrainingModules>>;

const USAGE = `usage: pact train --config experiments/NAME.json [--steps N] [--backend wasm|cpu]
                  [--out DIR] [--run ID] [--eval-every N] [--public DIR]

Trains every run of an experiment file (base config + runs × seeds; "recipe": "*" expands
to every registered recipe).
  --steps N        override the number of steps of every run
  --backend B      tfjs backend: wasm (default) or cpu
  --out DIR        output folder (default runs/); runs go to DIR/<experiment>/<run id>/
  --run ID         only the runs whose id or name equals ID (repeat with commas)
  --eval-every N   override evalEvery (0 = no held-out evaluation)
  --public DIR     folder holding warm-start/ (default public)
Writes metrics.jsonl and checkpoint-<step>/ folders (Hugging Face safetensors + config.json
+ trainer_state.json) per run.
An evaluation file ("kind": "ftrl-eval") is evaluated instead, as pact eval-ftrl --config:
  --tasks FILE     its FTRL task file (default $PACT_FTRL_TASKS); --out DIR gets table.md,
                   table.csv and results.json`;

/** One JSONL line; NaN and ±Infinity become null (JSON has no NaN). */
export function formatMetricsLine(record: Record<string, unknown>): string {
  return JSON.stringify(record, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v));
}

function formatNumber(x: unknown, digits = 3): string {
  return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '-';
}

/** The progress line of one step: `[####------] 4/10 pact-s1 reward 0.120 loss 0.031 …`. */
export function formatProgress(runId: string, m: StepMetrics, totalSteps: number, width = 20): string {
  const filled = Math.round((m.step / totalSteps) * width);
  const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
  return (
    `[${bar}] ${m.step}/${totalSteps} ${runId} reward ${formatNumber(m.reward)} loss ${formatNumber(m.loss, 4)} ` +
    `kl ${formatNumber(m.kl, 5)} grad ${formatNumber(m.grad_norm)} len ${formatNumber(m['completions/mean_length'], 1)} ` +
    `${formatNumber(m['tokens/s'], 1)} tok/s ${formatNumber(m.seconds, 1)} s`
  );
}

function parsePositiveInt(flag: string, text: string, min = 1): number {
  if (!/^\d+$/.test(text) || Number(text) < min) throw new Error(`--${flag} must be an integer ≥ ${min}, got "${text}"`);
  return Number(text);
}

async function trainRun(m: TrainingModules, run: ExperimentRun, dir: string, io: CliIO, options: { publicDir: string; isTty: boolean }): Promise<{ last?: StepMetrics; evals: EvalMetrics[] }> {
  const config = run.config;
  await mkdir(dir, { recursive: true });
  const metricsPath = path.join(dir, 'metrics.jsonl');
  await writeFile(metricsPath, '');
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  const assets = await m.prepareRunAssets(config, { publicDir: options.publicDir, log: (line) => io.out(`  ${line}`) });
  io.out(`run ${run.id}: recipe ${config.recipe}, ${config.steps} steps, policy ${assets.policy.source}, ${assets.trainPrompts.length} train / ${assets.testPrompts.length} test prompts`);
  const trainer = m.createRunTrainer(config, assets);
  const evals: EvalMetrics[] = [];
  let last: StepMetrics | undefined;
  const saveCheckpoint = async () => {
    const files = m.buildCheckpointFiles(await trainer.exportState(), assets.policy.model.config, assets.policy.mapping);
    await m.writeFolderFiles(path.join(dir, `checkpoint-${trainer.completedSteps}`), files);
  };
  const evaluate = async () => {
    const e = await trainer.evaluate();
    evals.push(e);
    await appendFile(metricsPath, formatMetricsLine({ type: 'eval', run: run.id, ...e }) + '\n');
    const shown = Object.entries(e).filter(([k, v]) => k.startsWith('eval/') && Number.isFinite(v));
    io.out(`  eval @${e.step} (${e.nTasks} tasks): ${shown.map(([k, v]) => `${k.slice(5)} ${formatNumber(v)}`).join(' ')}`);
  };
  try {
    if (config.evalAtStart && config.steps > 0) await evaluate(); // the starting policy, step 0
    for (let s = 0; s < config.steps; s++) {
      const stepMetrics = await trainer.step();
      last = stepMetrics;
      await appendFile(metricsPath, formatMetricsLine({ type: 'step', run: run.id, ...stepMetrics }) + '\n');
      const line = formatProgress(run.id, stepMetrics, config.steps);
      if (options.isTty) process.stdout.write(`\r${line}${s + 1 === config.steps ? '\n' : ''}`);
      else io.out(line);
      const done = trainer.completedSteps;
      if (config.evalEvery > 0 && done % config.evalEvery === 0 && done < config.steps) await evaluate();
      if (config.checkpointEvery > 0 && done % config.checkpointEvery === 0 && done < config.steps) await saveCheckpoint();
    }
    if (config.evalEvery > 0 || config.steps === 0) await evaluate(); // steps = 0: evaluate only
    await saveCheckpoint();
  } finally {
    trainer.dispose();
    assets.policy.model.dispose();
    assets.executor.dispose();
  }
  return { last, evals };
}

registerCommand({
  name: 'train',
  summary: 'train the runs of an experiment file (metrics JSONL + safetensors checkpoints)',
  usage: USAGE,
  async run(args: string[], io: CliIO): Promise<number> {
    const { flags, positional } = parseFlags(args, { values: ['config', 'steps', 'backend', 'out', 'run', 'eval-every', 'public', 'tasks'] });
    if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"`);
    const str = (name: string): string | undefined => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
    const configPath = str('config');
    if (!configPath) throw new Error('--config is required (an experiments/NAME.json file)');
    const backend = str('backend') ?? 'wasm';
    const overrides: Record<string, unknown> = {};
    if (str('steps') !== undefined) overrides.steps = parsePositiveInt('steps', str('steps')!, 0); // 0 = evaluate only
    if (str('eval-every') !== undefined) overrides.evalEvery = parsePositiveInt('eval-every', str('eval-every')!, 0);

    let json: unknown;
    try {
      json = JSON.parse(await readFile(configPath, 'utf8'));
    } catch (e) {
      throw new Error(`cannot read experiment file ${configPath}: ${(e as Error).message}`);
    }
    if (isFtrlEvalFile(json)) {
      // An evaluation file (issue 7 "ftrl-eval"): nothing to train; run it as pact eval-ftrl --config.
      const { runFtrlEvalConfig } = await import('./evalFtrlPolicy');
      if (backend !== 'wasm' && backend !== 'cpu') throw new Error(`--backend must be wasm or cpu, got "${backend}"`);
      return runFtrlEvalConfig(configPath, json, { tasks: str('tasks'), outDir: str('out'), publicDir: str('public'), backend }, io);
    }
    if (str('tasks') !== undefined) throw new Error(`--tasks is for evaluation files ("kind": "ftrl-eval"); ${configPath} is a training file`);
    const selection = await prepareTfjs(backend);
    if (selection.backend !== backend) io.err(`backend ${backend} unavailable (${selection.reason}); using ${selection.backend}`);
    const m = await importTrainingModules();
    const experiment = expandExperiment(json, { defaultName: path.basename(configPath, '.json'), recipeNames: m.listRecipes(), overrides });
    const only = str('run')?.split(',');
    const runs = only ? experiment.runs.filter((r) => only.includes(r.id) || only.includes(r.name)) : experiment.runs;
    if (runs.length === 0) throw new Error(`no run matches --run ${str('run')}; runs: ${experiment.runs.map((r) => r.id).join(', ')}`);

    const root = path.join(str('out') ?? 'runs', experiment.name);
    io.out(`experiment ${experiment.name}: ${runs.length} run(s) on ${selection.backend} → ${root}`);
    const failures: string[] = [];
    for (const run of runs) {
      try {
        const { last } = await trainRun(m, run, path.join(root, run.id), io, { publicDir: str('public') ?? 'public', isTty: process.stdout.isTTY === true });
        const bad = last ? (['loss', 'grad_norm'] as const).filter((k) => !Number.isFinite(last[k])) : run.config.steps === 0 ? [] : ['no step'];
        if (bad.length > 0) failures.push(`${run.id}: non-finite ${bad.join(', ')}`);
      } catch (e) {
        failures.push(`${run.id}: ${(e as Error).message}`);
        io.err(`run ${run.id} failed: ${(e as Error).message}`);
        if (process.env.PACT_DEBUG) io.err(String((e as Error).stack));
      }
    }
    if (failures.length > 0) {
      io.err(`${failures.length} of ${runs.length} run(s) failed:\n  ${failures.join('\n  ')}`);
      return 1;
    }
    io.out(`done: ${runs.length} run(s), metrics and checkpoints under ${root}`);
    return 0;
  },
});
