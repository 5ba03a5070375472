/**
 * The search engine R of ToolSearcher (§3.2): `search(query, category?)` returns the
 * top-k (k = 5, App. D) tool documents as text. Category-constrained tool
 * discrimination (§3.3) restricts a search to one category — a functionally similar
 * subspace — and answers `Category X is not within the search scope` for a category
 * the repository (or the episode's scope) does not hold.
 *
 * Simplifications: the paper's retriever is Qwen3-Embedding-0.6B; we use lexical
 * BM25 (minisearch 7, BM25+ form) — the paper also evaluates BM25 as a retriever.
 *
 * The search history it keeps and the BM25 scoring: docs/envs.md.
 */
import MiniSearch from 'minisearch';
import type { BM25Params } from 'minisearch';
import { DEFAULT_FORMAT_LIMITS, formatToolDocument } from './toolDoc';
import type { FormatLimits } from './toolDoc';
import type { ToolDocument, ToolRepository } from './types';

/** The paper retrieves 5 documents per search turn (ToolSearcher App. D). */
export const DEFAULT_TOP_K = 5;

/** k1 = 1.2 and b = 0.75 (Robertson's defaults); d = 0.5 is minisearch's BM25+ lower bound. */
export const BM25_PARAMS: BM25Params = { k: 1.2, b: 0.75, d: 0.5 };

export type IndexedField = 'apiName' | 'toolName' | 'category' | 'description' | 'inputs' | 'outputs';

export const INDEXED_FIELDS: readonly IndexedField[] = [
  'apiName',
  'toolName',
  'category',
  'description',
  'inputs',
  'outputs',
] as const;

/** The API name says most about the function; parameters and outputs least. */
export const FIELD_BOOSTS: Readonly<Record<IndexedField, number>> = {
  apiName: 2,
  toolName: 1,
  category: 0.5,
  description: 1,
  inputs: 0.5,
  outputs: 0.5,
};

const STOP_WORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between ' +
    'both but by can could did do does doing down during each few for from further get give had has have having he ' +
    'her here hers herself him himself his how i if in into is it its itself just let like me more most my myself ' +
    'need no nor not now of off on once only or other our ours ourselves out over own please provide same she should ' +
    'so some such than that the their theirs them themselves then there these they this those through to too under ' +
    'until up us very want was we were what when where which while who whom why will with would you your yours ' +
    'yourself yourselves'
  ).split(' '),
);

const SPLIT_PATTERN = /[\n\r\p{Z}\p{P}\p{S}]+/u;

/** Splits camelCase and digit boundaries, then spaces, punctuation and symbols. */
export function tokenizeText(text: string): string[] {
  const spaced = text.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
  return spaced.split(SPLIT_PATTERN).filter((t) => t.length > 0);
}

/** Harman's S-stemmer: -ies → -y, -es → -e, -s → '' (with its exceptions), for words over 3 letters. */
export function stemPlural(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && !word.endsWith('eies') && !word.endsWith('aies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('es') && !word.endsWith('aes') && !word.endsWith('ees') && !word.endsWith('oes')) {
    return word.slice(0, -1);
  }
  if (word.endsWith('s') && !word.endsWith('us') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** Lower-case, drop stop words, stem plurals; null drops the term. */
export function normalizeTerm(term: string): string | null {
  const lower = term.toLowerCase();
  if (STOP_WORDS.has(lower)) return null;
  return stemPlural(lower);
}

/** Category names compare case-, space- and underscore-insensitively. */
export function normalizeCategoryName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ')
    .trim();
}

interface IndexedDoc {
  id: string;
  apiName: string;
  toolName: string;
  category: string;
  description: string;
  inputs: string;
  outputs: string;
}

/** Field names of an output schema, nested keys included (values are type names, not indexed). */
function collectOutputKeys(value: unknown, into: string[], depth = 0): void {
  if (depth > 4 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value.slice(0, 3)) collectOutputKeys(item, into, depth + 1);
    return;
  }
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if (key.startsWith('_')) continue;
    into.push(key);
    collectOutputKeys(inner, into, depth + 1);
  }
}

