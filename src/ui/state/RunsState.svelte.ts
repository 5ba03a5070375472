/**
 * The runs saved in IndexedDB (the same `pact-lab` database the trainer worker writes
 * through PactStore), as reactive state for the Runs panel and the chart overlays:
 * the list, which of them a worker is training now (their Web Locks, workers/runLock.ts; a
 * saved `running` run nobody holds is rewritten `interrupted`), renaming, the runs picked for
 * overlay with their metric rows, deletion, the metrics of a run as CSV or JSON, checkpoint
 * files (export of a run's last checkpoint as one .tar, import of such a .tar or folder as a
 * new run; checkpointFiles.ts), and the step timings of recent runs (runTime.ts estimates).
 */
import { queryLiveRunIds } from '../../../workers/runLock';
import { formatBytes, PactStore } from '../../storage/db';
import { readStorageEstimate, type StorageEstimateLike } from '../../storage/storageRoom';
import { METRICS_FILE, formatMetricsJsonl, readMetricsFile, type ImportedMetrics } from '../../storage/metricsFile';
import { PLACEHOLDER_RUN_NAME, type RunRecord } from '../../storage/schema';
import { appendTarChunks } from '../../storage/tar';
import {
  buildCheckpointArchive,
  openCheckpointInput,
  prepareCheckpointImport,
  type CheckpointArchive,
} from '../checkpointFiles';
import { formatMetricsCsv, toFileName, type MetricPoint, type RunMetrics } from '../metricSeries';
import { RECIPE_NAMES } from '../recipeNames';
import { measureTiming, type StepTiming } from '../runTime';

export interface RunsOptions {
  /** Runs whose lock is held in some tab; null when the browser cannot tell (no Web Locks). */
  queryLive?: () => Promise<ReadonlySet<string> | null>;
  /** The origin's storage quota and usage (navigator.storage.estimate); null when the browser gives none. */
  estimateStorage?: () => Promise<StorageEstimateLike | null>;
}

/**
 * The panel's storage line: "Browser storage: 87.4 MiB in use of the 10.00 GiB this site may
 * store; a run keeps its last 2 checkpoints and needs room for 3 while it saves."
 */
export function describeStorage(estimate: StorageEstimateLike, keptCheckpoints: number): string {
  return (
    `Browser storage: ${formatBytes(estimate.usage)} in use of the ${formatBytes(estimate.quota)} this site may store; ` +
    `a run keeps its last ${keptCheckpoints} checkpoints and needs room for ${keptCheckpoints + 1} while it saves ` +
    '(Train says so before it starts when there is not).'
  );
}

/** The longest run name the panel accepts. */
export const MAX_RUN_NAME = 80;

/** How many of the newest runs with steps lend their timings to the estimates. */
const TIMED_RUNS = 3;

export type RunsStatus = 'closed' | 'loading' | 'ready' | 'error';

/**
 * What a run is called everywhere (Home's run card, the Runs panel, the legends): its stored
 * name, or its id when the name is empty or the config's placeholder "run" (runs saved
 * before a run started in the app was named after its id).
 */
export function runName(run: Pick<RunRecord, 'id' | 'name'>): string {
  const name = run.name?.trim();
  return name && name !== PLACEHOLDER_RUN_NAME ? name : run.id;
}

/** What the legend calls a stored run: its name, after its recipe unless the name starts with it (`pact-s1-…`). */
export function labelRun(run: Pick<RunRecord, 'id' | 'name' | 'recipe'>): string {
  const name = runName(run);
  return name === run.recipe || name.startsWith(`${run.recipe}-`) ? name : `${run.recipe} · ${name}`;
}

/** The import's words for the metric log it found (undefined when there is nothing to say). */
function describeImportedMetrics(metrics: ImportedMetrics, step: number): string | undefined {
  if (metrics.kind === 'none')
    return `it carries no metric log (${METRICS_FILE}: an export from before they carried one, or a model folder), so it has no curves until it trains on`;
  if (metrics.kind === 'unreadable')
    return `its metric log was skipped (${metrics.reason}), so it has no curves until it trains on`;
  if (metrics.droppedAfter > 0)
    return `${metrics.droppedAfter} metric ${metrics.droppedAfter === 1 ? 'row' : 'rows'} after the checkpoint's step ${step} ${metrics.droppedAfter === 1 ? 'was' : 'were'} left out`;
  return undefined;
}

export class RunsState {
  status = $state<RunsStatus>('closed');
  error = $state<string | null>(null);
  runs = $state.raw<RunRecord[]>([]);
  /** Ids of the runs overlaid on the charts, in the order picked. */
  picked = $state<string[]>([]);
  /** The picked runs with their stored rows. */
  pickedRuns = $state.raw<RunMetrics[]>([]);
  /** Set while a delete or export is in flight, with what it is doing. */
  busyId = $state<string | null>(null);
  /** True while a checkpoint import is being read, checked and written. */
  isImporting = $state(false);
  /** The last checkpoint import's outcome: a sentence for the panel, or the error naming the bad file or field. */
  importMessage = $state<string | null>(null);
  importError = $state<string | null>(null);
  /** Runs a worker holds now, in any tab (null: this browser cannot tell). */
  liveElsewhere = $state.raw<ReadonlySet<string> | null>(null);
  /** Measured step timings of the newest runs with steps, newest first (runTime.ts). */
  timings = $state.raw<StepTiming[]>([]);
  /** The origin's storage quota and usage at the last refresh (null: not offered). */
  storage = $state.raw<StorageEstimateLike | null>(null);
  /** The last rename's error, naming the run. */
  renameError = $state<string | null>(null);

