/**
 * A tool of the catalog: its two wordings' schemas (frozen, shared by every task that lists
 * the tool) and its stub. `makeSchema` and `deepFreeze` build them for lookupTools.ts and
 * computeTools.ts.
 */
import type { ParamSchema, ToolImplementation, ToolSchema } from './types';
import type { TaskLength } from './toolRelations';

export interface ToolDef {
  name: string;
  family: string;
  /** The relation or computation this tool is a near-duplicate of, for distractors. */
  distractorOf?: string;
  schemas: Record<TaskLength, ToolSchema>;
  implementation: ToolImplementation;
}

export function makeSchema(
  name: string,
  description: string,
  properties: Record<string, ParamSchema>,
  required: string[],
): ToolSchema {
  const schema: ToolSchema = {
    type: 'function',
    function: { name, description, parameters: { type: 'object', properties, required } },
  };
  return deepFreeze(schema);
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
