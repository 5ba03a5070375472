/**
 * A policy on BFCL v4 multi-turn entries (`pact eval-bfcl`, src/cli/commands/evalBfcl.ts):
 * inference as BFCL's `inference_multi_turn_FC` (bfcl_eval/model_handler/base_handler.py,
 * ShishirPatil/gorilla) with its Qwen FC prompt (local_inference/qwen_fc.py), then BFCL's
 * accuracy rule (src/envs/bfcl/checker.ts).
 *
 * Per entry, per user turn: the turn's messages are added (a miss_func holdout turn gets its
 * held-out docs back and BFCL's DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC); then steps:
 * the whole conversation is rendered with Qwen3's chat template, the entry's function docs
 * as the tools (BFCL's docs as they are, one JSON per line in <tools>, as BFCL's Qwen FC
 * handler writes them), no system message; the policy continues greedily to `<|im_end|>`;
 * the step's well-formed `<tool_call>` blocks are executed on the model's backend instances
 * (src/envs/bfcl/pythonBackend.ts) and their results go back as tool messages; a step with
 * no well-formed call (text only, or only malformed / cut blocks, which BFCL's Qwen FC
 * decoder skips) ends the turn. More than `maxStepsPerTurn` steps with calls in a turn (BFCL:
 * 20) force-terminate the entry: the turn is kept, later turns are not run; so does a
 * conversation that outgrows the model's window (PACT Lab's limit, not BFCL's). Unless it
 * happened in the last turn, the entry then fails BFCL's turn-count check. An entry whose
 * first prompt is over the window is not run (`promptTooLong`) and counts as incorrect.
 *
 * Simplifications: greedy decoding, at most `maxResponseTokens` per step; a step's calls run
 * on the instances that inference keeps, and the checker then replays every decoded call
 * on fresh instances, as BFCL does (same backends, deterministic, so the same results).
 */
import { parseAssistantTurn } from '../envs/toolCallParser';
import { IM_END } from '../envs/rollout';
import { checkBfclEntry, type BfclCheckResult, type BfclModelTurns } from '../envs/bfcl/checker';
import {
  DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC,
  MAXIMUM_STEP_LIMIT,
  buildEntryTools,
  isLongContextCategory,
  type BfclFuncDoc,
  type BfclPair,
} from '../envs/bfcl/data';
import type { BfclBackends, BfclModelCall } from '../envs/bfcl/pythonBackend';
import type { TextTokenizer } from '../model/tokenizer/types';
import type { PolicySampler } from '../recipes/types';

export interface BfclChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

/** Renders a conversation with the chat template; tools are rendered as given (Qwen3Tokenizer.renderChat). */
export type BfclRenderChat = (
  messages: BfclChatMessage[],
  options: { tools: readonly unknown[]; addGenerationPrompt: boolean },
) => string;

export interface BfclRunSettings {
  policy: PolicySampler;
  tokenizer: TextTokenizer;
  renderChat: BfclRenderChat;
  backends: BfclBackends;
  /** The model's window (config.max_position_embeddings). */
  contextTokens: number;
  /** New tokens per step at most. */
  maxResponseTokens: number;
  /** BFCL's MAXIMUM_STEP_LIMIT (20). */
  maxStepsPerTurn?: number;
}

export type BfclRunStatus = 'completed' | 'prompt_too_long' | 'context_overflow' | 'step_limit';

export interface BfclEntryRun {
  modelTurns: BfclModelTurns;
  status: BfclRunStatus;
  steps: number;
  generatedTokens: number;
  /** Tokens of the longest prompt rendered. */
  maxPromptTokens: number;
}

/** The model's well-formed calls of one step, each with its block's JSON text. */
export function readStepCalls(text: string): BfclModelCall[] {
  const parsed = parseAssistantTurn(text);
  const calls: BfclModelCall[] = [];
  for (const block of parsed.calls) {
    if (!block.call) continue;
    const inner = text
      .slice(block.span.start, block.span.end)
      .replace(/^<tool_call>/, '')
      .replace(/<\/tool_call>$/, '');
    calls.push({ name: block.call.name, callJson: inner.trim() });
  }
  return calls;
}

let runCounter = 0;

