/**
 * BFCL's multi-turn accuracy rule for one entry, after the model has run: BFCL's
 * `multi_turn_runner` (bfcl_eval/eval_checker/eval_runner.py) and `multi_turn_checker`
 * (bfcl_eval/eval_checker/multi_turn_eval/multi_turn_checker.py, ShishirPatil/gorilla).
 *
 * The model's calls are executed again on fresh instances (the model's), the ground truth's
 * on separate ones; instances persist across the turns of the entry. In order:
 * 1. `force_terminated`: the model's result must have one list per ground-truth turn (an
 *    entry cut short, by the step limit or the context window, fails here);
 * 2. per turn, the model's steps run (steps with no decoded call dropped, as BFCL's runner
 *    drops them), then the ground truth's calls;
 * 3. `empty_turn_model_response`: a turn whose ground truth has calls needs at least one
 *    model step with a call; a turn whose ground truth is empty is not checked (BFCL's
 *    irrelevance check is commented out in its runner; calls made there still change state);
 * 4. `instance_state_mismatch`: BFCL's state check (pythonBackend.ts);
 * 5. `execution_response_mismatch`: every ground-truth result of the turn, counted with
 *    multiplicity, must appear among the model's results of ALL turns so far
 *    (`_is_subsequence_unordered`: order free, one model result used once).
 * The entry is correct when every turn passes. BFCL's commented-out method-order check is
 * not done either.
 */
import type { BfclBackends, BfclCall, BfclStateDifference } from './pythonBackend';
import { bfclCategoryOf, isLongContextCategory, type BfclEntry } from './data';

/** The model's calls of one entry: per turn, per step, the calls it made (call strings too: a replay of the ground truth). */
export type BfclModelTurns = BfclCall[][][];

export type BfclErrorType =
  | 'multi_turn:force_terminated'
  | 'multi_turn:empty_turn_model_response'
  | 'multi_turn:instance_state_mismatch'
  | 'multi_turn:execution_response_mismatch';

export interface BfclCheckResult {
  valid: boolean;
  errorType?: BfclErrorType;
  /** 0-based turn of the failure. */
  turn?: number;
  message?: string;
  /** State check failures: the attributes that differ. */
  differences?: BfclStateDifference[];
  /** Response check failures: ground-truth results the model's lacked. */
  missing?: string[];
}

/**
 * BFCL's `_is_subsequence_unordered(truth, model)`: the truth items not matched, each model
 * item used at most once.
 */
export function missingUnordered(truth: readonly string[], model: readonly string[]): string[] {
  const left = [...model];
  const missing: string[] = [];
  for (const item of truth) {
    const i = left.indexOf(item);
    if (i < 0) missing.push(item);
    else left.splice(i, 1);
  }
  return missing;
}

let sessionCounter = 0;

/** Checks one entry (see the file header); sessions are opened and closed here. */
export async function checkBfclEntry(
  backends: BfclBackends,
  entry: BfclEntry,
  groundTruth: readonly (readonly string[])[],
  modelTurns: BfclModelTurns,
): Promise<BfclCheckResult> {
  if (modelTurns.length !== groundTruth.length) {
    return {
      valid: false,
      errorType: 'multi_turn:force_terminated',
      message: `the model's result has ${modelTurns.length} turns, the ground truth ${groundTruth.length}`,
    };
  }
  const n = ++sessionCounter;
  const modelSid = `check-${n}-model`;
  const truthSid = `check-${n}-truth`;
  const longContext = isLongContextCategory(bfclCategoryOf(entry.id));
  const entryJson = entry.rawJson ?? JSON.stringify(entry);
  await backends.open(modelSid, entry.involved_classes, entryJson, longContext);
  try {
    await backends.open(truthSid, entry.involved_classes, entryJson, longContext);
    const allModelResults: string[] = [];
    for (const [turn, truthCalls] of groundTruth.entries()) {
      const steps = modelTurns[turn].filter((step) => step.length > 0);
      for (const step of steps) allModelResults.push(...(await backends.execute(modelSid, step)).results);
      const truth = await backends.execute(
        truthSid,
        truthCalls.map((text) => ({ text })),
      );
      if (truthCalls.length === 0) continue;
      if (steps.length === 0) {
        return {
          valid: false,
          errorType: 'multi_turn:empty_turn_model_response',
          turn,
          message: `Model response list is empty for turn ${turn}`,
        };
      }
      const differences = await backends.compare(modelSid, truthSid);
      if (differences.length > 0) {
        const classes = [...new Set(differences.map((d) => d.className))].join(', ');
        return {
          valid: false,
          errorType: 'multi_turn:instance_state_mismatch',
          turn,
          message: `Model instance for ${classes} does not match the state with ground truth instance (turn ${turn})`,
          differences,
        };
      }
      const missing = missingUnordered(truth.results, allModelResults);
      if (missing.length > 0) {
        return {
          valid: false,
          errorType: 'multi_turn:execution_response_mismatch',
          turn,
          message: `Model response execution results so far does not contain all the ground truth response execution results for turn ${turn}`,
          missing,
        };
      }
    }
    return { valid: true };
  } finally {
    await backends.close(modelSid, truthSid);
  }
}
