/**
 * The task format: a superset of FTRL's (id, question, tools, codes, unsolved_set, answer).
 * The zod schema in `taskSchema.ts` validates exactly these types.
 */
import type { ToolCall } from '../core/types';
import type { ExpertTrace } from '../core/traceTypes';

export type { ToolCall };

/** A JSON-schema parameter as used by OpenAI function schemas. */
export type ParamType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object';

export interface ParamSchema {
  /** One JSON type, or a union such as `["number", "object"]` (seen in FTRL's tools). */
  type: ParamType | ParamType[];
  description?: string;
  enum?: unknown[];
  default?: unknown;
  items?: ParamSchema;
}

/** An OpenAI function schema (the form Qwen3's chat template renders inside <tools>). */
export interface ToolSchema {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: {
      type: 'object';
      properties: Record<string, ParamSchema>;
      required?: string[];
    };
  };
}

/**
 * Source code of one tool. JavaScript source is the text of a function expression
 * `(args) => …` or `function (args) {…}` evaluated inside the sandbox worker; Python
 * source (imported FTRL tasks) defines a function of the tool's name, run in Pyodide.
 */
export interface ToolImplementation {
  language: 'javascript' | 'python';
  source: string;
}

export type TaskCategory = 'single_hop' | 'multi_hop' | 'parallel_single_hop' | 'parallel_multi_hop';

export const TASK_CATEGORIES: readonly TaskCategory[] = [
  'single_hop',
  'multi_hop',
  'parallel_single_hop',
  'parallel_multi_hop',
] as const;

export interface Task {
  id: string;
  question: string;
  tools: ToolSchema[];
  implementations: Record<string, ToolImplementation>;
  /** Tool name → expected answers (the sub-questions), as FTRL's `unsolved_set`. */
  unsolvedSet: Record<string, string[]>;
  answer: string;
  category: TaskCategory;
  /** Reference calls, for MatchTIR rewards. */
  goldCalls?: ToolCall[];
  expertTrace?: ExpertTrace;
  /** Where the task came from: `generated:<seed>`, `ftrl:<data_source>`, … */
  source?: string;
}
