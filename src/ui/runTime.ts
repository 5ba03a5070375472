/**
 * How long a run takes: before it starts, scaled from a run measured earlier (one saved in
 * this browser, or the recorded demo run) by the rollouts per step; while it trains, from its
 * own measured step times; and the in-step progress (StepProgress) in words.
 */
import { computeMean } from '../core/stats';
import { getRecipe, hasRecipe } from '../recipes/allRecipes';
import type { RolloutEnvKind, StepProgress } from '../recipes/types';
import type { RunPhase } from '../../workers/protocol';

/** What a run's cost scales with. */
export interface RunShape {
  /** Model preset (qwen3-nano, …): timings of another preset do not transfer. */
  preset: string;
  /** batchPrompts × rolloutsPerPrompt. */
  rolloutsPerStep: number;
  /** maxTurns × maxResponseTokens: the most a rollout can generate. */
  tokenCap: number;
  /**
   * What its rollouts do (the recipe's environment): a search episode (queries, a repository's
   * results as observations) and a tool-use episode differ too much in length for one to time
   * the other.
   */
  env: RolloutEnvKind;
}

/** A measured run: its shape, backend, seconds per step and generated tokens per rollout. */
export interface StepTiming extends RunShape {
  backend: string;
  secondsPerStep: number;
  /** Mean policy-generated tokens of a rollout (completions/mean_length). */
  tokensPerRollout: number;
  /** Where it was measured, in words ("your run “x” in this browser", "the recorded demo run"). */
  source: string;
}

export interface RunTimeEstimate {
  seconds: number;
  secondsPerStep: number;
  timing: StepTiming;
  /** True when the timing was measured on another backend than this device's. */
  isOtherBackend: boolean;
  /** True when this shape caps rollouts below the measured mean length: the estimate is then an upper bound. */
  isUpperBound: boolean;
}

/** Shape of a resolved config (its plain-object form, as stored with a run). */
export function shapeOfConfig(config: Record<string, unknown>): RunShape | null {
  const model = config.model as { preset?: unknown } | undefined;
  const num = (k: string) => (typeof config[k] === 'number' ? (config[k] as number) : Number.NaN);
  const recipe = typeof config.recipe === 'string' ? config.recipe : '';
  const shape = {
    preset: typeof model?.preset === 'string' ? model.preset : '',
    rolloutsPerStep: num('batchPrompts') * num('rolloutsPerPrompt'),
    tokenCap: num('maxTurns') * num('maxResponseTokens'),
    env: hasRecipe(recipe) ? getRecipe(recipe).env : ('tool-use' as RolloutEnvKind),
  };
  return shape.preset !== '' && shape.rolloutsPerStep > 0 && shape.tokenCap > 0 ? shape : null;
}

/** A measured timing from a run's config and metric rows ('seconds', 'completions/mean_length'). */
export function measureTiming(
  config: Record<string, unknown>,
  rows: readonly { values: Record<string, number> }[],
  backend: string,
  source: string,
): StepTiming | null {
  const shape = shapeOfConfig(config);
  const mean = (k: string) => {
    const xs = rows.map((r) => r.values[k]).filter((x) => Number.isFinite(x) && x > 0);
    return xs.length > 0 ? computeMean(xs) : null;
  };
  const seconds = mean('seconds');
  const tokens = mean('completions/mean_length');
  if (!shape || seconds === null || tokens === null) return null;
  return { ...shape, backend, secondsPerStep: seconds, tokensPerRollout: tokens, source };
}

/**
 * `steps` steps of `shape` on `backend`, from the best matching timing: same preset and kind of
 * rollout (env) required, same backend preferred, then the first given (callers list this browser's runs first).
 * Seconds per step scale with the rollouts per step. Not with the tokens a rollout may write:
 * a step's time goes mostly to rows of prompt plus rollout (reading π_old and π_ref, the
 * update), so a lower token cap saves less than its share; the estimate is then called an
 * upper bound. Held-out evaluations are not counted.
 */
export function estimateRunTime(
  shape: RunShape,
  steps: number,
  backend: string,
  timings: readonly StepTiming[],
): RunTimeEstimate | null {
  const usable = timings.filter(
    (t) => t.preset === shape.preset && t.env === shape.env && t.secondsPerStep > 0 && t.tokensPerRollout > 0,
  );
  const timing = usable.find((t) => t.backend === backend) ?? usable[0];
  if (!timing) return null;
  const secondsPerStep = timing.secondsPerStep * (shape.rolloutsPerStep / timing.rolloutsPerStep);
  return {
    seconds: secondsPerStep * steps,
    secondsPerStep,
    timing,
    isOtherBackend: timing.backend !== backend,
    isUpperBound: shape.tokenCap < timing.tokensPerRollout,
  };
}

