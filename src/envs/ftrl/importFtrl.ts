/**
 * Imports FTRL-format JSONL (Ye et al. 2025, `ye2025ftrl` in PACT App. A; the file
 * `../shared/data/ftrl/test.jsonl`) into the project's `Task` type.
 *
 * The converted task is then checked by the project's task schema (`taskSchema.ts`); its
 * remarks become warnings, not errors (see `listTaskWarnings`).
 *
 * Simplifications: `question` keeps only the text after the last `Question:` marker
 * (FTRL's instruction preamble is dropped; `renderFtrlUserMessage` restores it);
 * extra JSON-schema keys of a parameter (`format`, `minimum`, …) are kept unchecked;
 * extra keys of `parameters` itself are dropped.
 *
 * The line format and how bad lines are reported: docs/envs.md.
 */
import {
  MAX_JSON_DEPTH,
  excerptValue,
  findJsonHazard,
  limitText,
  setOwn,
  splitJsonlLines,
} from '../../core/untrustedJson';
import { TaskZ, checkTaskConsistency, formatPath } from '../taskSchema';
import {
  TASK_CATEGORIES,
  type ParamSchema,
  type Task,
  type TaskCategory,
  type ToolCall,
  type ToolSchema,
} from '../types';

/** FTRL's user-turn preamble, as it appears before `Question: …` in every test task. */
export const FTRL_INSTRUCTION =
  'Please call given tools to answer the question. Please note that all your information must be obtained by calling tools and not by answering the question directly.\n' +
  'If the call fails, you need to try to correct it and continue until you arrive at an answer.';

/** FTRL's full user message for a question. */
export function renderFtrlUserMessage(question: string): string {
  return `${FTRL_INSTRUCTION}\nQuestion: ${question}`;
}

export interface FtrlLineError {
  /** 1-based line number in the file. */
  line: number;
  /** Field path at fault, e.g. `tools[2].function.name`; `(line)` when the line is not JSON. */
  field: string;
  message: string;
}

export interface FtrlImportResult {
  tasks: Task[];
  /** Lines that were not imported. */
  errors: FtrlLineError[];
  /** Imported lines with remarks (e.g. a parameter default outside its enum). */
  warnings: FtrlLineError[];
}

/** Thrown by `parseFtrlRecord`; carries the field path. */
export class FtrlFieldError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

