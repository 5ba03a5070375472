import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCheckpointRecord } from '../../../workers/checkpointRecord';
import { getQwen3Preset, listQwen3ParamShapes, type Qwen3Config } from '../../model/qwen3/config';
import { resolveConfig } from '../../recipes/config';
import type { TrainerState } from '../../recipes/types';
import { PactStore, formatBytes } from '../../storage/db';
import { PLACEHOLDER_RUN_NAME } from '../../storage/schema';
import { readTar, writeTar } from '../../storage/tar';
import { buildCheckpointFiles } from '../../run/checkpoint';
import { prepareCheckpointImport } from '../checkpointFiles';
import { RunsState, describeStorage, labelRun, runName } from './RunsState.svelte';

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
      {
        runId: 'a',
        label: 'pact · first',
        points: [
          { step: 1, values: { reward: 0.25 } },
          { step: 2, values: { reward: 0.5, kl: 0.01 } },
        ],
      },
    ]);
    await runs.togglePicked('a');
    expect(runs.pickedRuns).toEqual([]);
    expect(labelRun({ id: 'b', name: 'b', recipe: 'grpo' })).toBe('grpo · b');
  });

  it('exports a run as CSV and JSON', async () => {
    await runs.refresh();
    const csv = await runs.exportMetrics('a', 'csv');
    expect(csv.fileName).toBe('pact-a-metrics.csv');
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

// ---- checkpoint files -------------------------------------------------------------------

/** A tiny Qwen3 (vocab 6 of a pruned vocabulary, hidden 4, 1 layer) and its trainer state at step 1 of 3. */
const MODEL: Qwen3Config = {
  ...getQwen3Preset('qwen3-nano'),
  vocab_size: 6,
  hidden_size: 4,
  intermediate_size: 8,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 2,
};
function buildState(): TrainerState {
  const weights = [...listQwen3ParamShapes(MODEL)].map(([name, shape], i) => ({
    name,
    shape,
    data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, j) => i + j / 64),
  }));
  return {
    version: 1,
    step: 1,
    dataCursor: 2,
    rngStates: { root: { key: '5', words: [9, 8, 7, 6] } },
    weights,
    optimizer: weights.flatMap((w) => [
      { name: `${w.name}.exp_avg`, shape: w.shape, data: w.data.map((x) => x / 2) },
      { name: `${w.name}.exp_avg_sq`, shape: w.shape, data: w.data.map((x) => x * x) },
      { name: `${w.name}.step`, shape: [], data: Float32Array.of(1) },
    ]),
    referenceWeights: weights,
    config: resolveConfig({ recipe: 'grpo', name: 'tiny', steps: 3, seed: 5 }),
    recipe: 'grpo',
  };
}
const MAPPING = { keptIds: [0, 3, 4, 10, 11, 151643] };
const decode = (b: Uint8Array) => new TextDecoder().decode(b);
const concat = (chunks: Uint8Array[]) => {
  const out = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
  let at = 0;
  for (const c of chunks) out.set(c, (at += c.length) - c.length);
  return out;
};

