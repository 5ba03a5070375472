/**
 * A scripted teacher that writes expert traces h* for generated tasks (PACT App. C,
 * "Expert trajectory generation"): it solves a task from its gold calls through the
 * same tool interface the policy uses (each call executed by an injected callback, the
 * observation recorded), and writes one reasoning paragraph per step, of the chunk
 * kinds the paper's segmentation prompt names. Chunk types are known by construction,
 * so teacher traces need no segmentation; prefix levels come from prefixLevels.ts.
 *
 * Simplifications: a scripted stand-in for the paper's Qwen3-235B teacher; English
 * templates only; genuine tool errors are not retried (the trace then fails
 * verification and is filtered out).
 *
 * Honesty rules, variety and turns: docs/traces.md.
 */
import { createRng, type Rng } from '../core/rng';
import type { ToolCall } from '../core/types';
import { getOwn } from '../core/untrustedJson';
import { formatToolError } from '../envs/sandbox/types';
import type { Task, ToolImplementation, ToolSchema } from '../envs/types';
import { formatPythonJson, formatToolCallJson } from './render';
import { computePrefixChunkCounts, countSafeChunks } from './prefixLevels';
import type { ChunkType, ExpertTrace, ReasoningChunk, TraceTurn } from './types';
import { markVerified, type TraceVerdict } from './verify';

/** Executes one tool call and returns the observation text (errors included, as text). */
export type ToolCallRunner = (call: ToolCall) => Promise<string>;

/** The part of src/envs/sandbox's executor interface the teacher needs. */
export interface StubExecutor {
  execute(impl: ToolImplementation, toolName: string, args: Record<string, unknown>): Promise<{ output: string }>;
}

/** Binds a sandbox executor to a task's implementations: the observation is the output text. */
export function bindTaskRunner(task: Task, executor: StubExecutor): ToolCallRunner {
  return async (call) => {
    const impl = getOwn(task.implementations, call.name);
    if (!impl) return formatToolError(call.name, 'the tool has no implementation');
    return (await executor.execute(impl, call.name, call.arguments)).output;
  };
}

export interface TeacherOptions {
  seed: number | string;
  /** Probability, per gold call, of a deliberately wrong first attempt. Default 0.15. */
  failedCallProb?: number;
  /** Probability of each optional reasoning step. Default 0.5. */
  optionalStepProb?: number;
  /** Probability, per call turn, of an explicit call preview (a leak). Default 0.3. */
  previewProb?: number;
  /** Turn budget, final-answer turn included (PACT / FTRL default 10). */
  maxTurns?: number;
}

interface Paragraph {
  type: ChunkType;
  text: string;
}

// ---------------------------------------------------------------------------
// Small helpers

function pickOne<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)];
}

function isChance(rng: Rng, probability: number): boolean {
  return rng.next() < probability;
}

function normalizeText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

function describeValue(value: unknown): string {
  return typeof value === 'string' ? value : formatPythonJson(value);
}