  private store: PactStore | null = null;
  private opening: Promise<PactStore> | null = null;
  private readonly queryLive: () => Promise<ReadonlySet<string> | null>;
  private readonly estimateStorage: () => Promise<StorageEstimateLike | null>;

  constructor(
    private readonly dbName?: string,
    options: RunsOptions = {},
  ) {
    this.queryLive = options.queryLive ?? queryLiveRunIds;
    this.estimateStorage = options.estimateStorage ?? readStorageEstimate;
  }

  private openStore(): Promise<PactStore> {
    if (this.store) return Promise.resolve(this.store);
    this.opening ??= PactStore.open(this.dbName).then((s) => (this.store = s));
    this.opening.catch(() => (this.opening = null));
    return this.opening;
  }

  /** Reads the run list again (after a run starts or ends, or on the Refresh button). */
  async refresh(): Promise<void> {
    if (this.status !== 'ready') this.status = 'loading';
    try {
      const store = await this.openStore();
      let runs = await store.listRuns();
      const live = await this.queryLive().catch(() => null);
      // A run stored as running that no worker holds cannot be alive: its tab was reloaded or
      // closed. Said once, in storage, so every page reads it the same way. (Without Web Locks
      // nothing is rewritten: another tab might be training it.)
      const dead = live ? runs.filter((r) => r.status === 'running' && !live.has(r.id)) : [];
      if (dead.length > 0) {
        for (const r of dead) await store.updateRun(r.id, { status: 'interrupted' });
        runs = await store.listRuns();
      }
      this.runs = runs;
      this.liveElsewhere = live;
      this.status = 'ready';
      this.error = null;
      // Re-read the overlaid runs: a picked run may have gained steps (or been deleted elsewhere).
      const known = new Set(this.runs.map((r) => r.id));
      this.picked = this.picked.filter((id) => known.has(id));
      await this.loadPicked();
      this.timings = await this.measureTimings(store);
      this.storage = await this.estimateStorage().catch(() => null);
    } catch (e) {
      this.status = 'error';
      this.error = `Could not read the saved runs from this browser's storage (IndexedDB): ${e instanceof Error ? e.message : String(e)}`;
    }
  }

  private async measureTimings(store: PactStore): Promise<StepTiming[]> {
    const out: StepTiming[] = [];
    for (const run of this.runs.filter((r) => r.lastStep > 0 && r.backend).slice(0, TIMED_RUNS)) {
      const timing = measureTiming(
        run.config,
        await store.getMetrics(run.id),
        run.backend!,
        `your run “${runName(run)}” in this browser`,
      );
      if (timing) out.push(timing);
    }
    return out;
  }

  /** Renames a run (its id stays); an empty or over-long name is refused with a reason. */
  async renameRun(id: string, name: string): Promise<boolean> {
    this.renameError = null;
    const trimmed = name.trim();
    if (trimmed === '' || trimmed.length > MAX_RUN_NAME) {
      this.renameError = `A run name needs 1 to ${MAX_RUN_NAME} characters (got ${trimmed.length}); “${id}” keeps its name.`;
      return false;
    }
    try {
      const store = await this.openStore();
      await store.updateRun(id, { name: trimmed });
      await this.refresh();
      return true;
    } catch (e) {
      this.renameError = `Could not rename run “${id}”: ${e instanceof Error ? e.message : String(e)}`;
      return false;
    }
  }

  /** Stored rows of one run, ordered by step. */
  async loadMetricPoints(runId: string): Promise<MetricPoint[]> {
    const store = await this.openStore();
    return (await store.getMetrics(runId)).map((r) => ({ step: r.step, values: r.values }));
  }

  isPicked(id: string): boolean {
    return this.picked.includes(id);
  }

  async togglePicked(id: string): Promise<void> {
    this.picked = this.isPicked(id) ? this.picked.filter((p) => p !== id) : [...this.picked, id];
    await this.loadPicked();
  }

  private async loadPicked(): Promise<void> {
    const byId = new Map(this.runs.map((r) => [r.id, r]));
    const out: RunMetrics[] = [];
    for (const id of this.picked) {
      const run = byId.get(id);
      if (run) out.push({ runId: id, label: labelRun(run), points: await this.loadMetricPoints(id) });
    }
    this.pickedRuns = out;
  }

