/**
 * A table's rows paired by seed: for a row R and a control C of the same experiment (the
 * warm start evaluated without training, or the frozen warm start trained at lr 1e-12),
 * seed s gives d_s = R_s − C_s on the same held-out tasks (and, for the train reward, on the
 * same prompts: a run's prompts and sampling streams depend only on its seed and step). Each
 * pair reports the mean of d_s ± its standard error over the seeds both finished, n, and how
 * many seeds had d_s > 0. Also the train reward's mean over the run's steps, paired step by
 * step with the control inside each seed (pact compare's pooled difference, per seed), paired
 * only when both rows' rewards are the same function of a rollout (the recipes' `rewardName`),
 * and the train answer F1 of the rollouts, which every tool-use recipe with an answer-F1
 * reward part logs and so pairs across recipes whose rewards differ.
 */
import { computeMeanStd, readFinalValue } from './aggregate';
import { standardError } from './paired';
import '../recipes/allRecipes';
import type { TrainConfig } from '../recipes/config';
import { getRecipe } from '../recipes/registry';
import type { MeanStd, RunResult } from './types';

/** The derived metric: a run's train reward averaged over all its steps. */
export const MEAN_TRAIN_REWARD = 'reward/mean_over_steps';
/** The derived metric: the answer F1 of a run's train rollouts (logged `reward/answer_f1`) averaged over its steps. */
export const MEAN_TRAIN_ANSWER_F1 = 'reward/answer_f1/mean_over_steps';

/** The derived metric: the tool-selection F1 of a search run's train rollouts (logged `reward/f1`) averaged over its steps. */
export const MEAN_TRAIN_F1 = 'reward/f1/mean_over_steps';

/** Derived metric → the logged metric it averages over the steps both runs logged. */
const STEP_MEANS: Record<string, string> = {
  [MEAN_TRAIN_REWARD]: 'reward',
  [MEAN_TRAIN_ANSWER_F1]: 'reward/answer_f1',
  [MEAN_TRAIN_F1]: 'reward/f1',
};

export interface SeedPairSpec {
  /** The row compared. */
  run: string;
  /** The row it is compared with. */
  control: string;
  /**
   * The row its held-out metrics are compared with instead, when the control has none: the
   * frozen control is never evaluated (its weights are the warm start's), so its held-out
   * scores are Vanilla's, the warm start evaluated on the same tasks.
   */
  heldOutControl?: string;
}

export interface SeedPairCell {
  diff: MeanStd;
  /** Seeds with d_s > 0. */
  positive: number;
  /** Each paired seed's d_s = row_s − control_s, in the runs' order (what diff and positive summarise). */
  values: { seed: number; d: number }[];
}

export interface SeedPairRow extends SeedPairSpec {
  /** Metric → the paired difference over seeds. */
  cells: Record<string, SeedPairCell>;
  /** Why a cell is empty though both rows logged it (the train rewards are different functions). */
  notes?: string[];
}

export interface SeedPairOptions {
  /**
   * The name of the reward function a run's config trains on (the recipe's `rewardName`);
   * two runs' train rewards pair only when the names agree. Without it they always pair.
   */
  rewardName?: (config: TrainConfig) => string;
}

/** The reward function a run trained on: its recipe's `rewardName` (the default of buildTablePairs). */
export function nameRunReward(config: TrainConfig): string {
  return getRecipe(config.recipe).rewardName(config);
}

/**
 * The row `key` is paired with: the held-out control (when there is one) for a held-out
 * metric (`eval/*`), the control for train metrics and the step means.
 */
export function pairedControl(pair: SeedPairSpec, key: string): string {
  const isHeldOut = key.startsWith('eval/') && STEP_MEANS[key] === undefined;
  return isHeldOut && pair.heldOutControl ? pair.heldOutControl : pair.control;
}

