/**
 * PACT's actor step inside VeRL (pact_verl/actor.py, make_pact_actor): VeRL's real
 * DataParallelPPOActor (dp_actor.py loaded by path, heavy imports stubbed) subclassed and
 * installed as register.py does, around a tiny float64 causal LM on CPU, on a VeRL-layout batch
 * of 4 prompts × 3 rollouts (L^x, L^h + SFT with two real expert traces, a prompt without a trace)
 * in 2 PPO mini-batches of 2 prompts and gradient micro-batches of 2 rows (a prompt's rows split).
 * The run's settings are the exported ones (mapTrainerSettings). Compared, to 1e-6 in float64,
 * against the step computed independently (check_actor.py's Reference: rows from
 * trace_conditioned_row / component_sft_row / route, each read unpadded, the loss from
 * algos.pact_prompt_loss / pact_minibatch_loss on whole prompts, which verlParity.test.ts checks
 * against the TypeScript core): π_old(τ | c^h) and π_ref as compute_log_prob reads them, each
 * mini-batch's (1/|B|) Σ_i L_i, the LM head's gradient at each step and every parameter's.
 * Skips only when no python has torch + omegaconf or the VeRL snapshot is absent.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InProcessExecutor } from '../../envs/sandbox/inProcessExecutor';
import { resolveConfig } from '../../recipes/config';
import { generateExpertTasks } from '../../recipes/policyVocab';
import { exportExpertTrace } from './rows';
import { PACKAGE_PARENT, VERL_ROOT, findVerlTestPython } from './testPython';
import { mapTrainerSettings } from './trainerConfig';

const PY = findVerlTestPython();
const HAS_VERL = existsSync(`${VERL_ROOT}/verl/workers/actor/dp_actor.py`);
const skipReason = !PY.python ? PY.reason : !HAS_VERL ? `no VeRL snapshot at ${VERL_ROOT}` : undefined;
if (skipReason) console.warn(`actorStep.test.ts skipped: ${skipReason}`);

const CHECK_ACTOR = fileURLToPath(new URL('./python/tests/check_actor.py', import.meta.url));
const TOL = 1e-6;

function expectClose(actual: number, expected: number, what: string): void {
  const err = Math.abs(actual - expected);
  expect(err, `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(TOL * Math.max(1, Math.abs(expected)));
}

/** The run's settings as the export writes them: the `pact` section and the actor's keys. */
function exportedSettings(input: Record<string, unknown>) {
  const config = resolveConfig(input);
  const { settings } = mapTrainerSettings(config, { modelPath: 'unused' });
  const options: Record<string, unknown> = {};
  const actor: Record<string, unknown> = {};
  for (const [key, value] of settings) {
    if (key.startsWith('pact.')) options[key.slice('pact.'.length)] = value;
    const rest = key.startsWith('actor_rollout_ref.actor.') ? key.slice('actor_rollout_ref.actor.'.length) : null;
    if (rest === 'policy_loss.loss_mode') actor.policy_loss = { loss_mode: value };
    else if (rest && !rest.includes('.') && rest !== 'ppo_mini_batch_size') actor[rest] = value;
  }
  options.rollout_n = config.rolloutsPerPrompt;
  const p = config.pact;
  const reference = {
    recipe: config.recipe,
    objective: p.objective,
    betaSft: p.betaSft,
    klContext: p.klContext,
    clipEps: config.clipEps,
    klCoef: config.klCoef,
    lossAgg: config.lossAgg,
    traceComponents: p.traceComponents,
    schedule: {
      reasoningSchedule: p.reasoningSchedule,
      toolCallSchedule: p.toolCallSchedule,
      fullTokenAnneal: p.fullTokenAnneal,
      toolCallScaleStart: p.toolCallScaleStart,
      toolCallScaleEnd: p.toolCallScaleEnd,
      annealHorizon: p.annealHorizon,
      prefixReveal: p.prefixReveal,
    },
  };
  return { config, options, actor, reference };
}