describe('checkpoint export and import', () => {
  beforeEach(async () => {
    await store.createRun({ id: 'c', name: 'with-ckpt', recipe: 'grpo', config: {} });
    await store.saveCheckpoint(buildCheckpointRecord('c', buildState(), MAPPING, MODEL));
  });

  it('exports the last checkpoint as one tar of the checkpoint folder, with the real model config', async () => {
    await runs.refresh();
    const archive = await runs.exportCheckpoint('c');
    expect(archive.fileName).toBe('c-step1.tar');
    const entries = readTar(concat(archive.chunks));
    expect(entries.map((e) => e.name)).toEqual([
      'c-step1/config.json',
      'c-step1/model.safetensors',
      'c-step1/pruned_vocab.json',
      'c-step1/optimizer.safetensors',
      'c-step1/reference.safetensors',
      'c-step1/trainer_state.json',
      'c-step1/checkpoint_manifest.json',
    ]);
    const config = JSON.parse(decode(entries[0].data));
    expect([config.vocab_size, config.hidden_size, config.num_hidden_layers]).toEqual([6, 4, 1]);
    expect(JSON.parse(decode(entries[2].data))).toEqual(MAPPING);
    const ts = JSON.parse(decode(entries[5].data));
    expect([ts.step, ts.dataCursor, ts.recipe, ts.config.seed]).toEqual([1, 2, 'grpo', 5]);
    await expect(runs.exportCheckpoint('a')).rejects.toThrow('run "first" has no checkpoint saved yet');
  });

  it('a record saved without its model config still exports: the shape comes from the weights', async () => {
    await store.createRun({ id: 'old', name: 'old', recipe: 'grpo', config: {} });
    await store.saveCheckpoint(buildCheckpointRecord('old', buildState(), MAPPING)); // no modelConfig, as before
    const entries = readTar(concat((await runs.exportCheckpoint('old')).chunks));
    expect(JSON.parse(decode(entries[0].data))).toMatchObject({
      vocab_size: 6,
      hidden_size: 4,
      head_dim: 2,
      max_position_embeddings: 2048,
    });
  });

  it('imports the tar as a new paused run whose checkpoint holds the same tensors; nothing else changes', async () => {
    await runs.refresh();
    const archive = await runs.exportCheckpoint('c');
    const before = await store.listRuns();
    const run = await runs.importCheckpoint([new File(archive.chunks as BlobPart[], archive.fileName)]);
    expect(runs.importError).toBeNull();
    expect(run).not.toBeNull();
    expect(run!.id).toMatch(/^imported-grpo-s5-step1-\d{8}-\d{6}-\d{4}$/);
    expect(run!.name).toBe('tiny (imported from c-step1.tar, step 1)');
    expect([run!.status, run!.lastStep, run!.recipe, run!.lastCheckpointId]).toEqual([
      'paused',
      1,
      'grpo',
      `${run!.id}@1`,
    ]);
    expect(runs.importMessage).toContain('Resume continues it');
    expect(runs.runs.map((r) => r.id)).toEqual([run!.id, ...before.map((r) => r.id)]);
    // The new checkpoint = the original, tensor for tensor (safetensors sorts by name).
    const orig = (await store.loadLatestCheckpoint('c'))!;
    const copy = (await store.loadLatestCheckpoint(run!.id))!;
    const byName = (list: { name: string; data: ArrayBuffer }[]) =>
      Object.fromEntries(list.map((t) => [t.name, Array.from(new Float32Array(t.data))]));
    expect(byName(copy.weights)).toEqual(byName(orig.weights));
    expect(byName(copy.optimizer.tensors)).toEqual(byName(orig.optimizer.tensors));
    expect([
      copy.step,
      copy.rngState,
      copy.trainerState.dataCursor,
      copy.trainerState.mapping,
      copy.trainerState.modelConfig,
    ]).toEqual([1, { root: { key: '5', words: [9, 8, 7, 6] } }, 2, MAPPING, MODEL]);
    // The original run is as it was.
    expect(await store.getRun('c')).toEqual(before.find((r) => r.id === 'c'));
  });

  it('imports the files of a checkpoint folder the same way (a pact train checkpoint-N/ folder)', async () => {
    const entries = readTar(concat((await runs.exportCheckpoint('c')).chunks));
    const files = entries.map((e) => new File([e.data as BlobPart], e.name.split('/')[1]));
    const run = await runs.importCheckpoint(files);
    expect(runs.importError).toBeNull();
    expect(run!.name).toBe('tiny (imported from 7 files, step 1)');
  });

  it("carries the run's metric log in the tar: an import restores the same rows, so its curves draw and overlay", async () => {
    const rows: { step: number; values: Record<string, number> }[] = [
      { step: 0, values: { step: 0, 'eval/reward': 0.125 } }, // as the worker stores them: the step among the values
      { step: 1, values: { step: 1, reward: 0.25, kl: 0.01, 'loss/Lx': Number.NaN, 'eval/reward': 0.5 } },
    ];
    // Step 2 was logged after the step-1 checkpoint (a step under way when the tab closed): left out.
    await store.appendMetrics('c', [...rows, { step: 2, values: { step: 2, reward: 0.75 } }]);
    await runs.refresh();
    const archive = await runs.exportCheckpoint('c');
    expect(archive.names.at(-1)).toBe('c-step1/metrics.jsonl');
    const tar = concat(archive.chunks);
    expect(archive.bytes).toBe(tar.length);
    const entries = readTar(tar);
    expect(decode(entries.at(-1)!.data)).toBe(
      '{"step":0,"eval/reward":0.125}\n{"step":1,"reward":0.25,"kl":0.01,"loss/Lx":null,"eval/reward":0.5}\n',
    );

    const run = await runs.importCheckpoint([new File([tar as BlobPart], archive.fileName)]);
    expect(runs.importError).toBeNull();
    expect(await store.getMetrics(run!.id)).toEqual(rows.map((r) => ({ runId: run!.id, ...r })));
    expect(runs.importMessage).toBe(
      `Imported c-step1.tar as run “tiny (imported from c-step1.tar, step 1)” (grpo, step 1, ${formatBytes((await store.loadLatestCheckpoint('c'))!.bytes)} of tensors, 2 metric rows); Resume continues it from that checkpoint.`,
    );
    await runs.togglePicked(run!.id);
    expect(runs.pickedRuns[0].points).toEqual(rows);
    // The same with the folder's files.
    const files = entries.map((e) => new File([e.data as BlobPart], e.name.split('/')[1]));
    const again = await runs.importCheckpoint(files);
    expect(await store.getMetrics(again!.id)).toHaveLength(2);
  });

  it('a checkpoint whose config never named its run imports under where it came from, not the placeholder "run"', async () => {
    const state = { ...buildState(), config: resolveConfig({ recipe: 'grpo', steps: 3, seed: 5 }) };
    expect(state.config.name).toBe(PLACEHOLDER_RUN_NAME); // the config default the name check relies on
    await store.createRun({ id: 'u', name: 'u', recipe: 'grpo', config: {} });
    await store.saveCheckpoint(buildCheckpointRecord('u', state, MAPPING, MODEL));
    const archive = await runs.exportCheckpoint('u');
    const run = await runs.importCheckpoint([new File(archive.chunks as BlobPart[], archive.fileName)]);
    expect([run!.name, runName(run!)]).toEqual([
      'imported from u-step1.tar, step 1',
      'imported from u-step1.tar, step 1',
    ]);
  });

  it('a tar without metrics (an older export) imports, with a note that it has none', async () => {
    await runs.refresh();
    const archive = await runs.exportCheckpoint('c'); // run c has no rows: nothing to carry
    expect(archive.names.some((n) => n.endsWith('metrics.jsonl'))).toBe(false);
    const run = await runs.importCheckpoint([new File(archive.chunks as BlobPart[], archive.fileName)]);
    expect(runs.importError).toBeNull();
    expect(run!.lastCheckpointId).toBe(`${run!.id}@1`);
    expect(await store.getMetrics(run!.id)).toEqual([]);
    expect(runs.importMessage).toContain(
      '; note: it carries no metric log (metrics.jsonl: an export from before they carried one, or a model folder), so it has no curves until it trains on.',
    );
  });

  it('a corrupted metric log is skipped with a note naming its line and field; the weights import, nothing saved is lost', async () => {
    await store.appendMetrics('c', [{ step: 1, values: { reward: 0.25 } }]);
    const saved = await store.getMetrics('a');
    const entries = readTar(concat((await runs.exportCheckpoint('c')).chunks));
    const bad = entries.map((e) =>
      e.name.endsWith('metrics.jsonl')
        ? { ...e, data: new TextEncoder().encode('{"step":0}\n{"step":1,"reward":"high"}\n') }
        : e,
    );
    const run = await runs.importCheckpoint([new File([writeTar(bad) as BlobPart], 'bad-metrics.tar')]);
    expect(runs.importError).toBeNull();
    expect(run).not.toBeNull();
    expect(runs.importMessage).toContain(
      'note: its metric log was skipped (metrics.jsonl line 2: field "reward" must be a number or null, got "high"), so it has no curves until it trains on.',
    );
    expect(await store.getMetrics(run!.id)).toEqual([]); // all or nothing: not even line 1
    expect((await store.loadLatestCheckpoint(run!.id))!.weights).toHaveLength(
      (await store.loadLatestCheckpoint('c'))!.weights.length,
    );
    expect(await store.getMetrics('a')).toEqual(saved);
  });

  it('a tar without trainer_state.json, a random file, or a bad field: a named error, and the run list is unchanged', async () => {
    await runs.refresh();
    const before = runs.runs.map((r) => r.id);
    const entries = readTar(concat((await runs.exportCheckpoint('c')).chunks));

    const noState = writeTar(entries.filter((e) => !e.name.endsWith('trainer_state.json')));
    expect(await runs.importCheckpoint([new File([noState as BlobPart], 'x.tar')])).toBeNull();
    expect(runs.importError).toBe(
      'Import failed, nothing was saved: not a checkpoint folder: trainer_state.json is missing ' +
        '(found: checkpoint_manifest.json, config.json, model.safetensors, optimizer.safetensors, pruned_vocab.json, reference.safetensors)',
    );

    const random = new Uint8Array(3000).map((_, i) => (i * 131 + 17) & 255);
    await runs.importCheckpoint([new File([random], 'random.bin')]);
    expect(runs.importError).toContain('random.bin is not a .tar archive (no ustar header)');
    await runs.importCheckpoint([new File([random], 'random.tar')]);
    expect(runs.importError).toMatch(
      /^Import failed, nothing was saved: random\.tar: entry at byte 0: .*not a tar archive, or a damaged one/,
    );

    const badStep = entries.map((e) =>
      e.name.endsWith('trainer_state.json')
        ? { ...e, data: new TextEncoder().encode(decode(e.data).replace('"step": 1', '"step": -1')) }
        : e,
    );
    // The manifest catches the edit; without a manifest (an older archive) the field check does.
    await runs.importCheckpoint([new File([writeTar(badStep) as BlobPart], 'bad.tar')]);
    const stateBytes = entries.find((e) => e.name.endsWith('trainer_state.json'))!.data.length; // "-1" is one byte longer than "1"
    expect(runs.importError).toBe(
      `Import failed, nothing was saved: trainer_state.json is ${stateBytes + 1} bytes but checkpoint_manifest.json says ${stateBytes} (a truncated or altered file)`,
    );
    const legacy = badStep.filter((e) => !e.name.endsWith('checkpoint_manifest.json'));
    await runs.importCheckpoint([new File([writeTar(legacy) as BlobPart], 'bad.tar')]);
    expect(runs.importError).toBe(
      'Import failed, nothing was saved: trainer_state.json: step must be a non-negative integer (got -1)',
    );

    await runs.refresh();
    expect(runs.runs.map((r) => r.id)).toEqual(before);
    expect(runs.importMessage).toBeNull();
  });
});