  /** Deletes a run with its metrics and checkpoints (one transaction, see PactStore.deleteRun). */
  async deleteRun(id: string): Promise<void> {
    this.busyId = id;
    try {
      const store = await this.openStore();
      await store.deleteRun(id);
      this.picked = this.picked.filter((p) => p !== id);
      await this.refresh();
    } catch (e) {
      this.error = `Could not delete run "${id}": ${e instanceof Error ? e.message : String(e)}; nothing was removed`;
    } finally {
      this.busyId = null;
    }
  }

  /** A run's stored metrics as a file: CSV (one row per step) or JSON (the run record and its rows). */
  async exportMetrics(id: string, format: 'csv' | 'json'): Promise<{ fileName: string; mime: string; text: string }> {
    const run = this.runs.find((r) => r.id === id);
    if (!run) throw new Error(`no saved run with id "${id}"`);
    const points = await this.loadMetricPoints(id);
    // A run's id starts with its recipe (`pact-s1-20261203-…`): named once, as in the checkpoint's `<id>-step<N>.tar`.
    const base = toFileName(`${run.id.startsWith(`${run.recipe}-`) ? run.id : `${run.recipe}-${run.id}`}-metrics`);
    if (format === 'csv') {
      return {
        fileName: `${base}.csv`,
        mime: 'text/csv',
        text: formatMetricsCsv([{ runId: run.id, label: labelRun(run), points }]),
      };
    }
    return {
      fileName: `${base}.json`,
      mime: 'application/json',
      text: `${JSON.stringify({ run, metrics: points }, null, 2)}\n`,
    };
  }

  /** A run's last checkpoint as one .tar (Hugging Face folder + optimizer + trainer state). */
  async exportCheckpoint(id: string): Promise<CheckpointArchive> {
    this.busyId = id;
    try {
      const store = await this.openStore();
      const run = await store.getRun(id);
      if (!run) throw new Error(`no saved run with id "${id}"`);
      const record = await store.loadLatestCheckpoint(id);
      if (!record) throw new Error(`run "${runName(run)}" has no checkpoint saved yet`);
      const archive = buildCheckpointArchive(run, record);
      // The run's metric log up to the checkpoint's step rides along (metrics.jsonl, beside the
      // checkpoint folder's files and outside its manifest), so an import draws its curves.
      const rows = (await store.getMetrics(id)).filter((r) => r.step <= record.step);
      if (rows.length === 0) return archive;
      const folder = archive.names[0].split('/')[0];
      const data = new TextEncoder().encode(formatMetricsJsonl(rows));
      const chunks = appendTarChunks(archive.chunks, archive.names, [{ name: `${folder}/${METRICS_FILE}`, data }], {
        mtimeSeconds: Math.floor(record.createdAt / 1000),
      });
      return {
        ...archive,
        chunks,
        names: [...archive.names, `${folder}/${METRICS_FILE}`],
        bytes: chunks.reduce((s, c) => s + c.length, 0),
      };
    } finally {
      this.busyId = null;
    }
  }

  /**
   * Imports a checkpoint (.tar, or the files of a checkpoint folder) as a NEW run: read and
   * validated first, then the run and its checkpoint written in one transaction. On any
   * error nothing is written and `importError` names the file or field at fault.
   */
  async importCheckpoint(files: readonly File[]): Promise<RunRecord | null> {
    this.isImporting = true;
    this.importMessage = null;
    this.importError = null;
    try {
      const { reader, source } = await openCheckpointInput(files);
      const prepared = await prepareCheckpointImport(reader, source, { knownRecipes: RECIPE_NAMES });
      // The metric log is optional and checked on its own: a bad one is skipped with a note
      // naming its line and field, and the weights import all the same.
      const metrics = await readMetricsFile(reader, prepared.run.lastStep);
      const store = await this.openStore();
      const rows = metrics.kind === 'rows' ? metrics.rows : [];
      // A config that never named its run: the imported run is called by where it came from.
      const isUnnamed = (prepared.run.config as { name?: unknown }).name === PLACEHOLDER_RUN_NAME;
      const run = await store.importRun(
        isUnnamed ? { ...prepared.run, name: `imported from ${source}, step ${prepared.run.lastStep}` } : prepared.run,
        prepared.checkpoint,
        rows,
      );
      const notes = [prepared.warning, describeImportedMetrics(metrics, prepared.run.lastStep)].filter(
        (w): w is string => !!w,
      );
      this.importMessage =
        `Imported ${source} as run “${run.name}” (${run.recipe}, step ${run.lastStep}, ${formatBytes(prepared.checkpoint.bytes)} of tensors` +
        (metrics.kind === 'rows' ? `, ${rows.length} metric ${rows.length === 1 ? 'row' : 'rows'})` : ')') +
        (prepared.warning ? '' : '; Resume continues it from that checkpoint') +
        (notes.length > 0 ? `; note: ${notes.join('; ')}.` : '.');
      await this.refresh();
      return run;
    } catch (e) {
      this.importError = `Import failed, nothing was saved: ${e instanceof Error ? e.message : String(e)}`;
      return null;
    } finally {
      this.isImporting = false;
    }
  }

  close(): void {
    this.store?.close();
    this.store = null;
    this.opening = null;
    this.status = 'closed';
  }
}