/** `line N, field F: message`. */
export function formatFtrlLineError(error: FtrlLineError): string {
  return `line ${error.line}, field ${error.field}: ${error.message}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Refuses a value nested too deep or holding a "__proto__" key, naming where (under `field`). */
function checkHazard(value: unknown, under: string[], maxDepth = MAX_JSON_DEPTH): void {
  const hazard = findJsonHazard(value, maxDepth);
  if (hazard) throw new FtrlFieldError(formatPath([...under, ...hazard.path]) || '(line)', hazard.message);
}

/** Accepts the field as an object/array or as JSON text holding one. */
function readJsonField(record: Record<string, unknown>, field: string): unknown {
  const value = Object.hasOwn(record, field) ? record[field] : undefined;
  if (value === undefined) throw new FtrlFieldError(field, 'missing');
  if (typeof value !== 'string') return value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw new FtrlFieldError(field, `is a string but not valid JSON (${limitText((err as Error).message, 120)})`);
  }
  // The record's own depth was checked; text inside it counts from the field's level.
  checkHazard(parsed, [field], MAX_JSON_DEPTH - 1);
  return parsed;
}

/** The question: the text after the last `Question:` marker, else the whole message. */
export function extractFtrlQuestion(content: string): string {
  const marker = 'Question:';
  const at = content.lastIndexOf(marker);
  return (at >= 0 ? content.slice(at + marker.length) : content).trim();
}

function readQuestion(record: Record<string, unknown>): string {
  const messages = record.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    throw new FtrlFieldError('messages', `must be a non-empty array, got ${describeType(messages)}`);
  const k = messages.findIndex((m) => isPlainObject(m) && m.role === 'user');
  if (k < 0) throw new FtrlFieldError('messages', 'has no message with role "user"');
  const content = (messages[k] as Record<string, unknown>).content;
  if (typeof content !== 'string')
    throw new FtrlFieldError(`messages[${k}].content`, `must be a string, got ${describeType(content)}`);
  const question = extractFtrlQuestion(content);
  if (question === '') throw new FtrlFieldError(`messages[${k}].content`, 'holds no question text');
  return question;
}

/** Assistant `tool_calls` in `messages` (OpenAI format), when the file has them. */
function readGoldCalls(record: Record<string, unknown>): ToolCall[] | undefined {
  const messages = record.messages as unknown[];
  const calls: ToolCall[] = [];
  messages.forEach((m, i) => {
    if (!isPlainObject(m) || m.role !== 'assistant' || m.tool_calls === undefined) return;
    if (!Array.isArray(m.tool_calls)) throw new FtrlFieldError(`messages[${i}].tool_calls`, 'must be an array');
    m.tool_calls.forEach((tc, j) => {
      const path = `messages[${i}].tool_calls[${j}]`;
      const fn = isPlainObject(tc) ? (isPlainObject(tc.function) ? tc.function : tc) : null;
      if (!fn || typeof fn.name !== 'string') throw new FtrlFieldError(`${path}.function.name`, 'must be a string');
      let args: unknown = fn.arguments ?? {};
      if (typeof args === 'string') {
        try {
          args = JSON.parse(args);
        } catch {
          throw new FtrlFieldError(`${path}.function.arguments`, 'is not valid JSON');
        }
      }
      if (!isPlainObject(args)) throw new FtrlFieldError(`${path}.function.arguments`, 'must be a JSON object');
      calls.push({ name: fn.name, arguments: args });
    });
  });
  return calls.length > 0 ? calls : undefined;
}

function readTools(record: Record<string, unknown>): ToolSchema[] {
  const tools = readJsonField(record, 'tools');
  if (!Array.isArray(tools))
    throw new FtrlFieldError('tools', `must be an array of function schemas, got ${describeType(tools)}`);
  const seen = new Set<string>();
  return tools.map((tool, i) => {
    const path = `tools[${i}]`;
    if (!isPlainObject(tool)) throw new FtrlFieldError(path, `must be an object, got ${describeType(tool)}`);
    if (tool.type !== 'function')
      throw new FtrlFieldError(`${path}.type`, `must be "function", got ${excerptValue(tool.type)}`);
    const fn = tool.function;
    if (!isPlainObject(fn)) throw new FtrlFieldError(`${path}.function`, `must be an object, got ${describeType(fn)}`);
    if (typeof fn.name !== 'string' || fn.name === '')
      throw new FtrlFieldError(`${path}.function.name`, 'must be a non-empty string');
    if (seen.has(fn.name))
      throw new FtrlFieldError(`${path}.function.name`, `duplicate tool name ${excerptValue(fn.name)}`);
    seen.add(fn.name);
    const description = fn.description ?? '';
    if (typeof description !== 'string') throw new FtrlFieldError(`${path}.function.description`, 'must be a string');
    const params = fn.parameters ?? { type: 'object', properties: {} };
    if (!isPlainObject(params))
      throw new FtrlFieldError(`${path}.function.parameters`, `must be an object, got ${describeType(params)}`);
    if (params.type !== 'object')
      throw new FtrlFieldError(
        `${path}.function.parameters.type`,
        `must be "object", got ${excerptValue(params.type)}`,
      );
    const properties = params.properties ?? {};
    if (!isPlainObject(properties))
      throw new FtrlFieldError(`${path}.function.parameters.properties`, 'must be an object');
    for (const [key, schema] of Object.entries(properties)) {
      if (!isPlainObject(schema))
        throw new FtrlFieldError(
          formatPath(['tools', i, 'function', 'parameters', 'properties', key]),
          `must be an object, got ${describeType(schema)}`,
        );
    }
    const required = params.required;
    if (required !== undefined && (!Array.isArray(required) || !required.every((r) => typeof r === 'string'))) {
      throw new FtrlFieldError(`${path}.function.parameters.required`, 'must be an array of strings');
    }
    return {
      type: 'function',
      function: {
        name: fn.name,
        description,
        parameters: {
          type: 'object',
          properties: properties as Record<string, ParamSchema>,
          ...(required !== undefined ? { required: required as string[] } : {}),
        },
      },
    };
  });
}

function readCodes(record: Record<string, unknown>, toolNames: readonly string[]): Task['implementations'] {
  const codes = readJsonField(record, 'codes');
  if (!isPlainObject(codes))
    throw new FtrlFieldError('codes', `must be an object {toolName: pythonSource}, got ${describeType(codes)}`);
  const implementations: Task['implementations'] = {};
  for (const [name, source] of Object.entries(codes)) {
    if (typeof source !== 'string')
      throw new FtrlFieldError(formatPath(['codes', name]), `must be Python source text, got ${describeType(source)}`);
    setOwn(implementations, name, { language: 'python', source });
  }
  for (const name of toolNames) {
    if (!Object.hasOwn(implementations, name))
      throw new FtrlFieldError(formatPath(['codes', name]), 'missing: every tool in tools needs its Python source');
  }
  return implementations;
}

function readUnsolvedSet(record: Record<string, unknown>, toolNames: ReadonlySet<string>): Record<string, string[]> {
  const unsolved = readJsonField(record, 'unsolved_set');
  if (!isPlainObject(unsolved))
    throw new FtrlFieldError('unsolved_set', `must be an object {toolName: [answers]}, got ${describeType(unsolved)}`);
  const out: Record<string, string[]> = {};
  for (const [name, answers] of Object.entries(unsolved)) {
    const path = formatPath(['unsolved_set', name]);
    if (!toolNames.has(name)) throw new FtrlFieldError(path, 'names no tool in tools');
    if (!Array.isArray(answers))
      throw new FtrlFieldError(path, `must be an array of answers, got ${describeType(answers)}`);
    setOwn(
      out,
      name,
      answers.map((a, i) => {
        if (typeof a === 'string') return a;
        if (typeof a === 'number') return String(a);
        throw new FtrlFieldError(`${path}[${i}]`, `must be a string, got ${describeType(a)}`);
      }),
    );
  }
  return out;
}

function readCategory(record: Record<string, unknown>): TaskCategory {
  const field = record.category !== undefined ? 'category' : 'data_source';
  const raw = record[field];
  if (typeof raw !== 'string')
    throw new FtrlFieldError(field, `must be a string such as "self/multi_hop", got ${describeType(raw)}`);
  const name = raw.slice(raw.lastIndexOf('/') + 1);
  if (!(TASK_CATEGORIES as readonly string[]).includes(name)) {
    throw new FtrlFieldError(
      field,
      `${excerptValue(raw)} names no category; expected one of ${TASK_CATEGORIES.join(', ')}`,
    );
  }
  return name as TaskCategory;
}

/**
 * Converts one parsed FTRL record; throws `FtrlFieldError` naming the field at fault.
 * @param index 0-based line index in the file, used for the id when the record has none
 */
export function parseFtrlRecord(record: unknown, index: number): Task {
  if (!isPlainObject(record)) throw new FtrlFieldError('(line)', `must be a JSON object, got ${describeType(record)}`);
  checkHazard(record, []);
  const question = readQuestion(record);
  const tools = readTools(record);
  const toolNames = tools.map((t) => t.function.name);
  const implementations = readCodes(record, toolNames);
  const unsolvedSet = readUnsolvedSet(record, new Set(toolNames));
  const answer = record.answer;
  if (typeof answer !== 'string' && typeof answer !== 'number')
    throw new FtrlFieldError('answer', `must be a string, got ${describeType(answer)}`);
  const category = readCategory(record);
  const id = typeof record.id === 'string' || typeof record.id === 'number' ? String(record.id) : `ftrl-${index}`;
  const goldCalls = readGoldCalls(record);
  const source = typeof record.data_source === 'string' ? `ftrl:${record.data_source}` : 'ftrl';
  const task: Task = {
    id,
    question,
    tools,
    implementations,
    unsolvedSet,
    answer: String(answer),
    category,
    ...(goldCalls ? { goldCalls } : {}),
    source,
  };
  return task;
}

/**
 * What the project's task schema (`taskSchema.ts`: zod shape, then cross-field checks)
 * says about an imported task. The fields this importer relies on are checked above, so
 * these are reported, not fatal: FTRL's own data has parameter defaults outside their
 * enums and a JSON-schema union type (`"type": ["number", "object"]`) the shared
 * `ParamSchema` does not model, and those tasks still run.
 */
export function listTaskWarnings(task: Task): { field: string; message: string }[] {
  const parsed = TaskZ.safeParse(task);
  const issues = parsed.success
    ? checkTaskConsistency(task).map((issue) => ({ field: issue.path || '(task)', message: issue.message }))
    : parsed.error.issues.map((issue) => ({ field: formatPath(issue.path) || '(task)', message: issue.message }));
  return issues.map((w) => ({ field: w.field, message: `${w.message} (project task schema)` }));
}

/** Longest message of one line's error or warning. */
const MAX_MESSAGE_CHARS = 300;

/**
 * Parses FTRL JSONL text (lines as `splitJsonlLines` cuts them). Blank lines are skipped; a
 * bad line yields an error with its 1-based number and field, and the other lines are kept:
 * whatever goes wrong inside one line stays that line's error. Ids default to
 * `ftrl-<0-based line index>`.
 */
export function parseFtrlJsonl(text: string): FtrlImportResult {
  if (typeof text !== 'string')
    throw new Error(`parseFtrlJsonl: expected the file's text as a string, got ${describeType(text)}`);
  const tasks: Task[] = [];
  const errors: FtrlLineError[] = [];
  const warnings: FtrlLineError[] = [];
  const report = (list: FtrlLineError[], line: number, field: string, message: string) =>
    list.push({ line, field: limitText(field, 120), message: limitText(message, MAX_MESSAGE_CHARS) });
  for (const { line, text: lineText } of splitJsonlLines(text)) {
    if (lineText.trim() === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(lineText);
    } catch (err) {
      report(errors, line, '(line)', `not valid JSON (${(err as Error).message})`);
      continue;
    }
    try {
      const task = parseFtrlRecord(record, line - 1);
      tasks.push(task);
      for (const w of listTaskWarnings(task)) report(warnings, line, w.field, w.message);
    } catch (err) {
      if (err instanceof FtrlFieldError) report(errors, line, err.field, err.message.slice(err.field.length + 2));
      else report(errors, line, '(line)', `could not be read (${(err as Error).name}: ${(err as Error).message})`);
    }
  }
  return { tasks, errors, warnings };
}
