/**
 * Method choices the trainer makes explicit, on the tiny setup: the step numbering shared
 * by PACT's gates and SFT schedules (Algorithm 1's s = 1…T, so the last step reaches λa_end
 * and L0).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { reasoningPrefixLevel, sampleStepGates, toolCallScale } from '../core';
import type { TrainConfigInput } from './config';
import { createTinyTrainer, useWasmTinySetup, type TinySetup } from './testKit';
import './index';

const tinySetup = useWasmTinySetup();
let setup: TinySetup;
beforeAll(() => {
  setup = tinySetup();
});

const TINY: TrainConfigInput = {
  recipe: 'pact',
  batchPrompts: 2,
  miniBatchPrompts: 1,
  rolloutsPerPrompt: 2,
  maxTurns: 1,
  maxPromptTokens: 1024,
  maxResponseTokens: 8,
  lr: 1e-2,
};

describe('step numbering: gates and SFT schedules read the same s = 1…T', () => {
  it('each step reports λa(s), the level at s and the gates of stream step s; step S = T ends at λa_end and L0', async () => {
    const seed = 5;
    const trainer = createTinyTrainer(setup, { ...TINY, seed, steps: 5, pact: { anchorProb: 0.5 } });
    const metrics = [];
    for (let i = 0; i < 5; i++) metrics.push(await trainer.step());
    trainer.model.dispose();
    trainer.dispose();
    for (const m of metrics) {
      expect(m.lambda_a, `step ${m.step}`).toBeCloseTo(toolCallScale(m.step, { start: 0.8, end: 0.2, horizon: 5 }), 12);
      expect(m.prefix_level, `step ${m.step}`).toBe(reasoningPrefixLevel(m.step, { horizon: 5 }));
      const gates = sampleStepGates(seed, m.step, 2, 0.5);
      expect(m.gate_fraction, `step ${m.step}`).toBe(gates.filter((z) => z === 1).length / 2);
    }
    expect(metrics.map((m) => m.step)).toEqual([1, 2, 3, 4, 5]);
    // λa: 0.8 − 0.6·s/5 = 0.68, 0.56, 0.44, 0.32, 0.2; levels L4, L3, L2, L1, L0
    expect(metrics.map((m) => +(m.lambda_a as number).toFixed(9))).toEqual([0.68, 0.56, 0.44, 0.32, 0.2]);
    expect(metrics.map((m) => m.prefix_level)).toEqual([4, 3, 2, 1, 0]);
  }, 240_000);
});
