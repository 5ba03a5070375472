/**
 * The exported Python glue against the app's TypeScript core, on the same numbers: rewards,
 * advantages (through VeRL's own ADV_ESTIMATOR_REGISTRY), the `pact` loss (through VeRL's
 * POLICY_LOSS_REGISTRY, its agg_loss and kl_penalty), PACT's per-prompt objective, the SFT rows
 * and schedules, the gates and the data order. VeRL's core_algos.py is loaded by path from
 * ../shared/verl with its heavy imports stubbed. Skips only when no python has torch + omegaconf.
 */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { ADVANTAGE_ESTIMATORS, turnAdvantages } from '../../core/advantages';
import { ftrlReward } from '../../core/ftrlReward';
import { sampleStepGates } from '../../core/gates';
import {
  aggregateLoss,
  type AggregationMode,
  clipFraction,
  clippedSurrogateMatrix,
  componentSftLoss,
  klK3,
} from '../../core/losses';
import { createRng, permutation } from '../../core/rng';
import { answerF1, turnRewards } from '../../core/rewards';
import { reasoningPrefixLevel, toolCallScale } from '../../core/schedules';
import { toolrlReward } from '../../core/toolrlReward';
import type { TokenTag } from '../../core/types';
import { InProcessExecutor } from '../../envs/sandbox/inProcessExecutor';
import { parseAssistantTurn } from '../../envs/toolCallParser';
import { formatObservationBlock } from '../../envs/rollout';
import { resolveConfig } from '../../recipes/config';
import { PACT_RECIPE } from '../../recipes/methods/pact';
import { buildComponentSftRow } from '../../recipes/train/privilegedContext';
import { generateExpertTasks } from '../../recipes/policyVocab';
import type { RolloutGroup } from '../../recipes/types';
import { formatToolCallBlock } from '../../traces/render';
import { exportExpertTrace } from './rows';
import { answerToolCall } from './toolAnswer';
import { VERL_ROOT, findVerlTestPython, runPythonCheck } from './testPython';

const PY = findVerlTestPython();
const HAS_VERL = existsSync(`${VERL_ROOT}/verl/trainer/ppo/core_algos.py`);
const skipReason = !PY.python ? PY.reason : !HAS_VERL ? `no VeRL snapshot at ${VERL_ROOT}` : undefined;
if (skipReason) console.warn(`verlParity.test.ts skipped: ${skipReason}`);

/** A deterministic stream of numbers in [lo, hi). */
function numbers(seed: string) {
  const rng = createRng(seed);
  return (lo: number, hi: number) => lo + (hi - lo) * rng.next();
}

const charTokenizer = {
  encode: (text: string) => Array.from(text).map((c) => c.codePointAt(0)!),
  decode: (ids: number[]) => String.fromCodePoint(...ids),
  tokenId: () => undefined,
  vocabSize: 0x110000,
};

function expectClose(actual: number, expected: number, tol = 1e-6): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(expected)));
}

