// Resuming a run through the checkpoint files `pact train` writes (safetensors + trainer_state.json,
// and for LoRA the merged model, the base as reference and PEFT's adapter files): bit for bit.
import { beforeAll, describe, expect, it } from 'vitest';
import { exportTensors } from '../model/qwen3/train/snapshot';
import { parseSafetensors } from '../model/weights/safetensors';
import type { TrainConfigInput } from '../recipes/config';
import {
  createTinyTrainer,
  readerOfFiles,
  stripTiming,
  useWasmTinySetup,
  type TinySetup,
  TINY_LORA_CONFIG,
  TINY_TRAINER_CONFIG,
  hasSameBits,
  releaseTrainers,
} from '../recipes/testing/testKit';
import type { Trainer } from '../recipes/train/trainer';
import type { StepMetrics } from '../recipes/types';
import '../recipes/index';
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_FILE,
  MANIFEST_FILE,
  REFERENCE_FILE,
  buildCheckpointFiles,
  buildCheckpointManifest,
  readCheckpointFolder,
  readCheckpointState,
} from './checkpoint';

const tinySetup = useWasmTinySetup();
let setup: TinySetup;
beforeAll(() => {
  setup = tinySetup();
});

function createTrainer(input: TrainConfigInput, modelSeed = 7): Trainer {
  return createTinyTrainer(setup, input, { modelSeed });
}

const TINY = TINY_TRAINER_CONFIG;
const LORA = TINY_LORA_CONFIG;
const release = releaseTrainers;
const sameBits = hasSameBits;
const asReader = readerOfFiles;

