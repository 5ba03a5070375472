/**
 * What the Token masks panel shows: the tokenised privileged trace h* with each token's
 * SFT weight m_{i,n}(s) of PACT Eq. (sft-mask),
 *
 *   m_n(s) = 1 on the active reasoning prefix R_i(s), λa(s) on complete tool-call spans
 *            A_i, 0 otherwise (observations, template and control tokens),
 *
 * and Z_i(s) = Σ_n m_n(s), the normaliser of Eq. (sft-loss) (the SFT term is skipped when Z = 0).
 *
 * Where the tokens come from, and the ratio row: docs/ui.md.
 */
import {
  REASONING_SCHEDULES,
  SFT_DESIGNS,
  TOOL_CALL_SCHEDULES,
  buildComponentMask,
  buildSftMaskAtStep,
  isKeptInSftRow,
  type PrefixReveal,
  type ReasoningSupervision,
  type SftScheduleOptions,
  type TokenKind,
  type TokenTag,
  type ToolCallSupervision,
} from '../core';

export interface TraceTokens {
  ids: number[];
  tags: TokenTag[];
  /** decode([id]) of each token. */
  texts: string[];
  /** [turns][5]: prefixChunkCounts of each turn, the mask builder's input. */
  prefixChunkCounts: number[][];
  /** Per token: true for a reasoning token of a chunk hidden from every level (leak or after it). */
  isLeak: boolean[];
}

/** The SFT design a run setup names: its reasoning and tool-call schedules, or Full Token A. */
export type SftDesignChoice = { kind: 'component'; reasoning: string; toolCall: string } | { kind: 'full-token' };

/** The registered SFT_DESIGNS name of a choice, or null when the pair is not registered. */
export function findSftDesignName(choice: SftDesignChoice): string | null {
  for (const name of SFT_DESIGNS.names()) {
    const d = SFT_DESIGNS.get(name);
    if (choice.kind === 'full-token' && d.kind === 'full-token') return name;
    if (
      choice.kind === 'component' &&
      d.kind === 'component' &&
      d.reasoning === choice.reasoning &&
      d.toolCall === choice.toolCall
    )
      return name;
  }
  return null;
}

export interface MaskAtStep {
  /** [N] m_n(s). */
  mask: number[];
  /** What the schedules give at s (absent for Full Token A, which anneals both together). */
  reasoning?: ReasoningSupervision;
  toolCall?: ToolCallSupervision;
  /** Full Token A: share of the L4-safe reasoning + tool-call tokens kept per turn. */
  fullTokenFraction?: number;
  /** The SFT_DESIGNS name used, or null when built from the two schedules directly. */
  designName: string | null;
}

/** m(s) for the tokens at step s under the chosen design, from the core. */
export function computeMaskAtStep(
  tokens: Pick<TraceTokens, 'tags' | 'prefixChunkCounts'>,
  step: number,
  choice: SftDesignChoice,
  options: SftScheduleOptions,
): MaskAtStep {
  const designName = findSftDesignName(choice);
  if (choice.kind === 'full-token') {
    const mask = buildSftMaskAtStep(tokens.tags, tokens.prefixChunkCounts, step, designName ?? 'full-token', options);
    return { mask, designName, fullTokenFraction: 1 - Math.min(step / options.horizon, 1) };
  }
  const reasoning = REASONING_SCHEDULES.get(choice.reasoning)(step, options);
  const toolCall = TOOL_CALL_SCHEDULES.get(choice.toolCall)(step, options);
  const mask =
    designName !== null
      ? buildSftMaskAtStep(tokens.tags, tokens.prefixChunkCounts, step, designName, options)
      : buildComponentMask(tokens.tags, tokens.prefixChunkCounts, { reasoning, toolCall });
  return { mask, reasoning, toolCall, designName };
}

