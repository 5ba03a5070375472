/**
 * TrainerState ⇄ IndexedDB record: every tensor list comes back with its names, shapes and
 * bytes, a LoRA state's adapters included, and the record's byte count is the sum of them all.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/recipes/config';
import type { TrainerState } from '../src/recipes/types';
import { buildCheckpointRecord, readCheckpointRecord } from './checkpointRecord';

const tensor = (name: string, values: number[]) => ({ name, shape: [values.length], data: new Float32Array(values) });

function makeState(withAdapters: boolean): TrainerState {
  return {
    version: 1,
    step: 3,
    dataCursor: 6,
    rngStates: { root: { key: 'run', words: [1, 2, 3, 4] } },
    weights: [tensor('model.norm.weight', [1, 2])],
    optimizer: [tensor('x.exp_avg', [0.5])],
    referenceWeights: [tensor('model.norm.weight', [1, 1])],
    ...(withAdapters
      ? { adapterWeights: [tensor('model.layers.0.self_attn.q_proj.lora_A.weight', [0.25, -0.5, 2])] }
      : {}),
    config: resolveConfig(withAdapters ? { model: { lora: { rank: 1, alpha: 2, targets: ['q'] } } } : {}),
    recipe: 'pact',
  };
}

describe('checkpoint records', () => {
  it('round-trips a LoRA state with its adapters, counting their bytes (2 + 1 + 2 + 3 floats = 32 bytes)', () => {
    const record = buildCheckpointRecord('run-1', makeState(true), undefined);
    expect(record.bytes).toBe(8 * 4);
    const { state } = readCheckpointRecord(record);
    expect(state.adapterWeights).toEqual([tensor('model.layers.0.self_attn.q_proj.lora_A.weight', [0.25, -0.5, 2])]);
    expect(state.referenceWeights).toEqual([tensor('model.norm.weight', [1, 1])]);
    expect(state.step).toBe(3);
    expect(state.dataCursor).toBe(6);
  });

  it('a full-weight state has no adapterWeights after the round trip (5 floats = 20 bytes)', () => {
    const record = buildCheckpointRecord('run-1', makeState(false), undefined);
    expect(record.bytes).toBe(5 * 4);
    expect('adapterWeights' in readCheckpointRecord(record).state).toBe(false);
  });
});