/** A run's mean of `key` over the steps where the control also logged it (NaN when none). */
function meanOverPairedSteps(run: RunResult, control: RunResult, key: string): number {
  const c = new Map<number, number>();
  for (const s of control.steps) {
    const v = s.values[key];
    if (typeof v === 'number' && Number.isFinite(v)) c.set(s.step, v);
  }
  const diffs: number[] = [];
  for (const s of run.steps) {
    const v = s.values[key];
    const cv = c.get(s.step);
    if (typeof v === 'number' && Number.isFinite(v) && cv !== undefined) diffs.push(v - cv);
  }
  return diffs.length === 0 ? Number.NaN : diffs.reduce((a, b) => a + b, 0) / diffs.length;
}

/**
 * The default pairs: every row against the control (a row named `frozen` if there is one,
 * else `vanilla`; with both, the held-out metrics against `vanilla`), and `pact` against
 * `matchtir` when both are rows.
 */
export function defaultSeedPairs(methods: readonly string[]): SeedPairSpec[] {
  const control = methods.includes('frozen') ? 'frozen' : methods.includes('vanilla') ? 'vanilla' : null;
  const pairs: SeedPairSpec[] = [];
  const heldOut = control === 'frozen' && methods.includes('vanilla') ? { heldOutControl: 'vanilla' } : {};
  if (control)
    for (const m of methods) if (m !== control && m !== 'vanilla') pairs.push({ run: m, control, ...heldOut });
  if (methods.includes('pact') && methods.includes('matchtir')) pairs.push({ run: 'pact', control: 'matchtir' });
  return pairs;
}

/**
 * The paired rows. `metrics` are read at each run's last logged value (held-out metrics at the
 * final evaluation); MEAN_TRAIN_REWARD pairs the train reward step by step within a seed.
 */
export function buildSeedPairs(
  runs: readonly RunResult[],
  metrics: readonly string[],
  pairs: readonly SeedPairSpec[],
  options: SeedPairOptions = {},
): SeedPairRow[] {
  const finished = (name: string) =>
    new Map(runs.filter((r) => r.name === name && r.status === 'finished').map((r) => [r.seed, r]));
  return pairs.map((pair) => {
    const mine = finished(pair.run);
    const cells: Record<string, SeedPairCell> = {};
    const notes = new Set<string>();
    for (const key of metrics) {
      const values: SeedPairCell['values'] = [];
      const stepKey = STEP_MEANS[key];
      const controls = finished(pairedControl(pair, key));
      for (const [seed, r] of mine) {
        const c = controls.get(seed);
        if (!c) continue;
        if (key === MEAN_TRAIN_REWARD && options.rewardName) {
          const [a, b] = [options.rewardName(r.config), options.rewardName(c.config)];
          if (a !== b) {
            notes.add(
              `${pair.run} − ${pair.control}: train rewards not paired (${pair.run}: ${a}; ${pair.control}: ${b})`,
            );
            continue;
          }
        }
        const d =
          stepKey !== undefined ? meanOverPairedSteps(r, c, stepKey) : readFinalValue(r, key) - readFinalValue(c, key);
        if (Number.isFinite(d)) values.push({ seed, d });
      }
      const diffs = values.map((v) => v.d);
      cells[key] = { diff: computeMeanStd(diffs), positive: diffs.filter((d) => d > 0).length, values };
    }
    return { ...pair, cells, ...(notes.size > 0 ? { notes: [...notes] } : {}) };
  });
}

/** `+0.031 ± 0.012 (4/5)`: mean difference ± standard error over seeds, seeds above / n; `–` for none. */
export function formatSeedPairCell(cell: Pick<SeedPairCell, 'diff' | 'positive'>, digits = 3): string {
  const { diff, positive } = cell;
  if (diff.n === 0) return '–';
  const mean = `${diff.mean > 0 ? '+' : ''}${diff.mean.toFixed(digits)}`;
  const se = standardError(diff);
  return `${Number.isFinite(se) ? `${mean} ± ${se.toFixed(digits)}` : mean} (${positive}/${diff.n})`;
}
