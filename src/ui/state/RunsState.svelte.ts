/**
 * The runs saved in IndexedDB (the same `pact-lab` database the trainer worker writes
 * through PactStore), as reactive state for the Runs panel and the chart overlays:
 * the list, the runs picked for overlay with their metric rows, deletion, and the
 * metrics of a run as CSV or JSON.
 */
import { PactStore } from '../../storage/db';
import type { RunRecord } from '../../storage/schema';
import { formatMetricsCsv, toFileName, type MetricPoint, type RunMetrics } from '../metricSeries';

export type RunsStatus = 'closed' | 'loading' | 'ready' | 'error';

/** What the legend calls a stored run. */
export function labelRun(run: Pick<RunRecord, 'id' | 'name' | 'recipe'>): string {
  return run.name && run.name !== run.id ? `${run.recipe} · ${run.name}` : `${run.recipe} · ${run.id}`;
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

  private store: PactStore | null = null;
  private opening: Promise<PactStore> | null = null;

  constructor(private readonly dbName?: string) {}

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
      this.runs = await store.listRuns();
      this.status = 'ready';
      this.error = null;
      // Re-read the overlaid runs: a picked run may have gained steps (or been deleted elsewhere).
      const known = new Set(this.runs.map((r) => r.id));
      this.picked = this.picked.filter((id) => known.has(id));
      await this.loadPicked();
    } catch (e) {
      this.status = 'error';
      this.error = `Could not read the saved runs from this browser's storage (IndexedDB): ${e instanceof Error ? e.message : String(e)}`;
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
    const base = toFileName(`pact-${run.recipe}-${run.id}-metrics`);
    if (format === 'csv') {
      return { fileName: `${base}.csv`, mime: 'text/csv', text: formatMetricsCsv([{ runId: run.id, label: labelRun(run), points }]) };
    }
    return { fileName: `${base}.json`, mime: 'application/json', text: `${JSON.stringify({ run, metrics: points }, null, 2)}\n` };
  }

  close(): void {
    this.store?.close();
    this.store = null;
    this.opening = null;
    this.status = 'closed';
  }
}
