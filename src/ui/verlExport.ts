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
 * valid, its recipe one with a VeRL mapping and its tasks generated ones. An FTRL setup is
 * exported by `pact export verl` only: the page's export has no task file to carry the tools'
 * Python sources from (exportable.ts APP_FTRL_EXPORT_BLOCKER).
 */
export function describeVerlExportBlocker(config: Pick<TrainConfig, 'recipe' | 'tasks'> | null): string | null {
  if (config === null) return 'Fix the setup first: the export takes a valid configuration.';
  const blocker = findVerlExportBlocker(config, 'app');
  if (blocker === null) return null;
  if (!EXPORTABLE_RECIPES.includes(config.recipe))
    return `The ${config.recipe} recipe has no VeRL mapping yet; the export carries ${EXPORTABLE_RECIPES.join(', ')}.`;
  if (config.tasks.source === 'ftrl')
    return findVerlExportBlocker(config, 'cli') === null
      ? "This page does not export FTRL runs: its export cannot carry the task file's Python tools. " +
          'Export the run with `pact export verl --config FILE` (the same settings in an experiment file; the task file by tasks.path or $PACT_FTRL_TASKS).'
      : `This run cannot be exported: ${blocker}.`;
  const source = OPTION_LABELS.tasks?.[config.tasks.source] ?? config.tasks.source;
  return `Only generated tasks and FTRL files are exported; this setup's task source is ${source}.`;
}

/** A phase of the export as the progress line shows it. */
export function describeVerlExportPhase(p: VerlExportPhase): string {
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

/** Builds the export of `config` (loading it on first use) and hands the .tar to the browser as a download. */
export async function downloadVerlExport(
  config: TrainConfig,
  onProgress: (text: string) => void,
): Promise<VerlExportDone> {
  onProgress('Loading the exporter…');
  const { buildVerlArchive } = await import('../export/verl/browserExport');
  const archive = await buildVerlArchive(config, {
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
