import { describe, expect, it } from 'vitest';
import { createRng } from '../../core/rng';
import type { GeneratedRow } from '../../model/qwen3/index';
import {
  collectToolSearchRollouts,
  countSearchRounds,
  createToolSearchPrompts,
  evaluateSearchRollout,
  readSearchRolloutInfo,
  listSearchCallOutputs,
  pairSearchCallEvents,
  readToolSearchPrompt,
  replaySearchTeacherEpisode,
  splitToolSearchPrompts,
  type ToolSearchRolloutOptions,
} from './searchRollouts';
import { createSearchScript, createTinySearchSetup, renderUserOnly } from '../testing/searchTestKit';
import type { PolicySampler, PromptItem } from '../types';

const setup = createTinySearchSetup();
const { tokenizer, engine, repo } = setup;
const imEnd = tokenizer.tokenId('<|im_end|>')!;

/** Writes the search script with log-prob −1 per token; records every context. */
function createFakePolicy(pick = createSearchScript(repo)): PolicySampler & { contexts: number[][] } {
  const contexts: number[][] = [];
  return {
    contexts,
    async generate(prompts, opts): Promise<GeneratedRow[]> {
      contexts.push(...prompts.map((p) => p.slice()));
      return prompts.map((p, r) => {
        const all = [...tokenizer.encode(pick(tokenizer.decode(p), r)), imEnd];
        const tokens = all.slice(0, opts.maxNewTokens);
        const logprobs = tokens.map(() => -1);
        return {
          tokens,
          logprobs,
          samplingLogprobs: logprobs,
          finishReason: tokens.length === all.length ? 'stop' : 'length',
        };
      });
    },
  };
}

function makeOptions(
  prompts: PromptItem[],
  policy: PolicySampler,
  extra: Partial<ToolSearchRolloutOptions> = {},
): ToolSearchRolloutOptions {
  return {
    prompts,
    rolloutsPerPrompt: 2,
    policy,
    tokenizer,
    maxTurns: 4,
    maxPromptTokens: 400,
    maxResponseTokens: 2000,
    temperature: 1,
    topP: 1,
    rng: createRng(1),
    isCategoryConstrained: false,
    ...extra,
  };
}

