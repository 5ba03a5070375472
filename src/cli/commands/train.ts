/**
 * `pact train --config experiments/NAME.json [--steps N] [--backend wasm|cpu]
 *             [--out DIR] [--run ID] [--eval-every N] [--public DIR]`
 * `pact train --resume RUN_DIR[/checkpoint-<step>] [--steps N] [--eval-every N] [--backend …]`
 *
 * Runs every run of an experiment file (src/run/experimentFile.ts: base + runs × seeds;
 * `"recipe": "*"` = every registered recipe) with the same Trainer the worker uses.
 * Per run it writes metrics.jsonl and checkpoint-<step>/ folders under DIR/<experiment>/<run id>/
 * (and, for an FTRL source, task-split.json: the lines that trained and those evaluated).
 *
 * The files it writes and how --resume continues a run: docs/runs.md.
 */
import { appendFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { limitText, splitJsonlLines } from '../../core/untrustedJson';
import { expandExperiment, type ExperimentRun } from '../../run/experimentFile';
import { removeStalePartialFolders, writeFileAtomically } from '../../run/nodeRunFolder';
import { runTrainingLoop } from '../../run/runLoop';
import { isFtrlEvalFile } from '../../experiments/ftrlEvalConfig';
import type { EvalMetrics, StepMetrics } from '../../recipes/types';
import { parseFlags, registerCommand, type CliIO } from '../registry';
import { availableParallelism } from 'node:os';
import { prepareTfjs, resolveFma, resolveThreads } from './score';

/** The tfjs-dependent modules, imported after prepareTfjs registered Node's resolve hook. */
async function importTrainingModules() {
  const [recipes, checkpoint, nodeRun, nodeFiles] = await Promise.all([
    import('../../recipes/index'),
    import('../../run/checkpoint'),
    import('../../run/nodeRun'),
    import('../../model/weights/nodeFiles'),
  ]);
  return { ...recipes, ...checkpoint, ...nodeRun, ...nodeFiles };
}
type TrainingModules = Awaited<ReturnType<typeof importTrainingModules>>;

const USAGE = `usage: pact train --config experiments/NAME.json [--steps N] [--backend wasm|cpu]
                  [--out DIR] [--run ID] [--eval-every N] [--public DIR]
       pact train --resume RUN_DIR[/checkpoint-<step>] [--steps N] [--eval-every N] [--backend B]

Trains every run of an experiment file (base config + runs × seeds; "recipe": "*" expands
to every registered recipe).
  --steps N        override the number of steps of every run
  --backend B      tfjs backend: wasm (default) or cpu
  --threads N      CPU-engine threads (default: $PACT_THREADS, else every core up to 8); the
                   numbers do not depend on it
  --fma            engineKernels "fma" in every run's config (or $PACT_FMA=1): the CPU engine's
                   fused multiply-add kernels, other bits than the default's (docs/engine.md);
                   pact turns on Node 20's relaxed SIMD itself; where a runtime has none, the
                   plain ones run and config.json says so; --resume keeps a run's own kernels
  --out DIR        output folder (default runs/); runs go to DIR/<experiment>/<run id>/
  --run ID         only the runs whose id or name equals ID (repeat with commas)
  --eval-every N   override evalEvery (0 = no held-out evaluation)
  --public DIR     folder holding warm-start/ (default public)
  --resume DIR     continue a run written by pact train: DIR is its run folder (its last
                   checkpoint-<step> that reads back whole is taken) or one checkpoint
                   folder; with the config it saved (--steps N beyond its step count
                   extends it); metrics after the checkpoint's step are dropped from
                   RUN_DIR/metrics.jsonl, and a torn last line with a warning
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
  if (!/^\d+$/.test(text) || Number(text) < min)
    throw new Error(`--${flag} must be an integer ≥ ${min}, got "${text}"`);
  return Number(text);
}

/** The step of a metrics line, or why it is not a metrics record. */
function readMetricsStep(line: string): number | string {
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch (e) {
    return `not valid JSON (${limitText((e as Error).message, 120)})`;
  }
  const step = typeof obj === 'object' && obj !== null ? (obj as { step?: unknown }).step : undefined;
  return typeof step === 'number' ? step : 'expected an object with a numeric "step"';
}

/**
 * The metrics.jsonl text of a run resumed at `step`: its lines up to that step (steps and
 * evaluations), as written, without those written after it before the interruption. A last
 * line that is not a metrics record is a write the interruption cut: it is dropped and
 * reported as `torn` (its line number and an excerpt). Any other bad line throws, naming it.
 */
export function keepMetricsUpTo(
  text: string,
  step: number,
): { text: string; dropped: number; torn?: { line: number; excerpt: string } } {
  const lines = splitJsonlLines(text).filter((l) => l.text.trim() !== '');
  const kept: string[] = [];
  let torn: { line: number; excerpt: string } | undefined;
  lines.forEach(({ line, text: lineText }, i) => {
    const rowStep = readMetricsStep(lineText);
    if (typeof rowStep === 'number') {
      if (rowStep <= step) kept.push(lineText);
    } else if (i === lines.length - 1) {
      torn = { line, excerpt: limitText(lineText, 80) };
    } else {
      throw new Error(`metrics.jsonl line ${line}: ${rowStep}`);
    }
  });
  return {
    text: kept.map((l) => l + '\n').join(''),
    dropped: lines.length - kept.length - (torn ? 1 : 0),
    ...(torn ? { torn } : {}),
  };
}

/**
 * Cuts the metrics.jsonl file of a run resumed at `step` to its lines up to that step
 * (keepMetricsUpTo), atomically.
 */
export async function rewriteMetricsUpTo(
  metricsPath: string,
  step: number,
): Promise<{ dropped: number; torn?: { line: number; excerpt: string } }> {
  const previous = await readFile(metricsPath, 'utf8').catch((e: NodeJS.ErrnoException) =>
    e.code === 'ENOENT' ? '' : Promise.reject(e),
  );
  const { text, dropped, torn } = keepMetricsUpTo(previous, step);
  // In place, a kill between the truncation and the write would leave it empty: a temporary
  // sibling, fsynced, then renamed over it (the file is the old one or the whole new one).
  await writeFileAtomically(metricsPath, text);
  return { dropped, ...(torn ? { torn } : {}) };
}

/** `checkpoint-<step>` folders of a run folder, newest first (temporary `.partial-…` ones never match). */
export async function listCheckpointFolders(runDir: string): Promise<{ step: number; dir: string }[]> {
  const entries = await readdir(runDir, { withFileTypes: true });
  return entries
    .map((e) => ({ e, m: /^checkpoint-(\d+)$/.exec(e.name) }))
    .filter(({ e, m }) => m !== null && e.isDirectory())
    .map(({ e, m }) => ({ step: Number(m![1]), dir: path.join(runDir, e.name) }))
    .sort((a, b) => b.step - a.step);
}

/** The step metrics that must be finite and are not; 'no step' when a training run took none. */
function findNonFinite(last: StepMetrics | undefined, steps: number): string[] {
  if (!last) return steps === 0 ? [] : ['no step'];
  return (['loss', 'grad_norm'] as const).filter((k) => !Number.isFinite(last[k]));
}

/** Selects the tfjs backend (saying so when it falls back) and imports the training modules. */
async function prepareTraining(
  backend: string,
  io: CliIO,
  threads = 1,
): Promise<{ m: TrainingModules; backend: string }> {
  const selection = await prepareTfjs(backend, { threads });
  if (selection.backend !== backend)
    io.err(`backend ${backend} unavailable (${selection.reason}); using ${selection.backend}`);
  if (selection.threads !== undefined && selection.threads < threads)
    io.err(`engine threads: ${selection.threads} of ${threads}`);
  return { m: await importTrainingModules(), backend: selection.backend };
}

/**
 * The engineKernels a resumed run continues on: the one its checkpoint saved. Asking for fma
 * (--fma, PACT_FMA=1) on a run that trained on simd is refused: one run, one set of numerics.
 * A checkpoint written before the field existed (`saved` undefined) ran on what its command
 * line asked, so there the flag decides, and `note` says so.
 */
export function pickResumeKernels(saved: unknown, isFmaAsked: boolean): { engineKernels: unknown; note?: string } {
  if (saved === undefined)
    return isFmaAsked
      ? {
          engineKernels: 'fma',
          note: "the checkpoint's config predates engineKernels: the fma kernels, as --fma (PACT_FMA=1) asks",
        }
      : { engineKernels: 'simd' };
  if (isFmaAsked && saved !== 'fma')
    throw new Error(
      `--resume continues a run on the kernels it trained on (engineKernels ${JSON.stringify(saved)}); drop --fma (and PACT_FMA=1) to resume it`,
    );
  return { engineKernels: saved };
}

/** engineKernels as a checkpoint's trainer_state.json wrote it (undefined: before the field existed, or unreadable). */
async function readSavedKernels(checkpointDir: string, stateFile: string): Promise<unknown> {
  try {
    const json = JSON.parse(await readFile(path.join(checkpointDir, stateFile), 'utf8')) as {
      config?: { engineKernels?: unknown };
    };
    return json.config?.engineKernels;
  } catch {
    return undefined; // readCheckpointFolder read it whole already; nothing to add here
  }
}

type CheckpointFolder = Awaited<ReturnType<TrainingModules['readCheckpointFolder']>>;

async function trainRun(
  m: TrainingModules,
  run: ExperimentRun,
  dir: string,
  io: CliIO,
  options: { publicDir: string; isTty: boolean; resume?: CheckpointFolder },
): Promise<{ last?: StepMetrics; evals: EvalMetrics[] }> {
  const config = run.config;
  const { resume } = options;
  await mkdir(dir, { recursive: true });
  await removeStalePartials(dir, io);
  const metricsPath = path.join(dir, 'metrics.jsonl');
  if (resume) {
    const { dropped, torn } = await rewriteMetricsUpTo(metricsPath, resume.state.step);
    if (torn)
      io.err(`warning: metrics.jsonl line ${torn.line} was cut by the interruption and is dropped: ${torn.excerpt}`);
    if (dropped > 0) io.out(`  dropped ${dropped} metrics line(s) written after step ${resume.state.step}`);
  } else {
    await writeFile(metricsPath, '');
  }
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  const checkpointPolicy = resume ? { modelConfig: resume.modelConfig, mapping: resume.mapping } : undefined;
  const assets = await m.prepareRunAssets(config, {
    publicDir: options.publicDir,
    log: (line) => io.out(`  ${line}`),
    checkpointPolicy,
  });
  if (assets.engineKernelsWarning) io.err(`warning: ${assets.engineKernelsWarning}`);
  // The line a run's log and scripts/studyQueue.sh's provenance read.
  io.out(`engine kernels: ${assets.engineKernels ?? 'none (the tfjs graph runs this model)'}`);
  io.out(
    `run ${run.id}: recipe ${config.recipe}, ${config.steps} steps, policy ${assets.policy.source}, ${assets.trainPrompts.length} train / ${assets.testPrompts.length} test prompts`,
  );
  if (assets.taskSplit) {
    // An FTRL source: which lines trained and which evaluate (prepareRunAssets logged it), beside the metrics.
    await writeFile(path.join(dir, 'task-split.json'), JSON.stringify(assets.taskSplit, null, 2) + '\n');
  }
  const trainer = m.createRunTrainer(config, assets);
  // Its config as it runs: engineKernels "simd" where "fma" fell back (createRunTrainer).
  if (trainer.config !== config)
    await writeFile(path.join(dir, 'config.json'), JSON.stringify(trainer.config, null, 2) + '\n');
  if (resume) {
    trainer.importState(resume.state);
    io.out(`  resumed at step ${trainer.completedSteps} of ${config.steps}`);
  }
  const saveCheckpoint = async (step: number) => {
    const files = m.buildCheckpointFiles(
      await trainer.exportState(),
      assets.policy.model.config,
      assets.policy.mapping,
    );
    await m.writeFolderAtomically(path.join(dir, `checkpoint-${step}`), files);
    await removeStalePartials(dir, io);
  };
  try {
    // The rule of when to evaluate and checkpoint: src/run/runLoop.ts.
    return await runTrainingLoop(
      trainer,
      {
        totalSteps: config.steps,
        evalEvery: config.evalEvery,
        evalAtStart: config.evalAtStart,
        checkpointEvery: config.checkpointEvery,
        isResumed: resume !== undefined,
      },
      {
        onStep: async (stepMetrics) => {
          await appendFile(metricsPath, formatMetricsLine({ type: 'step', run: run.id, ...stepMetrics }) + '\n');
          const line = formatProgress(run.id, stepMetrics, config.steps);
          if (options.isTty) process.stdout.write(`\r${line}${stepMetrics.step === config.steps ? '\n' : ''}`);
          else io.out(line);
        },
        onEval: async (e) => {
          await appendFile(metricsPath, formatMetricsLine({ type: 'eval', run: run.id, ...e }) + '\n');
          const shown = Object.entries(e).filter(([k, v]) => k.startsWith('eval/') && Number.isFinite(v));
          const size =
            e.nRollouts > e.nTasks
              ? `${e.nTasks} tasks × ${e.nRollouts / e.nTasks} sampled rollouts`
              : `${e.nTasks} tasks`;
          io.out(`  eval @${e.step} (${size}): ${shown.map(([k, v]) => `${k.slice(5)} ${formatNumber(v)}`).join(' ')}`);
        },
        checkpoint: saveCheckpoint,
      },
    );
  } finally {
    trainer.dispose();
    assets.policy.model.dispose();
    assets.executor.dispose();
  }
}

/** Removes what killed writes left in a run folder (nodeRunFolder.ts: only stale ones), saying so. */
async function removeStalePartials(dir: string, io: CliIO): Promise<void> {
  const { removed } = await removeStalePartialFolders(dir);
  if (removed.length > 0) io.out(`  removed what interrupted writes left: ${removed.join(', ')}`);
}

/**
 * What `--resume DIR` continues from: DIR itself when it is a checkpoint folder (it holds
 * trainer_state.json), else the newest `checkpoint-<step>` of the run folder DIR that reads back
 * whole; the newer ones that do not are named in `skipped`.
 */
async function findResumeCheckpoint(
  m: TrainingModules,
  dir: string,
): Promise<{ checkpointDir: string; folder: CheckpointFolder; skipped: string[] }> {
  const read = (d: string) => m.readCheckpointFolder(m.createNodeFolderReader(d), { knownRecipes: m.listRecipes() });
  const isCheckpoint = await stat(path.join(dir, m.TRAINER_STATE_FILE)).then(
    (s) => s.isFile(),
    () => false,
  );
  if (isCheckpoint) {
    try {
      return { checkpointDir: dir, folder: await read(dir), skipped: [] };
    } catch (e) {
      throw new Error(`--resume ${dir}: ${(e as Error).message}`);
    }
  }
  let candidates;
  try {
    candidates = await listCheckpointFolders(dir);
  } catch (e) {
    throw new Error(`--resume ${dir}: ${(e as Error).message}`);
  }
  const skipped: string[] = [];
  for (const { dir: checkpointDir } of candidates) {
    try {
      return { checkpointDir, folder: await read(checkpointDir), skipped };
    } catch (e) {
      skipped.push(`${path.basename(checkpointDir)}: ${(e as Error).message}`);
    }
  }
  throw new Error(
    candidates.length === 0
      ? `--resume ${dir}: neither a checkpoint folder (no ${m.TRAINER_STATE_FILE}) nor a run folder with checkpoint-<step> folders`
      : `--resume ${dir}: no checkpoint reads back whole:\n  ${skipped.join('\n  ')}`,
  );
}

/** `pact train --resume DIR`: the run of a checkpoint folder, continued in its parent folder. */
async function resumeRun(
  resumeDir: string,
  options: { backend: string; overrides: Record<string, unknown>; publicDir: string; threads: number; isFma: boolean },
  io: CliIO,
): Promise<number> {
  const { m, backend } = await prepareTraining(options.backend, io, options.threads);
  const { checkpointDir, folder, skipped } = await findResumeCheckpoint(m, resumeDir);
  for (const s of skipped) io.err(`warning: skipped ${s}`);
  for (const w of folder.warnings) io.err(`warning: ${path.basename(checkpointDir)}: ${w}`);
  const { state } = folder;
  let config;
  try {
    const kernels = pickResumeKernels(await readSavedKernels(checkpointDir, m.TRAINER_STATE_FILE), options.isFma);
    if (kernels.note) io.out(`  ${kernels.note}`);
    config = m.resolveConfig({ ...state.config, ...options.overrides, engineKernels: kernels.engineKernels });
    m.checkResumableState({ ...state, config });
  } catch (e) {
    throw new Error(`--resume ${checkpointDir}: ${(e as Error).message}`);
  }
  if (config.steps <= state.step) {
    throw new Error(
      `--resume ${checkpointDir}: the checkpoint is at step ${state.step} of ${config.steps}; nothing is left to train (--steps N with N > ${state.step} extends the run)`,
    );
  }
  const runDir = path.dirname(path.resolve(checkpointDir));
  const id = path.basename(runDir);
  io.out(`resuming ${id} from ${checkpointDir} (step ${state.step}) to step ${config.steps} on ${backend}`);
  const { last } = await trainRun(m, { id, name: config.name ?? id, seed: config.seed, config }, runDir, io, {
    publicDir: options.publicDir,
    isTty: process.stdout.isTTY === true,
    resume: folder,
  });
  const bad = findNonFinite(last, config.steps);
  if (bad.length > 0) {
    io.err(`${id}: non-finite ${bad.join(', ')}`);
    return 1;
  }
  io.out(`done: ${id} at step ${config.steps}, metrics and checkpoints under ${runDir}`);
  return 0;
}

registerCommand({
  name: 'train',
  summary: 'train the runs of an experiment file (metrics JSONL + safetensors checkpoints)',
  usage: USAGE,
  async run(args: string[], io: CliIO): Promise<number> {
    const { flags, positional } = parseFlags(args, {
      values: ['config', 'steps', 'backend', 'out', 'run', 'eval-every', 'public', 'tasks', 'resume', 'threads'],
      booleans: ['fma'],
    });
    if (positional.length > 0) throw new Error(`unexpected argument "${positional[0]}"`);
    const str = (name: string): string | undefined =>
      typeof flags[name] === 'string' ? (flags[name] as string) : undefined;
    const backend = str('backend') ?? 'wasm';
    const threads = resolveThreads(str('threads'), Math.min(8, availableParallelism()));
    const isFma = resolveFma(flags.fma === true);
    const overrides: Record<string, unknown> = {};
    if (str('steps') !== undefined) overrides.steps = parsePositiveInt('steps', str('steps')!, 0); // 0 = evaluate only
    if (str('eval-every') !== undefined) overrides.evalEvery = parsePositiveInt('eval-every', str('eval-every')!, 0);
    const resumeDir = str('resume');
    if (resumeDir !== undefined) {
      const clash = ['config', 'run', 'out', 'tasks'].filter((f) => flags[f] !== undefined);
      if (clash.length > 0)
        throw new Error(
          `--resume continues the run its checkpoint belongs to, with the config it saved; drop ${clash.map((f) => `--${f}`).join(', ')}`,
        );
      return resumeRun(resumeDir, { backend, overrides, publicDir: str('public') ?? 'public', threads, isFma }, io);
    }
    const configPath = str('config');
    if (!configPath)
      throw new Error('--config is required (an experiments/NAME.json file), or --resume a checkpoint folder');

    let json: unknown;
    try {
      json = JSON.parse(await readFile(configPath, 'utf8'));
    } catch (e) {
      throw new Error(`cannot read experiment file ${configPath}: ${(e as Error).message}`);
    }
    if (isFtrlEvalFile(json)) {
      // An evaluation file ("kind": "ftrl-eval"): nothing to train; run it as pact eval-ftrl --config.
      const { runFtrlEvalConfig } = await import('./evalFtrlPolicy');
      if (backend !== 'wasm' && backend !== 'cpu') throw new Error(`--backend must be wasm or cpu, got "${backend}"`);
      return runFtrlEvalConfig(
        configPath,
        json,
        { tasks: str('tasks'), outDir: str('out'), publicDir: str('public'), backend },
        io,
      );
    }
    if (str('tasks') !== undefined)
      throw new Error(`--tasks is for evaluation files ("kind": "ftrl-eval"); ${configPath} is a training file`);
    const { m, backend: selected } = await prepareTraining(backend, io, threads);
    const experiment = expandExperiment(json, {
      defaultName: path.basename(configPath, '.json'),
      recipeNames: m.listRecipes(),
      // --fma (PACT_FMA=1) is engineKernels "fma" in every run's config, recorded in its config.json.
      overrides: isFma ? { ...overrides, engineKernels: 'fma' } : overrides,
    });
    const only = str('run')?.split(',');
    const runs = only ? experiment.runs.filter((r) => only.includes(r.id) || only.includes(r.name)) : experiment.runs;
    if (runs.length === 0)
      throw new Error(`no run matches --run ${str('run')}; runs: ${experiment.runs.map((r) => r.id).join(', ')}`);

    const root = path.join(str('out') ?? 'runs', experiment.name);
    io.out(`experiment ${experiment.name}: ${runs.length} run(s) on ${selected} → ${root}`);
    const failures: string[] = [];
    for (const run of runs) {
      try {
        const { last } = await trainRun(m, run, path.join(root, run.id), io, {
          publicDir: str('public') ?? 'public',
          isTty: process.stdout.isTTY === true,
        });
        const bad = findNonFinite(last, run.config.steps);
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
