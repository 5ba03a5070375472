/**
 * FTRL's per-turn reward (Ye et al. 2025) as released: `compute_solve_f1` in
 * bytedance/FTRL, Code/verl/utils/reward_score/tool.py (named by its training command;
 * MatchTIR ships the same function). One assistant turn is scored given the expected
 * answers still unsolved before it and the share solved (data_sample.py's state):
 *   - parsed calls: 2·solved/(calls + 1), solved = calls whose output verifies a remaining
 *     expected answer of their tool (answer_verify, each answer once);
 *   - else, on the turn's text: empty → −0.5; `<tool_call>`, `</tool_call>` or
 *     `<tool_parsed_response>` in it (malformed call) → −0.3; holds the reference answer
 *     (lower-cased, commas removed) → 1/(1 + unsolved); all solved → 0.5; else 0.
 * A rollout's turns are scored in order against the state its earlier turns left.
 * Departures: solve_rate is 1 when there is nothing to solve (FTRL's divides by zero);
 * a trailing `<|im_end|>` / `<|endoftext|>` is stripped, as FTRL does.
 */
import { answerVerify, ftrlSolveMetrics, type CallOutput, type SolveMetrics } from './metrics';

type UnsolvedSet = Readonly<Record<string, readonly string[]>>;

function copyUnsolvedSet(unsolvedSet: UnsolvedSet, where: string): Map<string, string[]> {
  if (unsolvedSet === null || typeof unsolvedSet !== 'object' || Array.isArray(unsolvedSet)) {
    throw new Error(`${where}: unsolvedSet must be an object {toolName: [answers]}`);
  }
  const remaining = new Map<string, string[]>();
  for (const [name, answers] of Object.entries(unsolvedSet)) {
    if (!Array.isArray(answers) || !answers.every((a) => typeof a === 'string')) {
      throw new Error(`${where}: unsolvedSet["${name}"] must be an array of strings`);
    }
    remaining.set(name, [...answers]);
  }
  return remaining;
}

/** Per call, 1 when it solved a remaining expected answer (removed from `remaining`), else 0. */
function creditCalls(calls: readonly CallOutput[], remaining: Map<string, string[]>, where: string): number[] {
  return calls.map((call, i) => {
    if (!call || typeof call.name !== 'string' || typeof call.output !== 'string') {
      throw new Error(`${where}: calls[${i}] must be {name: string, output: string}`);
    }
    const answers = remaining.get(call.name);
    if (!answers) return 0;
    const k = answers.findIndex((a) => answerVerify(call.output, a));
    if (k < 0) return 0;
    answers.splice(k, 1);
    return 1;
  });
}

/**
 * Per call, 1 when it solved a remaining sub-question, else 0 (ftrlSolveMetrics' walk).
 * @param calls the policy's calls in order
 * @param unsolvedSet tool name → expected answers (not modified)
 */
export function computeFtrlCallCredits(calls: readonly CallOutput[], unsolvedSet: UnsolvedSet): number[] {
  if (!Array.isArray(calls)) throw new Error('computeFtrlCallCredits: calls must be an array');
  return creditCalls(calls, copyUnsolvedSet(unsolvedSet, 'computeFtrlCallCredits'), 'computeFtrlCallCredits');
}

/** One assistant turn as compute_solve_f1 reads it. */
export interface FtrlTurn {
  /** The assistant's text of the turn, verbatim. */
  text: string;
  /** Its parsed calls, each with the tool's output; empty when no call parsed. */
  calls: readonly CallOutput[];
}

function normalizeAnswerText(text: string): string {
  return text.toLowerCase().replaceAll(',', '').trim();
}

/**
 * compute_solve_f1 of one turn (FTRL tool.py).
 * @param solved per call of the turn, 1 when it solved a remaining expected answer
 * @param unsolvedBefore expected answers still unsolved before the turn
 * @param solveRate share of expected answers solved before the turn
 * @param answer the reference answer
 */
export function computeSolveF1TurnReward(
  turn: FtrlTurn,
  solved: readonly number[],
  unsolvedBefore: number,
  solveRate: number,
  answer: string,
): number {
  if (turn.calls.length > 0) return (2 * solved.reduce((s, x) => s + x, 0)) / (turn.calls.length + 1);
  const content = turn.text
    .trim()
    .replace(/(?:<\|endoftext\|>|<\|im_end\|>)$/, '')
    .trim();
  if (content === '') return -0.5;
  if (content.includes('<tool_call>') || content.includes('</tool_call>') || content.includes('<tool_parsed_response>'))
    return -0.3;
  if (normalizeAnswerText(content).includes(normalizeAnswerText(answer))) return 1 / (1 + unsolvedBefore);
  if (solveRate === 1) return 0.5;
  return 0;
}

export interface FtrlReward {
  /** Σ_t r_t: the rollout's total (the `reward` metric). */
  reward: number;
  /** r_t per turn, compute_solve_f1 against the state the earlier turns left. */
  turnRewards: number[];
  /** Per turn, per call: 1 when the call solved a sub-question. */
  callCredits: number[][];
  /** Solve-P/R/F1 over all the rollout's calls (PACT App. A). */
  metrics: SolveMetrics;
}

/**
 * FTRL's per-turn rewards of one rollout.
 * @param turns every assistant turn in order
 * @param unsolvedSet the task's `unsolved_set` (not modified)
 * @param answer the task's reference answer
 */
export function ftrlReward(turns: readonly FtrlTurn[], unsolvedSet: UnsolvedSet, answer: string): FtrlReward {
  if (!Array.isArray(turns) || !turns.every((t) => t && typeof t.text === 'string' && Array.isArray(t.calls))) {
    throw new Error('ftrlReward: turns must be an array of {text: string, calls: [{name, output}]}');
  }
  if (typeof answer !== 'string') throw new Error('ftrlReward: answer must be a string');
  const remaining = copyUnsolvedSet(unsolvedSet, 'ftrlReward');
  const countRemaining = () => [...remaining.values()].reduce((s, a) => s + a.length, 0);
  const nExpected = countRemaining();
  const turnRewards: number[] = [];
  const callCredits: number[][] = [];
  for (const [t, turn] of turns.entries()) {
    const unsolvedBefore = countRemaining();
    const solveRate = nExpected === 0 ? 1 : 1 - unsolvedBefore / nExpected;
    const solved = creditCalls(turn.calls, remaining, `ftrlReward: turns[${t}]`);
    callCredits.push(solved);
    turnRewards.push(computeSolveF1TurnReward(turn, solved, unsolvedBefore, solveRate, answer));
  }
  return {
    reward: turnRewards.reduce((s, x) => s + x, 0),
    turnRewards,
    callCredits,
    metrics: ftrlSolveMetrics(
      turns.flatMap((t) => t.calls),
      unsolvedSet,
    ),
  };
}
