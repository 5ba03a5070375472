/**
 * Prompt-only rollouts on ToolSearcher's tool-search environment (ToolSearcher §3.1–3.3,
 * App. D; src/envs/toolRepo `SearchEnv`), in the same `Rollout` shape as the tool-use
 * rollouts of rollouts.ts: ids, one TokenTag per id, behaviour log-probs of the generated
 * tokens, and per-turn information (the search calls, their observations, the search
 * events with the gold tools each discovered first) in `rollout.meta.search`.
 *
 * Simplifications: one `maxNewTokens` per batched call; a prompt longer than
 * `maxPromptTokens` is an error naming the query.
 *
 * The turn loop and where the engine comes from: docs/trainer.md.
 */
import { createRng, type Rng } from '../../core/rng';
import { selectionMetrics } from '../../core/metrics';
import {
  IM_END,
  formatObservationBlock,
  tagGeneratedTokens,
  type CallOutput,
  type RenderChat,
} from '../../envs/rollout';
import { parseAssistantTurn } from '../../envs/toolCallParser';
import {
  createSearchEnv,
  type SearchCallParse,
  type SearchEnv,
  type SearchEpisodeSummary,
} from '../../envs/toolRepo/searchEnv';
import type { SearchEvent, ToolSearch } from '../../envs/toolRepo/search';
import type { RepoQuery } from '../../envs/toolRepo/types';
import type { TextTokenizer } from '../../model/tokenizer/types';
import type { PolicySampler, PromptItem, Rollout, RolloutGroup } from '../types';
import { runEpisodeTurns, startEpisodeTokens, type EpisodeTokens } from './episodeLoop';

/** What a tool-search rollout needs besides the query: the engine and Qwen3's chat template. */
export interface ToolSearchHandle {
  engine: ToolSearch;
  renderChat: RenderChat;
  /** Search calls executed per turn (SearchEnv option). Default 1. */
  maxCallsPerTurn?: number;
}

/** The key of the handle inside a tool-search prompt's `query` record. */
export const SEARCH_HANDLE_KEY = 'searchHandle';

/**
 * Tool-search prompts for the trainer: each query with the handle that runs it. The handle
 * is a non-enumerable property of the prompt's query, so prompts stay JSON- and
 * structured-clone-safe (the worker posts rollout samples to the page).
 */
export function createToolSearchPrompts(queries: readonly RepoQuery[], handle: ToolSearchHandle): PromptItem[] {
  if (!handle || !handle.engine || typeof handle.renderChat !== 'function') {
    throw new Error('createToolSearchPrompts: handle must be {engine: ToolSearch, renderChat}');
  }
  return queries.map((query, index) => {
    const withHandle = { ...query };
    Object.defineProperty(withHandle, SEARCH_HANDLE_KEY, { value: handle, enumerable: false });
    return { kind: 'tool-search', index, query: withHandle };
  });
}

/**
 * Train and test prompts from a repository's queries: a seeded permutation, the first
 * `nTest` held out (ToolSearcher trains and tests on different instructions).
 */
export function splitToolSearchPrompts(
  queries: readonly RepoQuery[],
  handle: ToolSearchHandle,
  { nTest, seed }: { nTest: number; seed: number },
): { trainPrompts: PromptItem[]; testPrompts: PromptItem[] } {
  if (!Number.isInteger(nTest) || nTest < 0 || nTest >= queries.length) {
    throw new Error(
      `splitToolSearchPrompts: nTest must be an integer in [0, ${queries.length - 1}] (there are ${queries.length} queries), got ${nTest}`,
    );
  }
  const rng = createRng(`toolSearchSplit/${seed}`);
  const order = queries.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const test = createToolSearchPrompts(
    order.slice(0, nTest).map((i) => queries[i]),
    handle,
  );
  const train = createToolSearchPrompts(
    order.slice(nTest).map((i) => queries[i]),
    handle,
  );
  return { trainPrompts: train, testPrompts: test };
}

