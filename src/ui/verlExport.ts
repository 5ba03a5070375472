/**
 * Run setup's "Export to VeRL (.tar)": the setup's current config as the same VeRL job
 * `pact export verl` writes (docs/verl-export.md), downloaded as one .tar. What can be
 * exported is decided here from the config alone; the export itself (task generation, parquet,
 * the Python package, the tool server) is imported on click, so the page's first download
 * does not carry it.
 */
import type { TrainConfig } from '../recipes/config';
import { EXPORTABLE_RECIPES, findVerlExportBlocker } from '../export/verl/exportable';
import type { VerlExportPhase } from '../export/verl/buildVerlExport';
import { downloadUrl } from './download';
import { OPTION_LABELS } from './runSetup';

/** The docs page the button links to (vite.config.ts serves it with the app). */
export const VERL_DOC_PATH = 'docs/verl-export.md';

/** One line under the button: what the download is. */
export const VERL_EXPORT_SUMMARY =
  "This setup as a VeRL job for GPUs (tasks as parquet, a trainer YAML, PACT's rewards, loss and tools in Python): " +
  'tar -xf it, then bash launch.sh.';

/**
 * Why the setup cannot be exported now, in words, or null when it can: the setup must be
 * valid, its recipe one with a VeRL mapping, its tasks generated ones or an FTRL file the
 * recipe trains on; an FTRL file must be the one loaded in the page (the export reads its
 * lines and the tools' Python sources from it, as the trainer does).
 */
export function describeVerlExportBlocker(
  config: Pick<TrainConfig, 'recipe' | 'tasks'> | null,
  taskFile: { name: string } | null = null,
): string | null {
  if (config === null) return 'Fix the setup first: the export takes a valid configuration.';
  const blocker = findVerlExportBlocker(config);
  if (blocker !== null) {
    if (!EXPORTABLE_RECIPES.includes(config.recipe))
      return `The ${config.recipe} recipe has no VeRL mapping yet; the export carries ${EXPORTABLE_RECIPES.join(', ')}.`;
    if (config.tasks.source === 'ftrl') return `This run cannot be exported: ${blocker}.`;
    const source = OPTION_LABELS.tasks?.[config.tasks.source] ?? config.tasks.source;
    return `Only generated tasks and FTRL files are exported; this setup's task source is ${source}.`;
  }
  if (config.tasks.source !== 'ftrl') return null;
  if (taskFile === null)
    return "Load the FTRL task file in the Task files panel: the export reads its lines and the tools' Python sources from it.";
  for (const named of [config.tasks.path, config.tasks.testPath])
    if (named !== undefined && named !== taskFile.name)
      return `The run names the task file ${named}, but the page holds ${taskFile.name}; the page exports from the one file it holds (\`pact export verl\` reads any).`;
  return null;
}

/** A phase of the export as the progress line shows it. */
export function describeVerlExportPhase(p: VerlExportPhase): string {
  if (p.phase === 'tasks' && p.source === 'ftrl')
    return 'Reading the FTRL task file and splitting it into train and held-out lines…';
  if (p.phase === 'tasks')
    return `Generating ${p.nTrain} train tasks with their expert traces and ${p.nTest} held-out tasks…`;
  return `Writing ${p.nTrainRows} train rows, the held-out and SFT rows, and packing the .tar…`;
}

export interface VerlExportDone {
  fileName: string;
  bytes: number;
  nFiles: number;
  nTrainTasks: number;
  nTestTasks: number;
}

/**
 * Builds the export of `config` (loading it on first use) and hands the .tar to the browser as
 * a download; an FTRL run reads `taskFile`, the file loaded in the Task files panel.
 */
export async function downloadVerlExport(
  config: TrainConfig,
  onProgress: (text: string) => void,
  taskFile: { name: string; text: string } | null = null,
): Promise<VerlExportDone> {
  onProgress('Loading the exporter…');
  const { buildVerlArchive } = await import('../export/verl/browserExport');
  const archive = await buildVerlArchive(config, {
    taskFile,
    onProgress: async (p) => {
      onProgress(describeVerlExportPhase(p));
      await new Promise((resolve) => setTimeout(resolve, 0)); // the line is painted before the work
    },
  });
  const url = URL.createObjectURL(new Blob(archive.chunks as BlobPart[], { type: 'application/x-tar' }));
  downloadUrl(archive.fileName, url);
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return {
    fileName: archive.fileName,
    bytes: archive.bytes,
    nFiles: archive.paths.length,
    nTrainTasks: archive.nTrainTasks,
    nTestTasks: archive.nTestTasks,
  };
}
