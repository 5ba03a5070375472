/**
 * Validation of the task format of `types.ts`:
 * a zod (v4) schema that matches `Task` exactly (checked at compile time below), then
 * the semantic checks a schema alone cannot express (listed in docs/envs.md).
 *
 * An invalid task yields one line per problem, `path: reason`, for example
 * `tools[2].function.parameters.required[0]: "city" is not a property`.
 *
 * Strictness: unknown fields are errors on the task, a tool, its function and its
 * parameters object (they catch typos); a parameter schema (`ParamSchema`) keeps extra
 * JSON-schema keywords (`format`, `minimum`, nested `properties`, …) as FTRL's tools use them.
 * Before the schema, a task deeper than MAX_JSON_DEPTH or holding a "__proto__" key is refused
 * with its path (src/core/untrustedJson.ts), and values in messages are short excerpts.
 */
import { z } from 'zod';
import { excerptValue, findJsonHazard } from '../core/untrustedJson';
import { CHUNK_TYPES, type ChunkType, type ExpertTrace } from '../core/traceTypes';
import { TASK_CATEGORIES, type ParamSchema, type Task, type TaskCategory } from './types';

const PARAM_TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'] as const;

export const ParamSchemaZ: z.ZodType<ParamSchema> = z.looseObject({
  type: z.union([z.enum(PARAM_TYPES), z.array(z.enum(PARAM_TYPES)).min(1)]),
  description: z.string().optional(),
  enum: z.array(z.unknown()).optional(),
  default: z.unknown().optional(),
  get items() {
    return ParamSchemaZ.optional();
  },
});

export const ToolSchemaZ = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: z.string().min(1),
    description: z.string(),
    parameters: z.strictObject({
      type: z.literal('object'),
      properties: z.record(z.string(), ParamSchemaZ),
      required: z.array(z.string()).optional(),
    }),
  }),
});

export const ToolImplementationZ = z.strictObject({
  language: z.enum(['javascript', 'python']),
  source: z.string().min(1),
});

export const ToolCallZ = z.strictObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
});

const ReasoningChunkZ = z.strictObject({
  id: z.string(),
  type: z.enum(CHUNK_TYPES as unknown as readonly [ChunkType, ...ChunkType[]]),
  text: z.string(),
  keepForPrefix: z.boolean(),
});

const prefixCount = z.number().int().min(0);

const TraceTurnZ = z.strictObject({
  reasoning: z.string(),
  chunks: z.array(ReasoningChunkZ),
  calls: z.array(ToolCallZ),
  observations: z.array(z.string()),
  prefixChunkCounts: z.tuple([prefixCount, prefixCount, prefixCount, prefixCount, prefixCount]),
});

export const ExpertTraceZ = z.strictObject({
  taskId: z.string(),
  turns: z.array(TraceTurnZ),
  finalAnswer: z.string().optional(),
  source: z.enum(['teacher', 'imported']),
  verified: z.boolean(),
});

export const TaskZ = z.strictObject({
  id: z.string().min(1),
  question: z.string().min(1),
  tools: z.array(ToolSchemaZ),
  implementations: z.record(z.string(), ToolImplementationZ),
  unsolvedSet: z.record(z.string(), z.array(z.string())),
  answer: z.string(),
  category: z.enum(TASK_CATEGORIES as unknown as readonly [TaskCategory, ...TaskCategory[]]),
  goldCalls: z.array(ToolCallZ).optional(),
  expertTrace: ExpertTraceZ.optional(),
  source: z.string().optional(),
});

// Compile-time proof that the schema and the shared types agree both ways.
const acceptsSchemaOutput = (x: z.infer<typeof TaskZ>): Task => x;
const acceptsTask = (x: Task): z.input<typeof TaskZ> => x;
const acceptsTraceOutput = (x: z.infer<typeof ExpertTraceZ>): ExpertTrace => x;
void acceptsSchemaOutput;
void acceptsTask;
void acceptsTraceOutput;

export interface TaskIssue {
  /** `tools[2].function.parameters.required[0]`; '' for the task itself. */
  path: string;
  message: string;
}

export type TaskValidation = { ok: true; task: Task } | { ok: false; issues: TaskIssue[]; message: string };

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Longest key written whole in a path; longer ones are cut (a key is file data too). */
const MAX_KEY_CHARS = 40;