/** The text of each indexed field of a document. */
export function makeIndexedDoc(doc: ToolDocument): IndexedDoc {
  const params = [...doc.requiredParameters, ...doc.optionalParameters];
  const outputKeys: string[] = [];
  collectOutputKeys(doc.outputs, outputKeys);
  return {
    id: doc.id,
    apiName: doc.apiName,
    toolName: doc.toolName,
    category: doc.category,
    description: doc.description,
    inputs: params.map((p) => `${p.name} ${p.description}`).join(' '),
    outputs: outputKeys.join(' '),
  };
}

export interface ToolSearchOptions {
  topK?: number;
  bm25?: BM25Params;
  boosts?: Partial<Record<IndexedField, number>>;
  formatLimits?: FormatLimits;
}

/** Restricts where a search may look (the episode's scope in category-constrained training). */
export interface SearchScope {
  /** When set, only these categories may be searched; a search without a category covers their union. */
  allowedCategories?: readonly string[];
}

export interface ScoredTool {
  doc: ToolDocument;
  score: number;
}

export type SearchOutcome =
  | { isOk: true; query: string; category: string | null; hits: ScoredTool[]; text: string }
  | { isOk: false; query: string; category: string | null; hits: []; text: string; error: string };

export interface ToolSearch {
  readonly repo: ToolRepository;
  readonly topK: number;
  /** `category` empty/null/undefined → global (or scope-wide) search. */
  search(query: string, category?: string | null, scope?: SearchScope): SearchOutcome;
  /** The repository's spelling of a category, or null when unknown. */
  resolveCategory(name: string): string | null;
  getTool(id: string): ToolDocument | undefined;
}

/** The exact answer for a category outside the search scope (ToolSearcher §3.3). */
export function formatUnknownCategoryMessage(category: string): string {
  return `Category ${category} is not within the search scope`;
}

/** Builds the BM25 index over every tool document of `repo`. */
export function createToolSearch(repo: ToolRepository, options: ToolSearchOptions = {}): ToolSearch {
  const topK = options.topK ?? DEFAULT_TOP_K;
  const boost = { ...FIELD_BOOSTS, ...options.boosts };
  const limits = options.formatLimits ?? DEFAULT_FORMAT_LIMITS;
  const index = new MiniSearch<IndexedDoc>({
    idField: 'id',
    fields: [...INDEXED_FIELDS],
    storeFields: [],
    tokenize: tokenizeText,
    processTerm: normalizeTerm,
    searchOptions: { boost, bm25: options.bm25 ?? BM25_PARAMS, prefix: false, fuzzy: false, combineWith: 'OR' },
  });
  const docById = new Map<string, ToolDocument>();
  repo.tools.forEach((doc, i) => {
    const earlier = docById.get(doc.id);
    if (earlier !== undefined) {
      throw new Error(
        `createToolSearch: duplicate tool id "${doc.id}" (tools[${repo.tools.indexOf(earlier)}] and tools[${i}])`,
      );
    }
    docById.set(doc.id, doc);
  });
  index.addAll(repo.tools.map(makeIndexedDoc));
  const categoryByNormal = new Map(repo.tools.map((t) => [normalizeCategoryName(t.category), t.category]));

  const resolveCategory = (name: string): string | null => categoryByNormal.get(normalizeCategoryName(name)) ?? null;

  const fail = (query: string, category: string | null, error: string): SearchOutcome => ({
    isOk: false,
    query,
    category,
    hits: [],
    text: error,
    error,
  });

  const search = (query: string, category?: string | null, scope: SearchScope = {}): SearchOutcome => {
    const queryText = typeof query === 'string' ? query : '';
    const requested = typeof category === 'string' && category.trim() !== '' ? category.trim() : null;
    let allowed: Set<string> | null = null;
    if (scope.allowedCategories) {
      allowed = new Set(scope.allowedCategories.map((c) => resolveCategory(c)).filter((c): c is string => c !== null));
    }
    if (requested !== null) {
      const resolved = resolveCategory(requested);
      if (resolved === null || (allowed !== null && !allowed.has(resolved))) {
        return fail(queryText, requested, formatUnknownCategoryMessage(requested));
      }
      allowed = new Set([resolved]);
    }
    if (queryText.trim() === '') return fail(queryText, requested, 'Search query is empty.');
    const filter = allowed === null ? undefined : (r: { id: string }) => allowed!.has(docById.get(r.id)!.category);
    const results = index.search(queryText, filter ? { filter } : {});
    const hits: ScoredTool[] = results
      .slice(0, topK)
      .map((r) => ({ doc: docById.get(r.id as string)!, score: r.score }));
    const text =
      hits.length === 0
        ? `No tools found for "${queryText}"${requested ? ` in category ${requested}` : ''}.`
        : hits.map((h, i) => formatToolDocument(h.doc, i + 1, limits)).join('\n');
    return { isOk: true, query: queryText, category: requested, hits, text };
  };

  return { repo, topK, search, resolveCategory, getTool: (id) => docById.get(id) };
}

