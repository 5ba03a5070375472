/**
 * The policy's final tool selection T_s (ToolSearcher §3.1), written as
 * `<tool_list>…</tool_list>`. The content may be a JSON array of names/ids, or names
 * separated by commas, semicolons or new lines (list bullets and quotes are stripped).
 * Only the first `<tool_list>` block counts; text inside `<think>…</think>` is ignored.
 * Never throws: malformed input gives `{ isOk: false, error }`.
 */
import type { ToolRepository } from './types';
import { describeJsonSyntaxError } from '../jsonSyntax';

export type ToolListParse = { isOk: true; names: string[] } | { isOk: false; error: string };

const OPEN_TAG = '<tool_list>';
const CLOSE_TAG = '</tool_list>';

/** Removes `<think>…</think>` blocks (and an unclosed trailing one). */
export function stripThinking(text: string): string {
  return text.replace(/<think>[\s\S]*?(<\/think>|$)/g, '');
}

/** True when the text (outside reasoning) opens a `<tool_list>` block. */
export function hasToolList(text: string): boolean {
  return stripThinking(text).includes(OPEN_TAG);
}

function cleanItem(item: string): string {
  return item
    .trim()
    .replace(/^(?:[-*•]+|\d+[.)])\s+/, '')
    .replace(/^["'`]+|["'`]+$/g, '')
    .trim();
}

/** Parses the first `<tool_list>…</tool_list>` of an assistant turn. */
export function parseToolList(text: string): ToolListParse {
  if (typeof text !== 'string') return { isOk: false, error: 'tool list: input is not a string' };
  const visible = stripThinking(text);
  const start = visible.indexOf(OPEN_TAG);
  if (start < 0) return { isOk: false, error: 'tool list: no <tool_list> tag found' };
  const end = visible.indexOf(CLOSE_TAG, start + OPEN_TAG.length);
  if (end < 0) return { isOk: false, error: 'tool list: <tool_list> is not closed by </tool_list>' };
  const body = visible.slice(start + OPEN_TAG.length, end).trim();
  if (body.includes(OPEN_TAG)) return { isOk: false, error: 'tool list: nested <tool_list> tag' };
  if (body === '') return { isOk: true, names: [] };

  let items: string[];
  if (body.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { isOk: false, error: `tool list: invalid JSON array (${describeJsonSyntaxError(body)})` };
    }
    if (!Array.isArray(parsed)) return { isOk: false, error: 'tool list: JSON content is not an array' };
    items = [];
    for (let i = 0; i < parsed.length; i++) {
      const value: unknown = parsed[i];
      if (typeof value === 'string') items.push(value);
      else if (value !== null && typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string') {
        items.push((value as { name: string }).name);
      } else {
        return {
          isOk: false,
          error: `tool list: item ${i} is ${JSON.stringify(value) ?? String(value)}, not a tool name`,
        };
      }
    }
  } else if (body.startsWith('{')) {
    return { isOk: false, error: 'tool list: expected a JSON array or a comma/newline separated list, got an object' };
  } else {
    items = body.split(/[,;\n]+/);
  }

  const names: string[] = [];
  for (const item of items) {
    const name = cleanItem(item);
    if (name !== '' && !names.includes(name)) names.push(name);
  }
  return { isOk: true, names };
}

export interface ResolvedToolList {
  /** Ids of the repository documents named, in order, deduplicated. */
  ids: string[];
  /** Names that match no document. */
  unknownNames: string[];
}

/** Maps names to document ids: exact id, exact name, then case-insensitive name. */
export function resolveToolList(names: readonly string[], repo: ToolRepository): ResolvedToolList {
  const byExact = new Map<string, string>();
  const byLower = new Map<string, string>();
  for (const doc of repo.tools) {
    byExact.set(doc.id, doc.id);
    if (!byExact.has(doc.name)) byExact.set(doc.name, doc.id);
    const lower = doc.name.toLowerCase();
    if (!byLower.has(lower)) byLower.set(lower, doc.id);
  }
  const ids: string[] = [];
  const unknownNames: string[] = [];
  for (const name of names) {
    const id = byExact.get(name) ?? byLower.get(name.toLowerCase());
    if (id === undefined) unknownNames.push(name);
    else if (!ids.includes(id)) ids.push(id);
  }
  return { ids, unknownNames };
}