/** Formats a path as `a.b[0].c`, quoting keys that are not identifiers: `x["odd key"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const k = String(key);
      out +=
        IDENTIFIER.test(k) && k.length <= MAX_KEY_CHARS ? (out ? `.${k}` : k) : `[${excerptValue(k, MAX_KEY_CHARS)}]`;
    }
  }
  return out;
}

function issuesFromZod(error: z.ZodError): TaskIssue[] {
  const out: TaskIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: formatPath([...issue.path, key]), message: 'unknown field' });
    } else {
      out.push({ path: formatPath(issue.path), message: issue.message });
    }
  }
  return out;
}

/** The checks across fields, on a task that has the right shape. */
export function checkTaskConsistency(task: Task): TaskIssue[] {
  const issues: TaskIssue[] = [];
  const names = new Set<string>();
  task.tools.forEach((tool, i) => {
    const fn = tool.function;
    if (names.has(fn.name))
      issues.push({ path: `tools[${i}].function.name`, message: `duplicate tool name ${excerptValue(fn.name)}` });
    names.add(fn.name);
    const props = fn.parameters.properties;
    (fn.parameters.required ?? []).forEach((r, j) => {
      if (!Object.prototype.hasOwnProperty.call(props, r)) {
        issues.push({
          path: `tools[${i}].function.parameters.required[${j}]`,
          message: `${excerptValue(r)} is not a property`,
        });
      }
    });
    for (const [key, p] of Object.entries(props)) {
      if (p.enum !== undefined && p.default !== undefined && !p.enum.some((e) => e === p.default)) {
        issues.push({
          path: formatPath(['tools', i, 'function', 'parameters', 'properties', key, 'default']),
          message: `${excerptValue(p.default)} is not in the enum`,
        });
      }
    }
  });
  for (const name of names) {
    if (!Object.prototype.hasOwnProperty.call(task.implementations, name)) {
      issues.push({ path: 'implementations', message: `no implementation for tool ${excerptValue(name)}` });
    }
  }
  for (const key of Object.keys(task.implementations)) {
    if (!names.has(key))
      issues.push({ path: formatPath(['implementations', key]), message: `${excerptValue(key)} is not a tool name` });
  }
  for (const key of Object.keys(task.unsolvedSet)) {
    if (!names.has(key))
      issues.push({ path: formatPath(['unsolvedSet', key]), message: `${excerptValue(key)} is not a tool name` });
  }
  (task.goldCalls ?? []).forEach((call, i) => {
    if (!names.has(call.name))
      issues.push({ path: `goldCalls[${i}].name`, message: `${excerptValue(call.name)} is not a tool name` });
  });
  if (task.expertTrace && task.expertTrace.taskId !== task.id) {
    issues.push({
      path: 'expertTrace.taskId',
      message: `${excerptValue(task.expertTrace.taskId)} is not this task's id ${excerptValue(task.id)}`,
    });
  }
  return issues;
}

/** Validates anything as a Task: the task, or every problem as `path: reason`. */
export function validateTask(x: unknown): TaskValidation {
  const hazard = findJsonHazard(x);
  const parsed = hazard ? null : TaskZ.safeParse(x);
  const issues = hazard
    ? [{ path: formatPath(hazard.path), message: hazard.message }]
    : parsed!.success
      ? checkTaskConsistency(parsed!.data)
      : issuesFromZod(parsed!.error);
  if (parsed?.success && issues.length === 0) return { ok: true, task: parsed.data };
  const id =
    typeof x === 'object' && x !== null && typeof (x as { id?: unknown }).id === 'string'
      ? ` ${excerptValue((x as { id: string }).id)}`
      : '';
  const message = `invalid task${id}:\n${issues.map((i) => `  ${i.path || '(task)'}: ${i.message}`).join('\n')}`;
  return { ok: false, issues, message };
}

export class TaskValidationError extends Error {
  constructor(
    message: string,
    readonly issues: TaskIssue[],
  ) {
    super(message);
    this.name = 'TaskValidationError';
  }
}

/** Like `validateTask`, but returns the task or throws a TaskValidationError listing every problem. */
export function parseTask(x: unknown): Task {
  const r = validateTask(x);
  if (!r.ok) throw new TaskValidationError(r.message, r.issues);
  return r.task;
}
