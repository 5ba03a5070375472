/**
 * The pieces of a teacher turn (teacher.ts): the random choices, the paragraphs that
 * ground a call's required and optional arguments, the turn built from its paragraphs
 * (chunks, leak marks, prefix levels), and a deliberately wrong first attempt to retry.
 */
import type { Rng } from '../core/rng';
import type { ToolCall } from '../core/types';
import type { Task, ToolSchema } from '../envs/types';
import { computePrefixChunkCounts, countSafeChunks } from './prefixLevels';
import {
  describeValue,
  GROUNDING_BY_SOURCE,
  GROUNDING_INTRO,
  OPTIONAL_DEFAULT,
  OPTIONAL_OMIT,
  OPTIONAL_SET,
} from './teacherPhrases';
import type { ResolvedCall } from './teacherPlan';
import type { ChunkType, ReasoningChunk, TraceTurn } from './types';

export interface Paragraph {
  type: ChunkType;
  text: string;
}

export function pickOne<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)];
}

export function isChance(rng: Rng, probability: number): boolean {
  return rng.next() < probability;
}

export function findToolSchema(task: Task, name: string): ToolSchema | undefined {
  return task.tools.find((t) => t.function.name === name);
}

export function listRequiredParams(schema: ToolSchema | undefined): string[] {
  return schema?.function.parameters.required ?? [];
}

export function writeRequiredGrounding(
  rng: Rng,
  resolved: ResolvedCall,
  schema: ToolSchema | undefined,
  label: string,
): Paragraph | null {
  const properties = schema?.function.parameters.properties ?? {};
  const required = new Set(listRequiredParams(schema));
  const args = Object.entries(resolved.call.arguments).filter(([arg]) => required.has(arg) || !(arg in properties));
  if (args.length === 0 && required.size === 0) return null;
  const intro = pickOne(rng, GROUNDING_INTRO);
  const body =
    args.length === 0
      ? 'None seem to be needed for this step.'
      : args
          .map(([arg, v]) =>
            pickOne(rng, GROUNDING_BY_SOURCE[resolved.sources.get(arg) ?? 'task'])(arg, describeValue(v)),
          )
          .join(' ');
  return { type: 'required_arg_grounding', text: `${intro}${label ? ` (${label})` : ''} ${body}` };
}

export function writeOptionalAnalysis(
  rng: Rng,
  call: ToolCall,
  schema: ToolSchema | undefined,
  isForced: boolean,
  probability: number,
): Paragraph | null {
  const properties = schema?.function.parameters.properties ?? {};
  const required = new Set(listRequiredParams(schema));
  const optional = Object.keys(properties).filter((p) => !required.has(p));
  if (optional.length === 0) return null;
  const passed = optional.filter((o) => o in call.arguments);
  if (!isForced && passed.length === 0 && !isChance(rng, probability)) return null;
  const sentences = optional.map((o) => {
    if (o in call.arguments) return pickOne(rng, OPTIONAL_SET)(o, describeValue(call.arguments[o]));
    const d = properties[o].default;
    return d !== undefined ? pickOne(rng, OPTIONAL_DEFAULT)(o, describeValue(d)) : pickOne(rng, OPTIONAL_OMIT)(o);
  });
  return { type: 'optional_arg_analysis', text: sentences.join(' ') };
}

export function describeToolPurpose(schema: ToolSchema | undefined): string {
  const text = (schema?.function.description ?? '').replace(/\s+/g, ' ').trim();
  if (!text) return 'it answers this kind of lookup.';
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

export function buildTurn(paragraphs: Paragraph[], calls: ToolCall[], observations: string[]): TraceTurn {
  let isLeaked = false;
  const chunks: ReasoningChunk[] = paragraphs.map((p, i) => {
    if (p.type === 'explicit_call_preview') isLeaked = true;
    return {
      id: `C${i + 1}`,
      type: p.type,
      text: i < paragraphs.length - 1 ? `${p.text}\n\n` : p.text,
      keepForPrefix: !isLeaked,
    };
  });
  return {
    reasoning: chunks.map((c) => c.text).join(''),
    chunks,
    calls,
    observations,
    prefixChunkCounts: computePrefixChunkCounts(countSafeChunks(chunks)),
  };
}

/** A deliberately wrong first attempt: the call issued, the mistake, and how the retry fixes it. */
export interface Corruption {
  call: ToolCall;
  mistake: string;
  fix: string;
  /** For a misnamed argument: [wrong name, right name]. */
  renamed?: [string, string];
}

export function corruptCall(rng: Rng, call: ToolCall, schema: ToolSchema | undefined): Corruption | null {
  const candidates = listRequiredParams(schema).filter((r) => r in call.arguments);
  if (candidates.length === 0) return null;
  const arg = pickOne(rng, candidates);
  const args = { ...call.arguments };
  const value = args[arg];
  delete args[arg];
  if (isChance(rng, 0.5)) {
    return {
      call: { name: call.name, arguments: args },
      mistake: `left out the required argument ${arg}`,
      fix: `including ${arg}`,
    };
  }
  const wrongName = arg.endsWith('_name') ? `${arg}_value` : `${arg}_name`;
  // Keep the original key order with the misnamed key in place.
  const renamed: Record<string, unknown> = {};
  for (const key of Object.keys(call.arguments))
    renamed[key === arg ? wrongName : key] = key === arg ? value : call.arguments[key];
  return {
    call: { name: call.name, arguments: renamed },
    mistake: `used the argument name ${wrongName}, but the tool expects ${arg}`,
    fix: `using the correct argument name ${arg}`,
    renamed: [wrongName, arg],
  };
}
