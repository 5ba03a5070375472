/**
 * The multi-turn tool-use environment (`reset/step`, no tfjs).
 *
 * `reset(task)` renders the system and user messages with the task's tools through the
 * chat template (a `RenderChat` passed in: Qwen3's `renderChat` in the app, any stand-in
 * in tests) and returns the prompt text the policy continues. `step(text)` parses one
 * assistant turn, checks and executes its calls, and returns the observation text the
 * policy continues from next, in Qwen3's form (docs/envs.md).
 *
 * Simplifications: calls in a turn that also answers are executed (they count as calls
 * in FTRL's metrics) but their outputs are not shown; the assistant text is kept
 * verbatim (not re-rendered by the template), so the context is exactly the tokens the
 * policy produced.
 */
import type { TokenTag, TokenKind } from '../core/types';
import { getOwn } from '../core/untrustedJson';
import type { TextTokenizer } from '../model/tokenizer/types';
import type { ExecuteOptions, ToolExecutor } from './sandbox/types';
import { formatToolError } from './sandbox/types';
import { checkToolCall, parseAssistantTurn, type ParsedTurn } from './toolCallParser';
import type { Task, ToolCall, ToolSchema } from './types';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

/** Renders messages with the chat template (Qwen3's `renderChat` in the app). */
export type RenderChat = (
  messages: ChatMessage[],
  options: { tools?: ToolSchema[]; addGenerationPrompt?: boolean },
) => string;

export const DEFAULT_MAX_TURNS = 10;

export const DEFAULT_SYSTEM_PROMPT =
  'Use the tools to answer. When you know the answer, write it inside <answer></answer>.';

/** FTRL's user instruction (its test set's wording). */
export const FTRL_INSTRUCTION =
  'Please call given tools to answer the question. Please note that all your information must be obtained by calling tools and not by answering the question directly.\nIf the call fails, you need to try to correct it and continue until you arrive at an answer.\nQuestion: ';

/** The user message of a task: FTRL's instruction + the question (kept as is if it already has it). */
export function formatUserPrompt(task: Task): string {
  return task.question.includes('Question:') ? task.question : FTRL_INSTRUCTION + task.question;
}

export const IM_START = '<|im_start|>';
export const IM_END = '<|im_end|>';

export interface RolloutOptions {
  executor: ToolExecutor;
  renderChat: RenderChat;
  maxTurns?: number;
  /**
   * Per-call time limit, passed to the executor; absent, the executor's own limit applies
   * (2,000 ms for the JavaScript sandboxes, the FTRL executor's tasks.toolTimeoutMs).
   */
  timeoutMs?: number;
  /** System message; null for none. Default DEFAULT_SYSTEM_PROMPT. */
  systemPrompt?: string | null;
  userPrompt?: (task: Task) => string;
}

/** One executed (or rejected) call, FTRL-style: what `ftrlSolveMetrics` reads. */
export interface CallOutput {
  name: string;
  output: string;
  ok: boolean;
}

export interface TurnRecord {
  turn: number;
  /** The assistant's text, verbatim. */
  assistantText: string;
  parsed: ParsedTurn;
  /** Well-formed calls of the turn, valid or not, in order. */
  calls: ToolCall[];
  /** One per well-formed call, in order. */
  outputs: CallOutput[];
  /** The `<tool_response>` contents, one per `<tool_call>` block then one per other parse error. */
  observations: string[];
  /** Every problem of the turn: parse errors, argument errors, failed executions. */
  errors: string[];
  /** Environment text after the assistant's text: end-of-turn marker, then the observations (if not done). */
  envText: string;
}

export type StopReason = 'answer' | 'no_call' | 'max_turns';

export interface StepResult {
  done: boolean;
  stopReason?: StopReason;
  /** What the policy continues from (the environment text after its turn). */
  envText: string;
  turn: TurnRecord;
}

export interface Transcript {
  task: Task;
  messages: ChatMessage[];
  promptText: string;
  turns: TurnRecord[];
  done: boolean;
  stopReason?: StopReason;
  answer?: string;
}

export interface TaggedSegment {
  text: string;
  tag: TokenTag;
}

/** The Qwen3 wrapping of consecutive tool messages, then the next generation prompt. */
export function formatObservationBlock(observations: string[]): string {
  let text = `${IM_START}user`;
  for (const o of observations) text += `\n<tool_response>\n${o}\n</tool_response>`;
  return `${text}${IM_END}\n${IM_START}assistant\n`;
}

function parseErrorObservation(error: string): string {
  return `error: ${error}`;
}

