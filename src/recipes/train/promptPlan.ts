/**
 * Algorithm 1 lines 5–17 of PACT (App. E) as data: per prompt, the route the recipe chose
 * (PACT's gate z_i ~ Bernoulli(q): L^x, or L^h under c^h = [x; h*] plus β_SFT·L_SFT(i; s))
 * and the token rows its loss terms read, as plain arrays. RL rows carry the rollouts'
 * advantages broadcast to their policy tokens (App. B) and the behaviour log-probs as
 * π_old under x; L^h rows are rebuilt under c^h and their π_old(c^h) is left for
 * logprobReads.ts to read. Columns: position n−1 holds token n.
 */
import { POLICY_KINDS, type TokenTag } from '../../core/types';
import { toAlgorithmStep } from '../../core/schedules';
import type { TextTokenizer } from '../../model/tokenizer/types';
import type { TrainConfig } from '../config';
import {
  buildComponentSftRow,
  buildFullSftRow,
  buildPrivilegedContext,
  buildTraceConditionedRow,
  type SftRow,
} from './privilegedContext';
import type { GroupScore, PromptRoute, Recipe, RecipeContext, RolloutGroup } from '../types';
import type { PromptEncoder } from './promptEncoder';

/** One prompt's training rows, as plain arrays (columns: position n−1 holds token n). */
export interface PromptPlan {
  route: PromptRoute;
  rl?: {
    level: 'token' | 'sequence';
    ids: number[][]; // [K][N_k]
    mask: number[][]; // [K][N_k − 1] policy tokens of the response
    advantages: number[][]; // [K][N_k − 1]
    oldLogprobs: number[][]; // [K][N_k − 1]
    refLogprobs?: number[][]; // [K][N_k − 1]
    /** L^h rows only: the behaviour log-probs under x, aligned with this row's columns (trace_logprob_gap). */
    promptOnlyLogprobs?: number[][]; // [K][N_k − 1]
    /** L^h rows only: the prompt-only rollouts (x; τ) and where row column j reads rollout column j + offset. */
    promptOnlyRows?: { ids: number[]; offset: number }[]; // [K]
    /** L^h rows only, when klCoef > 0: π_ref's log-probs under x, aligned like promptOnlyLogprobs (kl_prompt_only). */
    promptOnlyRefLogprobs?: number[][]; // [K][N_k − 1]
  };
  /** L^h prompts with pact.klContext 'prompt' and klCoef > 0: the KL penalty's rows, the rollouts as sampled. */
  kl?: {
    ids: number[][]; // [K][M_k]
    mask: number[][]; // [K][M_k − 1] policy tokens of the response
    refLogprobs?: number[][]; // [K][M_k − 1] π_ref under x
  };
  sft?: { ids: number[]; mask: number[] }; // mask [N − 1]
}

/** What planning reads besides the groups, scores and routes. */
export interface PlanInputs {
  config: TrainConfig;
  tokenizer: TextTokenizer;
  encoder: PromptEncoder;
  /** The recipe's ratio level (Recipe.ratioLevel; 'token' when it gives none). */
  ratioLevel: 'token' | 'sequence';
  /** The training step s (0-based) whose rows these are. */
  step: number;
}

/** The plans of a step, with λa(s) and the prefix level of each component SFT row built. */
export interface StepPlans {
  plans: PromptPlan[];
  lambdaA: number[];
  prefixLevel: number[];
}

/** Algorithm 1 lines 6–7: the recipe's route per prompt (PACT: the gate z_i), one per group. */
export function routePrompts(recipe: Recipe, groups: RolloutGroup[], ctx: RecipeContext): PromptRoute[] {
  const routes = recipe.routePrompts(groups, ctx);
  if (routes.length !== groups.length) {
    const counts = `${routes.length} routes for ${groups.length} prompts`;
    throw new Error(`recipe "${recipe.name}": routePrompts returned ${counts}`);
  }
  return routes;
}

/**
 * A_{k,n} for every token of rollout k: the score's per-token advantages when given, else
 * turn t's advantage broadcast to the policy-generated tokens of turn t (PACT App. B; the
 * prompt and observations get 0).
 */
export function broadcastTokenAdvantages(score: GroupScore, k: number, tags: readonly TokenTag[]): number[] {
  const given = score.tokenAdvantages?.[k];
  if (given) {
    if (given.length !== tags.length) {
      throw new Error(`scoreGroup: tokenAdvantages[${k}] has ${given.length} values for ${tags.length} tokens`);
    }
    return given;
  }
  const perTurn = score.turnAdvantages[k] ?? [];
  return tags.map((t) => (POLICY_KINDS.has(t.kind) && t.turn >= 0 && t.turn < perTurn.length ? perTurn[t.turn] : 0));
}

