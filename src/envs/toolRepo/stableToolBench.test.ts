import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { buildStableToolBenchRepo, getGroupLevel, parseGroupFromFileName } from './stableToolBench';
import { hasStableToolBenchData, loadStableToolBench, resolveDataDir } from './node';
import { changeReservedName, makeFunctionName, standardizeName } from './toolDoc';

function makeApi(category: string, tool: string, api: string, extra: Record<string, unknown> = {}) {
  return {
    category_name: category,
    tool_name: tool,
    api_name: api,
    api_description: `${api} of ${tool}`,
    required_parameters: [{ name: 'q', type: 'STRING', description: 'query', default: 'abc' }],
    optional_parameters: [{ name: 'n', type: 'NUMBER', description: '', default: '' }],
    method: 'GET',
    ...extra,
  };
}

describe('ToolBench names', () => {
  it('standardizes like ToolBench', () => {
    expect(standardizeName('👋 Demo Project')).toBe('demo_project');
    expect(standardizeName('2D Barcode')).toBe('get_2d_barcode');
    expect(changeReservedName(standardizeName('ID'))).toBe('is_id');
    expect(makeFunctionName('Download/Stream', 'YTStream - Download YouTube Videos')).toBe(
      'download_stream_for_ytstream_download_youtube_videos',
    );
  });
  it('keeps the last 64 characters', () => {
    // 'x'×60 + '_for_' + 'tool' = 69 characters → drop the first 5
    const name = makeFunctionName('x'.repeat(60), 'tool');
    expect(name).toBe(`${'x'.repeat(55)}_for_tool`);
    expect(name.length).toBe(64);
  });
});

describe('buildStableToolBenchRepo', () => {
  it('builds documents, names and gold sets from parsed files', () => {
    const g1 = [
      {
        query: 'track my parcel',
        query_id: 1,
        api_list: [
          makeApi('Logistics', 'Track It', 'Latest', { template_response: { status: 'str' } }),
          makeApi('Logistics', 'Track It', 'All'),
        ],
        'relevant APIs': [['Track It', 'Latest']],
      },
    ];
    const g3 = [
      {
        query: 'convert and track',
        query_id: 2,
        api_list: [
          makeApi('Logistics', 'Track It', 'Latest', { template_response: { status: 'str' } }),
          makeApi('Finance', 'Money', 'Convert', { template_response: '{"rate": "float"}' }),
          makeApi('Financial', 'Money', 'Convert'),
        ],
        'relevant APIs': [['Money', 'Convert']],
      },
    ];
    const { repo, problems, stats } = buildStableToolBenchRepo([
      { fileName: 'G3_instruction.json', group: 'G3_instruction', instructions: g3 },
      { fileName: 'G1_tool.json', group: 'G1_tool', instructions: g1, queryIds: { '1': 0 } },
    ]);
    expect(problems).toEqual([]);
    // Keys (category, tool, api): Logistics/Track It/Latest, Logistics/Track It/All, Finance/Money/Convert,
    // Financial/Money/Convert → 4 documents; 3 distinct (tool, api) pairs; 3 categories.
    expect(stats).toMatchObject({
      queries: 2,
      apiMentions: 5,
      distinctApis: 4,
      distinctToolApiPairs: 3,
      categories: 3,
      renamedDocuments: 2,
    });
    expect(repo.tools.map((t) => t.id)).toEqual([
      'latest_for_track_it',
      'all_for_track_it',
      'convert_for_money_in_finance',
      'convert_for_money_in_financial',
    ]);
    const latest = repo.tools[0];
    expect(latest.requiredParameters).toEqual([{ name: 'q', type: 'STRING', description: 'query', default: 'abc' }]);
    expect(latest.optionalParameters).toEqual([{ name: 'n', type: 'NUMBER', description: '' }]);
    expect(latest.outputs).toEqual({ status: 'str' });
    expect(repo.tools[2].outputs).toEqual({ rate: 'float' });
    // G1 is sorted before G3; gold = whole api_list by default; the relevant pair (Money, Convert) matches both categories.
    expect(repo.queries.map((q) => [q.id, q.level, q.goldToolIds, q.relevantToolIds, q.goldCategories])).toEqual([
      ['G1_tool:1', 'single_tool', ['latest_for_track_it', 'all_for_track_it'], ['latest_for_track_it'], ['Logistics']],
      [
        'G3_instruction:2',
        'intra_collection',
        ['latest_for_track_it', 'convert_for_money_in_finance', 'convert_for_money_in_financial'],
        ['convert_for_money_in_finance', 'convert_for_money_in_financial'],
        ['Finance', 'Financial', 'Logistics'],
      ],
    ]);
    const relevant = buildStableToolBenchRepo([{ fileName: 'G1_tool.json', group: 'G1_tool', instructions: g1 }], {
      gold: 'relevant',
    });
    expect(relevant.repo.queries[0].goldToolIds).toEqual(['latest_for_track_it']);
    expect(relevant.repo.queries[0].goldCategories).toEqual(['Logistics']);
  });

  it('reports bad entries by file, index and field path, and keeps the good ones', () => {
    const entries = [
      { query: 'ok', query_id: 5, api_list: [makeApi('A', 't', 'x')], 'relevant APIs': [['t', 'missing']] },
      {
        query: 'bad tool',
        query_id: 6,
        api_list: [makeApi('A', 't', 'y'), { ...makeApi('A', 't', 'z'), tool_name: 7 }],
      },
      { query_id: 7, api_list: [makeApi('A', 't', 'w')] },
      { query: 'dup', query_id: 5, api_list: [makeApi('A', 't', 'x')] },
      { query: 'changed', query_id: 8, api_list: [{ ...makeApi('A', 't', 'x'), api_description: 'other' }] },
      { query: 'unlisted', query_id: 9, api_list: [makeApi('A', 't', 'v')] },
      'not an object',
    ];
    const { repo, problems } = buildStableToolBenchRepo([
      {
        fileName: 'G2_category.json',
        group: 'G2_category',
        instructions: entries,
        queryIds: { '5': 0, '8': 0, '11': 0 },
        queryIdsFileName: 'ids/G2_category.json',
      },
      { fileName: 'G1_tool.json', group: 'G1_tool', instructions: { not: 'an array' } },
    ]);
    expect(problems.map((p) => [p.file, p.index, p.path])).toEqual([
      ['G1_tool.json', -1, '(file)'],
      ['G2_category.json', 0, 'relevant APIs[0]'],
      ['G2_category.json', 1, 'api_list[1].tool_name'],
      ['G2_category.json', 2, 'query'],
      ['G2_category.json', 3, 'query_id'],
      ['G2_category.json', 4, 'api_list[0]'],
      ['G2_category.json', 5, 'query_id'],
      ['G2_category.json', 6, '(entry)'],
      ['ids/G2_category.json', -1, '11'],
    ]);
    expect(problems[4].message).toMatch(/duplicate query_id 5/);
    expect(repo.queries.map((q) => q.id)).toEqual(['G2_category:5', 'G2_category:8']);
    expect(repo.queries[0].relevantToolIds).toEqual([]);
  });

  it('maps groups to levels and file names to groups', () => {
    expect(getGroupLevel('G1_category')).toBe('single_tool');
    expect(getGroupLevel('G2_instruction')).toBe('intra_category');
    expect(getGroupLevel('G3_instruction')).toBe('intra_collection');
    expect(parseGroupFromFileName('test_instruction/G1_tool.json')).toBe('G1_tool');
    expect(parseGroupFromFileName('G4_x.json')).toBeNull();
  });
});