describe('collectToolSearchRollouts', () => {
  const prompt = setup.trainPrompts[0];
  const { query } = readToolSearchPrompt(prompt);
  const gold = query.goldToolIds[0];

  it('builds rollouts with ids, tags, behaviour log-probs and per-turn search info', async () => {
    // the test relies on the single search of turn 0 (the gold tool's API name) returning the gold tool
    expect(engine.search(repo.tools.find((t) => t.id === gold)!.apiName).hits[0].doc.id).toBe(gold);
    const policy = createFakePolicy();
    const [group] = await collectToolSearchRollouts(makeOptions([prompt], policy));
    expect(group.rollouts).toHaveLength(2);
    for (const r of group.rollouts) {
      expect(r.tags).toHaveLength(r.ids.length);
      expect(r.behaviourLogprobs).toHaveLength(r.ids.length);
      const promptText = renderUserOnly([{ role: 'user', content: query.text }], { addGenerationPrompt: true }); // user text cut to 48 characters
      expect(tokenizer.decode(r.ids.slice(0, r.promptLength))).toBe(promptText);
      expect(r.tags.slice(0, r.promptLength).every((t) => t.kind === 'prompt' && t.turn === -1)).toBe(true);
      // −1 exactly on generated tokens, 0 on prompt and observation tokens
      const generated = r.tags.filter((t) => t.kind !== 'prompt' && t.kind !== 'observation').length;
      expect(r.generatedLength).toBe(generated);
      expect(r.behaviourLogprobs.filter((x) => x === -1)).toHaveLength(generated);
      expect(r.tags.some((t) => t.kind === 'tool_call' && t.turn === 0)).toBe(true);
      expect(r.tags.some((t) => t.kind === 'observation' && t.turn === 0)).toBe(true);
      expect(r.isFinished).toBe(true);
      const info = readSearchRolloutInfo(r);
      expect(info.turns.map((t) => t.isSelection)).toEqual([false, true]);
      expect(info.turns[0].events.map((e) => e.returnedIds)).toEqual([[gold]]);
      expect(info.summary.firstFoundTurns[gold]).toBe(0);
      expect(r.callOutputs).toHaveLength(1);
    }
    const [r0, r1] = group.rollouts;
    expect(readSearchRolloutInfo(r0).summary.selectedIds).toEqual([gold]);
    expect(readSearchRolloutInfo(r1).summary.unknownNames).toEqual(['no_such_tool']);
    // every context given to generate is a prefix of its rollout: exactly the tokens so far
    const turn1Contexts = policy.contexts.slice(2);
    turn1Contexts.forEach((c, k) => expect(group.rollouts[k].ids.slice(0, c.length)).toEqual(c));
  });

  it('reports selection metrics for evaluation', async () => {
    const [group] = await collectToolSearchRollouts(makeOptions([prompt], createFakePolicy()));
    // rollout 0 selects the gold tool: all 1; rollout 1 selects nothing known: P = R = F1 = 0, SRecall 1
    expect(evaluateSearchRollout(group.rollouts[0], prompt)).toEqual({
      f1: 1,
      recall: 1,
      precision: 1,
      match: 1,
      search_recall: 1,
      format: 1,
      turns: 2,
      search_rounds: 1,
    });
    expect(evaluateSearchRollout(group.rollouts[1], prompt)).toEqual({
      f1: 0,
      recall: 0,
      precision: 0,
      match: 0,
      search_recall: 1,
      format: 1,
      turns: 2,
      search_rounds: 1,
    });
  });

  it('searches inside the gold categories when category-constrained', async () => {
    const groups = await collectToolSearchRollouts(
      makeOptions(setup.trainPrompts, createFakePolicy(), { isCategoryConstrained: true }),
    );
    groups.forEach((g) => {
      const { query: q } = readToolSearchPrompt(g.prompt);
      for (const r of g.rollouts) {
        const info = readSearchRolloutInfo(r);
        expect(info.isCategoryConstrained).toBe(true);
        for (const id of info.turns.flatMap((t) => t.events.flatMap((e) => e.returnedIds))) {
          expect(q.goldCategories).toContain(engine.getTool(id)!.category);
        }
      }
    });
  });

  it('cuts an episode at the response budget', async () => {
    const [group] = await collectToolSearchRollouts(
      makeOptions([prompt], createFakePolicy(), { maxResponseTokens: 20 }),
    );
    for (const r of group.rollouts) {
      expect(r.ids.length - r.promptLength).toBe(20);
      expect(r.isFinished).toBe(false);
    }
  });

  it('keeps the handle out of JSON and splits queries into train and test by seed', () => {
    const [p] = createToolSearchPrompts(repo.queries.slice(0, 1), { engine, renderChat: renderUserOnly });
    expect(JSON.parse(JSON.stringify(p)).query).toEqual(repo.queries[0]);
    expect(readToolSearchPrompt(p).handle.engine).toBe(engine);
    const split = splitToolSearchPrompts(repo.queries, { engine, renderChat: renderUserOnly }, { nTest: 2, seed: 1 });
    expect(split.testPrompts).toHaveLength(2);
    expect(split.trainPrompts).toHaveLength(repo.queries.length - 2);
    const ids = [...split.trainPrompts, ...split.testPrompts].map((x) => readToolSearchPrompt(x).query.id).sort();
    expect(ids).toEqual(repo.queries.map((q) => q.id).sort());
    const again = splitToolSearchPrompts(repo.queries, { engine, renderChat: renderUserOnly }, { nTest: 2, seed: 1 });
    expect(again.testPrompts.map((x) => readToolSearchPrompt(x).query.id)).toEqual(
      split.testPrompts.map((x) => readToolSearchPrompt(x).query.id),
    );
    expect(() =>
      splitToolSearchPrompts(repo.queries, { engine, renderChat: renderUserOnly }, { nTest: 99, seed: 1 }),
    ).toThrow(/nTest/);
  });

  it('marks failed and skipped searches as not ok in callOutputs', () => {
    const ok = { isOk: true as const, query: 'q', category: null };
    const calls = [ok, { isOk: false as const, error: 'bad' }, ok, ok];
    const observations = [
      '1. a',
      'Error: bad',
      'Category X is not within the search scope',
      'Error: only 1 search call(s) per turn are executed; this one was skipped.',
    ];
    const events = [
      { turn: 0, query: 'q', category: null, returnedIds: ['a'] },
      { turn: 0, query: '', category: null, returnedIds: [], error: 'bad' },
      { turn: 0, query: 'q', category: 'X', returnedIds: [], error: 'Category X is not within the search scope' },
    ];
    expect(listSearchCallOutputs(calls, observations, events).map((c) => c.ok)).toEqual([true, false, false, false]);
  });

  it('pairs each call with its event: malformed calls have one, skipped calls and an unclosed <tool_call> none', () => {
    const ok = { isOk: true as const, query: 'q', category: null };
    const bad = { isOk: false as const, error: 'bad' };
    const calls = [bad, ok, ok, bad];
    const observations = [
      'Error: bad',
      '1. a',
      'Error: only 1 search call(s) per turn are executed; this one was skipped.',
      'Error: unclosed',
    ];
    const events = [
      { turn: 0, query: '', category: null, returnedIds: [], error: 'bad' },
      { turn: 0, query: 'q', category: null, returnedIds: ['a'] },
    ];
    expect(pairSearchCallEvents(calls, observations, events)).toEqual([events[0], events[1], undefined, undefined]);
  });

  it('names prompts it cannot run', async () => {
    const toolUse = { kind: 'tool-use', index: 0, task: {} } as unknown as PromptItem;
    await expect(collectToolSearchRollouts(makeOptions([toolUse], createFakePolicy()))).rejects.toThrow(
      /prompts\[0\] is a tool-use prompt/,
    );
    const bare = { kind: 'tool-search', index: 0, query: repo.queries[0] } as unknown as PromptItem;
    await expect(collectToolSearchRollouts(makeOptions([bare], createFakePolicy()))).rejects.toThrow(
      /createToolSearchPrompts/,
    );
    expect(() => createToolSearchPrompts(repo.queries, { engine } as never)).toThrow(/renderChat/);
  });
});

