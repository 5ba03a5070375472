/**
 * Checkpoint files on the page (export and import a checkpoint as Hugging Face
 * safetensors + config.json + trainer state JSON): one .tar out; a .tar or the folder's files back in as a NEW run.
 *
 * An imported run resumes like any other: the worker loads its checkpoint from IndexedDB.
 * The metric log is not part of the checkpoint itself: RunsState adds it to the exported .tar
 * (metrics.jsonl) and restores it on import; a folder without one imports with no rows.
 * No tfjs here: this runs on the page.
 *
 * The export and import paths step by step: docs/ui.md.
 */
import { getQwen3Preset } from '../model/qwen3/config';
import { createFileListReader } from '../model/weights/browserFiles';
import type { FolderReader } from '../model/weights/qwen3Folder';
import {
  MANIFEST_FILE,
  OPTIMIZER_FILE,
  REFERENCE_FILE,
  TRAINER_STATE_FILE,
  buildCheckpointFiles,
  inferQwen3Config,
  readCheckpointFolder,
} from '../run/checkpoint';
import type { CheckpointRecord, RunRecord } from '../storage/schema';
import { looksLikeTar, readTar, writeTarChunks, type TarEntry } from '../storage/tar';
import { buildCheckpointRecord, readCheckpointRecord } from '../../workers/checkpointRecord';
import { toFileName } from './metricSeries';

/** The order files are written in the archive (others, if any, follow by name; the manifest last). */
const FILE_ORDER = [
  'config.json',
  'model.safetensors',
  'pruned_vocab.json',
  OPTIMIZER_FILE,
  REFERENCE_FILE,
  TRAINER_STATE_FILE,
];
const rankOf = (name: string) =>
  name === MANIFEST_FILE
    ? FILE_ORDER.length + 1
    : FILE_ORDER.includes(name)
      ? FILE_ORDER.indexOf(name)
      : FILE_ORDER.length;

export interface CheckpointArchive {
  fileName: string;
  /** The archive's bytes as chunks (for a Blob: no extra copy of the weights). */
  chunks: Uint8Array[];
  /** Paths inside the archive, in order. */
  names: string[];
  bytes: number;
}

/** A stored checkpoint as one .tar of its checkpoint folder. */
export function buildCheckpointArchive(run: Pick<RunRecord, 'id'>, record: CheckpointRecord): CheckpointArchive {
  const { state, mapping, modelConfig } = readCheckpointRecord(record);
  // Records saved before they kept the model config: its shape fields come from the weights.
  const model =
    modelConfig ?? inferQwen3Config(state.weights, getQwen3Preset(state.config.model?.preset ?? 'qwen3-nano'));
  const files = buildCheckpointFiles(state, model, mapping);
  const base = toFileName(`${run.id}-step${record.step}`);
  const ordered = Object.keys(files).sort((a, b) => rankOf(a) - rankOf(b) || a.localeCompare(b));
  const entries: TarEntry[] = ordered.map((name) => {
    const f = files[name];
    return { name: `${base}/${name}`, data: typeof f === 'string' ? new TextEncoder().encode(f) : f };
  });
  const chunks = writeTarChunks(entries, { mtimeSeconds: Math.floor(record.createdAt / 1000) });
  return {
    fileName: `${base}.tar`,
    chunks,
    names: entries.map((e) => e.name),
    bytes: chunks.reduce((s, c) => s + c.length, 0),
  };
}

/** Files some tools add to archives and folders that are not part of a checkpoint. */
function isJunk(path: string): boolean {
  const base = path.split('/').pop() ?? path;
  return path.startsWith('__MACOSX/') || base.startsWith('._') || base === '.DS_Store' || base === 'Thumbs.db';
}

