import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PactStore } from '../../storage/db';
import { RunsState, labelRun } from './RunsState.svelte';

let n = 0;
let dbName: string;
let store: PactStore;
let runs: RunsState;

beforeEach(async () => {
  dbName = `pact-ui-runs-${n++}`;
  store = await PactStore.open(dbName);
  await store.createRun({ id: 'a', name: 'first', recipe: 'pact', config: { steps: 2 } });
  await store.appendMetrics('a', [
    { step: 1, values: { reward: 0.25 } },
    { step: 2, values: { reward: 0.5, kl: 0.01 } },
  ]);
  await store.createRun({ id: 'b', name: 'b', recipe: 'grpo', config: {} });
  runs = new RunsState(dbName);
});
afterEach(async () => {
  runs.close();
  store.close();
  await PactStore.destroy(dbName);
});

describe('RunsState over PactStore', () => {
  it('lists runs newest first and overlays picked runs with their stored rows', async () => {
    await runs.refresh();
    expect(runs.status).toBe('ready');
    expect(runs.runs.map((r) => r.id)).toEqual(['b', 'a']); // b created after a's last update
    await runs.togglePicked('a');
    expect(runs.pickedRuns).toEqual([
      { runId: 'a', label: 'pact · first', points: [{ step: 1, values: { reward: 0.25 } }, { step: 2, values: { reward: 0.5, kl: 0.01 } }] },
    ]);
    await runs.togglePicked('a');
    expect(runs.pickedRuns).toEqual([]);
    expect(labelRun({ id: 'b', name: 'b', recipe: 'grpo' })).toBe('grpo · b');
  });

  it('exports a run as CSV and JSON', async () => {
    await runs.refresh();
    const csv = await runs.exportMetrics('a', 'csv');
    expect(csv.fileName).toBe('pact-pact-a-metrics.csv');
    expect(csv.text).toBe('run_id,run_label,step,kl,reward\na,pact · first,1,,0.25\na,pact · first,2,0.01,0.5\n');
    const json = JSON.parse((await runs.exportMetrics('a', 'json')).text);
    expect(json.run.id).toBe('a');
    expect(json.metrics).toHaveLength(2);
    await expect(runs.exportMetrics('zzz', 'csv')).rejects.toThrow('no saved run with id "zzz"');
  });

  it('deletes a run with its rows and drops it from the overlay', async () => {
    await runs.refresh();
    await runs.togglePicked('a');
    await runs.deleteRun('a');
    expect(runs.runs.map((r) => r.id)).toEqual(['b']);
    expect(runs.picked).toEqual([]);
    expect(runs.pickedRuns).toEqual([]);
    expect(await store.getMetrics('a')).toEqual([]);
  });
});