/** The query and handle of a tool-search prompt; throws naming what is missing. */
export function readToolSearchPrompt(
  prompt: PromptItem,
  where = 'prompt',
): { query: RepoQuery; handle: ToolSearchHandle } {
  if (!prompt || prompt.kind !== 'tool-search')
    throw new Error(`${where} is a ${prompt?.kind} prompt; tool-search recipes need tool-search prompts`);
  const query = prompt.query as unknown as RepoQuery & Record<string, unknown>;
  const handle = query[SEARCH_HANDLE_KEY] as ToolSearchHandle | undefined;
  if (!handle || !handle.engine || typeof handle.renderChat !== 'function') {
    throw new Error(
      `${where}.query.${SEARCH_HANDLE_KEY} is missing: build tool-search prompts with createToolSearchPrompts(queries, {engine, renderChat})`,
    );
  }
  if (!Array.isArray(query.goldToolIds)) throw new Error(`${where}.query.goldToolIds must be an array of tool ids`);
  return { query, handle };
}

/** One assistant turn of a search episode. */
export interface SearchTurnRecord {
  turn: number;
  assistantText: string;
  calls: SearchCallParse[];
  observations: string[];
  /** The search events this turn recorded (malformed calls included, with `error`). */
  events: SearchEvent[];
  /** Whether this turn held the `<tool_list>` selection. */
  isSelection: boolean;
}

/** `rollout.meta.search`: what the rewards and metrics of the search recipes read. */
export interface SearchRolloutInfo {
  summary: SearchEpisodeSummary;
  turns: SearchTurnRecord[];
  isCategoryConstrained: boolean;
}

export interface ToolSearchRolloutOptions {
  prompts: readonly PromptItem[];
  rolloutsPerPrompt: number;
  policy: PolicySampler;
  tokenizer: TextTokenizer;
  maxTurns: number;
  maxPromptTokens: number;
  maxResponseTokens: number;
  temperature: number;
  topP: number;
  rng: Rng;
  isGreedy?: boolean;
  /** Category-constrained tool discrimination for every episode of this call (§3.3). */
  isCategoryConstrained: boolean;
}

/** One running episode: its environment, its tokens, and its per-turn search records. */
interface Episode extends EpisodeTokens {
  env: SearchEnv;
  query: RepoQuery;
  turns: SearchTurnRecord[];
  callOutputs: CallOutput[];
}

function startEpisode(prompt: PromptItem, where: string, options: ToolSearchRolloutOptions): Episode {
  const { query, handle } = readToolSearchPrompt(prompt, where);
  const env = createSearchEnv(handle.engine, {
    maxTurns: options.maxTurns,
    maxCallsPerTurn: handle.maxCallsPerTurn,
    isCategoryConstrained: options.isCategoryConstrained,
  });
  const start = env.reset(query);
  const promptText = handle.renderChat(
    [
      { role: 'system', content: start.instructions },
      { role: 'user', content: start.userText },
    ],
    { tools: start.tools, addGenerationPrompt: true },
  );
  const promptIds = options.tokenizer.encode(promptText);
  if (promptIds.length > options.maxPromptTokens) {
    throw new Error(
      `searchRollouts: the prompt of query ${query.id} has ${promptIds.length} tokens, over maxPromptTokens ${options.maxPromptTokens}`,
    );
  }
  return { env, query, turns: [], callOutputs: [], ...startEpisodeTokens(promptIds) };
}

/**
 * Collects K prompt-only rollouts per tool-search prompt; groups in prompt order,
 * rollouts in k order; deterministic given `rng`'s state.
 */
