/**
 * A run as a VeRL job, built in memory (docs/verl-export.md): the files of the export
 * directory as {path, bytes}, with no file system, so that `pact export verl` (exportVerl.ts
 * writes them to a directory) and the app's run setup (browserExport.ts packs them into one
 * .tar) export the same bytes for the same config:
 *
 *   data/train.parquet, data/test.parquet   RL rows (rows.ts; the same rows as .json lines)
 *   data/sft.parquet                        the warm start's SFT rows (expert episodes)
 *   config/pact_trainer.yaml                the run's hyperparameters as VeRL settings
 *   config/agent_loops.yaml, config/tool_config.yaml
 *   run_config.json
 *   pact_verl/                              the Python glue (rewards, estimators, loss, tools,
 *                                           agent loop, actor extension) + tool_server.mjs
 *   sitecustomize.py, launch.sh, README.md
 *
 * FTRL runs (tasks.source 'ftrl'): the rows are the lines of the run's split, read through
 * `readTaskFile` (ftrlTasks.ts), and their tools are the tasks' Python sources, answered in a
 * `python3 -I` process per call (pythonToolProcess.ts); there is no SFT row (no expert trace).
 *
 * The two pieces that live outside the code come in as `sources`: the Python package's files
 * (read from src/export/verl/python/pact_verl/ by Node, imported as text by Vite in the app)
 * and the tool server bundled by esbuild (toolServerBundle.ts; at export time in Node, at
 * build time in the app through vite.config.ts).
 */
import { generateTasks } from '../../envs/generator';
import { InProcessExecutor } from '../../envs/sandbox/inProcessExecutor';
import type { ToolExecutor } from '../../envs/sandbox/types';
import type { Task } from '../../envs/types';
import type { TrainConfig } from '../../recipes/config';
import { generateExpertTasks } from '../../recipes/policyVocab';
import type { FtrlTaskSplit } from '../../run/ftrlTaskSplit';
import { loadFtrlExportTasks, type ReadTaskFile } from './ftrlTasks';
import { formatJsonLines, writeRlParquet, writeSftParquet } from './parquet';
import { formatReadme } from './readme';
import { buildSftRows, buildTestRows, buildTrainRows, describeRowSettings } from './rows';
import { formatYaml, mapTrainerSettings } from './trainerConfig';

/** One file of the export: its path inside the directory, its bytes, and its permission bits when not 0o644. */
export interface VerlExportFile {
  path: string;
  bytes: Uint8Array;
  /** 0o755 for launch.sh; absent: an ordinary file. */
  mode?: number;
}

/** What the export copies rather than computes. */
export interface VerlExportSources {
  /** The files of python/pact_verl/ by name (`algos.py`: its text or bytes); only `*.py` are exported. */
  pythonFiles: Readonly<Record<string, string | Uint8Array>>;
  /** DIR/pact_verl/tool_server.mjs: toolServerMain.ts bundled by esbuild (toolServerBundle.ts). */
  toolServer: string;
}

/** A step of the export, for a progress line: the tasks take seconds, the files a moment. */
export type VerlExportPhase =
  | { phase: 'tasks'; source: TrainConfig['tasks']['source']; nTrain: number; nTest: number }
  | { phase: 'files'; nTrainRows: number };

export interface VerlExportInput {
  config: TrainConfig;
  /** The run's id (`pact-s1`): the experiment file's `<run name>-s<seed>`. */
  runId: string;
  /** The experiment's name (the file's, or `run-setup` from the app). */
  experimentName: string;
  /** Written into actor_rollout_ref.model.path (default Qwen/Qwen3-0.6B). */
  modelPath?: string;
  sources: VerlExportSources;
  /** Runs the expert's tool calls while the train tasks are traced (default: an InProcessExecutor). */
  executor?: ToolExecutor;
  /** FTRL runs: reads the task file(s) the config names (Node: exportVerl.ts; the page: browserExport.ts). */
  readTaskFile?: ReadTaskFile;
  /** Called (and awaited) before each phase. */
  onProgress?: (phase: VerlExportPhase) => void | Promise<void>;
}

export interface VerlExport {
  files: VerlExportFile[];
  trainTasks: Task[];
  testTasks: Task[];
  /** FTRL runs: which lines train and which evaluate (the split pact train reports). */
  taskSplit?: FtrlTaskSplit;
}

/** Permission bits of launch.sh: the user may run it as `./launch.sh` as well as `bash launch.sh`. */
export const EXECUTABLE_MODE = 0o755;

/**
 * The run's train and held-out tasks, as the app's runAssets builds them: generated ones (train
 * tasks with verified expert traces), or an FTRL file's split (read with `readTaskFile`).
 */
export async function generateRunTasks(
  config: TrainConfig,
  executor: ToolExecutor = new InProcessExecutor(),
  readTaskFile?: ReadTaskFile,
): Promise<{ train: Task[]; test: Task[]; split?: FtrlTaskSplit }> {
  if (config.tasks.source === 'ftrl') {
    if (!readTaskFile) throw new Error('export verl: an FTRL run needs its task file, and no reader was given');
    return loadFtrlExportTasks(config, readTaskFile);
  }
  if (config.tasks.source !== 'generated') {
    throw new Error(`export verl: tasks.source "${config.tasks.source}" is not exported; only "generated" and "ftrl"`);
  }
  const generator = config.tasks.categories ? { categories: config.tasks.categories } : {};
  const train = await generateExpertTasks(
    { seed: config.tasks.trainSeed, n: config.tasks.nTrain, generator },
    executor,
  );
  const test = generateTasks({ ...generator, seed: config.tasks.testSeed, split: 'test', n: config.tasks.nTest });
  return { train, test };
}

