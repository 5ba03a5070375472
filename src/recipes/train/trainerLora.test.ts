/**
 * LoRA training runs (config.model.lora) on the tiny setup (testKit), wasm backend:
 *   - only the adapters move: the base weights after two steps equal a fresh model's bit for
 *     bit, the optimiser holds exactly the adapters' A and B, and exportState's merged
 *     weights equal W + (α/r)·B·A recomputed here in plain JavaScript;
 *   - π_ref is the base without adapters and π_old the base with them: kl_prompt_only of
 *     step 2 equals an independent k3 reading with a plain model holding the merged weights
 *     after step 1 (π_old) and a fresh base model (π_ref);
 *   - resume through the checkpoint files (model.safetensors merged, reference.safetensors the
 *     base, adapter_model.safetensors + adapter_config.json as PEFT writes them) continues bit
 *     for bit; a folder missing its adapters, or with a wrong adapter shape, is refused by name;
 *   - every tool-use recipe runs a LoRA step with finite metrics and leaves the base as it was;
 *   - dispose takes the adapters off the model and unfreezes it; no tensor leaks over a step.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '../../model/qwen3/tf';
import { assignNamedArrays, exportTensors } from '../../model/qwen3/train/snapshot';
import type { NamedArray } from '../../model/qwen3/train/types';

import type { TrainConfigInput } from '../config';
import {
  createTinyTrainer,
  meanPolicyTokenK3,
  useWasmTinySetup,
  type TinySetup,
  TINY_LORA_CONFIG,
  hasSameBits,
  releaseTrainers,
} from '../testing/testKit';
import { listRecipes } from '../registry';
import type { Trainer } from './trainer';

import '../index';

const tinySetup = useWasmTinySetup();
let setup: TinySetup;
beforeAll(() => {
  setup = tinySetup();
});

const LORA = TINY_LORA_CONFIG;
const release = releaseTrainers;
const sameBits = hasSameBits;

function createTrainer(input: TrainConfigInput, modelSeed = 7): Trainer {
  return createTinyTrainer(setup, input, { modelSeed });
}

const byName = (list: readonly NamedArray[]) => new Map(list.map((t) => [t.name, t]));

describe('Trainer with LoRA (config.model.lora)', () => {
  it('trains only the adapters; the exported policy is W + (α/r)·B·A; π_ref is the base without adapters', async () => {
    const trainer = createTrainer({ ...LORA, lr: 0.05 }); // a step that moves the policy well above float noise
    expect(trainer.model.lora?.size).toBe(2 * 2); // q and v of 2 layers
    const first = await trainer.step();
    expect(first.kl_prompt_only).toBeCloseTo(0, 6); // step 1: B = 0, so π_old = π_ref
    const afterStep1 = await trainer.exportState();
    const m = await trainer.step();
    const state = await trainer.exportState();

    // The base never moved, and is what the state keeps as π_ref.
    const ref = setup.createModel(7); // a fresh base of the same seed: what π_ref must be
    const fresh = await exportTensors(ref.params);
    const base = await exportTensors(trainer.model.params);
    base.forEach((w, i) => expect(sameBits(w, fresh[i]), w.name).toBe(true));
    state.referenceWeights!.forEach((w, i) => expect(sameBits(w, fresh[i]), w.name).toBe(true));

    // AdamW holds exactly A and B of the 4 adapted weights: 8 tensors × (exp_avg, exp_avg_sq, step).
    const adapterNames = state.adapterWeights!.map((t) => t.name).sort();
    expect(adapterNames).toEqual(
      [0, 1]
        .flatMap((l) =>
          ['q', 'v'].flatMap((p) => ['A', 'B'].map((ab) => `model.layers.${l}.self_attn.${p}_proj.lora_${ab}.weight`)),
        )
        .sort(),
    );
    expect(new Set(state.optimizer.map((t) => t.name.replace(/\.(exp_avg|exp_avg_sq|step)$/, '')))).toEqual(
      new Set(adapterNames),
    );
    // B started at 0 and moved.
    const adapters = byName(state.adapterWeights!);
    expect(
      Math.max(...Array.from(adapters.get('model.layers.0.self_attn.q_proj.lora_B.weight')!.data, Math.abs)),
    ).toBeGreaterThan(0);

    // Merged = W + 2·B·A, recomputed for every adapted weight; the others equal the base.
    const baseByName = byName(base);
    for (const merged of state.weights) {
      const W = baseByName.get(merged.name)!;
      const stem = merged.name.slice(0, -'.weight'.length);
      const A = adapters.get(`${stem}.lora_A.weight`);
      const B = adapters.get(`${stem}.lora_B.weight`);
      if (!A || !B) {
        expect(sameBits(merged, W), merged.name).toBe(true);
        continue;
      }
      const [outDim, inDim] = W.shape;
      for (let o = 0; o < outDim; o++) {
        for (let i = 0; i < inDim; i++) {
          const ba = B.data[o * 2] * A.data[i] + B.data[o * 2 + 1] * A.data[inDim + i];
          expect(merged.data[o * inDim + i]).toBeCloseTo(W.data[o * inDim + i] + 2 * ba, 5);
        }
      }
    }

    // kl_prompt_only of step 2, read independently: π_old = a plain model holding step 1's
    // merged weights, π_ref = a fresh base model, both without any adapter.
    const old = setup.createModel(11);
    assignNamedArrays(old.params, afterStep1.weights);
    const { mean, count } = meanPolicyTokenK3(trainer.lastGroups, old, ref);
    expect(count).toBeGreaterThan(0);
    expect(mean, 'the adapters moved the policy').toBeGreaterThan(1e-4);
    expect(Math.abs(m.kl_prompt_only - mean) / mean).toBeLessThan(1e-3);

    const model = trainer.model;
    trainer.dispose();
    expect(model.lora).toBeUndefined();
    expect([...model.params.values()].every((v) => v.trainable)).toBe(true);
    for (const x of [old, ref, model]) x.dispose();
  }, 240_000);

  it('runs one step of every registered tool-use recipe with LoRA: finite metrics, and the base left as it was', async () => {
    const freshModel = setup.createModel(7);
    const fresh = await exportTensors(freshModel.params);
    freshModel.dispose();
    for (const name of listRecipes()) {
      const trainer = createTrainer({ ...LORA, recipe: name, sftSteps: 1 });
      if (trainer.recipe.env === 'tool-use') {
        const m = await trainer.step();
        expect(Number.isFinite(m.loss), `${name}: loss ${m.loss}`).toBe(true);
        expect(Number.isFinite(m.grad_norm), `${name}: grad_norm ${m.grad_norm}`).toBe(true);
        const base = await exportTensors(trainer.model.params);
        base.forEach((w, i) => expect(sameBits(w, fresh[i]), `${name}: ${w.name}`).toBe(true));
      }
      release(trainer);
    }
  }, 240_000);

  it("stateBytes is the bytes of exportState's arrays (what a checkpoint stores), with and without LoRA", async () => {
    const bytesOf = (list: readonly NamedArray[] | undefined) =>
      (list ?? []).reduce((sum, t) => sum + t.data.byteLength, 0);
    for (const input of [{}, LORA]) {
      const trainer = createTrainer(input);
      await trainer.step();
      const state = await trainer.exportState();
      const exported =
        bytesOf(state.weights) +
        bytesOf(state.optimizer) +
        bytesOf(state.referenceWeights) +
        bytesOf(state.adapterWeights);
      expect(trainer.stateBytes, JSON.stringify(input)).toBe(exported);
      // By hand: P weights and P of π_ref, AdamW's m and v and a step per trained tensor, and
      // (LoRA) the adapters themselves, all float32.
      const params = [...trainer.model.params.values()].reduce((n, t) => n + t.size, 0);
      const trained = input === LORA ? state.adapterWeights! : state.weights;
      const trainedFloats = trained.reduce((n, t) => n + t.data.length, 0);
      const expected = 4 * (2 * params + 2 * trainedFloats + trained.length + (input === LORA ? trainedFloats : 0));
      expect(exported, JSON.stringify(input)).toBe(expected);
      release(trainer);
    }
  }, 120_000);

  it('leaks no tensors over a LoRA step and its export', async () => {
    const trainer = createTrainer(LORA);
    await trainer.step();
    const before = tf.memory().numTensors;
    await trainer.step();
    await trainer.exportState();
    expect(tf.memory().numTensors).toBe(before);
    release(trainer);
  }, 120_000);
});
