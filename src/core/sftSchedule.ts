/**
 * The SFT schedule designs compared in PACT Table "SFT schedule designs" and App. D, by
 * name, and the mask m_{i,n}(s) each gives at step s (PACT Eq. sft-mask with the
 * schedules of schedules.ts). 'seg+scale' is PACT's own design (Seg A + Scale A).
 */
import type { TokenKind, TokenTag } from './types';
import { createRegistry } from './registry';
import { REASONING_SCHEDULES, TOOL_CALL_SCHEDULES, tokenKeepFraction, type SftScheduleOptions } from './schedules';
import { buildComponentMask, buildFullTokenMask } from './masks';

/**
 * What the SFT row holds of unrevealed reasoning (PACT App. C). 'remove' (the default): only
 * the revealed prefix R_i(s), so an `explicit_call_preview` span, "excluded from safe prefix
 * hints", is never in the context of the call it previews, and at L0 the row is h* without
 * reasoning ("progressively closer to the prompt-only setting"). 'mask': Eq. sft-loss
 * read literally, every token of h*_<n in the context, the unrevealed ones at weight 0
 * (the preview then sits right before the call it spells out).
 */
export const PREFIX_REVEALS = ['remove', 'mask'] as const;
export type PrefixReveal = (typeof PREFIX_REVEALS)[number];

/**
 * Whether an h* token of SFT weight m stays in the SFT row under `reveal`: under 'remove' a
 * reasoning token the mask leaves out (m = 0: unrevealed at this step, or a leak) leaves the
 * row; every other token stays (the trainer's row and the Token masks panel read this rule).
 */
export function isKeptInSftRow(kind: TokenKind, m: number, reveal: PrefixReveal): boolean {
  return reveal === 'mask' || kind !== 'reasoning' || m > 0;
}

/** A design: a reasoning and a tool-call schedule by name, or token-count annealing of both together. */
export type SftDesign = { kind: 'component'; reasoning: string; toolCall: string } | { kind: 'full-token' };

export const SFT_DESIGNS = createRegistry<SftDesign>('SFT schedule design');
SFT_DESIGNS.register('seg+scale', { kind: 'component', reasoning: 'segment', toolCall: 'scale' }); // PACT
SFT_DESIGNS.register('fixed+scale', { kind: 'component', reasoning: 'fixed', toolCall: 'scale' });
SFT_DESIGNS.register('seg+fixed', { kind: 'component', reasoning: 'segment', toolCall: 'fixed' });
SFT_DESIGNS.register('token+scale', { kind: 'component', reasoning: 'token', toolCall: 'scale' });
SFT_DESIGNS.register('seg+token', { kind: 'component', reasoning: 'segment', toolCall: 'token' });
SFT_DESIGNS.register('seg+none', { kind: 'component', reasoning: 'segment', toolCall: 'none' });
SFT_DESIGNS.register('none+scale', { kind: 'component', reasoning: 'none', toolCall: 'scale' });
SFT_DESIGNS.register('full-token', { kind: 'full-token' });

/**
 * m_{i,n}(s) of one expert trace at step s under a named design.
 * @param tags [N] token tags of the trace
 * @param prefixChunkCounts [turns][5] chunks revealed at L0..L4
 * @returns [N] weights
 */
export function buildSftMaskAtStep(
  tags: readonly TokenTag[],
  prefixChunkCounts: readonly (readonly number[])[],
  step: number,
  designName: string,
  options: SftScheduleOptions,
): number[] {
  const design = SFT_DESIGNS.get(designName);
  if (design.kind === 'full-token')
    return buildFullTokenMask(tags, prefixChunkCounts, tokenKeepFraction(step, options.horizon));
  return buildComponentMask(tags, prefixChunkCounts, {
    reasoning: REASONING_SCHEDULES.get(design.reasoning)(step, options),
    toolCall: TOOL_CALL_SCHEDULES.get(design.toolCall)(step, options),
  });
}
