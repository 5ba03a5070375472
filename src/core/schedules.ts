/**
 * SFT supervision schedules of PACT §4.3 and App. D (Table "SFT schedule designs").
 *
 * - `toolCallScale`: PACT Eq. (tool-call-annealing), λa(s) = start − (start − end)·min(s/S, 1)
 *   ("Scale A"; the paper anneals 0.8 → 0.2).
 * - `reasoningPrefixLevel`: segment-level annealing L4 → L3 → … → L0 over the horizon
 *   ("Seg A"). Simplification (the paper gives no step mapping): steps 1…S are cut into
 *   near-equal stages, one per level (step s in stage min(⌊5(s − 1)/(S − 1)⌋, 4)), so step
 *   1 is at L4 and step S at L0 (S = 1: L0); L_end holds after S.
 * - `tokenKeepFraction`: 1 − min(s/S, 1), the share of tokens kept by the token-count
 *   variants ("Token A", "Full Token A").
 * Steps are numbered s = 1…T as in PACT Algorithm 1, as the gates (gates.ts) number them
 * (`toAlgorithmStep`), so the last step s = S = T reaches λa_end; s = 0 is the start.
 * The registered schedules: docs/core.md.
 */
import { createRegistry } from './registry';

/** Prefix levels L0..L4 as numbers (traceTypes.ts names them `PrefixLevel`). */
export const MAX_PREFIX_LEVEL = 4;

/** Algorithm 1's s = 1…T of the training step with 0-based index `stepIndex` (the schedules and the gates read s). */
export function toAlgorithmStep(stepIndex: number): number {
  if (!Number.isInteger(stepIndex) || stepIndex < 0)
    throw new Error(`toAlgorithmStep: stepIndex must be an integer ≥ 0, got ${stepIndex}`);
  return stepIndex + 1;
}

function checkStepHorizon(step: number, horizon: number, where: string): void {
  if (!Number.isFinite(step) || step < 0) throw new Error(`${where}: step must be a finite number ≥ 0, got ${step}`);
  if (!Number.isFinite(horizon) || horizon <= 0)
    throw new Error(`${where}: horizon must be a finite number > 0, got ${horizon}`);
}

/** min(s/S, 1). */
export function computeProgress(step: number, horizon: number): number {
  checkStepHorizon(step, horizon, 'computeProgress');
  return Math.min(step / horizon, 1);
}

export interface ToolCallScaleOptions {
  /** λa^start. */
  start?: number;
  /** λa^end. */
  end?: number;
  /** S, the annealing horizon in steps. */
  horizon: number;
}

/** λa(s), PACT Eq. (tool-call-annealing). */
export function toolCallScale(step: number, { start = 0.8, end = 0.2, horizon }: ToolCallScaleOptions): number {
  checkStepHorizon(step, horizon, 'toolCallScale');
  return start - (start - end) * Math.min(step / horizon, 1);
}

export interface PrefixLevelOptions {
  horizon: number;
  startLevel?: number;
  endLevel?: number;
}

/** The active reasoning-prefix level at step s = 1…T, walking startLevel → endLevel in equal stages (s = 0: startLevel). */
export function reasoningPrefixLevel(
  step: number,
  { horizon, startLevel = MAX_PREFIX_LEVEL, endLevel = 0 }: PrefixLevelOptions,
): number {
  checkStepHorizon(step, horizon, 'reasoningPrefixLevel');
  for (const [name, level] of [
    ['startLevel', startLevel],
    ['endLevel', endLevel],
  ] as const) {
    if (!Number.isInteger(level) || level < 0 || level > MAX_PREFIX_LEVEL) {
      throw new Error(`reasoningPrefixLevel: ${name} must be an integer in 0..${MAX_PREFIX_LEVEL}, got ${level}`);
    }
  }
  if (endLevel > startLevel)
    throw new Error(`reasoningPrefixLevel: endLevel ${endLevel} is above startLevel ${startLevel}`);
  const nStages = startLevel - endLevel + 1;
  if (horizon <= 1) return step >= 1 ? endLevel : startLevel;
  const stage = Math.min(Math.max(0, Math.floor((nStages * (step - 1)) / (horizon - 1))), nStages - 1);
  return startLevel - stage;
}

/** Share of tokens the token-count variants keep at step s: 1 − min(s/S, 1). */
export function tokenKeepFraction(step: number, horizon: number): number {
  return 1 - computeProgress(step, horizon);
}

/** What reasoning tokens to supervise at a step. */
export type ReasoningSupervision =
  /** Chunks before prefixChunkCounts[turn][level] get weight 1 (segment-level). */
  | { kind: 'prefix-level'; level: number }
  /** The first floor(fraction·N) tokens of each turn's L4 safe prefix get weight 1 (token-count). */
  | { kind: 'token-fraction'; fraction: number };

