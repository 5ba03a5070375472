/**
 * FTRL's reward (Ye et al. 2025, "Feedback-Driven Tool-Use Improvements in Large Language
 * Models via Automated Build Environments", §3 "verifiable reward"; PACT cites it as
 * `ye2025ftrl`): the reward of a rollout is its Solve-F1, the harmonic mean of tool-use
 * precision q/p and task completeness q/n, where n = number of sub-questions (expected
 * answers in `unsolved_set`), p = number of tool calls, q = sub-questions solved.
 * A call solves a sub-question when it calls a tool named in `unsolved_set` and its
 * output passes FTRL's `answer_verify` against one remaining expected answer of that
 * tool (removed once solved) — the same walk as core/metrics `ftrlSolveMetrics`.
 *
 * Per-step form: Solve-F1 = 2q/(p + n) = Σ_calls 2·credit_c/(p + n), so each call that
 * solves a remaining sub-question earns 2/(p + n) and a turn's reward is the sum over its
 * calls; the turn rewards add up to Solve-F1 exactly (outcome-equivalent under GRPO).
 *
 * Source/simplifications: the texts in this project give FTRL's metrics (PACT App. A)
 * but not its reward formula; that the reward is Solve-F1 is taken from the FTRL paper as
 * recalled (its reward "jointly considers the precision of tool use and the completeness of
 * the task"). Edge case p + n = 0 (no calls, nothing to solve): reward 1, put on the last turn.
 */
import { answerVerify, ftrlSolveMetrics, type CallOutput, type SolveMetrics } from './metrics';

/**
 * Per call, 1 when it solved a remaining sub-question, else 0 (ftrlSolveMetrics' walk).
 * @param calls the policy's calls in order
 * @param unsolvedSet tool name → expected answers (not modified)
 */
export function computeFtrlCallCredits(calls: readonly CallOutput[], unsolvedSet: Readonly<Record<string, readonly string[]>>): number[] {
  if (!Array.isArray(calls)) throw new Error('computeFtrlCallCredits: calls must be an array');
  if (unsolvedSet === null || typeof unsolvedSet !== 'object' || Array.isArray(unsolvedSet)) {
    throw new Error('computeFtrlCallCredits: unsolvedSet must be an object {toolName: [answers]}');
  }
  const remaining = new Map<string, string[]>();
  for (const [name, answers] of Object.entries(unsolvedSet)) {
    if (!Array.isArray(answers) || !answers.every((a) => typeof a === 'string')) {
      throw new Error(`computeFtrlCallCredits: unsolvedSet["${name}"] must be an array of strings`);
    }
    remaining.set(name, [...answers]);
  }
  return calls.map((call, i) => {
    if (!call || typeof call.name !== 'string' || typeof call.output !== 'string') {
      throw new Error(`computeFtrlCallCredits: calls[${i}] must be {name: string, output: string}`);
    }
    const answers = remaining.get(call.name);
    if (!answers) return 0;
    const k = answers.findIndex((a) => answerVerify(call.output, a));
    if (k < 0) return 0;
    answers.splice(k, 1);
    return 1;
  });
}

export interface FtrlReward {
  /** Solve-F1 of the rollout: the outcome reward. */
  reward: number;
  /** Per turn, Σ over its calls of 2·credit/(p + n); sums to `reward`. */
  turnRewards: number[];
  /** Per turn, per call: 1 when the call solved a sub-question. */
  callCredits: number[][];
  metrics: SolveMetrics;
}

/**
 * FTRL's per-step solve reward of one rollout.
 * @param turnCalls [T][calls of turn t], every executed call with its output, in order
 * @param unsolvedSet the task's `unsolved_set`
 */
export function ftrlReward(turnCalls: readonly (readonly CallOutput[])[], unsolvedSet: Readonly<Record<string, readonly string[]>>): FtrlReward {
  if (!Array.isArray(turnCalls) || !turnCalls.every((t) => Array.isArray(t))) {
    throw new Error('ftrlReward: turnCalls must be an array (turns) of arrays (calls)');
  }
  const flat = turnCalls.flat();
  const credits = computeFtrlCallCredits(flat, unsolvedSet);
  const metrics = ftrlSolveMetrics(flat, unsolvedSet);
  const nExpected = Object.values(unsolvedSet).reduce((s, a) => s + a.length, 0);
  const denominator = flat.length + nExpected;
  const callCredits: number[][] = [];
  let offset = 0;
  for (const t of turnCalls) {
    callCredits.push(credits.slice(offset, offset + t.length));
    offset += t.length;
  }
  const turnRewards = callCredits.map((c) => (denominator === 0 ? 0 : c.reduce((s, x) => s + (2 * x) / denominator, 0)));
  if (denominator === 0 && turnRewards.length > 0) turnRewards[turnRewards.length - 1] = metrics.solveF1;
  return { reward: metrics.solveF1, turnRewards, callCredits, metrics };
}
