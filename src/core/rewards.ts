/**
 * Turn-level rewards of MatchTIR hard credit assignment (PACT App. B, "Turn-level and
 * outcome rewards"): all predicted calls of a trajectory's tool-use turns are matched at
 * once against all gold calls; a tool-use turn's reward is the mean r(p) of its calls (0
 * with none); the final-answer turn gets r_ans = F1(ŷ, y) instead, and its own calls, as
 * in MatchTIR's `compute_process_KM`, enter no matching.
 *
 * `answerF1` compares word **sets** (not bags, as SQuAD's F1 would): lower-case,
 * every ASCII punctuation character → space, whitespace collapsed.
 */
import type { ToolCall } from './types';
import { matchToolCalls, type MatchOptions } from './matching';

const ASCII_PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/** Lower-case, ASCII punctuation → space, split on whitespace. */
export function tokenizeAnswerWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(ASCII_PUNCTUATION, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 0);
}

/** F1 over the two sets of words; 0 when either is empty. */
export function answerF1(pred: string, gold: string): number {
  if (typeof pred !== 'string') throw new Error('answerF1: pred must be a string');
  if (typeof gold !== 'string') throw new Error('answerF1: gold must be a string');
  const predWords = new Set(tokenizeAnswerWords(pred));
  const goldWords = new Set(tokenizeAnswerWords(gold));
  if (predWords.size === 0 || goldWords.size === 0) return 0;
  let shared = 0;
  for (const w of predWords) if (goldWords.has(w)) shared++;
  if (shared === 0) return 0;
  const precision = shared / predWords.size;
  const recall = shared / goldWords.size;
  return (2 * precision * recall) / (precision + recall);
}

/** One policy turn of a rollout: its parsed tool calls, and its answer when it gave one. */
export interface RolloutTurn {
  calls: ToolCall[];
  /** The text inside `<answer>…</answer>`; present (even '') only on an answer turn. */
  answer?: string | null;
}

export interface TurnRewardResult {
  /** r_t per turn. */
  turnRewards: number[];
  /** r(p) per call, grouped by turn. */
  callRewards: number[][];
  /** Matched gold index per call, grouped by turn. */
  assignment: (number | null)[][];
}

/** r_t for every turn of one rollout (PACT App. B). */
export function turnRewards(
  turns: readonly RolloutTurn[],
  goldCalls: readonly ToolCall[],
  goldAnswer: string,
  options: MatchOptions = {},
): TurnRewardResult {
  if (!Array.isArray(turns)) throw new Error('turnRewards: turns must be an array');
  turns.forEach((t, i) => {
    if (!t || !Array.isArray(t.calls)) throw new Error(`turnRewards: turns[${i}].calls must be an array`);
    if (t.answer != null && typeof t.answer !== 'string')
      throw new Error(`turnRewards: turns[${i}].answer must be a string`);
  });
  // MatchTIR's compute_process_KM collects the calls of the turns without an answer only: a
  // call made in the answer turn enters no matching (reward 0, no gold) and cannot take a
  // gold call from an earlier turn's call.
  const isMatched = turns.map((t) => t.answer == null);
  const allCalls = turns.flatMap((t, i) => (isMatched[i] ? t.calls : []));
  const { assignment, rewards } = matchToolCalls(allCalls, goldCalls, options);
  const callRewards: number[][] = [];
  const turnAssignment: (number | null)[][] = [];
  let offset = 0;
  turns.forEach((t, i) => {
    if (!isMatched[i]) {
      callRewards.push(t.calls.map(() => 0));
      turnAssignment.push(t.calls.map(() => null));
      return;
    }
    callRewards.push(rewards.slice(offset, offset + t.calls.length));
    turnAssignment.push(assignment.slice(offset, offset + t.calls.length));
    offset += t.calls.length;
  });
  const perTurn = turns.map((t, i) => {
    if (t.answer != null) return answerF1(t.answer, goldAnswer);
    const r = callRewards[i];
    return r.length === 0 ? 0 : r.reduce((s, x) => s + x, 0) / r.length;
  });
  return { turnRewards: perTurn, callRewards, assignment: turnAssignment };
}