/**
 * Seconds left in a run that is training: the mean of its last (up to 5) measured steps times
 * the steps not done, less the time the current step has already run (never below a tenth of
 * a step while one is under way). Null before any step was measured.
 */
export function estimateSecondsLeft(a: {
  completedSteps: number;
  totalSteps: number;
  stepSeconds: readonly number[];
  elapsedInStepMs: number;
}): number | null {
  const recent = a.stepSeconds.filter((x) => Number.isFinite(x) && x > 0).slice(-5);
  if (recent.length === 0) return null;
  const perStep = recent.reduce((x, y) => x + y, 0) / recent.length;
  const remaining = Math.max(0, a.totalSteps - a.completedSteps);
  if (remaining === 0) return 0;
  const current = Math.max(perStep - a.elapsedInStepMs / 1000, perStep * 0.1);
  return current + perStep * (remaining - 1);
}

/** The backends in words. */
export const BACKEND_WORDS: Readonly<Record<string, string>> = {
  webgpu: 'WebGPU',
  wasm: 'WebAssembly',
  cpu: 'plain JavaScript',
};

/**
 * The estimate in one sentence, with what it rests on: "about 1 h 10 min for 24 steps (about
 * 3 min a step, scaled from the recorded demo run; evaluations add to it)".
 */
export function describeRunEstimate(est: RunTimeEstimate | null, steps: number): string {
  if (!est)
    return 'not known yet: no run of this model and kind of task was measured here; the first step of yours gives a measured figure';
  const measured = est.isOtherBackend
    ? `, measured with ${BACKEND_WORDS[est.timing.backend] ?? est.timing.backend}`
    : '';
  const bound = est.isUpperBound ? 'at most ' : '';
  return `${bound}about ${formatDuration(est.seconds)} for ${steps} step${steps === 1 ? '' : 's'} (${bound}about ${formatDuration(est.secondsPerStep)} a step, scaled from ${est.timing.source}${measured}; held-out evaluations add to it)`;
}

/** 42 → "42 s", 150 → "3 min", 4000 → "1 h 7 min". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '—';
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

const PHASE_WORDS: Readonly<Record<StepProgress['phase'], string>> = {
  rollouts: 'rollouts',
  logprobs: 'log-probs (π_old, π_ref)',
  update: 'policy update',
  eval: 'held-out evaluation',
};

/**
 * "rollouts: 5 of 8 running, 3 finished · turn 2 · 412 tokens generated". Rollouts advance
 * together, one batched turn at a time, so most finish in the same turn: the line says how
 * many are still running rather than a finished count that sits at 0 until the last turn.
 */
export function describeStepProgress(p: StepProgress): string {
  const isEpisodes = p.phase === 'rollouts' || p.phase === 'eval';
  const head =
    isEpisodes && p.done < p.total
      ? `${PHASE_WORDS[p.phase]}: ${p.total - p.done} of ${p.total} running, ${p.done} finished`
      : isEpisodes
        ? `${PHASE_WORDS[p.phase]}: all ${p.total} finished`
        : `${PHASE_WORDS[p.phase]} ${p.done} of ${p.total}`;
  const parts = [head];
  if (p.turn !== undefined) parts.push(`turn ${p.turn}`);
  if (p.tokens !== undefined) parts.push(`${p.tokens.toLocaleString('en-US')} tokens generated`);
  return parts.join(' · ');
}

/**
 * The line for the worker's last run phase where no in-step progress is shown, `done` steps
 * finished: rollouts and the update belong to the step under way (done + 1); a held-out
 * evaluation and a checkpoint come after step `done` (an evaluation at 0: of the starting policy).
 */
export function describeRunPhase(done: number, phase: RunPhase): string {
  if (phase === 'checkpoint') return `Step ${done}: saving its checkpoint`;
  if (phase === 'eval')
    return done === 0 ? 'Step 0: held-out evaluation of the starting policy' : `Step ${done}: held-out evaluation`;
  return `Step ${done + 1}: ${phase}`;
}