export class RolloutEnv {
  private readonly options: Required<Omit<RolloutOptions, 'systemPrompt' | 'timeoutMs'>> & {
    systemPrompt: string | null;
    timeoutMs: number | undefined;
  };
  private state: Transcript | null = null;

  constructor(options: RolloutOptions) {
    const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
    if (!Number.isInteger(maxTurns) || maxTurns < 1)
      throw new Error(`RolloutEnv: maxTurns must be a positive integer, got ${maxTurns}`);
    this.options = {
      executor: options.executor,
      renderChat: options.renderChat,
      maxTurns,
      timeoutMs: options.timeoutMs,
      systemPrompt: options.systemPrompt === undefined ? DEFAULT_SYSTEM_PROMPT : options.systemPrompt,
      userPrompt: options.userPrompt ?? formatUserPrompt,
    };
  }

  /** Starts an episode; returns the prompt text (ending with the generation prompt). */
  reset(task: Task): { promptText: string; messages: ChatMessage[] } {
    const messages: ChatMessage[] = [];
    if (this.options.systemPrompt !== null) messages.push({ role: 'system', content: this.options.systemPrompt });
    messages.push({ role: 'user', content: this.options.userPrompt(task) });
    const promptText = this.options.renderChat(messages, { tools: task.tools, addGenerationPrompt: true });
    this.state = { task, messages: [...messages], promptText, turns: [], done: false };
    return { promptText, messages };
  }

  /** Parses, checks and executes one assistant turn. Never throws on bad model output. */
  async step(assistantText: string): Promise<StepResult> {
    const state = this.state;
    if (!state) throw new Error('RolloutEnv.step: call reset(task) first');
    if (state.done) throw new Error(`RolloutEnv.step: the episode is over (${state.stopReason}); call reset(task)`);
    const text = typeof assistantText === 'string' ? assistantText : String(assistantText);
    const turnIndex = state.turns.length;
    const parsed = parseAssistantTurn(text);
    const calls: ToolCall[] = [];
    const outputs: CallOutput[] = [];
    const observations: string[] = [];
    const errors: string[] = [...parsed.errors];
    const execOptions: ExecuteOptions =
      this.options.timeoutMs === undefined ? {} : { timeoutMs: this.options.timeoutMs };

    for (const block of parsed.calls) {
      if (!block.call) {
        observations.push(parseErrorObservation(block.error ?? 'malformed <tool_call>'));
        continue;
      }
      const call = block.call;
      calls.push(call);
      const problem = checkToolCall(call, state.task.tools);
      let result: CallOutput;
      if (problem) {
        result = { name: call.name, output: formatToolError(call.name, problem), ok: false };
      } else {
        const impl = getOwn(state.task.implementations, call.name);
        const r = impl
          ? await this.options.executor.execute(impl, call.name, call.arguments, execOptions)
          : { ok: false, output: formatToolError(call.name, 'the tool has no implementation') };
        result = { name: call.name, output: r.output, ok: r.ok };
      }
      if (!result.ok) errors.push(result.output);
      outputs.push(result);
      observations.push(result.output);
    }
    const callErrors = new Set(parsed.calls.map((c) => c.error).filter((e): e is string => !!e));
    for (const e of parsed.errors) if (!callErrors.has(e)) observations.push(parseErrorObservation(e));

    let stopReason: StopReason | undefined;
    if (parsed.answer !== undefined) stopReason = 'answer';
    else if (parsed.calls.length === 0 && parsed.errors.length === 0) stopReason = 'no_call';
    else if (turnIndex + 1 >= this.options.maxTurns) stopReason = 'max_turns';
    const done = stopReason !== undefined;

    const endsWithImEnd = text.endsWith(IM_END);
    const closing = endsWithImEnd ? '\n' : `${IM_END}\n`;
    const envText = done ? closing : closing + formatObservationBlock(observations);

    const turn: TurnRecord = {
      turn: turnIndex,
      assistantText: text,
      parsed,
      calls,
      outputs,
      observations,
      errors,
      envText,
    };
    state.turns.push(turn);
    state.messages.push({ role: 'assistant', content: endsWithImEnd ? text.slice(0, -IM_END.length) : text });
    if (!done) for (const o of observations) state.messages.push({ role: 'tool', content: o });
    if (done) {
      state.done = true;
      state.stopReason = stopReason;
      state.answer = parsed.answer;
    }
    return { done, stopReason, envText, turn };
  }

  /** The episode so far. */
  get transcript(): Transcript {
    if (!this.state) throw new Error('RolloutEnv.transcript: call reset(task) first');
    return this.state;
  }