async function buildScenarios() {
  const tasks = await generateExpertTasks(
    { seed: 5, n: 3, generator: { categories: ['parallel_multi_hop'] } },
    new InProcessExecutor(),
  );
  const traces = tasks.filter((t) => t.expertTrace).map((t) => JSON.stringify(exportExpertTrace(t)));
  expect(traces.length).toBeGreaterThanOrEqual(2);
  const base = {
    steps: 6,
    rolloutsPerPrompt: 3,
    batchPrompts: 4,
    miniBatchPrompts: 2,
    temperature: 0.8,
    clipEps: 0.2,
  };
  const prompts = [
    { gate: 1, trace: traces[0], step: 2 }, // L^x
    { gate: 0, trace: traces[0], step: 2 }, // L^h + SFT
    { gate: 0, trace: traces[1], step: 5 }, // L^h + SFT, later in the λa / prefix schedules
    { gate: 0, trace: '', step: 5 }, // no trace: anchored on L^x
  ];
  const scenario = (name: string, seed: number, input: Record<string, unknown>) => {
    const s = exportedSettings({ ...base, ...input });
    return {
      name,
      seed,
      prompts,
      rollouts: s.config.rolloutsPerPrompt,
      miniBatchPrompts: s.config.miniBatchPrompts,
      microBatchRows: 2,
      temperature: s.config.temperature,
      lr: 0.1,
      drift: 0.03,
      options: s.options,
      actor: s.actor,
      reference: s.reference,
    };
  };
  return [
    scenario('pact, klContext prompt, token-mean, prefixReveal remove', 11, {
      recipe: 'pact',
      klCoef: 0.05,
      lossAgg: 'token-mean',
      pact: { objective: 'Lh+SFT', betaSft: 0.3, toolCallScaleStart: 0.9, toolCallScaleEnd: 0.1, klContext: 'prompt' },
    }),
    scenario('pact, klContext trace, seq-mean-token-mean, prefixReveal mask', 12, {
      recipe: 'pact',
      klCoef: 0.1,
      lossAgg: 'seq-mean-token-mean',
      pact: { objective: 'Lh+SFT', betaSft: 0.5, klContext: 'trace', prefixReveal: 'mask' },
    }),
    scenario('matchtir (every prompt L^x, per-prompt mean), no KL', 13, {
      recipe: 'matchtir',
      klCoef: 0,
      lossAgg: 'token-mean',
    }),
  ];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Side = Record<string, any>;

function runCheckActor(python: string, fixtures: object): Side[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'pact-verl-actor-'));
  const file = path.join(dir, 'fixtures.json');
  writeFileSync(file, JSON.stringify(fixtures));
  const r = spawnSync(python, [CHECK_ACTOR, VERL_ROOT, PACKAGE_PARENT, file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`check_actor.py failed (${r.status}):\n${r.stderr}`);
  // VeRL's actor prints its settings; the result is the last line
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Side[];
}

describe.skipIf(skipReason !== undefined)("VeRL export: PACT's actor step in VeRL's DataParallelPPOActor", () => {
  it('reads π_old / π_ref under c^h and steps on (1/|B|) Σ_i L_i, as computed independently', async () => {
    const scenarios = await buildScenarios();
    const results = runCheckActor(PY.python!, { scenarios });
    expect(results.length).toBe(scenarios.length);
    results.forEach((res, s) => {
      const { actor, reference } = res;
      const name = res.name as string;
      // π_old as compute_log_prob returns it: under c^h for L^h rows, under x otherwise
      expect(actor.old.length).toBe(reference.old.length);
      actor.old.forEach((row: number[], k: number) =>
        row.forEach((x, j) => expectClose(x, reference.old[k][j], `${name}: π_old row ${k} token ${j}`)),
      );
      if (reference.ref) {
        actor.ref.forEach((row: number[], k: number) =>
          row.forEach((x, j) => expectClose(x, reference.ref[k][j], `${name}: π_ref row ${k} token ${j}`)),
        );
      }
      // each mini-batch's loss and the gradient the optimizer stepped on
      expect(actor.losses.length).toBe(2);
      actor.losses.forEach((x: number, mb: number) => expectClose(x, reference.losses[mb], `${name}: loss ${mb}`));
      actor.lmHeadGrads.forEach((g: number[], mb: number) =>
        g.forEach((x, j) => expectClose(x, reference.lmHeadGrads[mb][j], `${name}: lm_head grad ${mb}[${j}]`)),
      );
      expect(res.maxParamGradDiff, `${name}: every parameter's gradient`).toBeLessThanOrEqual(TOL);

      // the comparison can fail: the numbers are not trivial and the alternatives differ
      const grads = actor.lmHeadGrads.flat() as number[];
      expect(Math.max(...grads.map(Math.abs))).toBeGreaterThan(1e-3);
      expect(Math.max(...(res.alternatives.clipfrac as number[]))).toBeGreaterThan(0);
      const far = (a: number[], b: number[]) => a.some((x, i) => Math.abs(x - b[i]) > 1e-3);
      expect(far(res.alternatives.tokenMean, reference.losses), `${name}: per-prompt mean vs token mean`).toBe(true);
      if (scenarios[s].reference.recipe === 'pact') {
        expect(actor.lhPrompts).toEqual([1, 1]);
        expect(actor.sftRows).toEqual([1, 1]);
        expect(far(res.alternatives.allX, reference.losses), `${name}: routes matter`).toBe(true);
        // c^h changes π_old of the L^h rows (rows 3..8)
        const diff = reference.old
          .slice(3, 9)
          .flatMap((row: number[], k: number) => row.map((x, j) => Math.abs(x - res.underX[k + 3][j])));
        expect(Math.max(...diff)).toBeGreaterThan(1e-3);
      } else {
        expect(actor.lhPrompts).toEqual([0, 0]);
        expect(actor.sftRows).toEqual([0, 0]);
      }
      expect(actor.prompts).toEqual([2, 2]);
    });
  }, 300_000);
});