/** Builds the rows of every prompt (everything but the π_old(c^h) / π_ref log-probs). */
export async function planPrompts(
  groups: RolloutGroup[],
  scores: (GroupScore | null)[],
  routes: PromptRoute[],
  inputs: PlanInputs,
): Promise<StepPlans> {
  const out: StepPlans = { plans: [], lambdaA: [], prefixLevel: [] };
  for (const [i, group] of groups.entries()) {
    const route = routes[i];
    const plan: PromptPlan = { route };
    const hasRl = route.rl !== null && route.rlWeight > 0 && group.rollouts.length > 0;
    if (hasRl) planRlRows(plan, i, group, scores[i], inputs);
    if (route.sftWeight > 0) await planSftRow(plan, group, inputs, out);
    out.plans.push(plan);
  }
  return out;
}

function traceOf(group: RolloutGroup) {
  return group.prompt.kind === 'tool-use' ? group.prompt.trace : undefined;
}

/**
 * Algorithm 1 lines 8 and 11–12: the K rollouts as rows of L^x (as sampled, under x) or of
 * L^h (rebuilt under c^h = [x; h*]); under c^h with klContext 'prompt' and klCoef > 0 the
 * rollouts as sampled are kept as the KL penalty's rows as well.
 */
function planRlRows(
  plan: PromptPlan,
  i: number,
  group: RolloutGroup,
  score: GroupScore | null,
  inputs: PlanInputs,
): void {
  const { config: c, tokenizer, encoder } = inputs;
  const route = plan.route;
  const trace = traceOf(group);
  if (!score) throw new Error(`Trainer: prompt ${i} is routed to RL but was not scored`);
  const prompt = encoder.encodePrompt(group);
  const context =
    route.rl === 'h' && trace ? buildPrivilegedContext(prompt, trace, tokenizer, c.pact.traceComponents) : null;
  if (route.rl === 'h' && !context) throw new Error(`Trainer: prompt ${i} is routed to L^h but has no expert trace`);
  const rl: NonNullable<PromptPlan['rl']> = {
    level: inputs.ratioLevel,
    ids: [],
    mask: [],
    advantages: [],
    oldLogprobs: [],
  };
  group.rollouts.forEach((rollout, k) => {
    const adv = broadcastTokenAdvantages(score, k, rollout.tags);
    let ids = rollout.ids;
    let tags = rollout.tags;
    let start = rollout.promptLength;
    if (context) {
      const row = buildTraceConditionedRow(rollout, context);
      ids = row.ids;
      tags = row.tags;
      start = row.responseStart;
    }
    const offset = rollout.promptLength - start; // token n of this row is rollout token n + offset
    const mask = tags.map((t, n) => (n >= start && POLICY_KINDS.has(t.kind) ? 1 : 0));
    rl.ids.push(ids);
    rl.mask.push(shiftToColumns(mask));
    rl.advantages.push(shiftToColumns(ids.map((_, n) => (n >= start ? adv[n + offset] : 0))));
    const behaviour = shiftToColumns(ids.map((_, n) => (n >= start ? rollout.behaviourLogprobs[n + offset] : 0)));
    if (context) {
      (rl.promptOnlyLogprobs ??= []).push(behaviour);
      (rl.promptOnlyRows ??= []).push({ ids: rollout.ids, offset });
      if (c.klCoef > 0 && c.pact.klContext === 'prompt') {
        plan.kl ??= { ids: [], mask: [] };
        plan.kl.ids.push(rollout.ids);
        const isResponse = (t: TokenTag, n: number) => n >= rollout.promptLength && POLICY_KINDS.has(t.kind);
        const responseMask = rollout.tags.map((t, n) => (isResponse(t, n) ? 1 : 0));
        plan.kl.mask.push(shiftToColumns(responseMask));
      }
    }
    rl.oldLogprobs.push(context ? behaviour.map(() => 0) : behaviour); // L^h: read under c^h by logprobReads.ts
  });
  plan.rl = rl;
}

/**
 * Algorithm 1 lines 13–14: the SFT row, component-masked with the step's schedules
 * (m_{i,n}(s)), or the whole expert episode for full-SFT routes; none when its mask is empty.
 */
async function planSftRow(plan: PromptPlan, group: RolloutGroup, inputs: PlanInputs, out: StepPlans): Promise<void> {
  const { config: c, tokenizer, encoder } = inputs;
  const trace = traceOf(group);
  let row: SftRow | null = null;
  if (plan.route.sftMask === 'component' && trace) {
    const prompt = encoder.encodePrompt(group);
    const built = buildComponentSftRow(prompt, trace, tokenizer, toAlgorithmStep(inputs.step), c.pact);
    out.lambdaA.push(built.lambdaA);
    out.prefixLevel.push(built.prefixLevel);
    row = built;
  } else if (plan.route.sftMask === 'full') {
    const episode = await encoder.encodeExpertEpisode(group.prompt);
    row = episode ? buildFullSftRow(episode) : null;
  }
  const mask = row ? shiftToColumns(row.mask) : [];
  if (row && mask.some((m) => m > 0)) plan.sft = { ids: row.ids, mask };
}

function shiftToColumns(values: readonly number[]): number[] {
  return values.slice(1);
}