/** The kinds an h* rendering holds, in the order the summary lists them. */
export const TRACE_KINDS: readonly TokenKind[] = ['reasoning', 'tool_call', 'observation', 'control', 'prompt'];

export interface KindSummary {
  kind: TokenKind;
  /** Tokens of this kind. */
  tokens: number;
  /** Tokens with m > 0. */
  supervised: number;
  /** Σ m over the kind. */
  weight: number;
}

export interface MaskSummary {
  /** Z(s) = Σ_n m_n(s). */
  z: number;
  nTokens: number;
  /** Tokens with m > 0. */
  nSupervised: number;
  byKind: KindSummary[];
}

/** Z(s) and per-kind counts. Z is summed in token order (the same order as the core's sum). */
export function summarizeMask(tags: readonly TokenTag[], mask: readonly number[]): MaskSummary {
  if (tags.length !== mask.length)
    throw new Error(`summarizeMask: ${tags.length} tags but ${mask.length} mask weights`);
  const byKind = new Map<TokenKind, KindSummary>();
  let z = 0;
  let nSupervised = 0;
  tags.forEach((tag, n) => {
    const entry = byKind.get(tag.kind) ?? { kind: tag.kind, tokens: 0, supervised: 0, weight: 0 };
    entry.tokens++;
    entry.weight += mask[n];
    if (mask[n] > 0) {
      entry.supervised++;
      nSupervised++;
    }
    z += mask[n];
    byKind.set(tag.kind, entry);
  });
  const order = [...TRACE_KINDS, ...[...byKind.keys()].filter((k) => !TRACE_KINDS.includes(k))];
  return {
    z,
    nTokens: tags.length,
    nSupervised,
    byKind: order.filter((k) => byKind.has(k)).map((k) => byKind.get(k)!),
  };
}

/**
 * [N] whether each h* token is left out of the SFT row under `reveal` (core isKeptInSftRow,
 * the trainer's rule): under 'remove' the reasoning at m = 0, under 'mask' none.
 */
export function findRemovedFromRow(
  tags: readonly TokenTag[],
  mask: readonly number[],
  reveal: PrefixReveal,
): boolean[] {
  return tags.map((tag, n) => !isKeptInSftRow(tag.kind, mask[n], reveal));
}

/** Z as the panel prints it (3 decimals; the tests compare this text). */
export function formatWeight(value: number): string {
  return value.toFixed(3);
}

/** A token's text made visible in a chip: newlines as ↵, tabs as →, an empty decode as ∅. */
export function formatTokenText(text: string): string {
  if (text.length === 0) return '∅';
  return text.replace(/\n/g, '↵').replace(/\t/g, '→');
}

/** Words for a token's kind, as the legend and the readout name it. */
export const KIND_LABELS: Readonly<Record<TokenKind, string>> = {
  reasoning: 'reasoning',
  tool_call: 'tool call',
  observation: 'observation',
  control: 'control (<think>, <|im_end|>)',
  prompt: 'template (turn header)',
  answer: 'answer',
};

export interface RatioRow {
  /** Tokens of the prompt x. */
  promptTokens: number;
  /** Tokens of h* (context in c^h = [x; h*]: no ratio, no advantage). */
  traceTokens: number;
}

/** The parts of the schematic row [x | h* | τ], in order, with what each carries. */
export function describeRatioRow(
  row: RatioRow,
): { id: 'x' | 'h' | 'tau'; label: string; detail: string; carriesRatio: boolean }[] {
  return [
    { id: 'x', label: 'x', detail: `prompt · ${row.promptTokens} tokens · context`, carriesRatio: false },
    { id: 'h', label: 'h*', detail: `expert trace · ${row.traceTokens} tokens · context only`, carriesRatio: false },
    {
      id: 'tau',
      label: 'τ_{i,k}',
      detail: 'prompt-only rollout · its policy tokens n ∈ M_{i,k} carry r^h',
      carriesRatio: true,
    },
  ];
}
