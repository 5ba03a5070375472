/**
 * What component-aware SFT supervises at each training step, PACT §4.3 and App. D:
 * the tool-call weight λa(s) of Eq. (tool-call-annealing) and the active reasoning
 * prefix level (L4 → L0) of R_i(s) in Eq. (sft-mask), or their token-count variants.
 *
 * Every value comes from the core's registered schedules (`REASONING_SCHEDULES`,
 * `TOOL_CALL_SCHEDULES` in src/core/schedules.ts), looked up by the config's schedule
 * names, exactly as a training step would; this file only picks the steps to draw.
 */
import {
  REASONING_SCHEDULES,
  TOOL_CALL_SCHEDULES,
  type ReasoningSupervision,
  type SftScheduleOptions,
  type ToolCallSupervision,
} from '../core';

export interface ScheduleSettings {
  reasoningSchedule: string;
  toolCallSchedule: string;
  /** S (already resolved: 0 is not allowed here). */
  horizon: number;
  toolCallStart: number;
  toolCallEnd: number;
}

export interface SchedulePoint {
  step: number;
  reasoning: ReasoningSupervision;
  toolCall: ToolCallSupervision;
}

/** The supervision at step s, from the core's schedules. */
export function computeSupervisionAt(step: number, settings: ScheduleSettings): SchedulePoint {
  const options: SftScheduleOptions = {
    horizon: settings.horizon,
    toolCallStart: settings.toolCallStart,
    toolCallEnd: settings.toolCallEnd,
  };
  return {
    step,
    reasoning: REASONING_SCHEDULES.get(settings.reasoningSchedule)(step, options),
    toolCall: TOOL_CALL_SCHEDULES.get(settings.toolCallSchedule)(step, options),
  };
}

/** The tool-call value drawn: λa(s) for the scale variants, the kept share for Token A. */
export function readToolCallValue(sup: ToolCallSupervision): number {
  return sup.kind === 'scale' ? sup.scale : sup.fraction;
}

/** The reasoning value drawn: the prefix level (0…4), or the kept share for Token A. */
export function readReasoningValue(sup: ReasoningSupervision): number {
  return sup.kind === 'prefix-level' ? sup.level : sup.fraction;
}

/**
 * Integer steps to evaluate for a chart over [0, totalSteps]: every step when there are
 * at most `maxPoints`, else an even sample that still contains S (the knee of λa) and
 * the last step.
 */
export function pickChartSteps(totalSteps: number, horizon: number, maxPoints = 600): number[] {
  if (!Number.isInteger(totalSteps) || totalSteps < 1)
    throw new Error(`pickChartSteps: totalSteps must be an integer ≥ 1, got ${totalSteps}`);
  if (totalSteps <= maxPoints) return Array.from({ length: totalSteps + 1 }, (_, s) => s);
  const steps = new Set<number>();
  for (let k = 0; k <= maxPoints; k++) steps.add(Math.round((k * totalSteps) / maxPoints));
  if (horizon <= totalSteps) steps.add(Math.round(horizon));
  return [...steps].sort((a, b) => a - b);
}

/**
 * Rows for the step → λa, level table: 0, ¼S, ½S, ¾S, S, T and the marked step,
 * each once, in order, within [0, T].
 */
export function pickTableSteps(totalSteps: number, horizon: number, markedStep: number): number[] {
  const candidates = [0, horizon / 4, horizon / 2, (3 * horizon) / 4, horizon, totalSteps, markedStep].map(Math.round);
  return [...new Set(candidates.filter((s) => s >= 0 && s <= totalSteps))].sort((a, b) => a - b);
}

/** "L3" for a level, or "62% of L4" for a token share. */
export function describeReasoning(sup: ReasoningSupervision): string {
  return sup.kind === 'prefix-level' ? `L${sup.level}` : `${formatPercent(sup.fraction)} of L4 tokens`;
}

/** "0.500" (λa) for a scale, or "62% of span tokens" for a token share. */
export function describeToolCall(sup: ToolCallSupervision): string {
  return sup.kind === 'scale' ? sup.scale.toFixed(3) : `${formatPercent(sup.fraction)} of span tokens`;
}

function formatPercent(fraction: number): string {
  return `${Math.round(fraction * 100)}%`;
}
