import { describe, expect, it } from 'vitest';
import { selectionMetrics } from '../../core/metrics';
import { generateToolRepo } from './generatedRepo';
import { createToolSearch } from './search';
import { createSearchEnv } from './searchEnv';
import {
  buildSearchTeacherEpisode,
  formatToolListAnswer,
  splitQueryClauses,
  writePurposeQuery,
  type SearchTeacherEpisode,
} from './searchTeacher';
import type { RepoQuery, ToolRepository } from './types';
import type { ToolSearch } from './search';

function createSetup(seed: number): { repo: ToolRepository; engine: ToolSearch } {
  const repo = generateToolRepo({ seed, minTools: 400, queriesPerLevel: 4 });
  return { repo, engine: createToolSearch(repo) };
}

/** Replays the teacher's turns through a fresh SearchEnv; returns its summary and the selection metrics. */
function replay(engine: ToolSearch, query: RepoQuery, episode: SearchTeacherEpisode, texts = episode.assistantTexts) {
  const env = createSearchEnv(engine, {
    maxTurns: episode.maxTurns,
    isCategoryConstrained: episode.isCategoryConstrained,
  });
  const start = env.reset(query);
  const observations: string[] = [];
  for (const text of texts) observations.push(...env.step(text).observations);
  const summary = env.summarize();
  const searched = env.session.events.map((e) => e.returnedIds);
  return { start, summary, observations, metrics: selectionMetrics(summary.selectedIds, query.goldToolIds, searched) };
}

describe('buildSearchTeacherEpisode', () => {
  for (const seed of [1, 2, 3]) {
    for (const isCategoryConstrained of [true, false]) {
      it(`scores F1 = 1 and search recall 1 in the real SearchEnv (repo seed ${seed}, ${isCategoryConstrained ? 'category-constrained' : 'global'})`, () => {
        const { repo, engine } = createSetup(seed);
        for (const query of repo.queries) {
          const result = buildSearchTeacherEpisode(engine, query, { maxTurns: 4, isCategoryConstrained });
          if (!result.isOk) throw new Error(`teacher failed on ${query.id}: ${result.reason}`);
          const { episode } = result;
          const { start, summary, observations, metrics } = replay(engine, query, episode);
          expect(metrics).toMatchObject({ f1: 1, recall: 1, precision: 1, match: true, sRecall: 1 });
          expect(summary).toMatchObject({
            hasValidSelection: true,
            searchRecall: 1,
            stopReason: 'tool_list',
            turns: episode.assistantTexts.length,
          });
          expect(new Set(summary.selectedIds)).toEqual(new Set(query.goldToolIds));
          expect(episode.summary).toEqual(summary);
          expect(episode.assistantTexts.length).toBeLessThanOrEqual(4);
          // Search calls only hold what the policy sees: a clause of the request (or the
          // whole request) or the gold tool's purpose in the request's words, never a tool name.
          const calls = episode.assistantTexts
            .slice(0, -1)
            .map((t) => JSON.parse(/<tool_call>\n([\s\S]*)\n<\/tool_call>/.exec(t)![1]));
          const purposes = query.goldToolIds.map((id) => writePurposeQuery(engine.getTool(id)!));
          for (const call of calls) {
            expect(call.name).toBe('search');
            expect(query.text.includes(call.arguments.query) || purposes.includes(call.arguments.query)).toBe(true);
            for (const id of query.goldToolIds) expect(call.arguments.query).not.toContain(id);
            if (isCategoryConstrained) expect(start.scopeCategories).toContain(call.arguments.category);
          }
          // Every selected name was shown by an observation before the selection.
          for (const id of query.goldToolIds)
            expect(observations.join('\n')).toContain(`${engine.getTool(id)!.name} (tool:`);
        }
      });
    }
  }

  it('a wrong tool in the list scores below 1', () => {
    const { repo, engine } = createSetup(2);
    const query = repo.queries.find((q) => q.goldToolIds.length === 2)!;
    const result = buildSearchTeacherEpisode(engine, query, { maxTurns: 4 });
    if (!result.isOk) throw new Error(result.reason);
    const [gold1, gold2] = query.goldToolIds;
    const wrong = repo.tools.find((d) => !query.goldToolIds.includes(d.id))!;
    const texts = [
      ...result.episode.assistantTexts.slice(0, -1),
      formatToolListAnswer([engine.getTool(gold1)!.name, wrong.name]),
    ];
    const { summary, metrics } = replay(engine, query, result.episode, texts);
    expect(summary.selectedIds).toEqual([gold1, wrong.id]);
    expect(summary.selectedIds).not.toContain(gold2);
    // Selected {gold1, wrong}, gold {gold1, gold2}: precision = 1/2, recall = 1/2,
    // F1 = 2·(1/2)·(1/2) / (1/2 + 1/2) = 1/2; not an exact match; the searches still found
    // both gold tools, so search recall stays 2/2 = 1.
    expect(metrics.precision).toBeCloseTo(0.5, 12);
    expect(metrics.recall).toBeCloseTo(0.5, 12);
    expect(metrics.f1).toBeCloseTo(0.5, 12);
    expect(metrics.match).toBe(false);
    expect(metrics.sRecall).toBe(1);
  });

  it('fails, naming the query, when the turn limit leaves no room to search', () => {
    const { repo, engine } = createSetup(1);
    const query = repo.queries.find((q) => q.goldToolIds.length === 2)!;
    // maxTurns 1: the only turn must be the selection, so no search can show a gold tool.
    const result = buildSearchTeacherEpisode(engine, query, { maxTurns: 1 });
    expect(result).toMatchObject({ isOk: false, queryId: query.id });
    if (!result.isOk) expect(result.reason).toMatch(/turn limit 1/);
  });
});

describe('splitQueryClauses', () => {
  it('drops the preface and the connectors, one clause per gold tool', () => {
    const text =
      'Hi! Which riddles match difficulty Kalo? Give me the text. Then tell me the rating of the joke with id AB12CD. Finally, list all memes for date 2024-01-02.';
    expect(splitQueryClauses(text, 3)).toEqual([
      'Which riddles match difficulty Kalo? Give me the text',
      'tell me the rating of the joke with id AB12CD',
      'list all memes for date 2024-01-02',
    ]);
    expect(splitQueryClauses(text, 2)).toBeNull();
  });
});
