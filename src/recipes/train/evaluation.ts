/**
 * Held-out evaluation: per test prompt, one greedy rollout (config.evalSamples 0, the
 * default) or evalSamples rollouts at the config's temperature and topP, from a stream
 * seeded by the step; each `eval/<key>` is the mean over all of them (the recipe's
 * evaluateRollout, else toolUseScoring's). Generation batches hold about as many rollouts
 * as a training step's (batchPrompts × rolloutsPerPrompt).
 */
import type { Rng } from '../../core/rng';
import type { TrainConfig } from '../config';
import { evaluateToolUseRollout } from '../methods/toolUseScoring';
import type { EvalMetrics, PromptItem, Recipe, RolloutGroup } from '../types';
import type { CollectionRequest } from './rolloutCollection';

export interface EvaluationInputs {
  config: TrainConfig;
  recipe: Recipe;
  /** The first `nTasks` test prompts are evaluated. */
  prompts: PromptItem[];
  nTasks: number;
  /** Rollouts per prompt; 0 = one greedy rollout. */
  samples: number;
  /** Completed training steps (the metrics' `step`). */
  step: number;
  rng: Rng;
  collect: (request: CollectionRequest) => Promise<RolloutGroup[]>;
  /** Receives each generation batch's groups as they complete. */
  onGroups: (groups: RolloutGroup[]) => void;
}

/** The eval/* metrics of `samples` rollouts on each of the first `nTasks` test prompts. */
export async function evaluateHeldOut(a: EvaluationInputs): Promise<EvalMetrics> {
  const n = a.nTasks;
  const prompts = a.prompts.slice(0, n);
  const K = Math.max(1, a.samples);
  const chunk = Math.max(1, Math.floor((a.config.batchPrompts * a.config.rolloutsPerPrompt) / K));
  const sums: Record<string, number> = {};
  for (let start = 0; start < prompts.length; start += chunk) {
    const batch = prompts.slice(start, start + chunk);
    const isGreedy = a.samples === 0;
    const groups = await a.collect({ prompts: batch, rng: a.rng, isGreedy, K, step: a.step, isEvaluation: true });
    for (const g of groups) {
      for (const r of g.rollouts) {
        const values = a.recipe.evaluateRollout
          ? a.recipe.evaluateRollout(r, g.prompt)
          : evaluateToolUseRollout(r, g.prompt);
        for (const [k, v] of Object.entries(values)) sums[k] = (sums[k] ?? 0) + v;
      }
    }
    a.onGroups(groups);
  }
  const metrics: EvalMetrics = {
    step: a.step,
    nTasks: n,
    nRollouts: n * K,
    'eval/solve_r': Number.NaN,
    'eval/solve_p': Number.NaN,
    'eval/solve_f1': Number.NaN,
    'eval/answer_correct': Number.NaN,
    'eval/reward': Number.NaN,
  };
  for (const [k, v] of Object.entries(sums)) metrics[`eval/${k}`] = v / (n * K);
  return metrics;
}
