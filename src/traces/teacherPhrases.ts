/**
 * The teacher's phrasings (teacher.ts), several for each chunk kind, filled with the task's
 * question, tool names, argument values and observations; the segmentation rules in
 * segment.ts recognise them. Templates, not data: each is a function of what it quotes.
 */
import type { ToolCall } from '../core/types';
import { formatPythonJson, formatToolCallJson } from './render';
import type { ArgSource } from './teacherPlan';

export function describeValue(value: unknown): string {
  return typeof value === 'string' ? value : formatPythonJson(value);
}

export function listNames(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

const TIMES = ['', 'once', 'twice', 'three times'];

/** Tool names of a turn's calls, repeated names counted: "get_capital twice and get_x". */
export function listCallNames(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return listNames([...counts].map(([n, c]) => (c === 1 ? n : `${n} ${TIMES[c] ?? `${c} times`}`)));
}

export const RESTATE_FIRST = [
  (q: string) => `The question asks: ${q} I need to answer it using only information from tool calls.`,
  (q: string) => `Let me restate the task. ${q} Every fact has to come from a tool call.`,
  (q: string) =>
    `The user wants to know: ${q} I should gather the facts with the tools rather than answer from memory.`,
];
export const RESTATE_RECAP = [
  (q: string, done: number, total: number) =>
    `Back to the task: ${q} I have finished ${done} of the ${total} lookups so far.`,
  (q: string, done: number, total: number) =>
    `Progress check: ${done} of ${total} steps are done, and the question is still: ${q}`,
  (q: string, done: number, total: number) =>
    `Let me restate where I am. ${done} of ${total} steps are done for the question: ${q}`,
];
export const TOOL_SCAN = [
  (names: string[]) => `Looking at the available tools: ${listNames(names)}.`,
  (names: string[]) => `The tools I have are: ${listNames(names)}.`,
  (names: string[]) => `Scanning the tool list, there are ${names.length} tools: ${listNames(names)}.`,
];
export const REJECTION = [
  (names: string[]) =>
    `${listNames(names)} ${names.length > 1 ? 'are' : 'is'} not relevant to this question, so I will ignore ${names.length > 1 ? 'them' : 'it'}.`,
  (names: string[]) =>
    `I can rule out ${listNames(names)}: ${names.length > 1 ? 'they do' : 'it does'} not help with this question.`,
  (names: string[]) =>
    `Some tools look similar but do not fit what is asked: ${listNames(names)}. I set ${names.length > 1 ? 'them' : 'it'} aside.`,
];
export const SELECTION_ONE = [
  (name: string, desc: string) => `The right tool for this step is ${name}. Its description says: ${desc}`,
  (name: string, desc: string) => `I should use ${name} here. Its description matches the step: ${desc}`,
  (name: string, desc: string) => `${name} is the best fit for this step. Its description reads: ${desc}`,
];
export const SELECTION_MANY = [
  (what: string) =>
    `The right tools for this step are ${what}. No call needs another's result, so they can run in parallel.`,
  (what: string) => `I should use ${what} here. These lookups are independent, so I issue them together.`,
  (what: string) => `The best fit for this step is ${what}. The results do not depend on each other.`,
];
export const GROUNDING_INTRO = [
  'Now the required arguments.',
  'To fill in the required parameters:',
  'Grounding the required inputs:',
];
export const GROUNDING_BY_SOURCE: Record<ArgSource, Array<(arg: string, v: string) => string>> = {
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
export const OPTIONAL_DEFAULT = [
  (o: string, d: string) => `The optional argument ${o} can stay at its default (${d}).`,
  (o: string, d: string) => `${o} is optional and defaults to ${d}; the question does not ask to change it.`,
];
export const OPTIONAL_OMIT = [
  (o: string) => `The optional argument ${o} is not asked for, so I leave it out.`,
  (o: string) => `${o} is optional and the question says nothing about it, so I omit it.`,
];
export const OPTIONAL_SET = [
  (o: string, v: string) => `The optional argument ${o} matters here: the question asks for ${v}.`,
  (o: string, v: string) => `${o} is optional, but I set it to ${v} because the question asks for it.`,
];
export const SUMMARY = [
  (names: string[]) => `In summary, the next step is ${listCallNames(names)}, and the inputs are settled above.`,
  (names: string[]) => `To sum up: ${listCallNames(names)} for this step, with every input grounded.`,
  (names: string[]) => `Decision: go ahead with ${listCallNames(names)} now.`,
];
export const PREVIEW = [
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
export const REFLECTION_ERROR = [
  (label: string, err: string, mistake: string) => `${label} failed: ${err} I ${mistake}.`,
  (label: string, err: string, mistake: string) =>
    `That did not work for ${label.toLowerCase()}. The tool answered: ${err} The problem is that I ${mistake}.`,
  (label: string, err: string, mistake: string) => `${label} returned an error: ${err} Looking back, I ${mistake}.`,
];
export const REFLECTION_SILENT = [
  (label: string, obs: string, mistake: string) => `${label} did not give a usable result: ${obs} I ${mistake}.`,
];
export const FALLBACK = [
  (fix: string) => `Instead, I will retry the same tool, this time ${fix}.`,
  (fix: string) => `Plan B: try again with the same tool, ${fix}.`,
  (fix: string) => `I will retry now, ${fix}.`,
];
export const FINAL_GROUNDING = [
  (answer: string) => `Based on the results, the answer is ${answer}.`,
  (answer: string) => `The last observation gives ${answer}. That answers the question.`,
  (answer: string, facts: string) =>
    `Putting the observations together: ${facts}. This is the final answer: ${answer}.`,
];