async function buildFixtures() {
  const tasks = await generateExpertTasks(
    { seed: 5, n: 3, generator: { categories: ['parallel_multi_hop'] } },
    new InProcessExecutor(),
  );
  expect(tasks.length).toBeGreaterThan(0);
  const task = tasks[0];
  const gold = task.goldCalls ?? [];
  const trace = task.expertTrace!;

  // ---- rewards: assistant turn texts, their tool outputs from the task's own stubs
  const callTurn = (calls: { name: string; arguments: Record<string, unknown> }[], extra = '') =>
    `<think>\nlooking things up\n</think>\n\n${calls.map(formatToolCallBlock).join('\n')}${extra}<|im_end|>`;
  const wrongArgs = gold.map((c) => ({
    name: c.name,
    arguments: Object.fromEntries(Object.keys(c.arguments).map((k) => [k, 'nope'])),
  }));
  const rollouts: string[][] = [
    [
      ...trace.turns.filter((t) => t.calls.length > 0).map((t) => callTurn(t.calls)),
      `<think>\ndone\n</think>\n\n<answer>${task.answer}</answer><|im_end|>`,
    ],
    [
      callTurn(gold.slice(0, 1)),
      callTurn(wrongArgs),
      `<think>x</think><answer>something else ${task.answer.split(' ')[0] ?? ''}</answer><|im_end|>`,
    ],
    [
      callTurn([...gold, ...gold]),
      '<think>hmm</think><tool_call>{"name": broken}</tool_call><|im_end|>',
      `<answer>${task.answer}</answer>${formatToolCallBlock(gold[0])}<|im_end|>`,
    ],
    ['<|im_end|>'],
    [
      callTurn([{ name: gold[0].name.toUpperCase(), arguments: { ...gold[0].arguments, extra: 1 } }]),
      `<answer></answer><|im_end|>`,
    ],
  ];
  const rewardCases: object[] = [];
  const expectedRewards: number[][] = [];
  // The reward manager on one batch of these rollouts per reward kind: each response is turn,
  // observation, turn, … and r_t sits on the last token of turn t (characters as tokens).
  const managerResponses: string[][] = [];
  const managerRewards: Record<string, number[][]> = { matchtir: [], ftrl: [] };
  for (const texts of rollouts) {
    const parsed = texts.map((t) => parseAssistantTurn(t));
    const turns = parsed.map((p) => ({ calls: p.calls.flatMap((c) => (c.call ? [c.call] : [])), answer: p.answer }));
    const outputs: { name: string; output: string }[][] = [];
    for (const t of turns) {
      const o: { name: string; output: string }[] = [];
      for (const call of t.calls)
        o.push({
          name: call.name,
          output: (await answerToolCall({ ...call, tools: task.tools, implementations: task.implementations })).output,
        });
      outputs.push(o);
    }
    const observations = outputs.slice(0, -1).map((o) => formatObservationBlock(o.map((x) => x.output)));
    const groundTruth = { answer: task.answer, gold_calls: gold, unsolved_set: task.unsolvedSet };
    for (const [method, penalty] of [
      ['hungarian', 0],
      ['greedy', 0.5],
    ] as const) {
      rewardCases.push({
        kind: 'matchtir',
        turnTexts: texts,
        groundTruth,
        options: { matching: method, unmatched_penalty: penalty },
      });
      expectedRewards.push(turnRewards(turns, gold, task.answer, { method, unmatchedPenalty: penalty }).turnRewards);
    }
    managerResponses.push(texts.flatMap((t, i) => (i < observations.length ? [t, observations[i]] : [t])));
    managerRewards.matchtir.push(
      turnRewards(turns, gold, task.answer, { method: 'hungarian', unmatchedPenalty: 0 }).turnRewards,
    );
    managerRewards.ftrl.push(
      ftrlReward(
        texts.map((text, i) => ({ text, calls: outputs[i] })),
        task.unsolvedSet,
        task.answer,
      ).turnRewards,
    );
    rewardCases.push({ kind: 'ftrl', turnTexts: texts, observations, groundTruth, options: {} });
    expectedRewards.push(
      ftrlReward(
        texts.map((text, i) => ({ text, calls: outputs[i] })),
        task.unsolvedSet,
        task.answer,
      ).turnRewards,
    );
    const allCalls = turns.flatMap((t) => t.calls);
    const pad = (x: number) => [...texts.slice(1).map(() => 0), x];
    for (const rule of ['matchtir', 'toolrl'] as const) {
      rewardCases.push({ kind: 'toolrl', turnTexts: texts, groundTruth, options: { toolrl_rule: rule } });
      expectedRewards.push(pad(toolrlReward(texts, allCalls, gold, rule).reward));
    }
    rewardCases.push({ kind: 'outcome_f1', turnTexts: texts, groundTruth, options: {} });
    expectedRewards.push(pad(answerF1(turns.find((t) => t.answer !== undefined)?.answer ?? '', task.answer)));
  }

  const managerTruth = { answer: task.answer, gold_calls: gold, unsolved_set: task.unsolvedSet };
  const managerCases = (['matchtir', 'ftrl'] as const).map((kind) => ({
    responses: managerResponses,
    groundTruth: managerTruth,
    options: { reward: kind, matching: 'hungarian', unmatched_penalty: 0 },
  }));
  // Expected tensors: r_t at the code-point index of turn t's last character, 0 elsewhere.
  const managerWidth = Math.max(...managerResponses.map((p) => [...p.join('')].length)) + 5;
  const expectedManager = (['matchtir', 'ftrl'] as const).map((kind) =>
    managerResponses.map((pieces, r) => {
      const row = new Array<number>(managerWidth).fill(0);
      let at = 0;
      pieces.forEach((piece, k) => {
        at += [...piece].length;
        if (k % 2 === 0) row[at - 1] += managerRewards[kind][r][k / 2];
      });
      return row;
    }),
  );

  // ---- advantages: turn rewards laid out as VeRL's tensors (turns = runs of mask 1, r_t on a run's last token)
  const rnd = numbers('adv');
  const groups: number[][][] = [
    [[0.5, 0, 1], [1], [0.2, 0.3], [0, 0, 0, 0.7]],
    [[0.25]],
    [
      [1, 1],
      [1, 1],
      [0, 0.5],
    ],
  ];
  const width = 40;
  const advantageCases: object[] = [];
  const expectedAdvantages: number[][][] = [];
  const estimators: [string, (g: number[][], gamma: number) => number[][]][] = [
    ['pact_matchtir_sum', (g, gamma) => turnAdvantages(g, { gamma, combine: 'sum' })],
    ['pact_matchtir_mean', (g, gamma) => turnAdvantages(g, { gamma, combine: 'mean' })],
    ['pact_turn_grpo', (g) => ADVANTAGE_ESTIMATORS.get('turn-grpo')(g)],
    ['pact_grpo', (g) => ADVANTAGE_ESTIMATORS.get('grpo')(g)],
    ['pact_drgrpo', (g) => ADVANTAGE_ESTIMATORS.get('drgrpo')(g)],
  ];
  // rows interleave the groups, as VeRL's batch may
  const rows = groups.flatMap((g, gi) => g.map((r, k) => ({ gi, k, r }))).sort((a, b) => a.k - b.k || a.gi - b.gi);
  const layouts = rows.map(({ r }) => {
    const mask = new Array<number>(width).fill(0);
    const tokenRewards = new Array<number>(width).fill(0);
    const runs: [number, number][] = [];
    let pos = 0;
    r.forEach((value, t) => {
      const len = 1 + Math.floor(rnd(0, 4));
      runs.push([pos, pos + len]);
      for (let n = pos; n < pos + len; n++) mask[n] = 1;
      tokenRewards[pos + len - 1] = value;
      pos += len + (t < r.length - 1 ? 1 + Math.floor(rnd(0, 3)) : 0);
    });
    return { mask, tokenRewards, runs };
  });
  for (const [name, fn] of estimators) {
    const gamma = 0.9;
    const perGroup = groups.map((g) => fn(g, gamma));
    advantageCases.push({
      estimator: name,
      gamma,
      tokenRewards: layouts.map((l) => l.tokenRewards),
      responseMask: layouts.map((l) => l.mask),
      index: rows.map((x) => `uid${x.gi}`),
    });
    expectedAdvantages.push(
      rows.map(({ gi, k }, i) => {
        const out = new Array<number>(width).fill(0);
        layouts[i].runs.forEach(([a, b], t) => {
          for (let n = a; n < b; n++) out[n] = perGroup[gi][k][t];
        });
        return out;
      }),
    );
  }

  // ---- the clipped surrogate, its aggregation, k3
  const rl = numbers('loss');
  const B = 4;
  const T = 9;
  const mat = (f: () => number) => Array.from({ length: B }, () => Array.from({ length: T }, f));
  const logp = mat(() => rl(-3, -0.1));
  const oldLogp = logp.map((row) => row.map((x) => x + rl(-0.5, 0.5)));
  const adv = mat(() => rl(-2, 2));
  const mask = mat(() => (rl(0, 1) < 0.25 ? 0 : 1));
  mask[3] = mask[3].map(() => 0); // a fully masked row
  const policyLossCases: object[] = [];
  const expectedPolicy: { loss: number; clipfrac: number }[] = [];
  for (const mode of [
    'token-mean',
    'seq-mean-token-mean',
    'seq-mean-token-sum',
    'seq-mean-token-sum-norm',
  ] as AggregationMode[]) {
    for (const [clipLow, clipHigh] of [
      [0.2, 0.2],
      [0.1, 0.28],
    ]) {
      policyLossCases.push({ mode, clipLow, clipHigh, logp, oldLogp, advantages: adv, mask });
      const opts = { clipLow, clipHigh };
      expectedPolicy.push({
        loss: aggregateLoss(clippedSurrogateMatrix(logp, oldLogp, adv, opts), mask, mode),
        clipfrac: clipFraction(logp, oldLogp, adv, mask, opts),
      });
    }
  }
  const klLogp = [[-1, -2, -0.5, -30, -0.01]];
  const klRef = [[-1.2, -0.3, -0.5, -0.1, -28]];
  const expectedKl = klLogp.map((row, i) => row.map((p, t) => klK3(p, klRef[i][t])));

  // ---- PACT's per-prompt objective and the mini-batch mean
  const ob = numbers('objective');
  const rows2 = (k: number, n: number, lo: number, hi: number) =>
    Array.from({ length: k }, () => Array.from({ length: n }, () => ob(lo, hi)));
  const maskRows = (k: number, n: number) =>
    Array.from({ length: k }, () => Array.from({ length: n }, () => (ob(0, 1) < 0.3 ? 0 : 1)));
  const rlPart = (k: number, n: number, withRef: boolean) => {
    const lp = rows2(k, n, -2, -0.2);
    return {
      log_prob: lp,
      old_log_prob: lp.map((r) => r.map((x) => x + ob(-0.3, 0.3))),
      advantages: rows2(k, n, -1.5, 1.5),
      mask: maskRows(k, n),
      ...(withRef ? { ref_log_prob: lp.map((r) => r.map((x) => x + ob(-0.4, 0.4))) } : {}),
    };
  };
  const sftPart = (n: number, lambda: number) => ({
    log_prob: [rows2(1, n, -4, -0.1)[0]],
    mask: [Array.from({ length: n }, () => (ob(0, 1) < 0.4 ? 0 : ob(0, 1) < 0.5 ? lambda : 1))],
  });
  const klPart = (k: number, n: number) => {
    const lp = rows2(k, n, -2, -0.2);
    return { log_prob: lp, ref_log_prob: lp.map((r) => r.map((x) => x + ob(-0.4, 0.4))), mask: maskRows(k, n) };
  };
  const objConfig = {
    clip_ratio_low: 0.2,
    clip_ratio_high: 0.28,
    kl_coef: 0.05,
    loss_agg_mode: 'token-mean' as AggregationMode,
  };
  const prompts = [
    { rlWeight: 1, sftWeight: 0, rl: rlPart(3, 7, true) }, // L^x, KL on its rows
    { rlWeight: 1, sftWeight: 0.1, rl: rlPart(3, 11, false), kl: klPart(3, 6), sft: sftPart(13, 0.55) }, // L^h, klContext 'prompt'
    { rlWeight: 1, sftWeight: 0.1, rl: rlPart(3, 8, true), sft: sftPart(5, 0.3) }, // L^h, klContext 'trace'
  ];
  const expectedPromptLosses = prompts.map((p) => {
    let total = 0;
    const r = p.rl;
    let term = aggregateLoss(
      clippedSurrogateMatrix(r.log_prob, r.old_log_prob, r.advantages, { clipLow: 0.2, clipHigh: 0.28 }),
      r.mask,
      objConfig.loss_agg_mode,
    );
    if (!p.kl && r.ref_log_prob) {
      const k3 = r.log_prob.map((row, i) => row.map((x, t) => klK3(x, r.ref_log_prob![i][t])));
      term += objConfig.kl_coef * aggregateLoss(k3, r.mask, 'token-mean');
    }
    total += p.rlWeight * term;
    if (p.kl) {
      const k3 = p.kl.log_prob.map((row, i) => row.map((x, t) => klK3(x, p.kl!.ref_log_prob[i][t])));
      total += objConfig.kl_coef * p.rlWeight * aggregateLoss(k3, p.kl.mask, 'token-mean');
    }
    if (p.sft) {
      const s = componentSftLoss(p.sft.log_prob[0], p.sft.mask[0]);
      if (s) total += p.sftWeight * s.loss;
    }
    return total;
  });

  // ---- SFT rows and masks: the app's buildComponentSftRow against the exported trace, char tokens
  const prompt = {
    ids: charTokenizer.encode('<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n'),
    tags: [] as TokenTag[],
  };
  prompt.tags = prompt.ids.map(() => ({ kind: 'prompt' as const, turn: -1 }));
  const exportedTrace = JSON.stringify(exportExpertTrace(task));
  const sftCases: object[] = [];
  const expectedSft: { ids: number[]; mask: number[]; lambdaA: number; prefixLevel: number | null }[] = [];
  const horizon = 5;
  const designs = [
    { reasoningSchedule: 'segment', toolCallSchedule: 'scale', fullTokenAnneal: false, prefixReveal: 'remove' },
    { reasoningSchedule: 'segment', toolCallSchedule: 'scale', fullTokenAnneal: false, prefixReveal: 'mask' },
    { reasoningSchedule: 'token', toolCallSchedule: 'token', fullTokenAnneal: false, prefixReveal: 'remove' },
    { reasoningSchedule: 'fixed', toolCallSchedule: 'fixed', fullTokenAnneal: false, prefixReveal: 'remove' },
    { reasoningSchedule: 'segment', toolCallSchedule: 'scale', fullTokenAnneal: true, prefixReveal: 'remove' },
  ] as const;
  for (const d of designs) {
    const schedule = { ...d, toolCallScaleStart: 0.8, toolCallScaleEnd: 0.2, annealHorizon: horizon };
    for (let step = 1; step <= horizon + 1; step++) {
      const row = buildComponentSftRow(prompt, trace, charTokenizer, step, schedule);
      sftCases.push({ promptIds: prompt.ids, exportedTrace, step, schedule });
      expectedSft.push({
        ids: row.ids,
        mask: row.mask,
        lambdaA: row.lambdaA,
        prefixLevel: Number.isNaN(row.prefixLevel) ? null : row.prefixLevel,
      });
    }
  }
  const scheduleCases = [
    { start: 0.8, end: 0.2, horizon: 24, steps: Array.from({ length: 26 }, (_, i) => i) },
    { start: 1, end: 0, horizon: 7, steps: [1, 2, 3, 4, 5, 6, 7, 8] },
    { start: 0.8, end: 0.2, horizon: 1, steps: [0, 1, 2] },
  ];
  const expectedSchedules = scheduleCases.flatMap((c) =>
    c.steps.map((s) => ({
      lambdaA: toolCallScale(s, { start: c.start, end: c.end, horizon: c.horizon }),
      level: reasoningPrefixLevel(s, { horizon: c.horizon }),
    })),
  );

  // ---- gates, data order, routes
  const gateCases = [1, 42, 'run-7'].flatMap((seed) => [1, 2, 3, 17].map((step) => ({ seed, step, n: 8, q: 0.4 })));
  const expectedGates = gateCases.map((g) => sampleStepGates(g.seed, g.step, g.n, g.q));
  const orderCases = [0, 1, 2].map((epoch) => ({ seed: 3, n: 11, epoch }));
  const expectedOrders = orderCases.map((e) => permutation(e.n, createRng(e.seed).split(`data/epoch${e.epoch}`)));
  const routeCases: object[] = [];
  const expectedRoutes: object[] = [];
  for (const objective of ['Lh+SFT', 'Lh', 'Lx+SFT', 'Lx'] as const) {
    const config = resolveConfig({ seed: 9, pact: { objective, anchorProb: 0.5, betaSft: 0.1 } });
    const groups = [true, false, true, true, true, true].map(
      (hasTrace) =>
        ({
          prompt: { kind: 'tool-use', index: 0, task, trace: hasTrace ? trace : undefined },
          rollouts: [],
        }) as unknown as RolloutGroup,
    );
    const routes = PACT_RECIPE.routePrompts(groups, { config, step: 2 } as never);
    const gates = sampleStepGates(9, 3, groups.length, 0.5);
    groups.forEach((g, i) => {
      routeCases.push({
        gate: gates[i],
        hasTrace: g.prompt.kind === 'tool-use' && !!g.prompt.trace,
        objective,
        betaSft: 0.1,
      });
      expectedRoutes.push({
        rl: routes[i].rl,
        rl_weight: routes[i].rlWeight,
        sft_weight: routes[i].sftWeight,
        gate: routes[i].gate,
      });
    });
  }

  return {
    fixtures: {
      rewards: rewardCases,
      manager: managerCases,
      advantages: advantageCases,
      policyLoss: policyLossCases,
      kl: { logp: klLogp, refLogp: klRef },
      objective: { config: objConfig, prompts },
      sft: sftCases,
      schedules: scheduleCases,
      gates: gateCases,
      epochOrders: orderCases,
      routes: routeCases,
    },
    expected: {
      rewards: expectedRewards,
      manager: expectedManager,
      advantages: expectedAdvantages,
      policy: expectedPolicy,
      kl: expectedKl,
      promptLosses: expectedPromptLosses,
      minibatchLoss: expectedPromptLosses.reduce((s, x) => s + x, 0) / expectedPromptLosses.length,
      sft: expectedSft,
      schedules: expectedSchedules,
      gates: expectedGates,
      orders: expectedOrders,
      routes: expectedRoutes,
    },
  };
}

