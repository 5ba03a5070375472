/**
 * A training step's metrics, from its groups, scores, plans and the per-prompt stats the
 * update read back (policyUpdate.ts); NaN where a term was absent. Besides the losses:
 * `trace_logprob_gap` and `kl_prompt_only`, diagnostics over the plans' π_old / π_ref
 * log-probs, and the λa(s) / prefix level of PACT's schedules. Metrics are read back once
 * per step; timings are wall clock (a profile, not a benchmark).
 */
import { klK3 } from '../../core/losses';
import { computeMean, computeSampleStd } from '../../core/stats';
import { MAX_PREFIX_LEVEL, REASONING_SCHEDULES, TOOL_CALL_SCHEDULES, toAlgorithmStep } from '../../core/schedules';
import type { TrainConfig } from '../config';
import type { GroupScore, Recipe, RolloutGroup, StepMetrics } from '../types';
import type { PolicyUpdate } from './policyUpdate';
import type { PromptPlan } from './promptPlan';

/**
 * `trace_logprob_gap`: over the policy tokens of every L^h row, the mean of
 * log π_old(τ_n | c^h, τ_<n) − log π_old(τ_n | x, τ_<n), in nats per token: the
 * denominator of PACT Eq. (trace-conditioned-ratio) against the prompt-only one of Eq.
 * (prompt-only-rl-loss), both with the pre-update weights (the behaviour log-probs are
 * temperature-1 ones of the same weights). Positive: reading h* makes the policy's own
 * rollout more likely; strongly negative: the rollout is foreign to c^h, and L^h's
 * gradients act on tokens the trace-conditioned policy finds unlikely. NaN without L^h rows.
 * Call after π_old(c^h) has been read into `oldLogprobs`.
 */
export function computeTraceLogprobGap(plans: readonly PromptPlan[]): number {
  return meanOverPolicyTokens(plans, (plan, rl) => {
    const promptOnly = rl.promptOnlyLogprobs;
    return plan.route.rl === 'h' && promptOnly ? (k, n) => rl.oldLogprobs[k][n] - promptOnly[k][n] : null;
  });
}

/**
 * `kl_prompt_only`: the k3 KL(π_old ‖ π_ref) (core `klK3`, clamped as verl's low_var_kl)
 * averaged over the policy tokens of every RL row, all read under the prompt-only context
 * x: how far the pre-update policy has moved from the reference on its own rollouts, as
 * they were sampled. The per-step `kl` is the penalty's own reading, which PACT Eq.
 * (trace-conditioned-ratio) takes under c^h for L^h rows; this one is comparable across
 * routes and recipes. π_old under x is the behaviour log-probs (the same weights at
 * temperature 1). NaN when no row has π_ref (klCoef = 0) or there are no RL rows.
 */
export function computePromptOnlyKl(plans: readonly PromptPlan[]): number {
  return meanOverPolicyTokens(plans, (plan, rl) => {
    const isTraceRow = plan.route.rl === 'h';
    const old = isTraceRow ? rl.promptOnlyLogprobs : rl.oldLogprobs;
    const ref = isTraceRow ? rl.promptOnlyRefLogprobs : rl.refLogprobs;
    return old && ref ? (k, n) => klK3(old[k][n], ref[k][n]) : null;
  });
}

/**
 * Mean over the policy tokens (mask > 0) of the RL rows of the plans that `perPlan`
 * reads (it returns the value at row k, column n, or null to leave the plan out); NaN
 * when no token is read.
 */
function meanOverPolicyTokens(
  plans: readonly PromptPlan[],
  perPlan: (plan: PromptPlan, rl: NonNullable<PromptPlan['rl']>) => ((k: number, n: number) => number) | null,
): number {
  let sum = 0;
  let count = 0;
  for (const plan of plans) {
    if (!plan.rl) continue;
    const valueAt = perPlan(plan, plan.rl);
    if (!valueAt) continue;
    plan.rl.mask.forEach((row, k) =>
      row.forEach((m, n) => {
        if (m <= 0) return;
        sum += valueAt(k, n);
        count++;
      }),
    );
  }
  return count > 0 ? sum / count : Number.NaN;
}

/** Everything a step's metrics are computed from. */
export interface StepRecord extends PolicyUpdate {
  /** The step index s (0-based). */
  s: number;
  config: TrainConfig;
  recipe: Recipe;
  groups: RolloutGroup[];
  scores: (GroupScore | null)[];
  plans: PromptPlan[];
  lambdaA: number[];
  prefixLevel: number[];
  traceLogprobGap: number;
  klPromptOnly: number;
  lr: number;
  /** performance.now() when the step began. */
  started: number;
  /** Milliseconds per phase: rollouts + rewards, plans + π_old(c^h)/π_ref log-probs, PPO updates. */
  phases: { rollouts: number; plan: number; update: number };
}