describe('prepareCheckpointImport', () => {
  const readerOf = (state: TrainerState) => {
    const files = buildCheckpointFiles(state, MODEL, MAPPING);
    return {
      listFiles: async () => Object.keys(files),
      readFile: async (n: string) =>
        typeof files[n] === 'string' ? new TextEncoder().encode(files[n] as string) : (files[n] as Uint8Array),
    };
  };
  const fixed = { now: new Date(Date.UTC(2026, 10, 30, 12, 34, 56)), random: () => 0.0421 };

  it('names the run after its config and source, paused while steps remain', async () => {
    const p = await prepareCheckpointImport(readerOf(buildState()), 'x.tar', fixed);
    expect(p.run).toMatchObject({
      id: 'imported-grpo-s5-step1-20261130-123456-0421',
      name: 'tiny (imported from x.tar, step 1)',
      status: 'paused',
      lastStep: 1,
    });
    expect(p.checkpoint.id).toBe('imported-grpo-s5-step1-20261130-123456-0421@1');
    expect(p.warning).toBeUndefined();
  });

  it('a finished checkpoint imports as finished; one whose policy came from a folder warns that Resume will fail', async () => {
    const done = { ...buildState(), step: 3 };
    const p = await prepareCheckpointImport(readerOf(done), 'x.tar', fixed);
    expect([p.run.status, p.warning]).toEqual([
      'finished',
      'it has completed all 3 steps of its config, so there is nothing to resume',
    ]);
    const state = buildState();
    const fromFolder = {
      ...state,
      config: resolveConfig({ ...state.config, model: { ...state.config.model, init: 'runs/policy' } }),
    };
    const q = await prepareCheckpointImport(readerOf(fromFolder), 'x.tar', fixed);
    expect(q.warning).toContain(
      'starts from "runs/policy" (config.model.init), a Qwen3 folder whose files this page does not have',
    );
  });
});

