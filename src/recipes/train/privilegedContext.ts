/**
 * The privileged trace context and the SFT target of PACT (§3.2–3.3).
 *
 * - `buildPrivilegedContext`: c^h = [x; h*] as ids + tags (PACT Eq. trace-conditioned-ratio).
 *   Departure: the paper does not say how h* is laid out before τ; we append the trace
 *   as completed assistant/tool turns and restart the assistant turn.
 * - `buildTraceConditionedRow`: c^h followed by the rollout's response tokens;
 * - `buildComponentSftRow`: the SFT target (x; h*) and its mask m_{i,n}(s) of PACT Eq. (sft-mask);
 * - `buildFullSftRow`: plain SFT on a whole expert episode (the `sft` and `chord` targets).
 *
 * Each builder in full: docs/trainer.md.
 */
import { POLICY_KINDS, type TokenTag } from '../../core/types';
import {
  MAX_PREFIX_LEVEL,
  REASONING_SCHEDULES,
  TOOL_CALL_SCHEDULES,
  tokenKeepFraction,
  type SftScheduleOptions,
} from '../../core/schedules';
import { buildComponentMask, buildFullTokenMask } from '../../core/masks';
import { isKeptInSftRow, type PrefixReveal } from '../../core/sftSchedule';
import type { TextTokenizer } from '../../model/tokenizer/types';
import { renderPrivilegedTrace } from '../../traces/render';
import type { ExpertTrace } from '../../traces/types';
import type { Rollout } from '../types';

/** Token ids with one tag each. */
export interface TaggedIds {
  ids: number[];
  tags: TokenTag[];
}

export interface TraceComponents {
  reasoning: boolean;
  toolCalls: boolean;
  toolResponses: boolean;
}

const ALL_COMPONENTS: TraceComponents = { reasoning: true, toolCalls: true, toolResponses: true };

/** The assistant header that restarts the policy's turn after h*. */
export const ASSISTANT_HEADER = '<|im_start|>assistant\n';

/** Encodes tagged text spans one by one, so every token keeps its span's tag. */
export function encodeTaggedSpans(
  spans: readonly { text: string; tag: TokenTag }[],
  tokenizer: TextTokenizer,
): TaggedIds {
  const ids: number[] = [];
  const tags: TokenTag[] = [];
  for (const span of spans) {
    for (const id of tokenizer.encode(span.text)) {
      ids.push(id);
      tags.push({ ...span.tag });
    }
  }
  return { ids, tags };
}

/** h* as tagged ids (full reasoning), keeping only the chosen components. */
export function encodeTrace(
  trace: ExpertTrace,
  tokenizer: TextTokenizer,
  components: TraceComponents = ALL_COMPONENTS,
): TaggedIds {
  const { spans } = renderPrivilegedTrace(trace, { level: 'full' });
  const kept = spans.filter(
    (s) =>
      (components.reasoning || s.tag.kind !== 'reasoning') &&
      (components.toolCalls || s.tag.kind !== 'tool_call') &&
      (components.toolResponses || s.tag.kind !== 'observation'),
  );
  return encodeTaggedSpans(kept, tokenizer);
}

/**
 * c^h = [x; h*; assistant header] as ids + tags. Every token of h* is tagged with its
 * trace kind; the trainer masks on the rollout part only, so these never get advantages.
 * @param prompt the prompt x as tagged ids (a rollout's first promptLength tokens)
 */
export function buildPrivilegedContext(
  prompt: TaggedIds,
  trace: ExpertTrace,
  tokenizer: TextTokenizer,
  components: TraceComponents = ALL_COMPONENTS,
): TaggedIds {
  const h = encodeTrace(trace, tokenizer, components);
  const header = tokenizer.encode(ASSISTANT_HEADER);
  return {
    ids: [...prompt.ids, ...h.ids, ...header],
    tags: [...prompt.tags, ...h.tags, ...header.map((): TokenTag => ({ kind: 'prompt', turn: trace.turns.length }))],
  };
}

/** A rollout re-read under c^h: ids = c^h ++ τ, and where τ starts in it. */
export interface TraceConditionedRow extends TaggedIds {
  /** Index in `ids` of the rollout's first response token (= c^h length). */
  responseStart: number;
}

/** c^h followed by the rollout's response tokens (everything after its prompt). */
export function buildTraceConditionedRow(rollout: Rollout, context: TaggedIds): TraceConditionedRow {
  return {
    ids: [...context.ids, ...rollout.ids.slice(rollout.promptLength)],
    tags: [...context.tags, ...rollout.tags.slice(rollout.promptLength)],
    responseStart: context.ids.length,
  };
}