/** The step's metrics (`step` is 1-based); `seconds` and `tokens/s` run to now. */
export function summarizeStep(a: StepRecord): StepMetrics {
  const c = a.config;
  const stat = (i: number, j: number) => a.values[i][j];
  const rewards = a.scores.flatMap((sc) => sc?.rewards ?? []);
  const scored = a.scores.filter((sc): sc is GroupScore => sc !== null);
  const generated = a.groups.flatMap((g) => g.rollouts.map((r) => r.generatedLength));
  const pick = (isIncluded: (p: PromptPlan) => boolean, j: number) =>
    computeMean(a.plans.flatMap((p, i) => (isIncluded(p) ? [stat(i, j)] : [])));
  let tokens = 0;
  let klSum = 0;
  let entSum = 0;
  let clipSum = 0;
  a.plans.forEach((p, i) => {
    if (!p.rl) return;
    klSum += stat(i, 2);
    entSum += stat(i, 3);
    clipSum += stat(i, 4);
    tokens += stat(i, 5);
  });
  const gates = a.plans.flatMap((p) => (p.route.gate === undefined ? [] : [p.route.gate]));
  const seconds = (performance.now() - a.started) / 1000;
  const schedule = describeSchedule(a.recipe, c, toAlgorithmStep(a.s));
  const metrics: StepMetrics = {
    step: a.s + 1,
    recipe: a.recipe.name,
    reward: computeMean(rewards),
    reward_std: computeStd(rewards),
    frac_reward_zero_std:
      scored.length === 0 ? Number.NaN : scored.filter((sc) => computeStd(sc.rewards) === 0).length / scored.length,
    'completions/mean_length': computeMean(generated),
    kl: c.klCoef > 0 && tokens > 0 ? klSum / tokens : Number.NaN,
    entropy: tokens > 0 ? entSum / tokens : Number.NaN,
    clip_ratio: tokens > 0 ? clipSum / tokens : Number.NaN,
    grad_norm: computeMean(a.gradNorms),
    loss: computeMean(a.losses),
    'loss/Lx': pick((p) => p.rl !== undefined && p.route.rl === 'x', 0),
    'loss/Lh': pick((p) => p.rl !== undefined && p.route.rl === 'h', 0),
    'loss/SFT': pick((p) => p.sft !== undefined, 1),
    lambda_a: a.lambdaA.length > 0 ? computeMean(a.lambdaA) : schedule.lambdaA,
    prefix_level: a.prefixLevel.length > 0 ? computeMean(a.prefixLevel) : schedule.prefixLevel,
    gate_fraction: gates.length === 0 ? Number.NaN : gates.filter((z) => z === 1).length / gates.length,
    trace_logprob_gap: a.traceLogprobGap,
    kl_prompt_only: a.klPromptOnly,
    lr: a.lr,
    'tokens/s': seconds > 0 ? generated.reduce((x, y) => x + y, 0) / seconds : 0,
    seconds,
    // Where the step's time went (wall clock; a profile, not a benchmark).
    'time/rollouts_s': a.phases.rollouts / 1000,
    'time/logprobs_s': a.phases.plan / 1000,
    'time/update_s': a.phases.update / 1000,
  };
  for (const sc of scored) {
    for (const [name, parts] of Object.entries(sc.rewardParts ?? {})) {
      const key = `reward/${name}`;
      const share = parts.reduce((x, y) => x + y, 0) / Math.max(1, rewards.length);
      metrics[key] = ((metrics[key] as number | undefined) ?? 0) + share;
    }
  }
  return metrics;
}

/** λa(s) and the prefix level of PACT's schedules at step s = 1…T (NaN for recipes without traces). */
function describeSchedule(recipe: Recipe, config: TrainConfig, step: number): { lambdaA: number; prefixLevel: number } {
  if (!recipe.needsTraces) return { lambdaA: Number.NaN, prefixLevel: Number.NaN };
  const p = config.pact;
  const o = {
    horizon: Math.max(1, p.annealHorizon),
    toolCallStart: p.toolCallScaleStart,
    toolCallEnd: p.toolCallScaleEnd,
  };
  const tc = TOOL_CALL_SCHEDULES.get(p.toolCallSchedule)(step, o);
  const re = REASONING_SCHEDULES.get(p.reasoningSchedule)(step, o);
  return {
    lambdaA: tc.kind === 'scale' ? tc.scale : tc.fraction,
    prefixLevel: re.kind === 'prefix-level' ? re.level : MAX_PREFIX_LEVEL * re.fraction,
  };
}

/** reward_std's convention: the sample std, 0 below two values. */
function computeStd(values: readonly number[]): number {
  return values.length < 2 ? 0 : computeSampleStd(values);
}