/** A FolderReader over a tar's files; a folder all files share (`<run>-step<N>/`) is stripped. */
export function createTarFolderReader(entries: readonly TarEntry[]): FolderReader {
  const kept = entries.filter((e) => !isJunk(e.name));
  const parts = kept.map((e) => e.name.split('/'));
  const top = parts[0]?.[0];
  const shareTop = kept.length > 0 && parts.every((p) => p.length > 1 && p[0] === top);
  const byName = new Map(kept.map((e, i) => [(shareTop ? parts[i].slice(1) : parts[i]).join('/'), e.data]));
  return {
    async listFiles() {
      return [...byName.keys()];
    },
    async readFile(name) {
      const data = byName.get(name);
      if (data === undefined) throw new Error(`the archive has no file named ${JSON.stringify(name)}`);
      return data;
    },
  };
}

/** What the user picked: one .tar, or the files of one checkpoint folder. */
export async function openCheckpointInput(files: readonly File[]): Promise<{ reader: FolderReader; source: string }> {
  if (files.length === 0)
    throw new Error('nothing picked: choose a checkpoint .tar, or the files of a checkpoint folder');
  if (files.length === 1) {
    const file = files[0];
    const bytes = new Uint8Array(await file.arrayBuffer());
    if (file.name.toLowerCase().endsWith('.tar') || looksLikeTar(bytes)) {
      let entries: TarEntry[];
      try {
        entries = readTar(bytes);
      } catch (e) {
        throw new Error(`${file.name}: ${(e as Error).message.replace(/^tar: /, '')}`);
      }
      return { reader: createTarFolderReader(entries), source: file.name };
    }
    throw new Error(
      `${file.name} is not a .tar archive (no ustar header), and one file alone cannot be a checkpoint folder: ` +
        `pick the exported .tar, or all files of a checkpoint folder (config.json, model.safetensors, optimizer.safetensors, trainer_state.json, …)`,
    );
  }
  const reader = createFileListReader(files.filter((f) => !isJunk(f.webkitRelativePath || f.name)));
  const top = (files[0].webkitRelativePath || '').split('/')[0];
  return { reader, source: top ? `folder ${top}` : `${files.length} files` };
}

export interface PreparedImport {
  run: Omit<RunRecord, 'createdAt' | 'updatedAt' | 'lastCheckpointId'>;
  checkpoint: CheckpointRecord;
  /** Something the user should know before pressing Resume; absent when nothing. */
  warning?: string;
}

function newImportedRunId(recipe: string, seed: number, step: number, now: Date, random: () => number): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `imported-${recipe}-s${seed}-step${step}-${stamp}-${Math.floor(random() * 1e4)
    .toString()
    .padStart(4, '0')}`;
}

/** Reads and validates a checkpoint folder and builds the new run and checkpoint records (nothing is written). */
export async function prepareCheckpointImport(
  reader: FolderReader,
  source: string,
  options: { knownRecipes?: readonly string[]; now?: Date; random?: () => number } = {},
): Promise<PreparedImport> {
  const { state, modelConfig, mapping, warnings } = await readCheckpointFolder(reader, {
    knownRecipes: options.knownRecipes,
  });
  const config = state.config;
  const id = newImportedRunId(
    config.recipe,
    config.seed,
    state.step,
    options.now ?? new Date(),
    options.random ?? Math.random,
  );
  const checkpoint = buildCheckpointRecord(id, state, mapping, modelConfig);
  const isDone = state.step >= config.steps;
  const init = config.model.init;
  const remark =
    init !== 'scratch' && init !== 'warm-start'
      ? `its config starts from "${init}" (config.model.init), a Qwen3 folder whose files this page does not have, so Resume from the Runs panel will fail; exporting it again works`
      : isDone
        ? `it has completed all ${config.steps} steps of its config, so there is nothing to resume`
        : undefined;
  const warning = [remark, ...warnings].filter((w): w is string => w !== undefined).join('; ') || undefined;
  return {
    run: {
      id,
      name: `${config.name} (imported from ${source}, step ${state.step})`,
      recipe: config.recipe,
      config: config as unknown as Record<string, unknown>,
      status: isDone ? 'finished' : 'paused',
      lastStep: state.step,
    },
    checkpoint,
    warning,
  };
}
