import { describe, expect, it } from 'vitest';
import {
  BM25_PARAMS,
  FIELD_BOOSTS,
  SearchSession,
  computeDiscoveriesPerEvent,
  computeFirstFoundTurns,
  computeSearchRecall,
  createToolSearch,
  normalizeTerm,
  stemPlural,
  tokenizeText,
} from './search';
import type { SearchEvent } from './search';
import type { ToolDocument, ToolRepository } from './types';

function makeDoc(id: string, apiName: string, toolName: string, category: string, description: string): ToolDocument {
  return { id, name: id, apiName, toolName, category, description, requiredParameters: [], optionalParameters: [] };
}

function makeRepo(tools: ToolDocument[]): ToolRepository {
  return {
    source: 'test',
    tools,
    categories: [...new Set(tools.map((t) => t.category))].sort(),
    collections: [],
    queries: [],
  };
}

// The hand-checked corpus: three documents, no inputs or outputs (those fields have length 0).
const docA = makeDoc('a', 'getForecast', 'Alpha', 'Weather', 'Daily weather forecast');
const docB = makeDoc('b', 'listAlerts', 'Beta', 'Weather', 'Weather alerts and forecast maps for cities');
const docC = makeDoc('c', 'convertCurrency', 'Gamma', 'Finance', 'Currency exchange rates');
const tinyRepo = makeRepo([docA, docB, docC]);

describe('text normalisation', () => {
  it('splits camelCase and punctuation', () => {
    expect(tokenizeText('GetRelatedPeople')).toEqual(['Get', 'Related', 'People']);
    expect(tokenizeText('getIPAddress/v2_list')).toEqual(['get', 'IP', 'Address', 'v2', 'list']);
  });
  it("applies Harman's S-stemmer rules and drops stop words", () => {
    expect(stemPlural('cities')).toBe('city');
    expect(stemPlural('queries')).toBe('query');
    expect(stemPlural('matches')).toBe('matche'); // -es → -e (Harman's rule, not a dictionary stem)
    expect(stemPlural('alerts')).toBe('alert');
    expect(stemPlural('status')).toBe('status'); // -us kept
    expect(stemPlural('address')).toBe('address'); // -ss kept
    expect(stemPlural('shoes')).toBe('shoe'); // -oes skips the -es rule and falls to the -s rule
    expect(stemPlural('gas')).toBe('gas'); // 3 letters or fewer kept
    expect(normalizeTerm('The')).toBeNull();
    expect(normalizeTerm('Maps')).toBe('map');
  });
});

describe('BM25 ranking (minisearch, hand-checked)', () => {
  // Query "weather forecast" → terms weather, forecast. N = 3 documents.
  // Field lengths are minisearch's counts of distinct raw tokens:
  //   apiName: A get|Forecast = 2, B list|Alerts = 2, C convert|Currency = 2 → avg 2
  //   category: 1 each → avg 1
  //   description: A 3, B 7 (Weather alerts and forecast maps for cities), C 3 → avg 13/3
  // idf(n) = ln(1 + (N − n + 0.5)/(n + 0.5)); k1 = 1.2, b = 0.75, d = 0.5.
  //   n = 1: ln(1 + 2.5/1.5) = ln(2.6667) = 0.980829;  n = 2: ln(1 + 1.5/2.5) = ln(1.6) = 0.470004
  // s = idf · (d + tf(k1+1)/(tf + k1(1 − b + b·len/avg))), tf = 1 everywhere here:
  //   len = avg:            2.2/2.2 = 1          → 1.5
  //   A description (3):    1 − b + b·3/(13/3) = 0.769231 → 2.2/1.923077 = 1.144000 → 1.644000
  //   B description (7):    1 − b + b·7/(13/3) = 1.461538 → 2.2/2.753846 = 0.798883 → 1.298883
  // weather: category (n=2, boost 0.5): 0.470004·1.5·0.5 = 0.352503 for A and B
  //          description (n=2, boost 1): A 0.470004·1.644000 = 0.772687, B 0.470004·1.298883 = 0.610480
  // forecast: apiName (n=1, only A, boost 2): 0.980829·1.5·2 = 2.942488
  //           description (n=2): A 0.772687, B 0.610480
  // A: 0.352503 + 0.772687 + 2.942488 + 0.772687 = 4.840365; 2 query terms matched → ×2 = 9.680730
  // B: 0.352503 + 0.610480 + 0.610480 = 1.573463; ×2 = 3.146926
  // C: no term → not returned.
  it('uses the documented parameters', () => {
    expect(BM25_PARAMS).toEqual({ k: 1.2, b: 0.75, d: 0.5 });
    expect(FIELD_BOOSTS).toEqual({ apiName: 2, toolName: 1, category: 0.5, description: 1, inputs: 0.5, outputs: 0.5 });
  });

  it('ranks and scores the tiny corpus as computed by hand', () => {
    const search = createToolSearch(tinyRepo);
    const out = search.search('weather forecast');
    expect(out.isOk).toBe(true);
    expect(out.hits.map((h) => h.doc.id)).toEqual(['a', 'b']);
    expect(out.hits[0].score).toBeCloseTo(9.68073, 4);
    expect(out.hits[1].score).toBeCloseTo(3.146926, 4);
  });

  it('keeps only topK hits and formats them for the policy', () => {
    const search = createToolSearch(tinyRepo, { topK: 1 });
    const out = search.search('weather forecast');
    expect(out.hits.map((h) => h.doc.id)).toEqual(['a']);
    expect(out.text).toBe(
      [
        '1. a (tool: Alpha, category: Weather)',
        '   description: Daily weather forecast',
        '   inputs: none',
        '   outputs: unknown',
      ].join('\n'),
    );
  });

  it('shortens hits by its format limits: 0 leaves out parameter descriptions and the outputs line', () => {
    const doc: ToolDocument = {
      ...makeDoc('d', 'getQuote', 'Delta', 'Finance', 'Latest stock quote for a ticker symbol'),
      requiredParameters: [{ name: 'symbol', type: 'STRING', description: 'Ticker symbol' }],
      optionalParameters: [{ name: 'market', type: 'STRING', description: 'Exchange', default: 'NYSE' }],
      outputs: { price: 'float' },
    };
    const repo = makeRepo([doc]);
    const full = createToolSearch(repo).search('stock quote').text;
    expect(full).toBe(
      [
        '1. d (tool: Delta, category: Finance)',
        '   description: Latest stock quote for a ticker symbol',
        '   inputs: symbol (STRING, required): Ticker symbol; market (STRING, optional, e.g. "NYSE"): Exchange',
        '   outputs: {"price":"float"}',
      ].join('\n'),
    );
    const compact = createToolSearch(repo, {
      formatLimits: { maxDescriptionChars: 12, maxParamDescriptionChars: 0, maxOutputChars: 0 },
    });
    // 12 characters: 11 of the description and the ellipsis.
    expect(compact.search('stock quote').text).toBe(
      [
        '1. d (tool: Delta, category: Finance)',
        '   description: Latest stoc…',
        '   inputs: symbol (STRING, required); market (STRING, optional, e.g. "NYSE")',
      ].join('\n'),
    );
  });
});

