import { describe, expect, it } from 'vitest';
import { createRng } from '../../core/rng';
import { createToolSearch } from './search';
import { createSearchEnv, parseSearchCall } from './searchEnv';
import type { RepoQuery, ToolDocument, ToolRepository } from './types';

function makeDoc(id: string, apiName: string, toolName: string, category: string, description: string): ToolDocument {
  return { id, name: id, apiName, toolName, category, description, requiredParameters: [], optionalParameters: [] };
}

const query: RepoQuery = {
  id: 'q1',
  text: 'Give me the weather forecast and convert my money.',
  level: 'intra_collection',
  goldToolIds: ['a', 'c'],
  relevantToolIds: ['a', 'c'],
  goldCategories: ['Finance', 'Weather'],
};

const repo: ToolRepository = {
  source: 'test',
  tools: [
    makeDoc('a', 'getForecast', 'Alpha', 'Weather', 'Daily weather forecast'),
    makeDoc('b', 'listAlerts', 'Beta', 'Weather', 'Weather alerts and forecast maps for cities'),
    makeDoc('c', 'convertCurrency', 'Gamma', 'Finance', 'Currency exchange rates'),
  ],
  categories: ['Finance', 'Weather'],
  collections: [],
  queries: [query],
};

const call = (args: Record<string, unknown>) =>
  `<tool_call>${JSON.stringify({ name: 'search', arguments: args })}</tool_call>`;

describe('parseSearchCall', () => {
  it('accepts the Qwen3 tool-call JSON, with arguments as an object or a JSON string', () => {
    expect(parseSearchCall('{"name": "search", "arguments": {"query": "x", "category": "Weather"}}')).toEqual({
      isOk: true,
      query: 'x',
      category: 'Weather',
    });
    expect(parseSearchCall('{"name": "search", "arguments": "{\\"query\\": \\"x\\"}"}')).toEqual({
      isOk: true,
      query: 'x',
      category: null,
    });
    expect(parseSearchCall('{"name": "search", "arguments": {"query": "x", "category": ""}}')).toEqual({
      isOk: true,
      query: 'x',
      category: null,
    });
  });
  it('names what is wrong', () => {
    expect(parseSearchCall('{"name": "search"')).toMatchObject({
      isOk: false,
      error: expect.stringMatching(/^tool call: invalid JSON/),
    });
    expect(parseSearchCall('[1]')).toMatchObject({ isOk: false });
    expect(parseSearchCall('{"arguments": {}}')).toEqual({ isOk: false, error: 'tool call: missing "name"' });
    expect(parseSearchCall('{"name": "lookup"}')).toEqual({
      isOk: false,
      error: 'tool call: unknown tool "lookup"; the only tool is "search"',
    });
    expect(parseSearchCall('{"name": "search", "arguments": {}}')).toEqual({
      isOk: false,
      error: 'search: missing required argument "query" (a non-empty string)',
    });
    expect(parseSearchCall('{"name": "search", "arguments": {"query": "x", "category": 3}}')).toEqual({
      isOk: false,
      error: 'search: argument "category" must be a string',
    });
  });
});

