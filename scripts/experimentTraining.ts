/**
 * A training experiment file through the page (scripts/browserExperiment.ts): every (run,
 * seed), seed by seed and --jobs at a time, each run written to runs/<id>.json as it ends,
 * results.json, table.md and table.csv rewritten after every run, --resume keeping the
 * finished runs of an earlier invocation, and the figures at the end.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expandExperiment, type ExperimentRun } from '../src/run/experimentFile';
import { RECIPE_NAMES } from '../src/ui/recipeNames';
import { buildTable, pickTableMetrics } from '../src/experiments/aggregate';
import { formatTableCsv, formatTableMarkdown } from '../src/experiments/format';
import {
  buildSeedPairs,
  defaultSeedPairs,
  MEAN_TRAIN_ANSWER_F1,
  MEAN_TRAIN_REWARD,
  nameRunReward,
} from '../src/experiments/seedPairs';
import {
  RESULTS_FORMAT,
  formatResultsJson,
  formatRunJson,
  pickResumableRuns,
  type ExperimentResults,
  type RunResult,
} from '../src/experiments/results';
import { shrinkForSmoke } from '../src/experiments/smoke';
import { formatHeldOutNote } from '../src/experiments/heldOut';
import { isFtrlEvalFile } from '../src/experiments/ftrlEvalConfig';
import { writeFigures } from './experimentFigures';
import { runInPage } from './experimentRunPage';
import {
  ROOT,
  chooseBackend,
  newContext,
  openRunnerSession,
  readExperimentJson,
  readGit,
  showPath,
  slug,
  type BackendChoice,
  type RunExperimentOptions,
} from './experimentSession';

async function readRunFiles(dir: string, runs: readonly ExperimentRun[]): Promise<unknown[]> {
  const found: unknown[] = [];
  for (const run of runs) {
    try {
      found.push(JSON.parse(await readFile(path.join(dir, `${slug(run.id)}.json`), 'utf8')));
    } catch {
      // not run yet, or cut off mid-write: it runs again
    }
  }
  return found;
}

function formatHours(seconds: number): string {
  return seconds < 3600 ? `${(seconds / 60).toFixed(0)} min` : `${(seconds / 3600).toFixed(1)} h`;
}

/** Runs every (run, seed) of an experiment file through the page and writes results/NAME/. */
export async function runExperiment(options: RunExperimentOptions): Promise<ExperimentResults> {
  const log = options.log ?? ((line: string) => console.log(line));
  const filePath = path.resolve(options.file);
  const json = (await readExperimentJson(options.file)) as Record<string, unknown>;
  if (isFtrlEvalFile(json))
    throw new Error(`${options.file} is an evaluation file ("kind": "ftrl-eval"): run it with runFtrlEvalExperiment`);
  const smoke = options.isSmoke ? shrinkForSmoke(json) : null;
  const experiment = expandExperiment(smoke ? smoke.file : json, {
    defaultName: path.basename(filePath, '.json'),
    recipeNames: RECIPE_NAMES,
    overrides: smoke?.overrides,
  });
  const runs = options.onlyRuns
    ? experiment.runs.filter((r) => options.onlyRuns!.includes(r.id) || options.onlyRuns!.includes(r.name))
    : experiment.runs;
  if (runs.length === 0)
    throw new Error(
      `no run matches ${options.onlyRuns?.join(',')}; runs: ${experiment.runs.map((r) => r.id).join(', ')}`,
    );
  const { outDir, pkg, startedAt, server, browser, close } = await openRunnerSession(experiment.name, options, log);
  try {
    // A backend the file itself names wins over auto.
    const fileBackends = new Set(runs.map((r) => r.config.backend).filter(Boolean));
    const choice: BackendChoice =
      options.backend ?? (fileBackends.size === 1 ? ([...fileBackends][0] as BackendChoice) : 'auto');
    const backend = await chooseBackend(
      browser,
      server.baseUrl,
      choice === 'webgpu' || choice === 'wasm' ? choice : 'auto',
    );
    log(
      `experiment ${experiment.name}${smoke ? ' (--smoke)' : ''}: ${runs.length} run(s) on ${backend.name} (${backend.reason}), app ${server.baseUrl} → ${showPath(outDir)}`,
    );

    const git = readGit();
    const runsDir = path.join(outDir, 'runs');
    await mkdir(runsDir, { recursive: true });
    const kept = options.resume
      ? pickResumableRuns(runs, await readRunFiles(runsDir, runs), backend.name)
      : new Map<string, RunResult>();
    if (options.resume)
      log(
        `--resume: ${kept.size} of ${runs.length} run(s) kept from ${showPath(runsDir)}, ${runs.length - kept.size} to run`,
      );
    const results: (RunResult | undefined)[] = runs.map((r) => kept.get(r.id));
    const nSeeds = new Set(runs.map((r) => r.seed)).size;
    /** results.json, table.md and table.csv over the runs done so far (all of them at the end). */
    const writeOutputs = async (): Promise<ExperimentResults> => {
      const done = results.filter((r): r is RunResult => r !== undefined);
      const table = buildTable(done);
      const out: ExperimentResults = {
        format: RESULTS_FORMAT,
        experiment: {
          name: experiment.name,
          description: experiment.description,
          file: path.relative(ROOT, filePath),
          isSmoke: Boolean(smoke),
          ...(smoke ? { smokeOverrides: smoke.overrides } : {}),
        },
        app: { name: pkg.name, version: pkg.version, ...git },
        backend,
        startedAt,
        finishedAt: new Date().toISOString(),
        runs: done,
        table,
      };
      await writeFile(path.join(outDir, 'results.json'), formatResultsJson(out));
      const missing = runs.length - done.length;
      const notes = [
        `Backend: ${backend.name} (${backend.reason}). App ${pkg.name} ${pkg.version}, commit ${git.gitCommit}${git.isGitDirty ? ' with uncommitted changes' : ''}. ${smoke ? 'Smoke run (--smoke): shrunk sizes, first seed only; not a result.' : ''}`.trim(),
        ...(kept.size > 0
          ? [`${kept.size} run(s) were kept from an earlier invocation (--resume); their app commit may differ.`]
          : []),
        ...(missing > 0 ? [`PARTIAL: ${done.length} of ${runs.length} runs so far; ${missing} still to run.`] : []),
        `Wall clock of the runs in the page: ${formatHours(done.reduce((a, r) => a + r.seconds, 0))} in all${(options.jobs ?? 1) > 1 ? `, ${options.jobs} at a time` : ''}.`,
      ];
      const heldOut = done.find((r) => r.config.tasks)?.config;
      if (heldOut) notes.unshift(formatHeldOutNote(heldOut));
      const pairs = buildSeedPairs(
        done,
        [...table.metrics.filter((k) => k !== 'reward'), MEAN_TRAIN_REWARD, MEAN_TRAIN_ANSWER_F1],
        defaultSeedPairs(table.rows.map((r) => r.method)),
        { rewardName: nameRunReward },
      );
      await writeFile(
        path.join(outDir, 'table.md'),
        formatTableMarkdown(table, { title: `${experiment.name}${smoke ? ' (smoke)' : ''}`, notes, pairs }),
      );
      await writeFile(path.join(outDir, 'table.csv'), formatTableCsv(table));
      return out;
    };

    // Seed by seed (every method's first seed, then the second…), so an interrupted experiment
    // already has a row per method; results stay in the file's order.
    const seedOrder = [...new Set(runs.map((r) => r.seed))];
    const todo = runs
      .map((run, i) => ({ run, i }))
      .filter(({ run }) => !kept.has(run.id))
      .sort((x, y) => seedOrder.indexOf(x.run.seed) - seedOrder.indexOf(y.run.seed) || x.i - y.i);
    let finishedCount = kept.size;
    let writing = Promise.resolve<unknown>(undefined);
    const worker = async () => {
      for (let next = todo.shift(); next; next = todo.shift()) {
        const { run, i } = next;
        const context = await newContext(browser);
        const r = await runInPage(
          context,
          server.baseUrl,
          run,
          backend,
          outDir,
          options.runTimeoutMs ?? 24 * 3600_000,
        ).finally(() => context.close());
        results[i] = r;
        finishedCount++;
        const last = r.steps[r.steps.length - 1]?.values ?? {};
        const shown = Object.entries(last)
          .filter(([k, v]) => (k.startsWith('eval/') || k === 'reward') && typeof v === 'number')
          .map(([k, v]) => `${k} ${(v as number).toFixed(3)}`)
          .join(' ');
        log(
          `[${finishedCount}/${runs.length}] ${r.id}: ${r.status} in ${r.seconds.toFixed(0)} s, ${r.steps.length} step(s)${r.error ? ` — ${r.error}` : ''}${shown ? ` · ${shown}` : ''}`,
        );
        // One writer at a time: runs finishing together must not interleave their writes.
        writing = writing.then(async () => {
          await writeFile(path.join(runsDir, `${slug(r.id)}.json`), formatRunJson(r));
          await writeOutputs();
        });
        await writing;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.jobs ?? 1, todo.length)) }, worker));
    await writing;

    const out = await writeOutputs();
    const all = results as RunResult[];
    const figureMetrics = [
      ...new Set([
        'reward',
        ...pickTableMetrics(all)
          .filter((k) => k.startsWith('eval/'))
          .slice(0, 3),
      ]),
    ];
    const figures = await writeFigures(browser, all, figureMetrics, path.join(outDir, 'figures'), nSeeds);
    const failed = all.filter((r) => r.status !== 'finished').length;
    log(
      `done: ${all.length - failed} of ${all.length} run(s) finished; ${showPath(path.join(outDir, 'table.md'))}, ${figures.length} figure(s)`,
    );
    return out;
  } finally {
    await close();
  }
}
