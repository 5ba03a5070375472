/**
 * The Rollout inspector's pure parts: segments grouped into turns, each call with the
 * gold call MatchTIR matched it to, and the per-token advantage as colours.
 *
 * Advantages use a diverging blue–orange palette (Okabe–Ito blue #0072b2 for A > 0,
 * vermillion #d55e00 for A < 0, light grey at 0), readable by the common forms of colour
 * blindness; the sign is also written as a + / − marker, so it never depends on colour.
 * Prompt and tool-response tokens carry no advantage (the environment wrote them; PACT
 * §4.1, MatchTIR): they are drawn as "no advantage", not as zero.
 */
import { POLICY_KINDS, type TokenKind } from '../core/types';
import type { RolloutGroupView, RolloutView } from '../../workers/protocol';
import { getRecipe, hasRecipe } from '../recipes/allRecipes';

export type Segment = RolloutView['segments'][number];
export type CallView = RolloutView['calls'][number];

/** Each kind in words: the transcript labels every segment with this text. */
export const SEGMENT_KIND_LABELS: Readonly<Record<TokenKind, string>> = {
  prompt: 'prompt',
  reasoning: 'reasoning',
  tool_call: 'tool call',
  observation: 'tool response',
  answer: 'answer',
  control: 'control tokens',
};

type Rgb = readonly [number, number, number];
const NEUTRAL: Rgb = [242, 242, 242]; // #f2f2f2
const POSITIVE: Rgb = [0, 114, 178]; // #0072b2 (Okabe–Ito blue)
const NEGATIVE: Rgb = [213, 94, 0]; // #d55e00 (Okabe–Ito vermillion)

function toHex(rgb: readonly number[]): string {
  return `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}

/** Largest |advantage| over the policy-written segments of a group's rollouts (0 when none). */
export function computeAdvantageScale(rollouts: readonly RolloutView[]): number {
  let maxAbs = 0;
  for (const r of rollouts) {
    for (const s of r.segments) {
      if (POLICY_KINDS.has(s.kind) && Number.isFinite(s.advantage)) maxAbs = Math.max(maxAbs, Math.abs(s.advantage));
    }
  }
  return maxAbs;
}

/**
 * The colour of an advantage on the diverging scale [−maxAbs, +maxAbs]: linear in RGB
 * from light grey (0) to blue (+maxAbs) or vermillion (−maxAbs), clamped beyond.
 */
export function mapAdvantageToColour(advantage: number, maxAbs: number): string {
  if (!Number.isFinite(advantage) || !(maxAbs > 0) || advantage === 0) return toHex(NEUTRAL);
  const t = Math.min(Math.abs(advantage) / maxAbs, 1);
  const end = advantage > 0 ? POSITIVE : NEGATIVE;
  return toHex(NEUTRAL.map((c, i) => c + t * (end[i] - c)));
}

/** Dark or white text on an advantage colour (white once the colour is more than 60% saturated). */
export function pickAdvantageInk(advantage: number, maxAbs: number): string {
  return maxAbs > 0 && Math.abs(advantage) / maxAbs > 0.6 ? '#ffffff' : '#1b2430';
}

/** The sign as a marker: '+' above `epsilon`, '−' (U+2212) below −epsilon, '0' otherwise. */
export function markAdvantageSign(advantage: number, epsilon = 1e-9): '+' | '−' | '0' {
  if (advantage > epsilon) return '+';
  if (advantage < -epsilon) return '−';
  return '0';
}

/** An advantage as text with its sign: "+0.53", "−1.20", "0.00". */
export function formatAdvantage(advantage: number): string {
  if (!Number.isFinite(advantage)) return '—';
  const sign = markAdvantageSign(advantage, 0.005);
  const abs = Math.abs(advantage).toFixed(2);
  return sign === '0' ? abs : `${sign}${abs}`;
}

/** One cell of the advantage strip: a segment, its share of the rollout's tokens, its colour. */
export interface StripCell {
  kind: TokenKind;
  turn: number;
  nTokens: number;
  /** nTokens / total tokens of the rollout. */
  share: number;
  /** False for prompt and tool-response tokens: they carry no advantage. */
  hasAdvantage: boolean;
  advantage: number;
  colour: string;
  ink: string;
  sign: '+' | '−' | '0' | '';
}

/**
 * The per-token advantage strip of one rollout, one cell per segment, widths by token
 * count. The prompt is left out: it is the same context for all K rollouts and, being
 * long, would crowd out the turns.
 */
export function buildAdvantageStrip(rollout: RolloutView, maxAbs: number): StripCell[] {
  const segments = rollout.segments.filter((s) => s.kind !== 'prompt');
  const total = segments.reduce((n, s) => n + Math.max(0, s.nTokens), 0);
  return segments.map((s) => {
    const hasAdvantage = POLICY_KINDS.has(s.kind);
    return {
      kind: s.kind,
      turn: s.turn,
      nTokens: s.nTokens,
      share: total > 0 ? Math.max(0, s.nTokens) / total : 0,
      hasAdvantage,
      advantage: hasAdvantage ? s.advantage : 0,
      colour: hasAdvantage ? mapAdvantageToColour(s.advantage, maxAbs) : 'transparent',
      ink: hasAdvantage ? pickAdvantageInk(s.advantage, maxAbs) : '#1b2430',
      sign: hasAdvantage ? markAdvantageSign(s.advantage) : '',
    };
  });
}

/** One assistant turn (or the prompt, turn −1) of a rollout. */
export interface TurnView {
  turn: number;
  segments: Segment[];
  calls: CallView[];
  /** The turn's reward r_t and advantage (MatchTIR), when the turn has them. */
  reward?: number;
  advantage?: number;
}

/**
 * Groups a rollout's segments by turn, in order, merging neighbours of the same kind
 * and turn (their token counts add; the advantage is the token-weighted mean), and
 * attaches each turn's calls, reward and advantage.
 */
export function groupSegmentsByTurn(rollout: RolloutView): TurnView[] {
  const turns: TurnView[] = [];
  for (const s of rollout.segments) {
    let t = turns[turns.length - 1];
    if (!t || t.turn !== s.turn) {
      t = { turn: s.turn, segments: [], calls: [] };
      turns.push(t);
    }
    const prev = t.segments[t.segments.length - 1];
    if (prev && prev.kind === s.kind) {
      const n = prev.nTokens + s.nTokens;
      const advantage = n > 0 ? (prev.advantage * prev.nTokens + s.advantage * s.nTokens) / n : prev.advantage;
      t.segments[t.segments.length - 1] = { ...prev, text: prev.text + s.text, nTokens: n, advantage };
    } else {
      t.segments.push({ ...s });
    }
  }
  for (const t of turns) {
    if (t.turn < 0) continue;
    t.calls = rollout.calls.filter((c) => c.turn === t.turn);
    if (t.turn < rollout.turnRewards.length) t.reward = rollout.turnRewards[t.turn];
    if (t.turn < rollout.turnAdvantages.length) t.advantage = rollout.turnAdvantages[t.turn];
  }
  return turns;
}

/** What a call's MatchTIR match says, in words. */
export function describeCallMatch(call: CallView, goldCalls: RolloutGroupView['goldCalls']): string {
  if (call.matchedGold === null) return 'no gold call matched';
  const gold = goldCalls[call.matchedGold];
  return gold
    ? `matched gold call #${call.matchedGold + 1} (${gold.name})`
    : `matched gold call #${call.matchedGold + 1}`;
}

