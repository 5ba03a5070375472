/**
 * Evaluation metrics.
 *
 * - `answerVerify`: FTRL's `answer_verify` (Ye et al. 2025): split the gold answer on
 *   ', ' and require every piece, lower-cased with commas removed and trimmed, to be a
 *   substring of the output normalised the same way.
 * - `ftrlSolveMetrics`: FTRL Solve-P / Solve-R / Solve-F1 (PACT App. A): walk the calls in
 *   order; a call to a tool named in the unsolved set removes the first remaining
 *   expected answer its output verifies. Solve-P = q/p (1 when p = 0), Solve-R = q/n,
 *   Solve-F1 = 2q/(p + n) (the harmonic mean of the two).
 * - `toolHopCorrect`: ToolHop answer correctness AC (PACT App. A, "contains").
 * - `selectionMetrics`: ToolSearcher tool-selection P/R/F1, Match and SRecall (App. B of
 *   ToolSearcher).
 */

function normalizeForVerify(text: string): string {
  return text.toLowerCase().replaceAll(',', '').trim();
}

/** FTRL answer_verify: every ', '-separated piece of `gold` appears in `output`. */
export function answerVerify(output: string, gold: string): boolean {
  if (typeof output !== 'string') throw new Error('answerVerify: output must be a string');
  if (typeof gold !== 'string') throw new Error('answerVerify: gold must be a string');
  const haystack = normalizeForVerify(output);
  return gold.split(', ').every((piece) => haystack.includes(normalizeForVerify(piece)));
}

/** One tool call the policy made, with the tool's output. */
export interface CallOutput {
  name: string;
  output: string;
}

export interface SolveMetrics {
  solveP: number;
  solveR: number;
  solveF1: number;
  /** q: expected answers found. */
  solved: number;
}

/**
 * FTRL Solve metrics of one task.
 * @param calls the policy's calls in order
 * @param unsolvedSet tool name → expected answers (not modified)
 */
export function ftrlSolveMetrics(
  calls: readonly CallOutput[],
  unsolvedSet: Readonly<Record<string, readonly string[]>>,
): SolveMetrics {
  if (!Array.isArray(calls)) throw new Error('ftrlSolveMetrics: calls must be an array');
  if (unsolvedSet === null || typeof unsolvedSet !== 'object' || Array.isArray(unsolvedSet)) {
    throw new Error('ftrlSolveMetrics: unsolvedSet must be an object {toolName: [answers]}');
  }
  const remaining = new Map<string, string[]>();
  let nExpected = 0;
  for (const [name, answers] of Object.entries(unsolvedSet)) {
    if (!Array.isArray(answers) || !answers.every((a) => typeof a === 'string')) {
      throw new Error(`ftrlSolveMetrics: unsolvedSet["${name}"] must be an array of strings`);
    }
    remaining.set(name, [...answers]);
    nExpected += answers.length;
  }
  let solved = 0;
  calls.forEach((call, i) => {
    if (!call || typeof call.name !== 'string' || typeof call.output !== 'string') {
      throw new Error(`ftrlSolveMetrics: calls[${i}] must be {name: string, output: string}`);
    }
    const answers = remaining.get(call.name);
    if (!answers) return;
    const k = answers.findIndex((a) => answerVerify(call.output, a));
    if (k >= 0) {
      answers.splice(k, 1);
      solved++;
    }
  });
  const nCalls = calls.length;
  return {
    solveP: nCalls === 0 ? 1 : solved / nCalls,
    solveR: nExpected === 0 ? 1 : solved / nExpected,
    solveF1: nCalls + nExpected === 0 ? 1 : (2 * solved) / (nCalls + nExpected),
    solved,
  };
}

/** Macro average of per-task Solve metrics (each task weighs the same); null for no tasks. */
export function meanSolveMetrics(perTask: readonly SolveMetrics[]): SolveMetrics | null {
  if (perTask.length === 0) return null;
  const n = perTask.length;
  const sum = (pick: (m: SolveMetrics) => number) => perTask.reduce((s, m) => s + pick(m), 0);
  return {
    solveP: sum((m) => m.solveP) / n,
    solveR: sum((m) => m.solveR) / n,
    solveF1: sum((m) => m.solveF1) / n,
    solved: sum((m) => m.solved),
  };
}

/** ToolHop answer correctness AC: 1 when the output contains the reference answer, else 0. */
export function toolHopCorrect(output: string, gold: string): 0 | 1 {
  return answerVerify(output, gold) ? 1 : 0;
}

export interface SelectionMetrics {
  precision: number;
  recall: number;
  f1: number;
  /** The selected set equals the gold set. */
  match: boolean;
  /** Fraction of gold tools that appeared in any search result. */
  sRecall: number;
}

/**
 * Tool-selection metrics over sets (duplicates ignored). Empty sets: precision is 1
 * only when both sets are empty (else 0 with nothing selected); recall and sRecall are
 * 1 when there is no gold tool; F1 is 0 when P + R = 0.
 * @param selected the tools the policy finally selected
 * @param gold the reference tools
 * @param searched the result lists of every search the policy ran
 */
export function selectionMetrics(
  selected: readonly string[],
  gold: readonly string[],
  searched: readonly (readonly string[])[],
): SelectionMetrics {
  for (const [name, list] of [
    ['selected', selected],
    ['gold', gold],
  ] as const) {
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string'))
      throw new Error(`selectionMetrics: ${name} must be an array of strings`);
  }
  if (!Array.isArray(searched) || !searched.every((r) => Array.isArray(r))) {
    throw new Error('selectionMetrics: searched must be an array of result lists (string[][])');
  }
  const selectedSet = new Set(selected);
  const goldSet = new Set(gold);
  const searchedSet = new Set(searched.flat());
  const hits = [...selectedSet].filter((t) => goldSet.has(t)).length;
  const precision = selectedSet.size === 0 ? (goldSet.size === 0 ? 1 : 0) : hits / selectedSet.size;
  const recall = goldSet.size === 0 ? 1 : hits / goldSet.size;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  const match = selectedSet.size === goldSet.size && hits === goldSet.size;
  const sRecall = goldSet.size === 0 ? 1 : [...goldSet].filter((t) => searchedSet.has(t)).length / goldSet.size;
  return { precision, recall, f1, match, sRecall };
}