export async function collectToolSearchRollouts(options: ToolSearchRolloutOptions): Promise<RolloutGroup[]> {
  const { prompts, rolloutsPerPrompt: K, tokenizer } = options;
  if (!Number.isInteger(K) || K < 1)
    throw new Error(`searchRollouts: rolloutsPerPrompt must be a positive integer, got ${K}`);
  const episodes: Episode[] = [];
  prompts.forEach((prompt, i) => {
    for (let k = 0; k < K; k++) episodes.push(startEpisode(prompt, `prompts[${i}]`, options));
  });
  const decode = (ids: number[]) => tokenizer.decode(ids);
  await runEpisodeTurns(episodes, { ...options, where: 'searchRollouts' }, (ep, text, tokens, turn) => {
    const nEventsBefore = ep.env.session.events.length;
    const result = ep.env.step(text.endsWith(IM_END) ? text.slice(0, -IM_END.length) : text);
    const events = ep.env.session.events.slice(nEventsBefore);
    ep.turns.push({
      turn,
      assistantText: text,
      calls: result.calls,
      observations: result.observations,
      events,
      isSelection: result.stopReason === 'tool_list',
    });
    ep.callOutputs.push(...listSearchCallOutputs(result.calls, result.observations, events));
    const closing = text.endsWith(IM_END) ? '\n' : `${IM_END}\n`;
    return {
      tags: tagGeneratedTokens(tokens, decode, parseAssistantTurn, turn),
      isDone: result.isDone,
      isSuccess: result.stopReason === 'tool_list',
      envText: closing + formatObservationBlock(result.observations),
    };
  });

  const groups: RolloutGroup[] = prompts.map((prompt) => ({ prompt, rollouts: [] }));
  episodes.forEach((ep, e) => {
    const info: SearchRolloutInfo = {
      summary: ep.env.summarize(),
      turns: ep.turns,
      isCategoryConstrained: options.isCategoryConstrained,
    };
    const rollout: Rollout = {
      ids: ep.ids,
      tags: ep.tags,
      behaviourLogprobs: ep.behaviourLogprobs,
      promptLength: ep.promptLength,
      generatedLength: ep.generatedLength,
      callOutputs: ep.callOutputs,
      isFinished: ep.isFinished,
      meta: { search: info },
    };
    groups[Math.floor(e / K)].rollouts.push(rollout);
  });
  return groups;
}

/**
 * The search event of each search call of a turn, aligned with `calls` (and `observations`):
 * each executed or malformed call recorded one event, in order (SearchEnv.step); a call
 * skipped over the per-turn limit and an unclosed `<tool_call>` recorded none (undefined).
 */
export function pairSearchCallEvents(
  calls: readonly SearchCallParse[],
  observations: readonly string[],
  events: readonly SearchEvent[],
): (SearchEvent | undefined)[] {
  let e = 0;
  return calls.map((call, i) => {
    const isSkipped = call.isOk && (observations[i] ?? '').startsWith('Error: only');
    return isSkipped ? undefined : events[e++];
  });
}

/**
 * One CallOutput per search call of a turn (FTRL-style, for `rollout.callOutputs`), its
 * event from `pairSearchCallEvents`. A call is ok when it parsed and its search returned
 * without error.
 */
export function listSearchCallOutputs(
  calls: readonly SearchCallParse[],
  observations: readonly string[],
  events: readonly SearchEvent[],
): CallOutput[] {
  const paired = pairSearchCallEvents(calls, observations, events);
  return calls.map((call, i) => {
    const event = paired[i];
    return {
      name: 'search',
      output: observations[i] ?? '',
      ok: call.isOk && event !== undefined && event.error === undefined,
    };
  });
}

/**
 * The search rounds of an episode: how many of its assistant turns had at least one search
 * reach the engine (ToolSearcher Fig. 5's "interaction rounds with the search engine";
 * logged as `reward/search_rounds` per training step and `eval/search_rounds` held out).
 * A search reached the engine when its call parsed and was executed (its event came from
 * `SearchSession.search`), even if the engine answered with an error (a category outside
 * the scope: "Category X is not within the search scope"). A malformed call (bad JSON, a
 * tool other than search, no query) also records an event, with `error`, but never reaches
 * the engine: a turn with only malformed calls is no round, nor is a turn without a call
 * or the `<tool_list>` selection. A turn with several searches is one round.
 */
export function countSearchRounds(turns: readonly SearchTurnRecord[]): number {
  return turns.filter((t) =>
    pairSearchCallEvents(t.calls, t.observations, t.events).some((event, i) => t.calls[i].isOk && event !== undefined),
  ).length;
}

/** `rollout.meta.search`; throws when the rollout did not come from the search env. */
export function readSearchRolloutInfo(rollout: Rollout, where = 'rollout'): SearchRolloutInfo {
  const info = rollout?.meta?.search as SearchRolloutInfo | undefined;
  if (!info || !info.summary || !Array.isArray(info.turns)) {
    throw new Error(`${where}.meta.search is missing: tool-search rollouts come from collectToolSearchRollouts`);
  }
  return info;
}

/**
 * The format part of ToolSearcher's outcome reward: the episode ended with a well-formed
 * `<tool_list>`, every earlier turn made at least one search call, and no call was malformed.
 */
export function isSearchFormatOk(info: SearchRolloutInfo): boolean {
  if (!info.summary.hasValidSelection) return false;
  return info.turns.every((t) => t.isSelection || (t.calls.length > 0 && t.calls.every((c) => c.isOk)));
}