describe('RunsState: live runs, names and timings', () => {
  it('rewrites a saved "running" run that no worker holds as interrupted; one held in some tab stays running', async () => {
    await store.createRun({ id: 'dead', name: 'dead', recipe: 'pact', config: {}, status: 'running' });
    await store.createRun({ id: 'alive', name: 'alive', recipe: 'pact', config: {}, status: 'running' });
    const withLocks = new RunsState(dbName, { queryLive: async () => new Set(['alive']) });
    await withLocks.refresh();
    const statusOf = (id: string) => withLocks.runs.find((r) => r.id === id)?.status;
    expect([statusOf('dead'), statusOf('alive')]).toEqual(['interrupted', 'running']);
    expect((await store.getRun('dead'))?.status).toBe('interrupted'); // said once, in storage
    expect([...withLocks.liveElsewhere!]).toEqual(['alive']);
    withLocks.close();
  });

  it("reads the site's storage quota and usage on refresh, and says it in one line; none offered, no line", async () => {
    const MiB = 2 ** 20;
    const withQuota = new RunsState(dbName, {
      estimateStorage: async () => ({ quota: 10 * 1024 * MiB, usage: 87.4 * MiB }),
    });
    await withQuota.refresh();
    expect(withQuota.storage).toEqual({ quota: 10 * 1024 * MiB, usage: 87.4 * MiB });
    expect(describeStorage(withQuota.storage!, 2)).toBe(
      'Browser storage: 87.4 MiB in use of the 10.00 GiB this site may store; a run keeps its last 2 checkpoints and ' +
        'needs room for 3 while it saves (Train says so before it starts when there is not).',
    );
    withQuota.close();
    for (const estimateStorage of [async () => null, () => Promise.reject(new Error('no'))]) {
      const without = new RunsState(dbName, { estimateStorage });
      await without.refresh();
      expect([without.status, without.storage]).toEqual(['ready', null]);
      without.close();
    }
  });

  it('without Web Locks it cannot tell, so it rewrites nothing', async () => {
    await store.createRun({ id: 'maybe', name: 'maybe', recipe: 'pact', config: {}, status: 'running' });
    const noLocks = new RunsState(dbName, { queryLive: async () => null });
    await noLocks.refresh();
    expect(noLocks.runs.find((r) => r.id === 'maybe')?.status).toBe('running');
    expect(noLocks.liveElsewhere).toBeNull();
    noLocks.close();
  });

  it('a run is called the same everywhere: its name, or its id for a run saved under the placeholder "run"', async () => {
    const id = 'pact-s1-20261203-120106-0042';
    await store.createRun({ id, name: id, recipe: 'pact', config: {} }); // named by the worker at creation
    await store.createRun({ id: 'pact-s2-20261203-110000-0001', name: 'run', recipe: 'pact', config: {} }); // saved before
    await store.appendMetrics(id, [{ step: 1, values: { reward: 0.5 } }]);
    await runs.refresh();
    const byId = (x: string) => runs.runs.find((r) => r.id === x)!;
    const [old, fresh] = [byId('pact-s2-20261203-110000-0001'), byId(id)];
    expect([runName(fresh), labelRun(fresh)]).toEqual([id, id]); // the recipe is not said twice
    expect([runName(old), labelRun(old)]).toEqual(['pact-s2-20261203-110000-0001', 'pact-s2-20261203-110000-0001']);
    expect(runName({ id: 'x', name: '  ' })).toBe('x');
    await runs.togglePicked(id);
    expect(runs.pickedRuns[0].label).toBe(id);
    const csv = await runs.exportMetrics(id, 'csv');
    expect([csv.fileName, csv.text.split('\n')[1]]).toEqual([`${id}-metrics.csv`, `${id},${id},1,0.5`]);
    // A rename shows everywhere; the legend keeps the recipe in front of a name without it.
    expect(await runs.renameRun(id, 'baseline')).toBe(true);
    const renamed = runs.runs.find((r) => r.id === id)!;
    expect([runName(renamed), labelRun(renamed), runs.pickedRuns[0].label]).toEqual([
      'baseline',
      'pact · baseline',
      'pact · baseline',
    ]);
  });

  it('renames a run, keeping its id; refuses an empty or over-long name with a reason', async () => {
    await runs.refresh();
    expect(await runs.renameRun('a', '  lr 1e-4, seed 1  ')).toBe(true);
    expect((await store.getRun('a'))?.name).toBe('lr 1e-4, seed 1');
    expect(runs.runs.find((r) => r.id === 'a')?.name).toBe('lr 1e-4, seed 1');
    expect(await runs.renameRun('a', '   ')).toBe(false);
    expect(runs.renameError).toBe('A run name needs 1 to 80 characters (got 0); “a” keeps its name.');
    expect(await runs.renameRun('a', 'x'.repeat(81))).toBe(false);
    expect((await store.getRun('a'))?.name).toBe('lr 1e-4, seed 1');
    expect(await runs.renameRun('nope', 'x')).toBe(false);
    expect(runs.renameError).toContain('Could not rename run “nope”: no run with id "nope"');
  });

  it('measures the step time of recent runs that recorded their backend', async () => {
    const config = {
      model: { preset: 'qwen3-nano' },
      batchPrompts: 2,
      rolloutsPerPrompt: 2,
      maxTurns: 1,
      maxResponseTokens: 24,
    };
    await store.createRun({ id: 't', name: 'timed', recipe: 'pact', config, backend: 'wasm' });
    await store.appendMetrics('t', [
      { step: 1, values: { seconds: 30, 'completions/mean_length': 20 } },
      { step: 2, values: { seconds: 40, 'completions/mean_length': 24 } },
    ]);
    await runs.refresh();
    // 'a' has steps but no backend recorded: it lends no timing
    expect(runs.timings).toEqual([
      {
        preset: 'qwen3-nano',
        rolloutsPerStep: 4,
        tokenCap: 24,
        env: 'tool-use',
        backend: 'wasm',
        secondsPerStep: 35,
        tokensPerRollout: 22,
        source: 'your run “timed” in this browser',
      },
    ]);
  });
});
