/**
 * Reading observations for the scripted teacher (teacher.ts): whether one reads as an
 * error, the value it reports, the span equal to an expected value, text safe to quote in
 * reasoning, and whether a final answer is grounded in what the tools returned.
 */
import type { ToolCall } from '../core/types';

export function normalizeText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Observation text safe to quote inside reasoning: no tags, braces or tool names. */
export function quoteObservation(text: string, toolNames: readonly string[]): string {
  let quoted = text
    .replace(/[<>{}]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  for (const name of toolNames) if (name) quoted = quoted.split(name).join('the tool');
  return quoted.length > 160 ? `${quoted.slice(0, 157)}...` : quoted;
}

const ERROR_PATTERN =
  /\b(?:error|invalid|missing|required|unknown|not found|failed|exception|occured|occurred|unexpected)\b/i;

/** True when an observation reads as a failed call. */
export function isErrorObservation(observation: string): boolean {
  return ERROR_PATTERN.test(observation);
}

/**
 * The value an observation reports. A JSON scalar is itself; for a JSON object, fields
 * that echo the call's own arguments are skipped, then the first of: a result/answer/
 * value/output field, a field named inside the tool name (`elevation` of
 * get_elevation), the only remaining scalar field, the first one. A one-element array
 * gives its element; anything else gives the first line of the text.
 */
export function extractObservationValue(observation: string, call?: ToolCall): string {
  const text = observation.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text.split('\n')[0].trim(); // not JSON: plain text
  }
  const isScalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
  if (isScalar(parsed)) return String(parsed);
  if (Array.isArray(parsed) && parsed.length === 1 && isScalar(parsed[0])) return String(parsed[0]);
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const echoed = new Set(Object.values(call?.arguments ?? {}).map((v) => normalizeText(String(v))));
    const fields = Object.entries(parsed as Record<string, unknown>).filter(
      ([, v]) => isScalar(v) && !echoed.has(normalizeText(String(v))),
    );
    const toolName = (call?.name ?? '').toLowerCase();
    const chosen =
      fields.find(([k]) => ['result', 'answer', 'value', 'output'].includes(k.toLowerCase())) ??
      fields.find(([k]) => k.length > 2 && toolName.includes(k.toLowerCase())) ??
      fields[0];
    if (chosen) return String(chosen[1]);
  }
  return text.split('\n')[0].trim();
}

/** The span of `observation` equal to `value` (case-insensitive), with its own casing. */
export function findValueInObservation(observation: string, value: string): string | null {
  const needle = value.trim().toLowerCase();
  if (!needle) return null;
  const index = observation.toLowerCase().indexOf(needle);
  return index === -1 ? null : observation.slice(index, index + needle.length);
}

/** Casts text read from an observation to the JSON type of the gold value. */
export function castLike(gold: unknown, text: string): unknown {
  if (typeof gold === 'number') {
    const n = Number(text.replace(/,/g, ''));
    return Number.isFinite(n) ? n : text;
  }
  if (typeof gold === 'boolean') return /^true$/i.test(text) ? true : /^false$/i.test(text) ? false : text;
  return text;
}

/** True when every part of `answer` (split on , ; "and") appears in some observation. */
export function isAnswerGrounded(answer: string, observations: readonly string[]): boolean {
  const parts = answer
    .split(/\s*(?:,|;|\band\b)\s*/i)
    .map((p) => normalizeText(p))
    .filter((p) => p.length > 0);
  const haystacks = observations.map((o) => normalizeText(o));
  return parts.length > 0 && parts.every((p) => haystacks.some((h) => h.includes(p)));
}
