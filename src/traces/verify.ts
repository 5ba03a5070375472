/**
 * Trace verification and filtering (PACT App. C, "Expert trajectory generation"):
 * a trajectory is kept only when its final answer, or its last tool observation,
 * verifies against the reference answer, and invalid trajectories are removed:
 * invalid tool names, malformed parsed turns, tool responses containing role text, and
 * tool responses containing tool-call tags.
 *
 * Simplification: answer matching is substring containment after normalisation (no
 * semantic judge, no number reformatting).
 *
 * The checks and their rejection codes: docs/traces.md.
 */
import type { ToolSchema } from '../envs/types';
import { describePrefixCountsError } from './prefixLevels';
import { CHUNK_TYPES, type ExpertTrace } from './types';

export type TraceRejectionCode =
  | 'no_turns'
  | 'unknown_tool'
  | 'malformed_turn'
  | 'role_text_in_observation'
  | 'tool_call_tag_in_observation'
  | 'answer_not_verified';

export interface TraceRejection {
  code: TraceRejectionCode;
  /** Where and what, e.g. "turns.1.calls.0: unknown tool get_wether". */
  detail: string;
}

export interface TraceVerdict {
  isValid: boolean;
  rejections: TraceRejection[];
}

/** The parts of a task verification needs. */
export interface VerificationReference {
  tools: ToolSchema[];
  answer: string;
}

const ROLE_TEXT = /<\|im_start\|>|<\|im_end\|>|(?:^|\n)\s*(?:assistant|user|system)\s*:/i;
const TOOL_TAGS = /<\/?tool_call>|<\/?tool_response>/i;
const REASONING_TAGS = /<\/?tool_call>|<\/?think>|<\/?answer>/i;

/** Lower-case, collapse whitespace, trim; used for answer containment. */
export function normalizeAnswerText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** All the reasons `trace` must be filtered out; empty when it is kept. */
export function verifyTrace(trace: ExpertTrace, reference: VerificationReference): TraceVerdict {
  const rejections: TraceRejection[] = [];
  const reject = (code: TraceRejectionCode, detail: string) => rejections.push({ code, detail });
  if (!Array.isArray(trace.turns) || trace.turns.length === 0) {
    reject('no_turns', 'turns: the trace has no turns');
    return { isValid: false, rejections };
  }
  const known = new Set(reference.tools.map((t) => t.function.name));

  trace.turns.forEach((turn, t) => {
    const at = `turns.${t}`;
    if (typeof turn !== 'object' || turn === null) {
      reject('malformed_turn', `${at}: must be an object`);
      return;
    }
    const calls = Array.isArray(turn.calls) ? turn.calls : [];
    const observations = Array.isArray(turn.observations) ? turn.observations : [];
    const chunks = Array.isArray(turn.chunks) ? turn.chunks : [];
    if (!Array.isArray(turn.calls) || !Array.isArray(turn.observations) || !Array.isArray(turn.chunks)) {
      reject('malformed_turn', `${at}: calls, observations and chunks must be arrays`);
    }
    if (calls.length !== observations.length) {
      reject('malformed_turn', `${at}: ${calls.length} call(s) but ${observations.length} observation(s)`);
    }
    if (calls.length === 0 && t < trace.turns.length - 1)
      reject('malformed_turn', `${at}: only the last turn may make no call`);
    calls.forEach((call, c) => {
      if (typeof call?.name !== 'string' || call.name.length === 0)
        reject('malformed_turn', `${at}.calls.${c}.name: empty tool name`);
      else if (!known.has(call.name)) reject('unknown_tool', `${at}.calls.${c}: unknown tool ${call.name}`);
      if (!isPlainObject(call?.arguments)) reject('malformed_turn', `${at}.calls.${c}.arguments: must be an object`);
    });
    if (typeof turn.reasoning !== 'string') {
      reject('malformed_turn', `${at}.reasoning: must be a string`);
    } else {
      if (chunks.map((ch) => ch?.text ?? '').join('') !== turn.reasoning) {
        reject('malformed_turn', `${at}.chunks: chunk texts do not concatenate to the reasoning`);
      }
      if (REASONING_TAGS.test(turn.reasoning))
        reject('malformed_turn', `${at}.reasoning: contains tool-call, think or answer tags`);
    }
    const ids = new Set<string>();
    chunks.forEach((chunk, k) => {
      if (ids.has(chunk.id)) reject('malformed_turn', `${at}.chunks.${k}.id: duplicate id ${chunk.id}`);
      ids.add(chunk.id);
      if (!CHUNK_TYPES.includes(chunk.type))
        reject('malformed_turn', `${at}.chunks.${k}.type: unknown chunk type ${String(chunk.type)}`);
      if (chunk.type === 'explicit_call_preview' && chunk.keepForPrefix) {
        reject('malformed_turn', `${at}.chunks.${k}: an explicit_call_preview must have keepForPrefix false`);
      }
      if (k > 0 && !chunks[k - 1].keepForPrefix && chunk.keepForPrefix) {
        reject('malformed_turn', `${at}.chunks.${k}: a chunk after a leak must have keepForPrefix false`);
      }
    });
    const countsProblem = describePrefixCountsError(turn.prefixChunkCounts, chunks);
    if (countsProblem) reject('malformed_turn', `${at}.prefixChunkCounts: ${countsProblem}`);
    observations.forEach((observation, o) => {
      if (typeof observation !== 'string') {
        reject('malformed_turn', `${at}.observations.${o}: must be a string`);
        return;
      }
      if (ROLE_TEXT.test(observation))
        reject('role_text_in_observation', `${at}.observations.${o}: contains role text`);
      if (TOOL_TAGS.test(observation))
        reject('tool_call_tag_in_observation', `${at}.observations.${o}: contains tool-call tags`);
    });
  });

  const referenceText = normalizeAnswerText(String(reference.answer ?? ''));
  const lastCallTurn = [...trace.turns].reverse().find((turn) => Array.isArray(turn?.calls) && turn.calls.length > 0);
  const lastObservation = normalizeAnswerText((lastCallTurn?.observations ?? []).join('\n'));
  const finalAnswer = normalizeAnswerText(trace.finalAnswer ?? '');
  const isAnswered =
    referenceText.length > 0 && (finalAnswer.includes(referenceText) || lastObservation.includes(referenceText));
  if (!isAnswered) {
    reject(
      'answer_not_verified',
      `neither the final answer nor the last observation contains the reference answer ${JSON.stringify(reference.answer)}`,
    );
  }
  return { isValid: rejections.length === 0, rejections };
}

/** The trace with `verified` set from `verifyTrace`, and the verdict. */
export function markVerified(
  trace: ExpertTrace,
  reference: VerificationReference,
): { trace: ExpertTrace; verdict: TraceVerdict } {
  const verdict = verifyTrace(trace, reference);
  return { trace: { ...trace, verified: verdict.isValid }, verdict };
}

export interface FilterResult {
  kept: ExpertTrace[];
  rejected: Array<{ taskId: string; rejections: TraceRejection[] }>;
}

/** Keeps the traces that verify against their task (App. C filtering). */
export function filterTraces(
  items: ReadonlyArray<{ trace: ExpertTrace; reference: VerificationReference }>,
): FilterResult {
  const result: FilterResult = { kept: [], rejected: [] };
  for (const { trace, reference } of items) {
    const { trace: marked, verdict } = markVerified(trace, reference);
    if (verdict.isValid) result.kept.push(marked);
    else result.rejected.push({ taskId: trace.taskId, rejections: verdict.rejections });
  }
  return result;
}