function toolConfigYaml(tasks: readonly Task[]): string {
  const seen = new Map<string, Task['tools'][number]>();
  for (const t of tasks)
    for (const tool of t.tools) if (!seen.has(tool.function.name)) seen.set(tool.function.name, tool);
  const lines = [
    '# One VeRL tool per tool name of the run (pact_verl.tools.PactStubTool). The schema is the first',
    "# task's; each task's own schemas and stubs travel in its row's extra_info and are what the",
    '# pact_tool_agent loop shows and runs (a tool name may have different stubs in different tasks).',
    'tools:',
  ];
  for (const tool of seen.values()) {
    lines.push('  - class_name: pact_verl.tools.PactStubTool');
    lines.push('    config: {type: native}');
    lines.push(`    tool_schema: ${JSON.stringify(tool)}`);
  }
  return lines.join('\n') + '\n';
}

/** VeRL's ppo_trainer.yaml as the defaults these settings override. */
const HYDRA_HEADER = `hydra:
  searchpath:
    - pkg://verl.trainer.config
defaults:
  - ppo_trainer
  - _self_
`;

const AGENT_LOOPS_YAML = `- name: pact_tool_agent
  _target_: pact_verl.agent_loop.PactToolAgentLoop
`;

const SITECUSTOMIZE = `# Imported by every Python process started with this directory on PYTHONPATH (launch.sh sets it,
# and Ray's workers inherit it): registers PACT's estimators, loss, reward manager and agent loop.
try:
    import pact_verl.register  # noqa: F401
except Exception as e:  # a process without VeRL (the tests) still starts
    import sys
    print(f"pact_verl: not registered ({e})", file=sys.stderr)
`;

const LAUNCH_SH = `#!/usr/bin/env bash
# Launches the exported run with VeRL: bash launch.sh [hydra overrides…]
set -euo pipefail
DIR="$(cd "$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
cd "$DIR"
export PYTHONPATH="$DIR\${PYTHONPATH:+:$PYTHONPATH}"
exec python3 -m pact_verl.main_ppo --config-path "$DIR/config" --config-name pact_trainer "$@"
`;

const encoder = new TextEncoder();
const toBytes = (data: string | ArrayBuffer | Uint8Array): Uint8Array =>
  typeof data === 'string' ? encoder.encode(data) : data instanceof Uint8Array ? data : new Uint8Array(data);

/** The export's files, in the order the directory is written. */
export async function buildVerlExport(input: VerlExportInput): Promise<VerlExport> {
  const { config, runId, experimentName, sources } = input;
  const modelPath = input.modelPath ?? 'Qwen/Qwen3-0.6B';
  const { settings, notCarried } = mapTrainerSettings(config, { modelPath });
  await input.onProgress?.({
    phase: 'tasks',
    source: config.tasks.source,
    nTrain: config.tasks.nTrain,
    nTest: config.tasks.nTest,
  });
  const { train, test, split } = await generateRunTasks(config, input.executor, input.readTaskFile);
  const files: VerlExportFile[] = [];
  const add = (path: string, data: string | ArrayBuffer | Uint8Array, mode?: number) =>
    files.push({ path, bytes: toBytes(data), ...(mode === undefined ? {} : { mode }) });
  const trainRows = buildTrainRows(config, train);
  await input.onProgress?.({ phase: 'files', nTrainRows: trainRows.length });
  const testRows = buildTestRows(test, describeRowSettings(config));
  const sftRows = buildSftRows(train);
  add('data/train.parquet', writeRlParquet(trainRows));
  add('data/test.parquet', writeRlParquet(testRows));
  add('data/sft.parquet', writeSftParquet(sftRows));
  add('data/train.json', formatJsonLines(trainRows));
  add('data/test.json', formatJsonLines(testRows));
  add('data/sft.json', formatJsonLines(sftRows));
  add(
    'config/pact_trainer.yaml',
    `# pact export verl: run ${runId} of ${experimentName}\n${HYDRA_HEADER}` + formatYaml(settings),
  );
  add('config/agent_loops.yaml', AGENT_LOOPS_YAML);
  add('config/tool_config.yaml', toolConfigYaml(train));
  add('run_config.json', JSON.stringify(config, null, 2) + '\n');
  // Sorted by code unit, as the CLI has always listed them.
  for (const name of Object.keys(sources.pythonFiles)
    .filter((n) => n.endsWith('.py'))
    .sort())
    add(`pact_verl/${name}`, sources.pythonFiles[name]);
  add('pact_verl/tool_server.mjs', sources.toolServer);
  add('sitecustomize.py', SITECUSTOMIZE);
  add('launch.sh', LAUNCH_SH, EXECUTABLE_MODE);
  add(
    'README.md',
    formatReadme({
      runId,
      experiment: experimentName,
      config,
      notCarried,
      nTrainRows: trainRows.length,
      nTest: testRows.length,
      nSft: sftRows.length,
      modelPath,
      taskSplit: split,
    }),
  );
  return { files, trainTasks: train, testTasks: test, ...(split ? { taskSplit: split } : {}) };
}