/** Runs the policy on one entry (see the file header); returns its calls per turn and step. */
export async function runBfclEntry(
  pair: BfclPair,
  docsByClass: ReadonlyMap<string, readonly BfclFuncDoc[]>,
  settings: BfclRunSettings,
): Promise<BfclEntryRun> {
  const { entry } = pair;
  const maxSteps = settings.maxStepsPerTurn ?? MAXIMUM_STEP_LIMIT;
  const imEndId = settings.tokenizer.tokenId(IM_END);
  if (imEndId === undefined) throw new Error(`eval-bfcl: the tokenizer has no ${IM_END} token`);
  const { initial, holdout } = buildEntryTools(entry, docsByClass);
  const tools: BfclFuncDoc[] = [...initial];
  const messages: BfclChatMessage[] = [];
  const run: BfclEntryRun = { modelTurns: [], status: 'completed', steps: 0, generatedTokens: 0, maxPromptTokens: 0 };
  const sid = `infer-${++runCounter}`;
  await settings.backends.open(
    sid,
    entry.involved_classes,
    entry.rawJson ?? JSON.stringify(entry),
    isLongContextCategory(pair.category),
  );
  try {
    for (const [turn, turnMessages] of entry.question.entries()) {
      let added = turnMessages;
      const held = holdout.get(turn);
      if (held) {
        tools.push(...held);
        added = [{ role: 'user', content: DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC }];
      }
      for (const m of added) messages.push({ role: m.role as BfclChatMessage['role'], content: m.content });
      const turnSteps: BfclModelCall[][] = [];
      run.modelTurns.push(turnSteps);
      for (;;) {
        const promptIds = settings.tokenizer.encode(
          settings.renderChat(messages, { tools, addGenerationPrompt: true }),
        );
        run.maxPromptTokens = Math.max(run.maxPromptTokens, promptIds.length);
        const room = settings.contextTokens - promptIds.length;
        if (room <= 0) {
          run.status = turn === 0 && turnSteps.length === 0 ? 'prompt_too_long' : 'context_overflow';
          return run;
        }
        const [row] = await settings.policy.generate([promptIds], {
          maxNewTokens: Math.min(settings.maxResponseTokens, room),
          temperature: 0,
          topP: 1,
          stopTokenIds: [[imEndId]],
        });
        run.steps++;
        run.generatedTokens += row.tokens.length;
        let text = settings.tokenizer.decode(row.tokens);
        if (text.endsWith(IM_END)) text = text.slice(0, -IM_END.length);
        messages.push({ role: 'assistant', content: text });
        const calls = readStepCalls(text);
        if (calls.length === 0) break;
        turnSteps.push(calls);
        const { results } = await settings.backends.execute(sid, calls);
        for (const r of results) messages.push({ role: 'tool', content: r });
        // BFCL: `count += 1; if count > MAXIMUM_STEP_LIMIT: force_quit` — the turn is kept, later turns are not run.
        if (turnSteps.length > maxSteps) {
          run.status = 'step_limit';
          return run;
        }
      }
    }
    return run;
  } finally {
    await settings.backends.close(sid);
  }
}

export interface BfclEntryResult extends BfclCheckResult {
  id: string;
  category: string;
  file: string;
  status: BfclRunStatus | 'error';
  steps: number;
  generatedTokens: number;
  /** An error that stopped the entry (a backend that failed to load, a lost Python worker). */
  error?: string;
}

export interface BfclAccuracyRow {
  /** File (its base name) or `overall`. */
  name: string;
  category: string;
  entries: number;
  correct: number;
  accuracy: number;
  promptTooLong: number;
  errors: number;
}

export interface BfclEvalSummary {
  rows: BfclAccuracyRow[];
  overall: BfclAccuracyRow;
  entries: BfclEntryResult[];
}

export interface BfclEvalFile {
  file: string;
  pairs: BfclPair[];
  docsByClass: ReadonlyMap<string, readonly BfclFuncDoc[]>;
}

/** Accuracy per file (with its category) and overall: correct / entries, BFCL's count. */
export function summariseBfcl(results: readonly BfclEntryResult[]): BfclEvalSummary {
  const row = (name: string, category: string, rs: readonly BfclEntryResult[]): BfclAccuracyRow => {
    const correct = rs.filter((r) => r.valid).length;
    return {
      name,
      category,
      entries: rs.length,
      correct,
      accuracy: rs.length === 0 ? 0 : correct / rs.length,
      promptTooLong: rs.filter((r) => r.status === 'prompt_too_long').length,
      errors: rs.filter((r) => r.status === 'error').length,
    };
  };
  const files = [...new Set(results.map((r) => r.file))];
  const rows = files.map((f) => {
    const rs = results.filter((r) => r.file === f);
    return row(f, [...new Set(rs.map((r) => r.category))].join(','), rs);
  });
  return { rows, overall: row('overall', 'all', results), entries: [...results] };
}

/** Runs and checks every entry of the files; an entry that throws is counted incorrect (`status: 'error'`). */
export async function evaluatePolicyOnBfcl(
  files: readonly BfclEvalFile[],
  settings: BfclRunSettings,
  onEntry?: (result: BfclEntryResult, done: number, total: number) => void,
): Promise<BfclEvalSummary> {
  const total = files.reduce((n, f) => n + f.pairs.length, 0);
  const results: BfclEntryResult[] = [];
  for (const f of files) {
    for (const pair of f.pairs) {
      const base = { id: pair.entry.id, category: pair.category, file: f.file };
      let result: BfclEntryResult;
      try {
        const run = await runBfclEntry(pair, f.docsByClass, settings);
        const check: BfclCheckResult =
          run.status === 'prompt_too_long'
            ? { valid: false, message: `the first prompt is over the window of ${settings.contextTokens} tokens` }
            : await checkBfclEntry(settings.backends, pair.entry, pair.answer.ground_truth, run.modelTurns);
        result = { ...base, ...check, status: run.status, steps: run.steps, generatedTokens: run.generatedTokens };
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        result = { ...base, valid: false, status: 'error', steps: 0, generatedTokens: 0, error: message, message };
      }
      results.push(result);
      onEntry?.(result, results.length, total);
    }
  }
  return summariseBfcl(results);
}
