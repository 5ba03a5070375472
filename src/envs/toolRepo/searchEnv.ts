/**
 * The tool-selection environment of ToolSearcher (§3.1–3.3): the policy searches a large
 * tool repository over several turns and ends with its selection T_s.
 *
 * Category-constrained tool discrimination (§3.3): with `isCategoryConstrained`, each
 * episode's scope is the gold tools' categories; searches without a category cover only
 * that scope, and any other category is answered "Category X is not within the search
 * scope". Simplification: the paper does not say how the scope is chosen; we use the
 * gold categories and name them in the instructions.
 *
 * The interaction format and when an episode ends: docs/envs.md.
 */
import type { ToolSchema } from '../types';
import { SearchSession, computeDiscoveriesPerEvent, computeFirstFoundTurns, computeSearchRecall } from './search';
import type { ToolSearch } from './search';
import { hasToolList, parseToolList, resolveToolList, stripThinking } from './toolList';
import type { ToolListParse } from './toolList';
import type { RepoQuery } from './types';
import { describeJsonSyntaxError } from '../jsonSyntax';

/** ToolSearcher trains and tests with at most 8 interaction turns (App. D). */
export const DEFAULT_MAX_TURNS = 8;

export const SEARCH_TOOL_SCHEMA: ToolSchema = {
  type: 'function',
  function: {
    name: 'search',
    description:
      'Search the tool repository. Returns the 5 best-matching tool documents (name, description, inputs, outputs). ' +
      'Optionally restrict the search to one category.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What the needed tool should do.' },
        category: { type: 'string', description: 'Optional: search only inside this category.' },
      },
      required: ['query'],
    },
  },
};

export interface SearchEnvOptions {
  maxTurns?: number;
  /** Search calls executed per turn; later calls in the same turn get an error observation. Default 1. */
  maxCallsPerTurn?: number;
  /** Category-constrained tool discrimination (ToolSearcher §3.3). Default false (global search). */
  isCategoryConstrained?: boolean;
}

export interface SearchEnvStart {
  /** Task instructions (system prompt text). */
  instructions: string;
  /** The user message: the query text. */
  userText: string;
  tools: ToolSchema[];
  /** The categories the episode may search; null for global search. */
  scopeCategories: string[] | null;
}

export type SearchCallParse = { isOk: true; query: string; category: string | null } | { isOk: false; error: string };

export type StopReason = 'tool_list' | 'turn_limit';

export interface SearchStepResult {
  /** 0-based index of the assistant turn just processed. */
  turn: number;
  calls: SearchCallParse[];
  /** One observation per call (or one for a turn with no call); empty when the episode ended on `<tool_list>`. */
  observations: string[];
  isDone: boolean;
  stopReason: StopReason | null;
  /** The parsed `<tool_list>`, when this turn had one. */
  selection: ToolListParse | null;
  /** Repository ids of the selected tools (empty unless the selection parsed). */
  selectedIds: string[];
  unknownNames: string[];
}

export interface SearchEpisodeSummary {
  queryId: string;
  goldIds: string[];
  selectedIds: string[];
  unknownNames: string[];
  /** Whether the episode ended with a well-formed `<tool_list>`. */
  hasValidSelection: boolean;
  searchedIds: string[];
  searchRecall: number;
  /** Gold id → first turn its search returned it (null: never). */
  firstFoundTurns: Record<string, number | null>;
  /** Per search event, the gold ids it found first. */
  discoveriesPerEvent: string[][];
  turns: number;
  stopReason: StopReason | null;
}

const CALL_PATTERN = /<tool_call>([\s\S]*?)<\/tool_call>/g;

/** Parses one `<tool_call>` body into a search call; never throws. */
export function parseSearchCall(body: string): SearchCallParse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.trim());
  } catch {
    return { isOk: false, error: `tool call: invalid JSON (${describeJsonSyntaxError(body.trim())})` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { isOk: false, error: 'tool call: expected a JSON object {"name": …, "arguments": {…}}' };
  }
  const call = parsed as { name?: unknown; arguments?: unknown };
  if (typeof call.name !== 'string') return { isOk: false, error: 'tool call: missing "name"' };
  if (call.name !== 'search')
    return { isOk: false, error: `tool call: unknown tool "${call.name}"; the only tool is "search"` };
  let args: unknown = call.arguments ?? {};
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return { isOk: false, error: 'search: "arguments" is a string that is not JSON' };
    }
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return { isOk: false, error: 'search: "arguments" must be an object' };
  }
  const { query, category } = args as { query?: unknown; category?: unknown };
  if (typeof query !== 'string' || query.trim() === '') {
    return { isOk: false, error: 'search: missing required argument "query" (a non-empty string)' };
  }
  if (category !== undefined && category !== null && typeof category !== 'string') {
    return { isOk: false, error: 'search: argument "category" must be a string' };
  }
  return { isOk: true, query, category: typeof category === 'string' && category.trim() !== '' ? category : null };
}

/** The instructions for one episode. */
export function renderSearchInstructions(maxTurns: number, scopeCategories: readonly string[] | null): string {
  const scope =
    scopeCategories === null
      ? 'You may pass a category to search only inside it.'
      : `Your search scope is limited to the categories: ${scopeCategories.join(', ')}.`;
  return [
    'You select tools from a large tool repository for the user request.',
    `Use the search tool to find candidate tools (up to ${maxTurns} turns in total). ${scope}`,
    'Compare similar tools by their inputs and outputs and keep only those the request needs.',
    'When you are done, answer with the names of the selected tools, exactly as shown in the search results:',
    '<tool_list>["tool_name_1", "tool_name_2"]</tool_list>',
  ].join('\n');
}

