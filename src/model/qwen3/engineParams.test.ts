// toEngineParams keeps one view per parameter while its data stays, so a decode step builds no
// views, and a new one once a variable is assigned (new data), so the engine reads the new
// weights through the same map: its logits after an assign are those of a fresh map.
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as tf from './tf';
import { selectBackend } from '../backend';
import { Qwen3Model } from './index';
import { toEngineParams } from './engineBridge';
import { Qwen3Engine } from '../engine/qwen3Engine';
import { EngineRuntime } from '../engine/runtime';
import { SMALL_GQA_CONFIG } from '../engine/smallConfig';

let model: Qwen3Model;
beforeAll(async () => {
  await selectBackend('cpu');
  model = Qwen3Model.fromConfig(SMALL_GQA_CONFIG, 3);
});
afterAll(() => model.dispose());

it('gives the same view while the data stays, a new one after an assign, and the engine follows it', () => {
  const name = 'model.layers.0.self_attn.q_proj.weight';
  const v = model.params.get(name) as tf.Variable;
  const P = toEngineParams(model.params);
  const first = P.get(name);
  expect(P.get(name)).toBe(first);

  const engine = new Qwen3Engine(SMALL_GQA_CONFIG, new EngineRuntime(16 << 20));
  const logits = (params: typeof P) => {
    const slot = engine.createSlot(16);
    try {
      return Array.from(engine.extend(params, [{ slot, tokens: [1, 2, 3, 4] }]));
    } finally {
      engine.freeSlot(slot);
    }
  };
  const before = logits(P);
  tf.tidy(() => v.assign(tf.mul(v, 1.5)));
  const after = P.get(name);
  expect(after).not.toBe(first);
  expect(after.key).toBe(v.dataId);
  expect(Array.from(after.read())).toEqual(Array.from(v.dataSync()));
  const changed = logits(P);
  expect(changed).not.toEqual(before);
  expect(changed).toEqual(logits(toEngineParams(model.params)));
});