/** One call of the search tool inside a rollout. */
export interface SearchEvent {
  /** 0-based assistant turn that made the call. */
  turn: number;
  query: string;
  category: string | null;
  /** Ids of the returned documents, best first; empty on error. */
  returnedIds: string[];
  error?: string;
}

/** Records every search of one rollout (one `SearchSession` per rollout). */
export class SearchSession {
  readonly events: SearchEvent[] = [];
  private readonly engine: ToolSearch;
  private readonly scope: SearchScope;

  constructor(engine: ToolSearch, scope: SearchScope = {}) {
    this.engine = engine;
    this.scope = scope;
  }

  /** Runs a search and records it as an event of `turn`. */
  search(turn: number, query: string, category?: string | null): SearchOutcome {
    const outcome = this.engine.search(query, category, this.scope);
    const event: SearchEvent = {
      turn,
      query: outcome.query,
      category: outcome.category,
      returnedIds: outcome.hits.map((h) => h.doc.id),
    };
    if (!outcome.isOk) event.error = outcome.error;
    this.events.push(event);
    return outcome;
  }

  /** Records an event that did not go through `search` (e.g. a malformed call). */
  record(event: SearchEvent): void {
    this.events.push(event);
  }

  searchedIds(): Set<string> {
    return computeSearchedIds(this.events);
  }
}

/** Every document id that appeared in any result. */
export function computeSearchedIds(events: readonly SearchEvent[]): Set<string> {
  const ids = new Set<string>();
  for (const event of events) for (const id of event.returnedIds) ids.add(id);
  return ids;
}

/** SRecall: |gold ∩ searched| / |gold| (distinct gold ids); 0 when gold is empty. */
export function computeSearchRecall(events: readonly SearchEvent[], goldIds: readonly string[]): number {
  const gold = new Set(goldIds);
  if (gold.size === 0) return 0;
  const searched = computeSearchedIds(events);
  let found = 0;
  for (const id of gold) if (searched.has(id)) found++;
  return found / gold.size;
}

/** Gold id → the first turn whose search returned it, or null if none did. */
export function computeFirstFoundTurns(
  events: readonly SearchEvent[],
  goldIds: readonly string[],
): Record<string, number | null> {
  const first: Record<string, number | null> = {};
  for (const id of goldIds) first[id] = null;
  for (const event of events) {
    for (const id of event.returnedIds) {
      if (id in first && (first[id] === null || event.turn < first[id]!)) first[id] = event.turn;
    }
  }
  return first;
}

/**
 * For each event (same order), the gold ids it discovered first — the "events that
 * discover previously unsearched target tools" of event-level search modelling (§3.4.1).
 * Events are taken in recorded order.
 */
export function computeDiscoveriesPerEvent(events: readonly SearchEvent[], goldIds: readonly string[]): string[][] {
  const gold = new Set(goldIds);
  const seen = new Set<string>();
  return events.map((event) => {
    const found: string[] = [];
    for (const id of event.returnedIds) {
      if (gold.has(id) && !seen.has(id)) {
        seen.add(id);
        found.push(id);
      }
    }
    return found;
  });
}
