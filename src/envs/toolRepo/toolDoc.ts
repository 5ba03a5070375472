/**
 * Tool documents as the policy sees them: ToolBench-style function names, the text of
 * one search hit (description f, inputs I, outputs O — ToolSearcher §3.1's d_T), and
 * the OpenAI function schema of a document.
 *
 * Names follow ToolBench's `standardize` / `change_name` and
 * `name = (api + "_for_" + tool)[-64:]` (ToolBench `api_json_to_openai_json`).
 * Simplification: ToolBench's character class also keeps `^`; we keep it too, and we
 * fall back to `api` / `tool` when a name standardizes to the empty string.
 */
import { setOwn } from '../../core/untrustedJson';
import type { ToolSchema, ParamSchema } from '../types';
import type { ToolDocument, ToolParam } from './types';

const NON_NAME_CHARS = /[^\u4e00-\u9fa5^a-zA-Z0-9_]/g;
const RESERVED_WORDS = new Set(['from', 'class', 'return', 'false', 'true', 'id', 'and']);
/** ToolBench keeps the last 64 characters of a function name. */
export const MAX_FUNCTION_NAME_CHARS = 64;

/** ToolBench `standardize`: non-name characters → `_`, runs collapsed, lower-cased, trimmed. */
export function standardizeName(text: string): string {
  let name = text.replace(NON_NAME_CHARS, '_').replace(/_+/g, '_').toLowerCase();
  name = name.replace(/^_+/, '').replace(/_+$/, '');
  if (name.length > 0 && /[0-9]/.test(name[0])) name = `get_${name}`;
  return name;
}

/** ToolBench `change_name`: Python keywords and `id` get an `is_` prefix. */
export function changeReservedName(name: string): string {
  return RESERVED_WORDS.has(name) ? `is_${name}` : name;
}

/** `api_for_tool`, truncated to its last `maxChars` (ToolBench: 64) characters. */
export function makeFunctionName(
  apiName: string,
  toolName: string,
  maxChars: number = MAX_FUNCTION_NAME_CHARS,
): string {
  const api = changeReservedName(standardizeName(apiName)) || 'api';
  const tool = changeReservedName(standardizeName(toolName)) || 'tool';
  const name = `${api}_for_${tool}`;
  return name.length > maxChars ? name.slice(-maxChars) : name;
}

/**
 * How much of a document a search hit shows. 0 leaves a part out: parameter descriptions
 * (each input is then `name (type, required|optional)`) or the outputs line.
 */
export interface FormatLimits {
  maxDescriptionChars: number;
  maxParamDescriptionChars: number;
  maxOutputChars: number;
}

/** ToolBench truncates descriptions at 256 characters; outputs are cut to keep a hit short. */
export const DEFAULT_FORMAT_LIMITS: FormatLimits = {
  maxDescriptionChars: 256,
  maxParamDescriptionChars: 96,
  maxOutputChars: 240,
};

function truncateText(text: string, maxChars: number): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  return clean.length <= maxChars ? clean : `${clean.slice(0, Math.max(0, maxChars - 1))}…`;
}

function formatParam(param: ToolParam, isRequired: boolean, limits: FormatLimits): string {
  const parts = [`${param.name} (${param.type}, ${isRequired ? 'required' : 'optional'}`];
  if (param.default !== undefined) parts.push(`, e.g. ${JSON.stringify(param.default)}`);
  parts.push(')');
  if (limits.maxParamDescriptionChars <= 0) return parts.join('');
  const description = truncateText(param.description, limits.maxParamDescriptionChars);
  return description ? `${parts.join('')}: ${description}` : parts.join('');
}

/** The inputs line of a document: required parameters first. */
export function formatInputs(doc: ToolDocument, limits: FormatLimits = DEFAULT_FORMAT_LIMITS): string {
  const params = [
    ...doc.requiredParameters.map((p) => formatParam(p, true, limits)),
    ...doc.optionalParameters.map((p) => formatParam(p, false, limits)),
  ];
  return params.length > 0 ? params.join('; ') : 'none';
}

/** The outputs line of a document: its output schema as compact JSON, or `unknown`. */
export function formatOutputs(doc: ToolDocument, limits: FormatLimits = DEFAULT_FORMAT_LIMITS): string {
  if (doc.outputs === undefined) return 'unknown';
  return truncateText(JSON.stringify(doc.outputs), limits.maxOutputChars);
}

/**
 * One search hit as text for the policy:
 * ```
 * 1. latest_for_suivi_colis (tool: suivi-colis, category: Logistics)
 *    description: …
 *    inputs: colisid (STRING, required, e.g. "CA107308006SI"): …
 *    outputs: {"status":"str"}
 * ```
 */
export function formatToolDocument(
  doc: ToolDocument,
  rank: number,
  limits: FormatLimits = DEFAULT_FORMAT_LIMITS,
): string {
  const description = truncateText(doc.description, limits.maxDescriptionChars) || '(no description)';
  const lines = [
    `${rank}. ${doc.name} (tool: ${doc.toolName}, category: ${doc.category})`,
    `   description: ${description}`,
    `   inputs: ${formatInputs(doc, limits)}`,
  ];
  if (limits.maxOutputChars > 0) lines.push(`   outputs: ${formatOutputs(doc, limits)}`);
  return lines.join('\n');
}

/** ToolBench's type map; every other source type becomes `string`. */
function convertParamType(type: string): ParamSchema['type'] {
  switch (type.toUpperCase()) {
    case 'NUMBER':
    case 'INTEGER':
      return 'integer';
    case 'BOOLEAN':
      return 'boolean';
    default:
      return 'string';
  }
}

/** The OpenAI function schema of a document (for showing the selected tools to a caller). */
export function convertToolDocumentToSchema(doc: ToolDocument): ToolSchema {
  const properties: Record<string, ParamSchema> = {};
  for (const param of [...doc.requiredParameters, ...doc.optionalParameters]) {
    const schema: ParamSchema = { type: convertParamType(param.type), description: param.description };
    if (param.default !== undefined) schema.default = param.default;
    setOwn(properties, param.name, schema); // a parameter name from the file, even "__proto__", stays a key
  }
  return {
    type: 'function',
    function: {
      name: doc.name,
      description: doc.description,
      parameters: { type: 'object', properties, required: doc.requiredParameters.map((p) => p.name) },
    },
  };
}