describe('SearchEnv', () => {
  it('runs an episode: searches, errors as observations, and the final <tool_list>', () => {
    const env = createSearchEnv(createToolSearch(repo, { topK: 1 }), { maxTurns: 5 });
    const start = env.reset(query);
    expect(start.userText).toBe(query.text);
    expect(start.tools.map((t) => t.function.name)).toEqual(['search']);
    expect(start.scopeCategories).toBeNull();
    expect(start.instructions).toContain('<tool_list>');

    // Turn 0: the call inside <think> is ignored; the real call returns document a.
    const t0 = env.step(`<think>maybe ${call({ query: 'zzz' })}</think>${call({ query: 'weather forecast' })}`);
    expect(t0.turn).toBe(0);
    expect(t0.observations).toHaveLength(1);
    expect(t0.observations[0].startsWith('1. a (tool: Alpha, category: Weather)')).toBe(true);
    expect(t0.isDone).toBe(false);

    // Turn 1: unknown tool → error observation.
    const t1 = env.step('<tool_call>{"name": "lookup", "arguments": {}}</tool_call>');
    expect(t1.observations).toEqual(['Error: tool call: unknown tool "lookup"; the only tool is "search"']);

    // Turn 2: two calls, only the first is executed (maxCallsPerTurn = 1).
    const t2 = env.step(`${call({ query: 'currency' })}\n${call({ query: 'forecast' })}`);
    expect(t2.observations[0].startsWith('1. c (tool: Gamma, category: Finance)')).toBe(true);
    expect(t2.observations[1]).toBe('Error: only 1 search call(s) per turn are executed; this one was skipped.');

    // Turn 3: the selection ends the episode; the call in the same turn is not executed.
    const t3 = env.step(`${call({ query: 'alerts' })} <tool_list>["a", "C", "zzz"]</tool_list>`);
    expect(t3).toMatchObject({
      turn: 3,
      isDone: true,
      stopReason: 'tool_list',
      selectedIds: ['a', 'c'],
      unknownNames: ['zzz'],
      observations: [],
    });

    const summary = env.summarize();
    // Events: turn 0 → [a], turn 1 → error, turn 2 → [c]. Both gold tools searched → SRecall 2/2 = 1.
    expect(summary).toMatchObject({
      goldIds: ['a', 'c'],
      selectedIds: ['a', 'c'],
      hasValidSelection: true,
      searchRecall: 1,
      firstFoundTurns: { a: 0, c: 2 },
      discoveriesPerEvent: [['a'], [], ['c']],
      turns: 4,
      stopReason: 'tool_list',
    });
    expect(env.step('anything').observations).toEqual(['The episode is over.']);
  });

  it('stops at the turn limit, with observations for turns without a call and for malformed calls', () => {
    const env = createSearchEnv(createToolSearch(repo), { maxTurns: 3 });
    env.reset(query);
    const t0 = env.step('I will think about it.');
    expect(t0.isDone).toBe(false);
    expect(t0.observations[0]).toMatch(/^No search call or <tool_list> found/);
    const t1 = env.step('<tool_call>{"name": "search", "arguments": {"query": "x"}');
    expect(t1.observations).toEqual(['Error: tool call: <tool_call> is not closed by </tool_call>']);
    const t2 = env.step('<tool_call>{bad json}</tool_call>');
    expect(t2.observations[0]).toMatch(/^Error: tool call: invalid JSON/);
    expect(t2).toMatchObject({ isDone: true, stopReason: 'turn_limit' });
    expect(env.summarize()).toMatchObject({
      hasValidSelection: false,
      selectedIds: [],
      searchRecall: 0,
      turns: 3,
      stopReason: 'turn_limit',
    });
  });

  it('constrains searches to the gold categories in category-constrained mode', () => {
    const env = createSearchEnv(createToolSearch(repo), { isCategoryConstrained: true });
    const onlyFinance: RepoQuery = { ...query, goldToolIds: ['c'], goldCategories: ['Finance'] };
    const start = env.reset(onlyFinance);
    expect(start.scopeCategories).toEqual(['Finance']);
    expect(start.instructions).toContain('limited to the categories: Finance');
    expect(env.step(call({ query: 'forecast', category: 'Weather' })).observations).toEqual([
      'Category Weather is not within the search scope',
    ]);
    expect(env.step(call({ query: 'forecast', category: 'Astrology' })).observations).toEqual([
      'Category Astrology is not within the search scope',
    ]);
    // Without a category the search covers the scope only: "weather currency" finds c, not a or b.
    const scoped = env.step(call({ query: 'weather currency' }));
    expect(scoped.observations[0].startsWith('1. c (tool: Gamma, category: Finance)')).toBe(true);
    expect(scoped.observations[0]).not.toContain('category: Weather');
  });

  it('never throws on random assistant text (fuzz, seeded)', () => {
    const pieces = [
      '<tool_call>',
      '</tool_call>',
      '<tool_list>',
      '</tool_list>',
      '<think>',
      '</think>',
      '{"name": "search", "arguments": {"query": "weather"}}',
      '{',
      '}',
      '"',
      'category',
      ':',
      'null',
      '[',
      ']',
      ' ',
      '\n',
    ];
    const rng = createRng('searchEnv-fuzz');
    const env = createSearchEnv(createToolSearch(repo), { maxTurns: 4 });
    for (let episode = 0; episode < 300; episode++) {
      env.reset(query);
      for (let turn = 0; turn < 5; turn++) {
        let text = '';
        for (let j = rng.int(10); j > 0; j--) text += pieces[rng.int(pieces.length)];
        const result = env.step(text);
        expect(Array.isArray(result.observations)).toBe(true);
        if (result.isDone) break;
      }
      const summary = env.summarize();
      expect(summary.searchRecall).toBeGreaterThanOrEqual(0);
      expect(summary.searchRecall).toBeLessThanOrEqual(1);
    }
  });
});
