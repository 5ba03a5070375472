/**
 * Expert traces h* (PACT Eq. expert-trace): per assistant turn the reasoning u*_t
 * split into semantic chunks, the tool calls a*_t and the observations o*_t.
 * The final answer y is kept beside the trace but is never part of h* (PACT §3.1).
 * The vocabulary lives in core so that tasks (src/envs) can carry a trace; src/traces,
 * which builds and checks traces, re-exports it from traces/types.ts.
 */
import type { ToolCall } from './types';

/** The chunk types of PACT App. C (trace segmentation prompt). */
export type ChunkType =
  | 'task_restate'
  | 'tool_scan'
  | 'tool_selection'
  | 'required_arg_grounding'
  | 'optional_arg_analysis'
  | 'irrelevant_tool_rejection'
  | 'failure_reflection'
  | 'fallback_plan'
  | 'decision_summary'
  | 'explicit_call_preview'
  | 'final_answer_grounding'
  | 'other';

export const CHUNK_TYPES: readonly ChunkType[] = [
  'task_restate',
  'tool_scan',
  'tool_selection',
  'required_arg_grounding',
  'optional_arg_analysis',
  'irrelevant_tool_rejection',
  'failure_reflection',
  'fallback_plan',
  'decision_summary',
  'explicit_call_preview',
  'final_answer_grounding',
  'other',
] as const;

export interface ReasoningChunk {
  id: string; // "C1", "C2", …
  type: ChunkType;
  text: string;
  /** False for leakage (explicit_call_preview) and anything after it. */
  keepForPrefix: boolean;
}

export type PrefixLevel = 0 | 1 | 2 | 3 | 4;

export interface TraceTurn {
  /** The full reasoning text of the turn (the concatenation of the chunks' text). */
  reasoning: string;
  chunks: ReasoningChunk[];
  calls: ToolCall[];
  /** One observation per call, in order. */
  observations: string[];
  /**
   * Cumulative prefix levels L0..L4: `prefixChunkCounts[L]` = how many leading chunks
   * level L reveals. Non-decreasing, prefixChunkCounts[0] = 0, and never past the
   * first leaking chunk.
   */
  prefixChunkCounts: [number, number, number, number, number];
}

export interface ExpertTrace {
  taskId: string;
  turns: TraceTurn[];
  /** The teacher's final answer y: kept for verification, excluded from h*. */
  finalAnswer?: string;
  source: 'teacher' | 'imported';
  /** True when every call verified against the reference (PACT App. C filtering). */
  verified: boolean;
}