describe('resume through checkpoint files', () => {
  it('resumes bit for bit: 4 steps = 2 steps → export → new Trainer → import → 2 steps', async () => {
    const config: TrainConfigInput = {
      ...TINY,
      recipe: 'pact',
      batchPrompts: 1,
      maxTurns: 1,
      maxResponseTokens: 8,
      pact: { anchorProb: 0 },
    }; // SFT on every step: the weights move
    const straight = createTrainer(config);
    const straightMetrics: StepMetrics[] = [];
    for (let s = 0; s < 4; s++) straightMetrics.push(await straight.step());
    const straightWeights = await exportTensors(straight.model.params);

    const first = createTrainer(config);
    await first.step();
    await first.step();
    // Through the checkpoint files (safetensors + trainer_state.json), as `pact train` writes them.
    const files = buildCheckpointFiles(await first.exportState(), setup.modelConfig, setup.tokenizer.toMapping());
    const state = await readCheckpointState(readerOfFiles(files));
    first.model.dispose();
    first.dispose();

    const resumed = createTrainer(config, 99); // a different init: everything must come from the state
    resumed.importState(state);
    expect(resumed.completedSteps).toBe(2);
    const resumedMetrics = [await resumed.step(), await resumed.step()];
    const resumedWeights = await exportTensors(resumed.model.params);

    expect(resumedMetrics.map(stripTiming)).toEqual(straightMetrics.slice(2).map(stripTiming));
    expect(resumedWeights.map((w) => w.name)).toEqual(straightWeights.map((w) => w.name));
    resumedWeights.forEach((w, i) =>
      expect(Buffer.from(w.data.buffer).equals(Buffer.from(straightWeights[i].data.buffer)), w.name).toBe(true),
    );
    // The run did move: a weight differs from a fresh model of the same seed.
    const fresh = setup.createModel(7);
    const initial = await exportTensors(fresh.params);
    expect(
      initial.some((w, i) => !Buffer.from(w.data.buffer).equals(Buffer.from(straightWeights[i].data.buffer))),
    ).toBe(true);
    for (const t of [straight, resumed]) {
      t.model.dispose();
      t.dispose();
    }
    fresh.dispose();
  }, 240_000);

  it('writes every checkpoint file byte for byte the same after a resume (config.json and the manifest included)', async () => {
    // `pact train --resume`'s path: the resumed run's model config and config are the ones read
    // back from the checkpoint folder, whatever key order the straight run's objects had.
    const config: TrainConfigInput = { ...TINY, recipe: 'pact', batchPrompts: 1, maxTurns: 1, maxResponseTokens: 8 };
    const mapping = setup.tokenizer.toMapping();
    const straight = createTrainer(config);
    for (let s = 0; s < 4; s++) await straight.step();
    const straightFiles = buildCheckpointFiles(await straight.exportState(), setup.modelConfig, mapping);

    const first = createTrainer(config);
    await first.step();
    await first.step();
    const folder = await readCheckpointFolder(
      readerOfFiles(buildCheckpointFiles(await first.exportState(), setup.modelConfig, mapping)),
    );
    release(first);
    const resumed = createTrainer(folder.state.config, 99);
    resumed.importState(folder.state);
    await resumed.step();
    await resumed.step();
    const resumedFiles = buildCheckpointFiles(await resumed.exportState(), folder.modelConfig, folder.mapping);

    expect(Object.keys(resumedFiles).sort()).toEqual(Object.keys(straightFiles).sort());
    for (const name of Object.keys(straightFiles)) {
      const bytes = (f: string | Uint8Array) => Buffer.from(typeof f === 'string' ? new TextEncoder().encode(f) : f);
      expect(bytes(resumedFiles[name]).equals(bytes(straightFiles[name])), `${name} differs after the resume`).toBe(
        true,
      );
    }
    release(straight, resumed);
  }, 240_000);

  it('resumes bit for bit through the checkpoint files (merged model, base as reference, PEFT adapter files)', async () => {
    const straight = createTrainer(LORA);
    const straightMetrics: StepMetrics[] = [];
    for (let s = 0; s < 4; s++) straightMetrics.push(await straight.step());
    const straightState = await straight.exportState();

    const first = createTrainer(LORA);
    await first.step();
    await first.step();
    const files = buildCheckpointFiles(await first.exportState(), setup.modelConfig, setup.tokenizer.toMapping());
    expect(Object.keys(files)).toEqual(
      expect.arrayContaining([ADAPTER_FILE, ADAPTER_CONFIG_FILE, REFERENCE_FILE, 'model.safetensors']),
    );
    expect(JSON.parse(files[ADAPTER_CONFIG_FILE] as string)).toMatchObject({
      peft_type: 'LORA',
      r: 2,
      lora_alpha: 4,
      target_modules: ['q_proj', 'v_proj'],
    });
    const peftNames = [...parseSafetensors(files[ADAPTER_FILE] as Uint8Array).tensors.keys()];
    expect(peftNames).toContain('base_model.model.model.layers.1.self_attn.v_proj.lora_A.weight');
    const state = await readCheckpointState(asReader(files));
    release(first);

    // Another init: base and adapters must both come from the state (the merged weights in
    // model.safetensors are not the base).
    const resumed = createTrainer(LORA, 99);
    resumed.importState(state);
    const resumedMetrics = [await resumed.step(), await resumed.step()];
    const resumedState = await resumed.exportState();
    expect(resumedMetrics.map(stripTiming)).toEqual(straightMetrics.slice(2).map(stripTiming));
    for (const field of ['weights', 'adapterWeights', 'referenceWeights', 'optimizer'] as const) {
      const a = straightState[field]!;
      const b = resumedState[field]!;
      expect(
        b.map((t) => t.name),
        field,
      ).toEqual(a.map((t) => t.name));
      a.forEach((t, i) => expect(sameBits(t, b[i]), `${field}: ${t.name}`).toBe(true));
    }
    release(straight, resumed);
  }, 300_000);

  it('refuses a LoRA checkpoint without its adapters or with a wrong adapter shape, naming the file and tensor; and a full-weight state in a LoRA run', async () => {
    const trainer = createTrainer(LORA);
    await trainer.step();
    const files = buildCheckpointFiles(await trainer.exportState(), setup.modelConfig, setup.tokenizer.toMapping());
    const { [ADAPTER_FILE]: _dropped, ...noAdapters } = files;
    await expect(readCheckpointState(asReader(noAdapters))).rejects.toThrow(`${ADAPTER_FILE} is missing`);

    // A rank-3 A in place of the rank-2 one.
    const { tensors } = parseSafetensors(files[ADAPTER_FILE] as Uint8Array);
    const { writeSafetensors } = await import('../model/weights/safetensors');
    const bad = [...tensors].map(([name, t]) =>
      name === 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight'
        ? { name, shape: [3, t.shape[1]], data: new Float32Array(3 * t.shape[1]) }
        : { name, shape: t.shape, data: t.data as Float32Array },
    );
    // (the manifest rewritten to match, so the shape check itself is what refuses it)
    const badFiles = { ...files, [ADAPTER_FILE]: writeSafetensors(bad, { format: 'pt' }) };
    await expect(
      readCheckpointState(asReader({ ...badFiles, [MANIFEST_FILE]: buildCheckpointManifest(badFiles) })),
    ).rejects.toThrow(
      /adapter_model\.safetensors: tensor "model\.layers\.0\.self_attn\.q_proj\.lora_A\.weight" has shape \[3, 32\], expected \[2, 32\]/,
    );

    // A full-weight run's state cannot be imported into a LoRA run.
    const plain = createTrainer({ ...LORA, model: {} });
    const plainState = await plain.exportState();
    expect(() => trainer.importState(plainState)).toThrow(/not a LoRA checkpoint/);
    release(trainer, plain);
  }, 120_000);
});
