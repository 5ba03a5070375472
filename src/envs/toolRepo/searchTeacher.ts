/**
 * The expert of the tool-search environment: for a repository query whose gold tools are
 * known, the episode a policy should imitate before RL (the warm start's SFT data,
 * src/recipes/warmStart/index.ts), played through the real SearchEnv so every observation is the
 * engine's own.
 *
 * The teacher knows the gold set (privileged, like the tool-use teacher of src/traces); it
 * never writes a tool name the results did not show: a gold tool no search finds within
 * maxTurns − 1 turns makes the episode fail (`isOk: false`, with the reason), and callers
 * drop it. Simplification: no distractor turns, and no reasoning about why similar tools
 * are rejected (the paper's policy reasons over inputs/outputs; ours only selects).
 *
 * The episode and how its queries are written: docs/envs.md.
 */
import { QUERY_CONNECTORS, QUERY_PREFACES } from './generatedRepo';
import type { ToolSearch } from './search';
import { createSearchEnv, DEFAULT_MAX_TURNS, type SearchEpisodeSummary } from './searchEnv';
import type { RepoQuery, ToolDocument } from './types';

export interface SearchTeacherOptions {
  /** The episode's turn limit (it is named in the instructions). Default DEFAULT_MAX_TURNS. */
  maxTurns?: number;
  /** Category-constrained tool discrimination (§3.3). Default true. */
  isCategoryConstrained?: boolean;
}

export interface SearchTeacherEpisode {
  queryId: string;
  maxTurns: number;
  isCategoryConstrained: boolean;
  /** The assistant turns, without `<|im_end|>`; the last one holds the `<tool_list>`. */
  assistantTexts: string[];
  /** The environment's summary of the teacher's own play (selection = gold, search recall 1). */
  summary: SearchEpisodeSummary;
}

export type SearchTeacherResult =
  { isOk: true; episode: SearchTeacherEpisode } | { isOk: false; queryId: string; reason: string };

/** `{"name": "search", "arguments": {"query": …[, "category": …]}}` inside `<tool_call>`, as Qwen3 writes calls. */
export function formatSearchCall(query: string, category: string | null): string {
  const args =
    category === null
      ? `{"query": ${JSON.stringify(query)}}`
      : `{"query": ${JSON.stringify(query)}, "category": ${JSON.stringify(category)}}`;
  return `<tool_call>\n{"name": "search", "arguments": ${args}}\n</tool_call>`;
}

/** The selection as the instructions ask for it. */
export function formatToolListAnswer(names: readonly string[]): string {
  return `<tool_list>[${names.map((n) => JSON.stringify(n)).join(', ')}]</tool_list>`;
}

const CLAUSE_BREAK = new RegExp(
  `(?<=[.?!])\\s+(?=${QUERY_CONNECTORS.map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`,
);

/**
 * The clauses of a generated query, one per gold tool in gold order (preface, connector
 * and final full stop removed), or null when the text does not split into `nGold` clauses
 * (e.g. an imported StableToolBench query).
 */
export function splitQueryClauses(text: string, nGold: number): string[] | null {
  let body = text.trim();
  for (const preface of QUERY_PREFACES) {
    if (preface !== '' && body.startsWith(preface)) {
      body = body.slice(preface.length);
      break;
    }
  }
  const clauses = body.split(CLAUSE_BREAK).map((clause) => {
    let c = clause.trim();
    for (const connector of QUERY_CONNECTORS) if (c.startsWith(connector)) c = c.slice(connector.length);
    return c.replace(/[.]$/, '').trim();
  });
  return clauses.length === nGold && clauses.every((c) => c !== '') ? clauses : null;
}

/** The tool's purpose in the request's words: its subject and the inputs the request gives. */
export function writePurposeQuery(doc: ToolDocument): string {
  const subject = doc.family?.split('/')[1] ?? doc.apiName.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  const inputs = doc.requiredParameters.map((p) => /^The (.+) of the /.exec(p.description)?.[1] ?? p.name);
  return inputs.length > 0 ? `${subject} by ${inputs.join(', ')}` : subject;
}

/**
 * Plays the expert episode of `query` in a fresh SearchEnv over `engine` and returns its
 * assistant turns, or why no expert episode fits the turn limit.
 */
export function buildSearchTeacherEpisode(
  engine: ToolSearch,
  query: RepoQuery,
  options: SearchTeacherOptions = {},
): SearchTeacherResult {
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  const isCategoryConstrained = options.isCategoryConstrained ?? true;
  const fail = (reason: string): SearchTeacherResult => ({ isOk: false, queryId: query.id, reason });
  const golds = query.goldToolIds.map((id) => engine.getTool(id));
  const missing = query.goldToolIds.filter((_, i) => golds[i] === undefined);
  if (missing.length > 0) return fail(`gold tool(s) ${missing.join(', ')} are not in the repository`);
  if (golds.length === 0) return fail('the query has no gold tools');
  const clauses = splitQueryClauses(query.text, golds.length);

  const env = createSearchEnv(engine, { maxTurns, isCategoryConstrained });
  env.reset(query);
  const texts: string[] = [];
  let shown = ''; // every observation so far: a category may be named only once a result showed it
  for (const [i, doc] of (golds as ToolDocument[]).entries()) {
    if (env.session.searchedIds().has(doc.id)) continue;
    const queries = [...new Set([clauses ? clauses[i] : query.text, writePurposeQuery(doc)])];
    const attempts = (): { q: string; category: string | null }[] =>
      isCategoryConstrained
        ? queries.map((q) => ({ q, category: doc.category }))
        : [
            ...queries.map((q) => ({ q, category: null })),
            ...(shown.includes(`category: ${doc.category})`)
              ? queries.map((q) => ({ q, category: doc.category }))
              : []),
          ];
    const tried = new Set<string>();
    let isFound = false;
    for (;;) {
      const next = attempts().find((a) => !tried.has(JSON.stringify(a)));
      if (!next) break;
      if (texts.length >= maxTurns - 1) return fail(`turn limit ${maxTurns} reached before ${doc.id} was found`);
      tried.add(JSON.stringify(next));
      const part = golds.length > 1 ? `part ${i + 1} of ${golds.length} of the request` : 'the request';
      const thought = tried.size === 1 ? `I need a tool for ${part}.` : `No result fits ${part} yet; I search again.`;
      const text = `<think>\n${thought}\n</think>\n\n${formatSearchCall(next.q, next.category)}`;
      const result = env.step(text);
      texts.push(text);
      shown += result.observations.join('\n');
      if (env.session.searchedIds().has(doc.id)) {
        isFound = true;
        break;
      }
    }
    if (!isFound) return fail(`no search found ${doc.id}`);
  }
  const names = (golds as ToolDocument[]).map((d) => d.name);
  const final = `<think>\nThe results hold a tool for every part of the request.\n</think>\n\n${formatToolListAnswer(names)}`;
  const last = env.step(final);
  texts.push(final);
  if (last.stopReason !== 'tool_list') return fail(`the selection turn ended with ${last.stopReason}`);
  const summary = env.summarize();
  return {
    isOk: true,
    episode: { queryId: query.id, maxTurns, isCategoryConstrained, assistantTexts: texts, summary },
  };
}