/**
 * Held-out tool-selection metrics of one rollout (ToolSearcher App. B.3): F1, recall,
 * precision, match and search recall (core selectionMetrics), format, turns and search
 * rounds (countSearchRounds); named `eval/<key>` by the trainer.
 */
export function evaluateSearchRollout(rollout: Rollout, prompt: PromptItem): Record<string, number> {
  const { query } = readToolSearchPrompt(prompt);
  const info = readSearchRolloutInfo(rollout);
  const searched = info.turns.flatMap((t) => t.events.map((e) => e.returnedIds));
  const m = selectionMetrics(info.summary.selectedIds, query.goldToolIds, searched);
  return {
    f1: m.f1,
    recall: m.recall,
    precision: m.precision,
    match: m.match ? 1 : 0,
    search_recall: m.sRecall,
    format: isSearchFormatOk(info) ? 1 : 0,
    turns: info.summary.turns,
    search_rounds: countSearchRounds(info.turns),
  };
}

/**
 * A search-teacher episode (src/envs/toolRepo/searchTeacher.ts) as the rollout a policy
 * writing exactly the teacher's turns would have produced: the turns go through
 * `collectToolSearchRollouts` itself (a scripted sampler emits `encode(text + <|im_end|>)`
 * per turn), so the prompt, the tags of the turn tokens, the observation blocks and
 * `meta.search` are the collector's own: the warm start's SFT rows (warmStart/search.ts) look
 * like the rollouts RL later sees. Budgets are unlimited here (rows are cut by the SFT's
 * maxSeqLen). Throws when a turn's ids do not decode back to its text, or when the env
 * did not end the episode on the teacher's `<tool_list>`.
 */
export async function replaySearchTeacherEpisode(
  episode: { queryId: string; maxTurns: number; isCategoryConstrained: boolean; assistantTexts: readonly string[] },
  query: RepoQuery,
  handle: ToolSearchHandle,
  tokenizer: TextTokenizer,
): Promise<Rollout> {
  if (query.id !== episode.queryId)
    throw new Error(`replaySearchTeacherEpisode: the episode is of query ${episode.queryId}, not ${query.id}`);
  const imEnd = tokenizer.tokenId(IM_END);
  if (imEnd === undefined) throw new Error(`replaySearchTeacherEpisode: the tokenizer has no ${IM_END} token`);
  let turn = 0;
  const policy: PolicySampler = {
    async generate(prompts) {
      return prompts.map(() => {
        const text = episode.assistantTexts[turn++];
        if (text === undefined)
          throw new Error(
            `replaySearchTeacherEpisode: query ${query.id}: the env asked for turn ${turn - 1}, but the episode has ${episode.assistantTexts.length} turns`,
          );
        const tokens = tokenizer.encode(text + IM_END);
        if (tokenizer.decode(tokens) !== text + IM_END)
          throw new Error(
            `replaySearchTeacherEpisode: query ${query.id} turn ${turn - 1} does not decode back to its text`,
          );
        const zeros = tokens.map(() => 0);
        return {
          tokens,
          logprobs: zeros,
          samplingLogprobs: zeros,
          finishReason: tokens[tokens.length - 1] === imEnd ? 'stop' : 'length',
        };
      });
    },
  };
  const [group] = await collectToolSearchRollouts({
    prompts: createToolSearchPrompts([query], handle),
    rolloutsPerPrompt: 1,
    policy,
    tokenizer,
    maxTurns: episode.maxTurns,
    maxPromptTokens: Number.MAX_SAFE_INTEGER,
    maxResponseTokens: Number.MAX_SAFE_INTEGER,
    temperature: 0,
    topP: 1,
    rng: createRng(`search-teacher/${query.id}`),
    isGreedy: true,
    isCategoryConstrained: episode.isCategoryConstrained,
  });
  const rollout = group.rollouts[0];
  const info = readSearchRolloutInfo(rollout, `the replay of ${query.id}`);
  if (info.summary.stopReason !== 'tool_list' || turn !== episode.assistantTexts.length) {
    throw new Error(
      `replaySearchTeacherEpisode: query ${query.id}: the env stopped with ${info.summary.stopReason} after ${turn} of ${episode.assistantTexts.length} turns`,
    );
  }
  return rollout;
}