describe.skipIf(skipReason !== undefined)('VeRL export: Python glue in VeRL against the TypeScript core', () => {
  it('rewards, advantages, losses, objective, SFT rows, schedules, gates and routes agree', async () => {
    const { fixtures, expected } = await buildFixtures();
    const py = runPythonCheck(PY.python!, fixtures) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

    // rewards to 1e-6, turn by turn
    expect(py.rewards.length).toBe(expected.rewards.length);
    expected.rewards.forEach((row, i) => {
      expect(py.rewards[i].length, `reward case ${i}`).toBe(row.length);
      row.forEach((x, t) => expectClose(py.rewards[i][t], x));
    });
    // the fixtures exercise non-trivial values
    expect(expected.rewards.flat().some((x) => x > 0 && x < 1)).toBe(true);
    expect(expected.rewards.flat().some((x) => x < 0)).toBe(true);

    // the reward manager's __call__: each turn's reward on the last token of its turn, nothing elsewhere
    expect(py.manager.length).toBe(2);
    expected.manager.forEach((rows, c) =>
      rows.forEach((row, i) => {
        expect(py.manager[c][i].length, `manager ${c} row ${i}`).toBe(row.length);
        row.forEach((x, n) => expectClose(py.manager[c][i][n], x));
      }),
    );
    expect(expected.manager.flat(2).filter((x) => x !== 0).length).toBeGreaterThan(4);

    // advantages through VeRL's registry, token by token
    expected.advantages.forEach((rows, c) =>
      rows.forEach((row, i) => row.forEach((x, n) => expectClose(py.advantages[c][i][n], x))),
    );
    expect(expected.advantages[0].flat().some((x) => Math.abs(x) > 0.1)).toBe(true);

    // the pact loss through VeRL's registry and agg_loss
    expected.policy.forEach((e, i) => {
      expectClose(py.policyLoss[i].loss, e.loss);
      expectClose(py.policyLoss[i].clipfrac, e.clipfrac);
    });
    expected.kl.forEach((row, i) => row.forEach((x, t) => expectClose(py.klK3[i][t], x)));

    // PACT's per-prompt objective and the mini-batch mean
    expected.promptLosses.forEach((x, i) => expectClose(py.promptLosses[i], x));
    expectClose(py.minibatchLoss, expected.minibatchLoss);

    // SFT rows and masks exactly; schedules exactly
    expected.sft.forEach((e, i) => {
      expect(py.sft[i].ids, `sft row ${i}`).toEqual(e.ids);
      expect(py.sft[i].mask, `sft mask ${i}`).toEqual(e.mask);
      expect(py.sft[i].lambdaA).toBe(e.lambdaA);
      expect(py.sft[i].prefixLevel).toBe(e.prefixLevel);
    });
    expect(expected.sft.some((e) => e.mask.some((m) => m > 0 && m < 1))).toBe(true);
    expect(py.schedules).toEqual(expected.schedules);

    // gates, data order and routes exactly
    expect(py.gates).toEqual(expected.gates);
    expect(py.epochOrders).toEqual(expected.orders);
    expect(py.routes).toEqual(expected.routes);
  }, 120_000);
});