/** What tool-call tokens to supervise at a step. */
export type ToolCallSupervision =
  /** Every token of every complete span gets weight `scale` (λa). */
  | { kind: 'scale'; scale: number }
  /** The first floor(fraction·N) tokens of each span get weight 1 (token-count). */
  | { kind: 'token-fraction'; fraction: number };

export interface SftScheduleOptions {
  horizon: number;
  /** λa^start, also the constant weight of the 'fixed' tool-call schedule. */
  toolCallStart?: number;
  toolCallEnd?: number;
}

/** The λa knobs a tool-call schedule reads (the mask panel draws a handle for each). */
export type ToolCallKnob = 'toolCallStart' | 'toolCallEnd';

/** A reasoning schedule: the supervision at a step, and the kind it always returns (its metadata). */
export type ReasoningSchedule = ((step: number, options: SftScheduleOptions) => ReasoningSupervision) & {
  readonly kind: ReasoningSupervision['kind'];
};
/** A tool-call schedule: the supervision at a step, its kind and the λa knobs it reads. */
export type ToolCallSchedule = ((step: number, options: SftScheduleOptions) => ToolCallSupervision) & {
  readonly kind: ToolCallSupervision['kind'];
  readonly reads: readonly ToolCallKnob[];
};

function defineReasoningSchedule(
  kind: ReasoningSupervision['kind'],
  at: (step: number, options: SftScheduleOptions) => ReasoningSupervision,
): ReasoningSchedule {
  return Object.assign(at, { kind });
}

function defineToolCallSchedule(
  kind: ToolCallSupervision['kind'],
  reads: readonly ToolCallKnob[],
  at: (step: number, options: SftScheduleOptions) => ToolCallSupervision,
): ToolCallSchedule {
  return Object.assign(at, { kind, reads });
}

export const REASONING_SCHEDULES = createRegistry<ReasoningSchedule>('reasoning schedule');
/** "Seg A": L4 → L0 over the horizon. */
REASONING_SCHEDULES.register(
  'segment',
  defineReasoningSchedule('prefix-level', (s, o) => ({
    kind: 'prefix-level',
    level: reasoningPrefixLevel(s, { horizon: o.horizon }),
  })),
);
/** "Fix": the strongest safe prefix (L4) throughout. */
REASONING_SCHEDULES.register(
  'fixed',
  defineReasoningSchedule('prefix-level', (s, o) => {
    checkStepHorizon(s, o.horizon, 'reasoning schedule "fixed"');
    return { kind: 'prefix-level', level: MAX_PREFIX_LEVEL };
  }),
);
/** "Token A": a token-count share of the L4 prefix, shrinking to 0. */
REASONING_SCHEDULES.register(
  'token',
  defineReasoningSchedule('token-fraction', (s, o) => ({
    kind: 'token-fraction',
    fraction: tokenKeepFraction(s, o.horizon),
  })),
);
/** "None": no reasoning supervision (L0). */
REASONING_SCHEDULES.register(
  'none',
  defineReasoningSchedule('prefix-level', (s, o) => {
    checkStepHorizon(s, o.horizon, 'reasoning schedule "none"');
    return { kind: 'prefix-level', level: 0 };
  }),
);

export const TOOL_CALL_SCHEDULES = createRegistry<ToolCallSchedule>('tool-call schedule');
/** "Scale A": λa(s) from start to end. */
TOOL_CALL_SCHEDULES.register(
  'scale',
  defineToolCallSchedule('scale', ['toolCallStart', 'toolCallEnd'], (s, o) => ({
    kind: 'scale',
    scale: toolCallScale(s, { start: o.toolCallStart, end: o.toolCallEnd, horizon: o.horizon }),
  })),
);
/** "Fix": a constant λa = start. */
TOOL_CALL_SCHEDULES.register(
  'fixed',
  defineToolCallSchedule('scale', ['toolCallStart'], (s, o) => {
    checkStepHorizon(s, o.horizon, 'tool-call schedule "fixed"');
    return { kind: 'scale', scale: o.toolCallStart ?? 0.8 };
  }),
);
/** "Token A": a token-count share of each span, shrinking to 0. */
TOOL_CALL_SCHEDULES.register(
  'token',
  defineToolCallSchedule('token-fraction', [], (s, o) => ({
    kind: 'token-fraction',
    fraction: tokenKeepFraction(s, o.horizon),
  })),
);
/** "None": no tool-call supervision. */
TOOL_CALL_SCHEDULES.register(
  'none',
  defineToolCallSchedule('scale', [], (s, o) => {
    checkStepHorizon(s, o.horizon, 'tool-call schedule "none"');
    return { kind: 'scale', scale: 0 };
  }),
);