const dataDir = resolveDataDir();
const hasData = hasStableToolBenchData(dataDir);
if (!hasData)
  console.warn(`StableToolBench data missing: ${path.join(dataDir, 'stabletoolbench')} (set PACT_DATA_DIR)`);

describe('StableToolBench shared data', () => {
  it.skipIf(!hasData)('holds 765 queries, 2,490 distinct APIs in 47 categories, and no bad entries', () => {
    expect(existsSync(path.join(dataDir, 'stabletoolbench', 'test_query_ids'))).toBe(true);
    const { repo, problems, stats } = loadStableToolBench(dataDir);
    expect(problems).toEqual([]);
    // 153 + 163 + 158 + 124 + 106 + 61 = 765 (ToolSearcher App. B.1: 765 samples)
    expect(stats.queriesPerGroup).toEqual({
      G1_instruction: 163,
      G1_category: 153,
      G1_tool: 158,
      G2_instruction: 106,
      G2_category: 124,
      G3_instruction: 61,
    });
    expect(stats.queries).toBe(765);
    expect(stats.apiMentions).toBe(4070);
    expect(stats.distinctApis).toBe(2490); // key (category, tool, api)
    expect(stats.distinctToolApiPairs).toBe(2479); // key (tool, api)
    expect(stats.categories).toBe(47);
    expect(repo.categories.length).toBe(47);
    expect(new Set(repo.tools.map((t) => t.id)).size).toBe(2490);
    // gold = api_list: 4070 entries over 765 queries (no duplicates inside a list)
    expect(repo.queries.reduce((s, q) => s + q.goldToolIds.length, 0)).toBe(4070);
    // relevant APIs: 1799 entries / 765 = 2.352, max 6 (the paper's "mean 2.35, max 6"); 4 entries repeat
    // a pair inside the same query (G2_category 3990 and 72618, G2_instruction 63490 twice), so 1795 distinct.
    const relevantCounts = repo.queries.map((q) => q.relevantToolIds.length);
    expect(relevantCounts.reduce((s, n) => s + n, 0)).toBe(1795);
    expect(Math.max(...relevantCounts)).toBe(6);
    // G3 queries span two categories each; G1 queries one tool each.
    expect(repo.queries.filter((q) => q.group === 'G3_instruction').every((q) => q.goldCategories.length === 2)).toBe(
      true,
    );
    const toolOf = new Map(repo.tools.map((t) => [t.id, t.toolName]));
    expect(
      repo.queries
        .filter((q) => q.level === 'single_tool')
        .every((q) => new Set(q.goldToolIds.map((id) => toolOf.get(id))).size === 1),
    ).toBe(true);
  });
});
