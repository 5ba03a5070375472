/**
 * Method choices the trainer makes explicit, on the tiny setup: the step numbering shared
 * by PACT's gates and SFT schedules (Algorithm 1's s = 1…T, so the last step reaches λa_end
 * and L0), and where the KL penalty of an L^h prompt is read (pact.klContext).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { klK3, reasoningPrefixLevel, sampleStepGates, toolCallScale } from '../../core/index';
import { POLICY_KINDS } from '../../core/types';
import { RolloutEnv } from '../../envs/rollout';
import { resolveConfig, type TrainConfigInput } from '../config';
import { encodeEpisode, replayExpertEpisode } from '../policyVocab';
import { exportTensors } from '../../model/qwen3/train/snapshot';
import { buildPrivilegedContext, buildTraceConditionedRow } from './privilegedContext';
import {
  createTinyTrainer,
  meanPolicyTokenK3,
  readRowLogprobs,
  useWasmTinySetup,
  type TinySetup,
} from '../testing/testKit';
import { buildMicroBatchLoss, splitMicroBatches, type PromptPlan } from './trainer';
import '../index';

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

describe("the KL penalty of an L^h prompt (pact.klContext, default 'prompt')", () => {
  it("'prompt' is the default", () => {
    expect(resolveConfig({}).pact.klContext).toBe('prompt');
  });

  it('a KL micro-batch reads k3(π_θ ‖ π_ref) on the rollout as sampled, (x; τ): checked against an independent reading', async () => {
    const task = setup.trainTasks[0];
    const env = new RolloutEnv({ executor: setup.executor, renderChat: setup.renderChat });
    const episode = encodeEpisode(await replayExpertEpisode(task, env), setup.tokenizer); // a rollout-shaped row (x; τ)
    const model = setup.createModel(7);
    const ref = setup.createModel(8);
    const promptLength = episode.tags.findIndex((t) => t.kind !== 'prompt');
    const mask = episode.tags.slice(1).map((t, j) => (j + 1 >= promptLength && POLICY_KINDS.has(t.kind) ? 1 : 0)); // column j = token j + 1
    const refLogprobs = readRowLogprobs(ref, episode.ids);
    const plan: PromptPlan = {
      route: { rl: 'h', rlWeight: 1, sftWeight: 0, sftMask: 'component' },
      kl: { ids: [episode.ids], mask: [mask], refLogprobs: [refLogprobs] },
    };
    expect(splitMicroBatches([plan], [0], 1)).toEqual([{ prompt: 0, part: 'kl', start: 0, end: 1 }]);
    const terms = buildMicroBatchLoss(
      model,
      plan,
      { prompt: 0, part: 'kl', start: 0, end: 1 },
      { clipEps: 0.2, lossAgg: 'token-mean', klCoef: 0.5 },
    );
    const [total, klSum, count] = [
      await terms.total.data(),
      await terms.klSum.data(),
      await terms.tokenCount.data(),
    ].map((d) => d[0]);
    // By hand from two plain readings: Σ m·k3(log π_θ, log π_ref) and its token mean × klCoef.
    const logp = readRowLogprobs(model, episode.ids);
    let sum = 0;
    mask.forEach((m, j) => (sum += m * klK3(logp[j], refLogprobs[j])));
    const n = mask.reduce((a: number, b) => a + b, 0);
    expect(n).toBeGreaterThan(10);
    expect(klSum).toBeCloseTo(sum, 3);
    expect(total).toBeCloseTo((0.5 * sum) / n, 5);
    expect(count).toBe(0); // the RL rows count the tokens
    model.dispose();
    ref.dispose();
  }, 60_000);

  it("through the trainer: 'prompt' reports k3 under x, 'trace' under c^h, each equal to an independent reading", async () => {
    /** One step, every prompt trace-routed, one mini-batch (so the penalty reads π_old = the seed-7 model), π_ref = a seed-8 model. */
    const run = async (klContext: 'prompt' | 'trace') => {
      const trainer = createTinyTrainer(setup, {
        ...TINY,
        batchPrompts: 2,
        miniBatchPrompts: 2,
        klCoef: 0.5,
        steps: 1,
        pact: { anchorProb: 0, klContext },
      });
      const state = await trainer.exportState();
      const other = setup.createModel(8);
      state.referenceWeights = await exportTensors(other.params);
      other.dispose();
      trainer.importState(state);
      const m = await trainer.step();
      const groups = trainer.lastGroups;
      trainer.model.dispose();
      trainer.dispose();
      return { m, groups };
    };
    const old = setup.createModel(7);
    const ref = setup.createModel(8);
    const prompt = await run('prompt');
    const underX = meanPolicyTokenK3(prompt.groups, old, ref).mean;
    const trace = await run('trace');
    // The c^h reading of the same k3: the rollouts' responses after [x; h*; header].
    let sum = 0;
    let count = 0;
    for (const group of trace.groups) {
      const task = group.prompt.kind === 'tool-use' ? group.prompt : null;
      for (const rollout of group.rollouts) {
        const x = {
          ids: rollout.ids.slice(0, rollout.promptLength),
          tags: rollout.tags.slice(0, rollout.promptLength),
        };
        const row = buildTraceConditionedRow(rollout, buildPrivilegedContext(x, task!.trace!, setup.tokenizer));
        const lo = readRowLogprobs(old, row.ids);
        const lr = readRowLogprobs(ref, row.ids);
        for (let n = row.responseStart; n < row.ids.length; n++) {
          if (!POLICY_KINDS.has(row.tags[n].kind)) continue;
          sum += klK3(lo[n - 1], lr[n - 1]);
          count++;
        }
      }
    }
    const underTrace = sum / count;
    const traceUnderX = meanPolicyTokenK3(trace.groups, old, ref).mean;
    old.dispose();
    ref.dispose();
    const relative = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);
    expect(relative(underTrace, underX)).toBeGreaterThan(0.01); // the two readings differ (here by ~4%)
    expect(relative(prompt.m.kl, underX)).toBeLessThan(1e-4);
    expect(relative(prompt.m.kl_prompt_only, underX)).toBeLessThan(1e-4);
    expect(relative(trace.m.kl, underTrace)).toBeLessThan(1e-4);
    expect(relative(trace.m.kl_prompt_only, traceUnderX)).toBeLessThan(1e-4);
  }, 240_000);
});