describe('category-constrained search', () => {
  const search = createToolSearch(tinyRepo);
  it('searches only inside the given category (names match case- and underscore-insensitively)', () => {
    // "currency weather": globally C matches "currency", A and B match "weather"; in Finance only C remains.
    expect(
      search
        .search('currency weather')
        .hits.map((h) => h.doc.id)
        .sort(),
    ).toEqual(['a', 'b', 'c']);
    expect(search.search('currency weather', 'finance').hits.map((h) => h.doc.id)).toEqual(['c']);
    expect(search.search('forecast', ' WEATHER ').hits.map((h) => h.doc.id)).toEqual(['a', 'b']);
  });
  it('answers exactly "Category X is not within the search scope" for an unknown category', () => {
    const out = search.search('forecast', 'Astrology');
    expect(out.isOk).toBe(false);
    expect(out.text).toBe('Category Astrology is not within the search scope');
    expect(out.hits).toEqual([]);
  });
  it('rejects a category outside the episode scope and limits scope-wide searches', () => {
    const scope = { allowedCategories: ['Finance'] };
    expect(search.search('forecast', 'Weather', scope).text).toBe('Category Weather is not within the search scope');
    expect(search.search('currency weather', null, scope).hits.map((h) => h.doc.id)).toEqual(['c']);
  });
  it('returns an error for an empty query and a message for no hit', () => {
    expect(search.search('   ').isOk).toBe(false);
    const none = search.search('zebra', 'Finance');
    expect(none.isOk).toBe(true);
    expect(none.hits).toEqual([]);
    expect(none.text).toBe('No tools found for "zebra" in category Finance.');
  });
  it('rejects duplicate ids with a clear error', () => {
    expect(() => createToolSearch(makeRepo([docA, { ...docB, id: 'a' }]))).toThrow(
      /duplicate tool id "a" \(tools\[0\] and tools\[1\]\)/,
    );
  });
});

describe('search history', () => {
  it('records events and computes recall, first-found turns and discoveries', () => {
    const session = new SearchSession(createToolSearch(tinyRepo, { topK: 1 }));
    session.search(0, 'currency'); // → c
    session.search(1, 'weather forecast'); // → a
    session.search(1, 'forecast', 'Nowhere'); // error, nothing returned
    session.search(2, 'currency rates'); // → c again
    expect(session.events.map((e) => [e.turn, e.returnedIds, e.error ?? null])).toEqual([
      [0, ['c'], null],
      [1, ['a'], null],
      [1, [], 'Category Nowhere is not within the search scope'],
      [2, ['c'], null],
    ]);
    const gold = ['a', 'b', 'c'];
    // searched = {a, c}: 2 of 3 gold → 2/3
    expect(computeSearchRecall(session.events, gold)).toBeCloseTo(2 / 3, 12);
    expect(computeFirstFoundTurns(session.events, gold)).toEqual({ a: 1, b: null, c: 0 });
    expect(computeDiscoveriesPerEvent(session.events, gold)).toEqual([['c'], ['a'], [], []]);
    expect([...session.searchedIds()].sort()).toEqual(['a', 'c']);
  });
  it('takes the earliest turn even when events are recorded out of order, and ignores duplicate gold ids', () => {
    const events: SearchEvent[] = [
      { turn: 3, query: 'q', category: null, returnedIds: ['x', 'y'] },
      { turn: 1, query: 'q', category: null, returnedIds: ['y'] },
    ];
    expect(computeFirstFoundTurns(events, ['y', 'z'])).toEqual({ y: 1, z: null });
    // gold {y, z} (duplicate y counted once): 1 of 2
    expect(computeSearchRecall(events, ['y', 'y', 'z'])).toBe(0.5);
    expect(computeSearchRecall(events, [])).toBe(0);
  });
});
