/**
 * MatchTIR tool-call matching (PACT App. B, "Hard credit assignment"; MatchTIR, Qu et
 * al. 2026): a similarity S_ab between each predicted call p_a and gold call g_b, a
 * one-to-one matching X, and the reward r(p_a) = S_ab when matched, −λ_pen otherwise.
 *
 * S_ab = 0 when the names differ (lower-cased), else (1 + keyScore + exact) / (2 + |gold keys|):
 *   keyScore = 1 if the argument-key lists are equal (as sets), 0 if either is empty,
 *              else |A∩B| / (|A| + |B| − |A∩B|);
 *   exact    = number of gold keys whose predicted value is deep-equal (JSON values;
 *              1 equals 1.0, "1" does not equal 1).
 *
 * Methods: 'hungarian' is the true maximum-weight matching (the paper's Kuhn–Munkres);
 * 'greedy' reproduces MatchTIR's released code (pairs sorted by score, highest first,
 * ties pred-major then gold order). Pairs with score 0 are never matched.
 */
import type { ToolCall } from './types';
import { solveMaxWeightMatching } from './hungarian';
import { createRegistry } from './registry';

function checkCall(call: ToolCall, where: string): void {
  if (call === null || typeof call !== 'object') throw new Error(`${where} must be an object {name, arguments}`);
  if (typeof call.name !== 'string') throw new Error(`${where}.name must be a string`);
  const args = call.arguments;
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw new Error(`${where}.arguments must be a JSON object`);
  }
}

/** Deep equality of JSON values: numbers by value, arrays in order, objects by key set. */
export function isJsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bArr = b as unknown[];
    return a.length === bArr.length && a.every((x, i) => isJsonEqual(x, bArr[i]));
  }
  const aObj = a as Record<string, unknown>;
  const bObj = b as Record<string, unknown>;
  const aKeys = Object.keys(aObj);
  if (aKeys.length !== Object.keys(bObj).length) return false;
  return aKeys.every((k) => Object.prototype.hasOwnProperty.call(bObj, k) && isJsonEqual(aObj[k], bObj[k]));
}

/** The argument-key overlap term of S_ab. */
export function scoreArgumentKeys(predKeys: readonly string[], goldKeys: readonly string[]): number {
  const a = new Set(predKeys);
  const b = new Set(goldKeys);
  const isEqual = a.size === b.size && [...a].every((k) => b.has(k));
  if (isEqual) return 1;
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const k of a) if (b.has(k)) shared++;
  return shared / (a.size + b.size - shared);
}

/** S_ab of PACT App. B, in [0, 1]. */
export function toolCallSimilarity(pred: ToolCall, gold: ToolCall): number {
  checkCall(pred, 'pred');
  checkCall(gold, 'gold');
  if (pred.name.toLowerCase() !== gold.name.toLowerCase()) return 0;
  const predKeys = Object.keys(pred.arguments);
  const goldKeys = Object.keys(gold.arguments);
  const keyScore = scoreArgumentKeys(predKeys, goldKeys);
  let exact = 0;
  for (const k of goldKeys) {
    if (Object.prototype.hasOwnProperty.call(pred.arguments, k) && isJsonEqual(pred.arguments[k], gold.arguments[k]))
      exact++;
  }
  return (1 + keyScore + exact) / (2 + goldKeys.length);
}

/** A matcher: scores [nPred][nGold] → the gold index of each prediction, or null. */
export type ToolCallMatcher = (scores: number[][]) => (number | null)[];

/** MatchTIR's released greedy matcher. */
export function matchGreedy(scores: number[][]): (number | null)[] {
  const pairs: { pred: number; gold: number; score: number }[] = [];
  scores.forEach((row, pred) => row.forEach((score, gold) => pairs.push({ pred, gold, score })));
  pairs.sort((x, y) => y.score - x.score); // stable: ties stay pred-major, then gold order
  const assignment = new Array<number | null>(scores.length).fill(null);
  const isGoldUsed = new Set<number>();
  for (const { pred, gold, score } of pairs) {
    if (score > 0 && assignment[pred] === null && !isGoldUsed.has(gold)) {
      assignment[pred] = gold;
      isGoldUsed.add(gold);
    }
  }
  return assignment;
}

export const MATCHING_METHODS = createRegistry<ToolCallMatcher>('tool-call matching method');
MATCHING_METHODS.register('hungarian', solveMaxWeightMatching);
MATCHING_METHODS.register('greedy', matchGreedy);

export interface MatchOptions {
  /** A name in MATCHING_METHODS: 'hungarian' (default) or 'greedy'. */
  method?: string;
  /** λ_pen: an unmatched prediction gets −unmatchedPenalty (PACT uses 0). */
  unmatchedPenalty?: number;
}

export interface MatchResult {
  /** For each prediction, the index of its gold call, or null. */
  assignment: (number | null)[];
  /** r(p_a) for each prediction. */
  rewards: number[];
}

/** Matches all predicted calls of a trajectory against all gold calls (PACT App. B). */
export function matchToolCalls(
  preds: readonly ToolCall[],
  golds: readonly ToolCall[],
  { method = 'hungarian', unmatchedPenalty = 0 }: MatchOptions = {},
): MatchResult {
  if (!Array.isArray(preds)) throw new Error('matchToolCalls: preds must be an array');
  if (!Array.isArray(golds)) throw new Error('matchToolCalls: golds must be an array');
  if (!Number.isFinite(unmatchedPenalty)) throw new Error('matchToolCalls: unmatchedPenalty must be a finite number');
  const matcher = MATCHING_METHODS.get(method);
  preds.forEach((p, i) => checkCall(p, `preds[${i}]`));
  golds.forEach((g, j) => checkCall(g, `golds[${j}]`));
  const scores = preds.map((p) => golds.map((g) => toolCallSimilarity(p, g))); // [nPred][nGold]
  const assignment = matcher(scores).map((j, i) => (j !== null && scores[i][j] > 0 ? j : null));
  const rewards = assignment.map((j, i) => (j === null ? 0 - unmatchedPenalty : scores[i][j])); // 0 − 0 is +0, not −0
  return { assignment, rewards };
}