/**
 * A rollout's calls in four parts that add up to the total: matched to a gold call and
 * executed; matched but failed (the tool returned an error); unmatched and executed;
 * unmatched and failed (an error, or a malformed call).
 */
export function countCalls(rollout: RolloutView): {
  total: number;
  matched: number;
  matchedFailed: number;
  unmatched: number;
  failed: number;
} {
  const count = (isMatched: boolean, isError: boolean) =>
    rollout.calls.filter((c) => (c.matchedGold !== null) === isMatched && c.isError === isError).length;
  return {
    total: rollout.calls.length,
    matched: count(true, false),
    matchedFailed: count(true, true),
    unmatched: count(false, false),
    failed: count(false, true),
  };
}

/** The calls cell of the inspector: "3: 1 matched but failed, 2 failed"; the parts add up to the total. */
export function describeCallCounts(rollout: RolloutView): string {
  const c = countCalls(rollout);
  if (c.total === 0) return 'none';
  const parts: [number, string][] = [
    [c.matched, 'matched'],
    [c.matchedFailed, 'matched but failed'],
    [c.unmatched, 'unmatched'],
    [c.failed, 'failed'],
  ];
  return `${c.total}: ${parts
    .filter(([n]) => n > 0)
    .map(([n, what]) => `${n} ${what}`)
    .join(', ')}`;
}

/**
 * The note the inspector shows when the run's recipe assigns credit otherwise (GRPO, ToolRL,
 * FTRL, CHORD, the search recipes): the advantages shown are that recipe's, while the turn
 * rewards are always MatchTIR's matched-call rewards (rolloutViews.ts), kept for comparison.
 * null for the recipes whose registry entry says `usesMatchTirCredit` and for views that do not
 * name their recipe (older recordings).
 */
export function describeRecipeCredit(recipe: string | undefined): string | null {
  if (recipe === undefined) return null;
  const registered = hasRecipe(recipe) ? getRecipe(recipe) : null;
  if (registered?.usesMatchTirCredit) return null;
  const summary = registered ? registered.summary : `recipe "${recipe}"`;
  return `This run's recipe is ${recipe} (${summary}), not MatchTIR: the advantages below are its own, while the turn rewards are MatchTIR's matched-call rewards, shown for comparison.`;
}