  /** The full text so far: the prompt, then each turn's assistant text and environment text. */
  contextText(): string {
    const t = this.transcript;
    return t.promptText + t.turns.map((turn) => turn.assistantText + turn.envText).join('');
  }
}

/**
 * Runs one whole episode: `generateTurn(context)` returns the policy's next assistant
 * text given the full context so far (prompt, earlier turns, observations).
 */
export async function runEpisode(
  env: RolloutEnv,
  task: Task,
  generateTurn: (context: string) => Promise<string>,
): Promise<Transcript> {
  env.reset(task);
  for (;;) {
    const text = await generateTurn(env.contextText());
    if ((await env.step(text)).done) return env.transcript;
  }
}

/** Every call of an episode in order, as `{name, output}` (FTRL's solve metrics input). */
export function listCallOutputs(transcript: Transcript): { name: string; output: string }[] {
  return transcript.turns.flatMap((t) => t.outputs.map((o) => ({ name: o.name, output: o.output })));
}

/**
 * The transcript as tagged text segments, in order; their concatenation is the
 * transcript's full text (`RolloutEnv.contextText()`).
 */
export function tagSegments(transcript: Transcript): TaggedSegment[] {
  const segments: TaggedSegment[] = [];
  const push = (text: string, kind: TokenKind, turn: number) => {
    if (text.length === 0) return;
    const last = segments[segments.length - 1];
    if (last && last.tag.kind === kind && last.tag.turn === turn) last.text += text;
    else segments.push({ text, tag: { kind, turn } });
  };
  push(transcript.promptText, 'prompt', -1);
  for (const turn of transcript.turns) {
    for (const piece of turn.parsed.pieces)
      push(turn.assistantText.slice(piece.start, piece.end), piece.kind, turn.turn);
    push(turn.envText, 'observation', turn.turn);
  }
  return segments;
}

/**
 * Encodes tagged segments one by one, so every token carries its segment's tag.
 * (Encoding per segment may split differently from encoding the joined text at a
 * segment boundary; the tags are exact for these ids.)
 */
export function tagTokens(
  segments: readonly TaggedSegment[],
  tokenizer: TextTokenizer,
): { ids: number[]; tags: TokenTag[] } {
  const ids: number[] = [];
  const tags: TokenTag[] = [];
  for (const seg of segments) {
    for (const id of tokenizer.encode(seg.text)) {
      ids.push(id);
      tags.push({ ...seg.tag });
    }
  }
  return { ids, tags };
}

/**
 * Maps generated token ids of one assistant turn to their kinds: token k covers the
 * characters [end(k−1), end(k)) of `decode(ids)`, and takes the kind of the parse piece
 * holding its first character (a token straddling two pieces goes to the first).
 * `parse` is the turn's parse (its `text` must equal `decode(ids)`) or the parser.
 */
export function tagGeneratedTokens(
  ids: readonly number[],
  decode: (ids: number[]) => string,
  parse: ParsedTurn | ((text: string) => ParsedTurn),
  turn = 0,
): TokenTag[] {
  const text = decode([...ids]);
  const parsed = typeof parse === 'function' ? parse(text) : parse;
  if (parsed.text !== text) {
    throw new Error(
      `tagGeneratedTokens: the parse is of a different text (${parsed.text.length} characters) than decode(ids) (${text.length} characters)`,
    );
  }
  const ends = computeTokenEnds(ids, decode, text);
  const tags: TokenTag[] = [];
  let p = 0;
  let start = 0;
  for (let k = 0; k < ids.length; k++) {
    const pieces = parsed.pieces;
    while (p < pieces.length - 1 && pieces[p].end <= start) p++;
    const kind: TokenKind = pieces.length === 0 ? 'control' : pieces[p].kind;
    tags.push({ kind, turn });
    start = ends[k];
  }
  return tags;
}

/** End character offset of each token in `text`; non-decreasing, at most text.length. */
function computeTokenEnds(ids: readonly number[], decode: (ids: number[]) => string, text: string): number[] {
  const single = ids.map((id) => decode([id]));
  const ends: number[] = [];
  if (single.join('') === text) {
    let acc = 0;
    for (const piece of single) ends.push((acc += piece.length));
    return ends;
  }
  // A token holding part of a multi-byte character decodes to U+FFFD on its own:
  // fall back to decoding prefixes, ignoring a trailing incomplete character.
  let previous = 0;
  for (let k = 0; k < ids.length; k++) {
    const prefix = decode(ids.slice(0, k + 1)).replace(/\uFFFD+$/, '');
    const end = Math.min(text.length, Math.max(previous, prefix.length));
    ends.push(end);
    previous = end;
  }
  return ends;
}
