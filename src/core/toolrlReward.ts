/**
 * ToolRL's reward (Qian et al., "ToolRL: Reward is All Tool Learning Needs", 2025, §3.3
 * "Reward Design"; PACT cites it as `qian2026toolrl`): R_final = R_format + R_correct,
 * or MatchTIR's reading of it (below).
 *
 * R_correct ∈ [−3, 3] (ToolRL Eq. 3–6 and its released `compute_tool_call_reward`):
 *   R_match = r_name + Σ_j (r_param + r_value),  S_max = 1 + |G| + Σ_j |keys(G_j)|,
 *   R_correct = 6 · R_match / S_max − 3   (= 3 when the two call lists are identical).
 * Simplifications: ToolRL scores one step against that step's gold calls; our tool-use
 * tasks give gold calls for the whole episode, so all predicted calls of a rollout are
 * scored at once against all gold calls with core/matching's matcher (answer-turn calls
 * included: unlike MatchTIR's turn matching, which leaves them out, ToolRL scores every call). The
 * answer text is not rewarded (ToolRL has no answer-correctness term either). Values are
 * compared as JSON (1 equals 1.0; "1" does not equal 1), like Python's `==` on parsed JSON.
 *
 * Two rules (`TOOLRL_RULES`), chosen by the config's `toolrlRule`:
 * - 'matchtir' (default): MatchTIR's `compute_toolrl`, the code base PACT builds on and
 *   compares ToolRL in: R = R_correct when the episode made a call, 0 when it made none, no
 *   format term.
 * - 'toolrl': ToolRL §3.3 as written, R = R_format + R_correct (−3 + format with no call).
 *
 * R_format and the terms of R_correct: docs/core.md.
 */
import type { ToolCall } from './types';
import { isJsonEqual } from './matching';

/** ToolRL's range of the correctness reward. */
export const TOOLRL_CORRECT_MAX = 3;
export const TOOLRL_CORRECT_MIN = -3;

/**
 * ToolRL's `match_score`: multiset intersection over union; 1 when the lists are equal
 * (in order, so two empty lists score 1), 0 when exactly one is empty.
 */
export function scoreMultisetOverlap(a: readonly string[], b: readonly string[]): number {
  if (a.length === b.length && a.every((x, i) => x === b[i])) return 1;
  if (a.length === 0 || b.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const x of a) counts.set(x, (counts.get(x) ?? 0) + 1);
  let shared = 0;
  for (const x of b) {
    const c = counts.get(x) ?? 0;
    if (c > 0) {
      shared++;
      counts.set(x, c - 1);
    }
  }
  return shared / (a.length + b.length - shared);
}

function checkCalls(calls: readonly ToolCall[], where: string): void {
  if (!Array.isArray(calls)) throw new Error(`${where} must be an array of tool calls`);
  calls.forEach((c, i) => {
    if (c === null || typeof c !== 'object' || typeof c.name !== 'string')
      throw new Error(`${where}[${i}].name must be a string`);
    if (c.arguments === null || typeof c.arguments !== 'object' || Array.isArray(c.arguments)) {
      throw new Error(`${where}[${i}].arguments must be a JSON object`);
    }
  });
}

export interface ToolrlCorrectness {
  /** R_correct ∈ [−3, 3]. */
  reward: number;
  /** R_match and S_max (reward = 6·match/max − 3). */
  match: number;
  maxMatch: number;
  /** r_name. */
  nameScore: number;
}