export class SearchEnv {
  readonly engine: ToolSearch;
  readonly maxTurns: number;
  readonly maxCallsPerTurn: number;
  readonly isCategoryConstrained: boolean;
  private current: RepoQuery | null = null;
  private sessionValue: SearchSession | null = null;
  private turnIndex = 0;
  private doneReason: StopReason | null = null;
  private finalSelection: { selection: ToolListParse; ids: string[]; unknownNames: string[] } | null = null;

  constructor(engine: ToolSearch, options: SearchEnvOptions = {}) {
    this.engine = engine;
    this.maxTurns = Math.max(1, options.maxTurns ?? DEFAULT_MAX_TURNS);
    this.maxCallsPerTurn = Math.max(1, options.maxCallsPerTurn ?? 1);
    this.isCategoryConstrained = options.isCategoryConstrained ?? false;
  }

  get session(): SearchSession {
    if (!this.sessionValue) throw new Error('SearchEnv: call reset(query) before using the session');
    return this.sessionValue;
  }

  get isDone(): boolean {
    return this.doneReason !== null;
  }

  /** Starts an episode for `query`. */
  reset(query: RepoQuery): SearchEnvStart {
    this.current = query;
    const scopeCategories = this.isCategoryConstrained ? [...query.goldCategories] : null;
    this.sessionValue = new SearchSession(this.engine, scopeCategories ? { allowedCategories: scopeCategories } : {});
    this.turnIndex = 0;
    this.doneReason = null;
    this.finalSelection = null;
    return {
      instructions: renderSearchInstructions(this.maxTurns, scopeCategories),
      userText: query.text,
      tools: [SEARCH_TOOL_SCHEMA],
      scopeCategories,
    };
  }

  /** Processes one assistant turn. */
  step(assistantText: string): SearchStepResult {
    const empty = { calls: [], selection: null, selectedIds: [], unknownNames: [] };
    if (!this.current || !this.sessionValue) {
      return {
        turn: -1,
        observations: ['Environment not started: call reset(query) first.'],
        isDone: true,
        stopReason: null,
        ...empty,
      };
    }
    if (this.doneReason !== null) {
      return {
        turn: this.turnIndex,
        observations: ['The episode is over.'],
        isDone: true,
        stopReason: this.doneReason,
        ...empty,
      };
    }
    const turn = this.turnIndex++;
    const text = typeof assistantText === 'string' ? assistantText : '';
    const visible = stripThinking(text);

    if (hasToolList(visible)) {
      const selection = parseToolList(visible);
      const resolved = selection.isOk
        ? resolveToolList(selection.names, this.engine.repo)
        : { ids: [], unknownNames: [] };
      this.doneReason = 'tool_list';
      this.finalSelection = { selection, ids: resolved.ids, unknownNames: resolved.unknownNames };
      return {
        turn,
        calls: [],
        observations: [],
        isDone: true,
        stopReason: 'tool_list',
        selection,
        selectedIds: resolved.ids,
        unknownNames: resolved.unknownNames,
      };
    }

    const calls: SearchCallParse[] = [];
    const observations: string[] = [];
    let executed = 0;
    for (const match of visible.matchAll(CALL_PATTERN)) {
      const call = parseSearchCall(match[1]);
      calls.push(call);
      if (!call.isOk) {
        observations.push(`Error: ${call.error}`);
        this.sessionValue.record({ turn, query: '', category: null, returnedIds: [], error: call.error });
        continue;
      }
      if (executed >= this.maxCallsPerTurn) {
        observations.push(
          `Error: only ${this.maxCallsPerTurn} search call(s) per turn are executed; this one was skipped.`,
        );
        continue;
      }
      executed++;
      observations.push(this.sessionValue.search(turn, call.query, call.category).text);
    }
    const afterLastClose = visible.slice(visible.lastIndexOf('</tool_call>') + 1);
    if (afterLastClose.includes('<tool_call>')) {
      const error = 'tool call: <tool_call> is not closed by </tool_call>';
      calls.push({ isOk: false, error });
      observations.push(`Error: ${error}`);
    }
    if (calls.length === 0) {
      observations.push(
        'No search call or <tool_list> found. Call the search tool with <tool_call>{"name": "search", "arguments": {"query": "…"}}</tool_call>, ' +
          'or give your final answer as <tool_list>["tool_name"]</tool_list>.',
      );
    }
    const isAtLimit = this.turnIndex >= this.maxTurns;
    if (isAtLimit) this.doneReason = 'turn_limit';
    return {
      turn,
      calls,
      observations,
      isDone: isAtLimit,
      stopReason: isAtLimit ? 'turn_limit' : null,
      selection: null,
      selectedIds: [],
      unknownNames: [],
    };
  }

  /** What the rewards and metrics need about the episode so far. */
  summarize(): SearchEpisodeSummary {
    const query = this.current;
    if (!query || !this.sessionValue) throw new Error('SearchEnv: call reset(query) before summarize()');
    const events = this.sessionValue.events;
    return {
      queryId: query.id,
      goldIds: [...query.goldToolIds],
      selectedIds: this.finalSelection?.ids ?? [],
      unknownNames: this.finalSelection?.unknownNames ?? [],
      hasValidSelection: this.finalSelection?.selection.isOk ?? false,
      searchedIds: [...this.sessionValue.searchedIds()],
      searchRecall: computeSearchRecall(events, query.goldToolIds),
      firstFoundTurns: computeFirstFoundTurns(events, query.goldToolIds),
      discoveriesPerEvent: computeDiscoveriesPerEvent(events, query.goldToolIds),
      turns: this.turnIndex,
      stopReason: this.doneReason,
    };
  }
}

/** A new environment over a search engine. */
export function createSearchEnv(engine: ToolSearch, options: SearchEnvOptions = {}): SearchEnv {
  return new SearchEnv(engine, options);
}