describe('countSearchRounds (ToolSearcher Fig. 5)', () => {
  const prompt = setup.trainPrompts[0];
  const { query, handle } = readToolSearchPrompt(prompt);
  const gold = query.goldToolIds[0];
  const search = (q: string, category?: string) =>
    `<tool_call>{"name": "search", "arguments": {"query": ${JSON.stringify(q)}${category ? `, "category": ${JSON.stringify(category)}` : ''}}}</tool_call>`;
  const select = `<tool_list>${JSON.stringify([gold])}</tool_list>`;
  /** The assistant turns played through the real search env (the collector, via the teacher replay). */
  const play = (assistantTexts: string[]) =>
    replaySearchTeacherEpisode(
      { queryId: query.id, maxTurns: 8, isCategoryConstrained: false, assistantTexts },
      query,
      handle,
      tokenizer,
    );

  it('counts the turns that searched: 3 search turns then the <tool_list> selection → 3', async () => {
    const rollout = await play([search('weather'), search('currency'), search('music'), select]);
    const info = readSearchRolloutInfo(rollout);
    expect(info.turns.map((t) => t.events.length)).toEqual([1, 1, 1, 0]);
    expect(countSearchRounds(info.turns)).toBe(3);
    expect(evaluateSearchRollout(rollout, prompt).search_rounds).toBe(3);
    expect(evaluateSearchRollout(rollout, prompt).turns).toBe(4);
  });

  it('does not count a turn whose only call was malformed (its event never reached the engine)', async () => {
    const malformed = '<tool_call>{"name": "search", "arguments": {}}</tool_call>'; // no query
    const rollout = await play([search('weather'), malformed, search('music'), select]);
    const info = readSearchRolloutInfo(rollout);
    // the env records the malformed call as an event with `error` …
    expect(info.turns[1].calls.map((c) => c.isOk)).toEqual([false]);
    expect(info.turns[1].events).toHaveLength(1);
    expect(info.turns[1].events[0].error).toMatch(/query/);
    // … but the engine never ran it: 2 rounds of 4 turns
    expect(countSearchRounds(info.turns)).toBe(2);
    expect(evaluateSearchRollout(rollout, prompt).search_rounds).toBe(2);
  });

  it('counts a search the engine answered with an error, once per turn; not a turn without a call', async () => {
    const rollout = await play([
      'I will think first.', // no call: 0
      search('weather', 'no_such_category'), // the engine answers "… not within the search scope": 1
      '<tool_call>{bad json</tool_call>' + search('music'), // malformed, then a search that ran: 1
      search('a') + search('b'), // two searches, the second skipped (1 per turn): 1
      select,
    ]);
    const info = readSearchRolloutInfo(rollout);
    expect(info.turns[1].events[0].error).toBe('Category no_such_category is not within the search scope');
    expect(info.turns.map((t) => t.events.length)).toEqual([0, 1, 2, 1, 0]);
    expect(countSearchRounds(info.turns)).toBe(3);
    expect(evaluateSearchRollout(rollout, prompt).search_rounds).toBe(3);
  });

  it('is 0 for an episode that selects at once', async () => {
    const rollout = await play([select]);
    expect(countSearchRounds(readSearchRolloutInfo(rollout).turns)).toBe(0);
  });
});