/** A supervised row: ids, tags and a weight per token (0 where not supervised). */
export interface SftRow extends TaggedIds {
  mask: number[];
}

export interface SftScheduleConfig {
  /**
   * What the prefix levels "reveal" (PACT App. C): 'remove' (default) leaves unrevealed
   * reasoning, the explicit call preview among it, out of the row; 'mask' keeps the whole
   * h* as context and masks unrevealed reasoning out of the loss only.
   */
  prefixReveal?: PrefixReveal;
  reasoningSchedule: string;
  toolCallSchedule: string;
  fullTokenAnneal: boolean;
  toolCallScaleStart: number;
  toolCallScaleEnd: number;
  /** Annealing horizon S (steps), > 0. */
  annealHorizon: number;
}

/** Per-turn prefixChunkCounts of a trace, the rows buildComponentMask needs. */
export function listPrefixChunkCounts(trace: ExpertTrace): number[][] {
  return trace.turns.map((t) => [...t.prefixChunkCounts]);
}

/** What the schedules supervise at step s: the SFT mask of h* tokens plus λa and the prefix level (metrics). */
export function buildSftMaskAtStep(
  tags: readonly TokenTag[],
  trace: ExpertTrace,
  step: number,
  schedule: SftScheduleConfig,
): { mask: number[]; lambdaA: number; prefixLevel: number } {
  const counts = listPrefixChunkCounts(trace);
  const options: SftScheduleOptions = {
    horizon: schedule.annealHorizon,
    toolCallStart: schedule.toolCallScaleStart,
    toolCallEnd: schedule.toolCallScaleEnd,
  };
  // Only trace tokens carry reasoning segments; prompt tokens (turn −1) are masked 0 anyway.
  const traceTags = tags.map((t) =>
    t.turn >= 0 && t.turn < counts.length ? t : { ...t, kind: t.kind === 'reasoning' ? ('control' as const) : t.kind },
  );
  if (schedule.fullTokenAnneal) {
    const fraction = tokenKeepFraction(step, schedule.annealHorizon);
    return { mask: buildFullTokenMask(traceTags, counts, fraction), lambdaA: fraction, prefixLevel: Number.NaN };
  }
  const reasoning = REASONING_SCHEDULES.get(schedule.reasoningSchedule)(step, options);
  const toolCall = TOOL_CALL_SCHEDULES.get(schedule.toolCallSchedule)(step, options);
  return {
    mask: buildComponentMask(traceTags, counts, { reasoning, toolCall }),
    lambdaA: toolCall.kind === 'scale' ? toolCall.scale : toolCall.fraction,
    prefixLevel: reasoning.kind === 'prefix-level' ? reasoning.level : MAX_PREFIX_LEVEL * reasoning.fraction,
  };
}

/**
 * The component-aware SFT target (x; h*) with m_{i,n}(s) (PACT Eq. sft-mask, sft-loss).
 * The mask selects the active reasoning prefix R_i(s) (weight 1) and complete tool-call
 * spans A_i (weight λa(s)). prefixReveal 'remove' (default): the reasoning tokens the mask
 * leaves out (unrevealed, call previews) are not in the row either; 'mask': the row holds all
 * of h*. Both supervise the same tokens with the same weights and differ only in the context.
 */
export function buildComponentSftRow(
  prompt: TaggedIds,
  trace: ExpertTrace,
  tokenizer: TextTokenizer,
  step: number,
  schedule: SftScheduleConfig,
): SftRow & { lambdaA: number; prefixLevel: number } {
  const h = encodeTrace(trace, tokenizer);
  const ids = [...prompt.ids, ...h.ids];
  const tags = [...prompt.tags, ...h.tags];
  const { mask, lambdaA, prefixLevel } = buildSftMaskAtStep(tags, trace, step, schedule);
  if ((schedule.prefixReveal ?? 'remove') === 'mask') return { ids, tags, mask, lambdaA, prefixLevel };
  const isKept = tags.map((t, n) => n < prompt.ids.length || isKeptInSftRow(t.kind, mask[n], 'remove'));
  const keep = <T>(values: readonly T[]) => values.filter((_, n) => isKept[n]);
  return { ids: keep(ids), tags: keep(tags), mask: keep(mask), lambdaA, prefixLevel };
}

/** Plain SFT on an expert episode (ids + tags in rollout form): weight 1 on every policy-kind token. */
export function buildFullSftRow(episode: TaggedIds): SftRow {
  return { ids: episode.ids, tags: episode.tags, mask: episode.tags.map((t) => (POLICY_KINDS.has(t.kind) ? 1 : 0)) };
}