function listNames(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

const TIMES = ['', 'once', 'twice', 'three times'];

/** Tool names of a turn's calls, repeated names counted: "get_capital twice and get_x". */
function listCallNames(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return listNames([...counts].map(([n, c]) => (c === 1 ? n : `${n} ${TIMES[c] ?? `${c} times`}`)));
}

/** Observation text safe to quote inside reasoning: no tags, braces or tool names. */
function quoteObservation(text: string, toolNames: readonly string[]): string {
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
function findValueInObservation(observation: string, value: string): string | null {
  const needle = value.trim().toLowerCase();
  if (!needle) return null;
  const index = observation.toLowerCase().indexOf(needle);
  return index === -1 ? null : observation.slice(index, index + needle.length);
}

/** Casts text read from an observation to the JSON type of the gold value. */
function castLike(gold: unknown, text: string): unknown {
  if (typeof gold === 'number') {
    const n = Number(text.replace(/,/g, ''));
    return Number.isFinite(n) ? n : text;
  }
  if (typeof gold === 'boolean') return /^true$/i.test(text) ? true : /^false$/i.test(text) ? false : text;
  return text;
}

function findToolSchema(task: Task, name: string): ToolSchema | undefined {
  return task.tools.find((t) => t.function.name === name);
}

function listRequiredParams(schema: ToolSchema | undefined): string[] {
  return schema?.function.parameters.required ?? [];
}

// ---------------------------------------------------------------------------
// Dependencies between gold calls

/** Expected answers of gold call i: its own entry when the tool's answers line up with its calls. */
function listExpectedAnswers(task: Task, goldCalls: readonly ToolCall[], i: number): string[] {
  const name = goldCalls[i].name;
  const answers = (task.unsolvedSet && getOwn(task.unsolvedSet, name)) ?? [];
  const sameTool = goldCalls.map((c, j) => (c.name === name ? j : -1)).filter((j) => j >= 0);
  if (answers.length === sameTool.length && sameTool.length > 1) return [answers[sameTool.indexOf(i)]];
  return answers;
}

/** Key of one value slot of a call: the argument name, plus the element index for arrays. */
function slotKey(arg: string, element?: number): string {
  return element === undefined ? arg : `${arg}[${element}]`;
}

/**
 * For each gold call, each scalar argument and each scalar element of an array argument
 * (e.g. a calculator's `numbers`): the earlier gold calls that produce its value (an
 * expected answer of theirs that the question does not already state).
 */
function planDependencies(task: Task, goldCalls: readonly ToolCall[]): Array<Map<string, number[]>> {
  const question = normalizeText(task.question);
  const findProducers = (j: number, value: unknown): number[] => {
    if (value === null || typeof value === 'object') return [];
    const text = normalizeText(String(value));
    if (!text || question.includes(text)) return [];
    const producers: number[] = [];
    for (let i = 0; i < j; i++) {
      if (listExpectedAnswers(task, goldCalls, i).some((a) => normalizeText(String(a)) === text)) producers.push(i);
    }
    return producers;
  };
  return goldCalls.map((call, j) => {
    const deps = new Map<string, number[]>();
    for (const [arg, value] of Object.entries(call.arguments ?? {})) {
      const slots: Array<[string, unknown]> = Array.isArray(value)
        ? value.map((el, e) => [slotKey(arg, e), el])
        : [[slotKey(arg), value]];
      for (const [key, slotValue] of slots) {
        const producers = findProducers(j, slotValue);
        if (producers.length > 0) deps.set(key, producers);
      }
    }
    return deps;
  });
}

/**
 * Groups of gold call indices, one group per assistant turn. Parallel categories run
 * each dependency level together (level = 1 + the deepest producer's level); other
 * categories make one call per turn, in gold order.
 */
function groupCallsIntoTurns(task: Task, deps: Array<Map<string, number[]>>): number[][] {
  const isParallel = task.category === 'parallel_single_hop' || task.category === 'parallel_multi_hop';
  if (!isParallel) return deps.map((_, j) => [j]);
  const levels: number[] = [];
  deps.forEach((slots, j) => {
    const producers = [...slots.values()].flat();
    levels[j] = producers.length === 0 ? 0 : 1 + Math.max(...producers.map((i) => levels[i]));
  });
  const groups: number[][] = [];
  levels.forEach((level, j) => (groups[level] ??= []).push(j));
  return groups.filter((g) => g !== undefined);
}

type ArgSource = 'question' | 'observation' | 'task';

interface ResolvedCall {
  goldIndex: number;
  call: ToolCall;
  sources: Map<string, ArgSource>;
}

// ---------------------------------------------------------------------------
// Phrasings (each kind has several; the segmentation rules in segment.ts recognise them)

const RESTATE_FIRST = [
  (q: string) => `The question asks: ${q} I need to answer it using only information from tool calls.`,
  (q: string) => `Let me restate the task. ${q} Every fact has to come from a tool call.`,
  (q: string) =>
    `The user wants to know: ${q} I should gather the facts with the tools rather than answer from memory.`,
];
const RESTATE_RECAP = [
  (q: string, done: number, total: number) =>
    `Back to the task: ${q} I have finished ${done} of the ${total} lookups so far.`,
  (q: string, done: number, total: number) =>
    `Progress check: ${done} of ${total} steps are done, and the question is still: ${q}`,
  (q: string, done: number, total: number) =>
    `Let me restate where I am. ${done} of ${total} steps are done for the question: ${q}`,
];
const TOOL_SCAN = [
  (names: string[]) => `Looking at the available tools: ${listNames(names)}.`,
  (names: string[]) => `The tools I have are: ${listNames(names)}.`,
  (names: string[]) => `Scanning the tool list, there are ${names.length} tools: ${listNames(names)}.`,
];
const REJECTION = [
  (names: string[]) =>
    `${listNames(names)} ${names.length > 1 ? 'are' : 'is'} not relevant to this question, so I will ignore ${names.length > 1 ? 'them' : 'it'}.`,
  (names: string[]) =>
    `I can rule out ${listNames(names)}: ${names.length > 1 ? 'they do' : 'it does'} not help with this question.`,
  (names: string[]) =>
    `Some tools look similar but do not fit what is asked: ${listNames(names)}. I set ${names.length > 1 ? 'them' : 'it'} aside.`,
];
const SELECTION_ONE = [
  (name: string, desc: string) => `The right tool for this step is ${name}. Its description says: ${desc}`,
  (name: string, desc: string) => `I should use ${name} here. Its description matches the step: ${desc}`,
  (name: string, desc: string) => `${name} is the best fit for this step. Its description reads: ${desc}`,
];
const SELECTION_MANY = [
  (what: string) =>
    `The right tools for this step are ${what}. No call needs another's result, so they can run in parallel.`,
  (what: string) => `I should use ${what} here. These lookups are independent, so I issue them together.`,
  (what: string) => `The best fit for this step is ${what}. The results do not depend on each other.`,
];
const GROUNDING_INTRO = [
  'Now the required arguments.',
  'To fill in the required parameters:',
  'Grounding the required inputs:',
];
const GROUNDING_BY_SOURCE: Record<ArgSource, Array<(arg: string, v: string) => string>> = {
  question: [
    (arg, v) => `${arg} should be ${v}, which the question states.`,
    (arg, v) => `For ${arg}, the question gives ${v}.`,
    (arg, v) => `${arg} is ${v}, taken from the question.`,
  ],
  observation: [
    (arg, v) => `${arg} should be ${v}, from the previous observation.`,
    (arg, v) => `For ${arg}, the earlier result gives ${v}.`,
    (arg, v) => `${arg} is ${v}, read from the last tool response.`,
  ],
  task: [
    (arg, v) => `${arg} should be ${v}, which matches what the question asks.`,
    (arg, v) => `For ${arg}, what the question asks for means ${v}.`,
    (arg, v) => `${arg} is ${v}, as the question implies.`,
  ],
};
const OPTIONAL_DEFAULT = [
  (o: string, d: string) => `The optional argument ${o} can stay at its default (${d}).`,
  (o: string, d: string) => `${o} is optional and defaults to ${d}; the question does not ask to change it.`,
];
const OPTIONAL_OMIT = [
  (o: string) => `The optional argument ${o} is not asked for, so I leave it out.`,
  (o: string) => `${o} is optional and the question says nothing about it, so I omit it.`,
];
const OPTIONAL_SET = [
  (o: string, v: string) => `The optional argument ${o} matters here: the question asks for ${v}.`,
  (o: string, v: string) => `${o} is optional, but I set it to ${v} because the question asks for it.`,
];
const SUMMARY = [
  (names: string[]) => `In summary, the next step is ${listCallNames(names)}, and the inputs are settled above.`,
  (names: string[]) => `To sum up: ${listCallNames(names)} for this step, with every input grounded.`,
  (names: string[]) => `Decision: go ahead with ${listCallNames(names)} now.`,
];
const PREVIEW = [
  (calls: ToolCall[]) => `So the tool call would be: ${calls.map((c) => formatToolCallJson(c)).join(' and ')}`,
  (calls: ToolCall[]) =>
    calls
      .map((c) => {
        const args = Object.entries(c.arguments);
        return args.length === 0
          ? `I will call ${c.name} with no arguments.`
          : `I will call ${c.name} with ${args.map(([k, v]) => `${k}=${describeValue(v)}`).join(', ')}.`;
      })
      .join(' '),
  (calls: ToolCall[]) =>
    `Here is the call: ${calls.map((c) => `${c.name}(${formatPythonJson(c.arguments)})`).join(', ')}`,
  (calls: ToolCall[]) =>
    calls.map((c) => `Action: ${c.name}\nAction Input: ${formatPythonJson(c.arguments)}`).join('\n'),
];
const REFLECTION_ERROR = [
  (label: string, err: string, mistake: string) => `${label} failed: ${err} I ${mistake}.`,
  (label: string, err: string, mistake: string) =>
    `That did not work for ${label.toLowerCase()}. The tool answered: ${err} The problem is that I ${mistake}.`,
  (label: string, err: string, mistake: string) => `${label} returned an error: ${err} Looking back, I ${mistake}.`,
];
const REFLECTION_SILENT = [
  (label: string, obs: string, mistake: string) => `${label} did not give a usable result: ${obs} I ${mistake}.`,
];
const FALLBACK = [
  (fix: string) => `Instead, I will retry the same tool, this time ${fix}.`,
  (fix: string) => `Plan B: try again with the same tool, ${fix}.`,
  (fix: string) => `I will retry now, ${fix}.`,
];
const FINAL_GROUNDING = [
  (answer: string) => `Based on the results, the answer is ${answer}.`,
  (answer: string) => `The last observation gives ${answer}. That answers the question.`,
  (answer: string, facts: string) =>
    `Putting the observations together: ${facts}. This is the final answer: ${answer}.`,
];

// ---------------------------------------------------------------------------
// Paragraph writers

function writeRequiredGrounding(
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

function writeOptionalAnalysis(
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

function describeToolPurpose(schema: ToolSchema | undefined): string {
  const text = (schema?.function.description ?? '').replace(/\s+/g, ' ').trim();
  if (!text) return 'it answers this kind of lookup.';
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function buildTurn(paragraphs: Paragraph[], calls: ToolCall[], observations: string[]): TraceTurn {
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

// ---------------------------------------------------------------------------
// Corruption (a deliberately wrong first attempt)

interface Corruption {
  call: ToolCall;
  mistake: string;
  fix: string;
  /** For a misnamed argument: [wrong name, right name]. */
  renamed?: [string, string];
}

function corruptCall(rng: Rng, call: ToolCall, schema: ToolSchema | undefined): Corruption | null {
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

// ---------------------------------------------------------------------------
// The teacher

async function executeSafely(execute: ToolCallRunner, call: ToolCall): Promise<string> {
  try {
    const observation = await execute(call);
    return typeof observation === 'string' ? observation : String(observation);
  } catch (err) {
    return `Error: ${(err as Error)?.message ?? String(err)}`;
  }
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

/**
 * Solves `task` from its gold calls through `execute` and returns the expert trace
 * (unverified: see verify.ts, or `buildVerifiedTrace`). Deterministic given the seed,
 * the task and the executor. Throws only when the task has no gold calls.
 */
export async function runTeacher(task: Task, execute: ToolCallRunner, options: TeacherOptions): Promise<ExpertTrace> {
  const goldCalls = task.goldCalls ?? [];
  if (goldCalls.length === 0)
    throw new Error(`runTeacher: task ${task.id} has no goldCalls; the scripted teacher needs them`);
  const failedCallProb = options.failedCallProb ?? 0.15;
  const optionalStepProb = options.optionalStepProb ?? 0.5;
  const previewProb = options.previewProb ?? 0.3;
  const maxTurns = options.maxTurns ?? 10;
  const rng = createRng(options.seed).split(`teacher/${task.id}`);

  const toolNames = task.tools.map((t) => t.function.name);
  const goldNames = new Set(goldCalls.map((c) => c.name));
  const distractors = toolNames.filter((n) => !goldNames.has(n));
  const deps = planDependencies(task, goldCalls);
  const groups = groupCallsIntoTurns(task, deps);
  const goldObservations: Array<string | undefined> = goldCalls.map(() => undefined);
  const goldIssued: Array<ToolCall | undefined> = goldCalls.map(() => undefined);
  const turns: TraceTurn[] = [];
  let stepsDone = 0;

  /** A value of call j read from the producer's actual observation (see the header). */
  const readSlotValue = (gold: unknown, producers: number[]): unknown => {
    const seen = producers.filter((i) => goldObservations[i] !== undefined);
    const containing = seen.filter((i) => findValueInObservation(goldObservations[i]!, String(gold)) !== null);
    const producer = containing.at(-1) ?? seen.at(-1);
    if (producer === undefined) return gold; // unreachable: groups run producers first
    const observation = goldObservations[producer]!;
    return castLike(
      gold,
      findValueInObservation(observation, String(gold)) ?? extractObservationValue(observation, goldIssued[producer]),
    );
  };

  const resolveCall = (j: number): ResolvedCall => {
    const gold = goldCalls[j];
    const question = normalizeText(task.question);
    const args: Record<string, unknown> = {};
    const sources = new Map<string, ArgSource>();
    for (const [arg, value] of Object.entries(gold.arguments ?? {})) {
      let isFromObservation = false;
      if (Array.isArray(value)) {
        args[arg] = value.map((el, e) => {
          const producers = deps[j].get(slotKey(arg, e));
          if (!producers) return el;
          isFromObservation = true;
          return readSlotValue(el, producers);
        });
      } else {
        const producers = deps[j].get(slotKey(arg));
        isFromObservation = producers !== undefined;
        args[arg] = producers ? readSlotValue(value, producers) : value;
      }
      const isStated = value !== null && typeof value !== 'object' && question.includes(normalizeText(String(value)));
      sources.set(arg, isFromObservation ? 'observation' : isStated ? 'question' : 'task');
    }
    return { goldIndex: j, call: { name: gold.name, arguments: args }, sources };
  };

  for (let g = 0; g < groups.length; g++) {
    const remainingGroups = groups.length - g;
    if (turns.length + 2 > maxTurns) break; // no room for this turn and the final-answer turn
    const resolved = groups[g].map((j) => resolveCall(j));
    const schemas = resolved.map((r) => findToolSchema(task, r.call.name));
    const mayFail = turns.length + remainingGroups + 2 <= maxTurns;
    const corruptions = resolved.map((r, k) =>
      mayFail && isChance(rng, failedCallProb) ? corruptCall(rng, r.call, schemas[k]) : null,
    );
    const issued = resolved.map((r, k) => corruptions[k]?.call ?? r.call);
    const names = issued.map((c) => c.name);

    const paragraphs: Paragraph[] = [];
    if (turns.length === 0) {
      paragraphs.push({ type: 'task_restate', text: pickOne(rng, RESTATE_FIRST)(task.question) });
      if (isChance(rng, optionalStepProb))
        paragraphs.push({ type: 'tool_scan', text: pickOne(rng, TOOL_SCAN)(toolNames) });
      if (distractors.length > 0 && isChance(rng, optionalStepProb)) {
        const count = Math.min(distractors.length, 1 + rng.int(2));
        const pool = [...distractors];
        const chosen: string[] = [];
        while (chosen.length < count) chosen.push(pool.splice(rng.int(pool.length), 1)[0]);
        paragraphs.push({ type: 'irrelevant_tool_rejection', text: pickOne(rng, REJECTION)(chosen) });
      }
    } else if (isChance(rng, optionalStepProb)) {
      paragraphs.push({
        type: 'task_restate',
        text: pickOne(rng, RESTATE_RECAP)(task.question, stepsDone, goldCalls.length),
      });
    }
    paragraphs.push(
      issued.length === 1
        ? { type: 'tool_selection', text: pickOne(rng, SELECTION_ONE)(names[0], describeToolPurpose(schemas[0])) }
        : { type: 'tool_selection', text: pickOne(rng, SELECTION_MANY)(listCallNames(names)) },
    );
    resolved.forEach((r, k) => {
      const sources = new Map(r.sources);
      const renamed = corruptions[k]?.renamed;
      if (renamed) sources.set(renamed[0], r.sources.get(renamed[1]) ?? 'task');
      const attempt: ResolvedCall = { ...r, call: issued[k], sources };
      const grounding = writeRequiredGrounding(rng, attempt, schemas[k], issued.length > 1 ? `call ${k + 1}` : '');
      if (grounding) paragraphs.push(grounding);
    });
    issued.forEach((call, k) => {
      const optional = writeOptionalAnalysis(rng, call, schemas[k], false, optionalStepProb);
      if (optional) paragraphs.push(optional);
    });
    if (isChance(rng, optionalStepProb))
      paragraphs.push({ type: 'decision_summary', text: pickOne(rng, SUMMARY)(names) });
    if (isChance(rng, previewProb))
      paragraphs.push({ type: 'explicit_call_preview', text: pickOne(rng, PREVIEW)(issued) });

    const observations: string[] = [];
    for (const call of issued) observations.push(await executeSafely(execute, call));
    turns.push(buildTurn(paragraphs, issued, observations));
    resolved.forEach((r, k) => {
      if (corruptions[k]) return;
      goldObservations[r.goldIndex] = observations[k];
      goldIssued[r.goldIndex] = r.call;
    });

    // A retry turn for the deliberately wrong calls.
    const failed = resolved.map((r, k) => ({ r, k })).filter(({ k }) => corruptions[k] !== null);
    if (failed.length > 0) {
      const retryParagraphs: Paragraph[] = [];
      for (const { k } of failed) {
        const label = issued.length > 1 ? `Call ${k + 1}` : 'The previous call';
        const quoted = quoteObservation(observations[k], toolNames);
        const mistake = corruptions[k]!.mistake;
        retryParagraphs.push({
          type: 'failure_reflection',
          text: isErrorObservation(observations[k])
            ? pickOne(rng, REFLECTION_ERROR)(label, quoted, mistake)
            : pickOne(rng, REFLECTION_SILENT)(label, quoted, mistake),
        });
      }
      retryParagraphs.push({
        type: 'fallback_plan',
        text: pickOne(rng, FALLBACK)(failed.map(({ k }) => corruptions[k]!.fix).join(' and ')),
      });
      for (const { r, k } of failed) {
        const grounding = writeRequiredGrounding(rng, r, schemas[k], failed.length > 1 ? `call ${k + 1}` : '');
        if (grounding) retryParagraphs.push(grounding);
      }
      const retried = failed.map(({ r }) => r.call);
      if (isChance(rng, optionalStepProb))
        retryParagraphs.push({ type: 'decision_summary', text: pickOne(rng, SUMMARY)(retried.map((c) => c.name)) });
      if (isChance(rng, previewProb))
        retryParagraphs.push({ type: 'explicit_call_preview', text: pickOne(rng, PREVIEW)(retried) });
      const retryObservations: string[] = [];
      for (const call of retried) retryObservations.push(await executeSafely(execute, call));
      turns.push(buildTurn(retryParagraphs, retried, retryObservations));
      failed.forEach(({ r }, m) => {
        goldObservations[r.goldIndex] = retryObservations[m];
        goldIssued[r.goldIndex] = r.call;
      });
    }
    stepsDone += groups[g].length;
  }

  // The final-answer turn: grounded in the observations, never copied blindly.
  const seenObservations = goldObservations.filter((o): o is string => o !== undefined);
  const lastTurn = turns.at(-1);
  const lastValues = (lastTurn?.observations ?? []).map((o, k) => extractObservationValue(o, lastTurn?.calls[k]));
  const finalAnswer = isAnswerGrounded(task.answer, seenObservations) ? task.answer : lastValues.join(', ');
  const facts = goldCalls
    .map((c, j) => {
      const observation = goldObservations[j];
      if (observation === undefined) return null;
      const expected = listExpectedAnswers(task, goldCalls, j)
        .map((a) => findValueInObservation(observation, String(a)))
        .find((v) => v !== null);
      return `${c.name} returned ${quoteObservation(expected ?? extractObservationValue(observation, goldIssued[j]), [])}`;
    })
    .filter((f): f is string => f !== null)
    .join('; ');
  const finalText = pickOne(rng, FINAL_GROUNDING)(finalAnswer, facts || 'nothing usable');
  turns.push(buildTurn([{ type: 'final_answer_grounding', text: finalText }], [], []));

  return { taskId: task.id, turns, finalAnswer, source: 'teacher', verified: false };
}

/** Runs the teacher and verifies the trace against the task (PACT App. C filtering). */
export async function buildVerifiedTrace(
  task: Task,
  execute: ToolCallRunner,
  options: TeacherOptions,
): Promise<{ trace: ExpertTrace; verdict: TraceVerdict }> {
  return markVerified(await runTeacher(task, execute, options), task);
}
