/**
 * `pact export verl`: one run of an experiment file written as a directory a VeRL user
 * launches with one command (docs/verl-export.md). The files are built in memory by
 * buildVerlExport.ts (the app builds the same ones and downloads them as one .tar); this
 * is the Node side: it reads the experiment file, the Python package from
 * python/pact_verl/, bundles the tool server with esbuild, reads an FTRL run's task file as
 * `pact train` does (run/ftrlTaskFile.ts), and writes the directory.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Task } from '../../envs/types';
import { expandExperiment, type ExperimentRun } from '../../run/experimentFile';
import { readNodeFtrlTaskFile } from '../../run/ftrlTaskFile';
import type { FtrlTaskSplit } from '../../run/ftrlTaskSplit';
import { buildVerlExport, type VerlExportSources } from './buildVerlExport';
import type { ReadTaskFile } from './ftrlTasks';
import { bundleToolServer } from './toolServerBundle';
import { EXPORTABLE_RECIPES } from './exportable';

export { generateRunTasks } from './buildVerlExport';
export { bundleToolServer, TOOL_SERVER_ENTRY } from './toolServerBundle';

export const PYTHON_PACKAGE_DIR = fileURLToPath(new URL('./python/pact_verl/', import.meta.url));

export interface ExportOptions {
  configPath: string;
  outDir: string;
  /** A run id (`pact-s1`) or name (`pact`); default: the file's first run. */
  run?: string;
  /** Written into actor_rollout_ref.model.path. */
  modelPath?: string;
  log?: (line: string) => void;
}

export interface ExportResult {
  run: ExperimentRun;
  files: string[];
  trainTasks: Task[];
  testTasks: Task[];
  /** FTRL runs: which lines train and which evaluate. */
  taskSplit?: FtrlTaskSplit;
}

/** Reads an FTRL task file as `pact train` does: tasks.path, else $PACT_FTRL_TASKS, else ../shared/data/ftrl/test.jsonl. */
export const readNodeTaskFile: ReadTaskFile = (file) => readNodeFtrlTaskFile(file, process.env);

/** The run to export: the one whose id or name is `run`, else the first. */
export function selectRun(runs: readonly ExperimentRun[], run?: string): ExperimentRun {
  if (runs.length === 0) throw new Error('export verl: the experiment has no runs');
  if (run === undefined) return runs[0];
  const found = runs.find((r) => r.id === run || r.name === run);
  if (!found) throw new Error(`export verl: no run "${run}"; runs: ${runs.map((r) => r.id).join(', ')}`);
  return found;
}

/** The Python package's files (python/pact_verl/*.py) as they are on disk. */
export async function readPythonPackage(): Promise<Record<string, Uint8Array>> {
  const files: Record<string, Uint8Array> = {};
  for (const name of (await readdir(PYTHON_PACKAGE_DIR)).filter((n) => n.endsWith('.py')))
    files[name] = new Uint8Array(await readFile(path.join(PYTHON_PACKAGE_DIR, name)));
  return files;
}

/** What the export copies, read and bundled in Node. */
export async function readNodeSources(): Promise<VerlExportSources> {
  return { pythonFiles: await readPythonPackage(), toolServer: await bundleToolServer() };
}

/** Writes the export directory; returns its files (relative paths). */
export async function exportVerl(options: ExportOptions): Promise<ExportResult> {
  const log = options.log ?? (() => {});
  const json = JSON.parse(await readFile(options.configPath, 'utf8')) as unknown;
  const experiment = expandExperiment(json, {
    defaultName: path.basename(options.configPath, '.json'),
    recipeNames: EXPORTABLE_RECIPES,
  });
  const run = selectRun(experiment.runs, options.run);
  const config = run.config;
  const built = await buildVerlExport({
    config,
    runId: run.id,
    experimentName: experiment.name,
    modelPath: options.modelPath,
    sources: await readNodeSources(),
    readTaskFile: readNodeTaskFile,
    onProgress: (p) => {
      if (p.phase !== 'tasks') return;
      if (config.tasks.source === 'ftrl')
        log(`exporting run ${run.id} (${config.recipe}): reading the FTRL task file…`);
      else log(`exporting run ${run.id} (${config.recipe}): generating ${p.nTrain} train tasks with expert traces…`);
    },
  });
  if (built.taskSplit) log(built.taskSplit.statement);
  for (const file of built.files) {
    const target = path.join(options.outDir, file.path);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, file.bytes);
  }
  return {
    run,
    files: built.files.map((f) => f.path),
    trainTasks: built.trainTasks,
    testTasks: built.testTasks,
    ...(built.taskSplit ? { taskSplit: built.taskSplit } : {}),
  };
}
