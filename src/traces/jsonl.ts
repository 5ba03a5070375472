/**
 * Expert traces as JSONL: one `ExpertTrace` per line. Import validates each line with
 * zod and reports bad lines by line number and field path, skipping them. A line may
 * leave out `chunks` and `prefixChunkCounts` on every turn (an unlabeled imported
 * trace, PACT App. C): such lines are returned separately for segment.ts, or segmented
 * directly by `importTracesJsonl`.
 *
 * Lines are cut, and each line checked for depth and "__proto__" keys before the schema, by
 * src/core/untrustedJson.ts; messages quote at most a short excerpt.
 *
 * Simplification: the whole text is held in memory (fine for the trace counts here).
 */
import { z } from 'zod';
import { findJsonHazard, limitText, splitJsonlLines } from '../core/untrustedJson';
import { describePrefixCountsError } from './prefixLevels';
import { segmentTrace, type LlmAnnotator, type RawTrace, type TurnSegmentation } from './segment';
import { CHUNK_TYPES, type ChunkType, type ExpertTrace } from './types';

const toolCallSchema = z.object({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
});

const chunkSchema = z.object({
  id: z.string().min(1),
  type: z.enum(CHUNK_TYPES as unknown as [ChunkType, ...ChunkType[]]),
  text: z.string(),
  keepForPrefix: z.boolean(),
});

const countSchema = z.number().int().nonnegative();

const turnSchema = z
  .object({
    reasoning: z.string(),
    chunks: z.array(chunkSchema).optional(),
    calls: z.array(toolCallSchema),
    observations: z.array(z.string()),
    prefixChunkCounts: z.tuple([countSchema, countSchema, countSchema, countSchema, countSchema]).optional(),
  })
  .superRefine((turn, ctx) => {
    if (turn.calls.length !== turn.observations.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['observations'],
        message: `${turn.calls.length} call(s) need as many observations, got ${turn.observations.length}`,
      });
    }
    if ((turn.chunks === undefined) !== (turn.prefixChunkCounts === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [turn.chunks === undefined ? 'chunks' : 'prefixChunkCounts'],
        message: 'chunks and prefixChunkCounts must be given together',
      });
      return;
    }
    if (turn.chunks && turn.prefixChunkCounts) {
      if (turn.chunks.map((c) => c.text).join('') !== turn.reasoning) {
        ctx.addIssue({ code: 'custom', path: ['chunks'], message: 'chunk texts must concatenate to the reasoning' });
      }
      const problem = describePrefixCountsError(turn.prefixChunkCounts, turn.chunks);
      if (problem) ctx.addIssue({ code: 'custom', path: ['prefixChunkCounts'], message: problem });
    }
  });

/** zod schema of one JSONL line (labeled or unlabeled trace). */
export const traceLineSchema = z
  .object({
    taskId: z.string().min(1),
    turns: z.array(turnSchema),
    finalAnswer: z.string().optional(),
    source: z.enum(['teacher', 'imported']).default('imported'),
    verified: z.boolean().default(false),
  })
  .superRefine((trace, ctx) => {
    const labeled = trace.turns.map((t) => t.chunks !== undefined);
    if (labeled.some((v) => v) && labeled.some((v) => !v)) {
      const first = labeled.indexOf(false);
      ctx.addIssue({
        code: 'custom',
        path: ['turns', first, 'chunks'],
        message: 'either every turn has chunks or none does',
      });
    }
  });

export interface JsonlLineError {
  /** 1-based line number. */
  line: number;
  /** Dotted field path of the first problem ('' for the line itself). */
  path: string;
  message: string;
}

export interface ParsedTraces {
  traces: ExpertTrace[];
  /** Lines without chunk labels, to segment (see segment.ts). */
  unlabeled: RawTrace[];
  errors: JsonlLineError[];
}

/** Parses JSONL text: valid lines become traces, bad lines become errors. Never throws. */
export function parseTracesJsonl(text: string): ParsedTraces {
  const result: ParsedTraces = { traces: [], unlabeled: [], errors: [] };
  const fail = (line: number, path: readonly PropertyKey[], message: string) =>
    result.errors.push({ line, path: limitText(path.map(String).join('.'), 120), message: limitText(message, 300) });
  for (const { line, text: rawLine } of splitJsonlLines(text)) {
    if (rawLine.trim().length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(rawLine);
    } catch (err) {
      fail(line, [], `invalid JSON: ${(err as Error).message}`);
      continue;
    }
    const hazard = findJsonHazard(value);
    if (hazard) {
      fail(line, hazard.path, hazard.message);
      continue;
    }
    const parsed = traceLineSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const more = parsed.error.issues.length > 1 ? ` (+${parsed.error.issues.length - 1} more)` : '';
      fail(line, issue.path, `${issue.message}${more}`);
      continue;
    }
    const data = parsed.data;
    const isLabeled = data.turns.length > 0 && data.turns.every((t) => t.chunks !== undefined);
    if (isLabeled || data.turns.length === 0) {
      const trace: ExpertTrace = {
        taskId: data.taskId,
        turns: data.turns.map((t) => ({
          reasoning: t.reasoning,
          chunks: t.chunks ?? [],
          calls: t.calls,
          observations: t.observations,
          prefixChunkCounts: t.prefixChunkCounts ?? [0, 0, 0, 0, 0],
        })),
        source: data.source,
        verified: data.verified,
      };
      if (data.finalAnswer !== undefined) trace.finalAnswer = data.finalAnswer;
      result.traces.push(trace);
    } else {
      const raw: RawTrace = {
        taskId: data.taskId,
        turns: data.turns.map((t) => ({ reasoning: t.reasoning, calls: t.calls, observations: t.observations })),
      };
      if (data.finalAnswer !== undefined) raw.finalAnswer = data.finalAnswer;
      result.unlabeled.push(raw);
    }
  }
  return result;
}

/**
 * Parses JSONL and segments the unlabeled traces (rules → annotator → fallback).
 * Returned traces keep their file order within each group: labeled first, then the
 * segmented ones. Imported traces are unverified until checked with verify.ts.
 */
export async function importTracesJsonl(
  text: string,
  options: { annotator?: LlmAnnotator } = {},
): Promise<{
  traces: ExpertTrace[];
  errors: JsonlLineError[];
  segmentation: Array<{ taskId: string; reports: TurnSegmentation[] }>;
}> {
  const parsed = parseTracesJsonl(text);
  const traces = [...parsed.traces];
  const segmentation: Array<{ taskId: string; reports: TurnSegmentation[] }> = [];
  for (const raw of parsed.unlabeled) {
    const { trace, reports } = await segmentTrace(raw, options);
    traces.push(trace);
    segmentation.push({ taskId: raw.taskId, reports });
  }
  return { traces, errors: parsed.errors, segmentation };
}

/** One trace per line, fields in the ExpertTrace order, ending with a newline. */
export function exportTracesJsonl(traces: readonly ExpertTrace[]): string {
  return traces
    .map((trace) =>
      JSON.stringify({
        taskId: trace.taskId,
        turns: trace.turns.map((t) => ({
          reasoning: t.reasoning,
          chunks: t.chunks,
          calls: t.calls,
          observations: t.observations,
          prefixChunkCounts: t.prefixChunkCounts,
        })),
        ...(trace.finalAnswer !== undefined ? { finalAnswer: trace.finalAnswer } : {}),
        source: trace.source,
        verified: trace.verified,
      }),
    )
    .map((line) => `${line}\n`)
    .join('');
}