/** ToolRL's R_correct of predicted calls against gold calls. */
export function toolrlCorrectness(preds: readonly ToolCall[], golds: readonly ToolCall[]): ToolrlCorrectness {
  checkCalls(preds, 'toolrlCorrectness: preds');
  checkCalls(golds, 'toolrlCorrectness: golds');
  const span = TOOLRL_CORRECT_MAX - TOOLRL_CORRECT_MIN;
  const nameScore = scoreMultisetOverlap(
    golds.map((g) => g.name),
    preds.map((p) => p.name),
  );
  let maxMatch = 1;
  let match = nameScore;
  const isUsed = new Set<number>();
  for (const gold of golds) {
    const goldKeys = Object.keys(gold.arguments);
    maxMatch += 1 + goldKeys.length;
    let best = 0;
    let bestIndex = -1;
    preds.forEach((pred, i) => {
      if (isUsed.has(i) || pred.name !== gold.name) return;
      const paramScore = scoreMultisetOverlap(goldKeys, Object.keys(pred.arguments));
      let valueScore = 0;
      for (const k of goldKeys) {
        if (
          Object.prototype.hasOwnProperty.call(pred.arguments, k) &&
          isJsonEqual(pred.arguments[k], gold.arguments[k])
        )
          valueScore++;
      }
      if (paramScore + valueScore > best) {
        best = paramScore + valueScore;
        bestIndex = i;
      }
    });
    if (bestIndex >= 0) {
      isUsed.add(bestIndex);
      match += best;
    }
  }
  const isIdentical =
    preds.length === golds.length &&
    preds.every((p, i) => p.name === golds[i].name && isJsonEqual(p.arguments, golds[i].arguments));
  const reward = isIdentical ? TOOLRL_CORRECT_MAX : (span * match) / maxMatch + TOOLRL_CORRECT_MIN;
  return { reward, match: isIdentical ? maxMatch : match, maxMatch, nameScore };
}

const IM_END = '<|im_end|>';
const CALL_TURN = /^\s*<think>[\s\S]*?<\/think>\s*(?:<tool_call>[\s\S]*?<\/tool_call>\s*)+$/;
const ANSWER_TURN = /^\s*<think>[\s\S]*?<\/think>\s*<answer>[\s\S]*?<\/answer>\s*$/;

function countOccurrences(text: string, tag: string): number {
  return text.split(tag).length - 1;
}

/** 'call' / 'answer' when one assistant turn is well-formed in ToolRL's sense, else null. */
export function classifyToolrlTurnFormat(text: string): 'call' | 'answer' | null {
  if (typeof text !== 'string') return null;
  const body = text.endsWith(IM_END) ? text.slice(0, -IM_END.length) : text;
  if (countOccurrences(body, '<think>') !== 1 || countOccurrences(body, '</think>') !== 1) return null;
  if (ANSWER_TURN.test(body) && countOccurrences(body, '<answer>') === 1 && countOccurrences(body, '<tool_call>') === 0)
    return 'answer';
  if (CALL_TURN.test(body) && countOccurrences(body, '<answer>') === 0) return 'call';
  return null;
}

/**
 * R_format of a whole episode: 1 when every non-final turn is a well-formed call turn and
 * the final turn a well-formed answer turn; 0 otherwise (also for no turns).
 * @param turnTexts the assistant text of each turn, verbatim
 */
export function toolrlFormatReward(turnTexts: readonly string[]): 0 | 1 {
  if (!Array.isArray(turnTexts)) throw new Error('toolrlFormatReward: turnTexts must be an array of strings');
  if (turnTexts.length === 0) return 0;
  const last = turnTexts.length - 1;
  return turnTexts.every((t, i) => classifyToolrlTurnFormat(t) === (i === last ? 'answer' : 'call')) ? 1 : 0;
}

/** The reward rules: MatchTIR's `compute_toolrl` (default) or ToolRL's own. */
export const TOOLRL_RULES = ['matchtir', 'toolrl'] as const;
export type ToolrlRule = (typeof TOOLRL_RULES)[number];

export interface ToolrlReward {
  /** R_final = R_format + R_correct ∈ [−3, 4]. */
  reward: number;
  format: number;
  correct: number;
}

/**
 * The ToolRL reward of one rollout: its turn texts, its parsed calls (all turns), the gold
 * calls. `format` is reported under both rules; only 'toolrl' adds it to the reward.
 */
export function toolrlReward(
  turnTexts: readonly string[],
  preds: readonly ToolCall[],
  golds: readonly ToolCall[],
  rule: ToolrlRule = 'matchtir',
): ToolrlReward {
  const format = toolrlFormatReward(turnTexts);
  if (rule === 'matchtir') {
    // compute_toolrl: `score = 0.0; if pd_tools: … score = score * 6 / local_max_possible - 3`.
    const correct = preds.length === 0 ? 0 : toolrlCorrectness(preds, golds).reward;
    return { reward: correct, format, correct };
  }
  if (rule !== 'toolrl') throw new Error(`toolrlReward: unknown rule "${String(rule)}" (${TOOLRL_RULES.join(', ')})`);
  const correct = toolrlCorrectness(preds, golds).reward;
  return { reward: format + correct, format, correct };
}
