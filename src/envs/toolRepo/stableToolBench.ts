/**
 * Builds a tool repository from StableToolBench's test instruction files
 * (`test_instruction/G*.json`, optionally filtered by `test_query_ids/G*.json`), the
 * large-scale repository ToolSearcher evaluates on (ToolSearcher §4.1, App. B.1).
 *
 * Input is already-parsed JSON, so this runs on browser `File` contents and in Node
 * (see `node.ts`). Every entry is validated with zod; a bad entry is skipped and
 * reported with its file, index and field path, never thrown.
 *
 * Levels: G1 → single_tool (I1), G2 → intra_category (I2), G3 → intra_collection (I3).
 *
 * Document keys, names and gold sets (and App. B.1's counts): docs/envs.md.
 */
import { z } from 'zod';
import { makeFunctionName, standardizeName } from './toolDoc';
import type {
  QueryLevel,
  RepoProblem,
  RepoQuery,
  StableToolBenchGroup,
  ToolDocument,
  ToolParam,
  ToolRepository,
} from './types';
import { STABLE_TOOL_BENCH_GROUPS } from './types';

export interface StableToolBenchFile {
  /** Name used in problem reports, e.g. `test_instruction/G1_tool.json`. */
  fileName: string;
  group: StableToolBenchGroup;
  /** Parsed `test_instruction/<group>.json`: an array of queries. */
  instructions: unknown;
  /** Parsed `test_query_ids/<group>.json` (`{"<query_id>": 0, …}`); when given, only listed queries are kept. */
  queryIds?: unknown;
  /** Name of the query-id file, for problem reports. */
  queryIdsFileName?: string;
}

export type GoldSource = 'api_list' | 'relevant';

export interface StableToolBenchOptions {
  /** Which list is the gold set: the whole `api_list` (default) or `relevant APIs`. */
  gold?: GoldSource;
}

export interface StableToolBenchStats {
  queries: number;
  queriesPerGroup: Record<string, number>;
  /** Entries over all kept queries' `api_list`s, duplicates included. */
  apiMentions: number;
  /** Distinct (category, tool, api) keys = tool documents. */
  distinctApis: number;
  /** Distinct (tool, api) pairs, ignoring category. */
  distinctToolApiPairs: number;
  categories: number;
  /** Distinct (category, tool) pairs. */
  tools: number;
  /** Documents whose ToolBench name collided and got a suffix. */
  renamedDocuments: number;
}

export interface StableToolBenchResult {
  repo: ToolRepository;
  problems: RepoProblem[];
  stats: StableToolBenchStats;
}

const paramSchema = z.object({
  name: z.string().min(1),
  type: z.string(),
  description: z.string().nullish(),
  default: z.unknown().optional(),
});

const apiSchema = z.object({
  category_name: z.string().min(1),
  tool_name: z.string().min(1),
  api_name: z.string().min(1),
  api_description: z.string().nullish(),
  required_parameters: z.array(paramSchema).default([]),
  optional_parameters: z.array(paramSchema).default([]),
  method: z.string().nullish(),
  template_response: z.unknown().optional(),
});

const querySchema = z.object({
  query: z.string().min(1),
  query_id: z.number().int(),
  api_list: z.array(apiSchema).min(1),
  'relevant APIs': z.array(z.tuple([z.string(), z.string()])).default([]),
});

type ApiEntry = z.infer<typeof apiSchema>;
type ParamEntry = z.infer<typeof paramSchema>;

/** The level of a test group: G1 → I1, G2 → I2, G3 → I3. */
export function getGroupLevel(group: StableToolBenchGroup): QueryLevel {
  if (group.startsWith('G1')) return 'single_tool';
  if (group.startsWith('G2')) return 'intra_category';
  return 'intra_collection';
}

/** `test_instruction/G1_tool.json` → `G1_tool`; null for names that are not a known group. */
export function parseGroupFromFileName(fileName: string): StableToolBenchGroup | null {
  const base = fileName.split(/[\\/]/).pop() ?? '';
  const stem = base.replace(/\.json$/i, '');
  return (STABLE_TOOL_BENCH_GROUPS as readonly string[]).includes(stem) ? (stem as StableToolBenchGroup) : null;
}

function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text ? `.${String(key)}` : String(key);
  }
  return text || '(entry)';
}

function makeApiKey(category: string, toolName: string, apiName: string): string {
  return JSON.stringify([category, toolName, apiName]);
}

function convertParam(param: ParamEntry): ToolParam {
  const out: ToolParam = { name: param.name, type: param.type, description: param.description ?? '' };
  if (param.default !== undefined && param.default !== null && param.default !== '') out.default = param.default;
  return out;
}

/** `template_response` may be an object, a JSON string or absent. */
function convertOutputs(template: unknown): Record<string, unknown> | undefined {
  if (template === undefined || template === null) return undefined;
  if (typeof template === 'string') {
    try {
      const parsed: unknown = JSON.parse(template);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
        return parsed as Record<string, unknown>;
    } catch {
      // not JSON: keep the text as is
    }
    return template.trim() ? { response: template } : undefined;
  }
  if (typeof template === 'object' && !Array.isArray(template)) return template as Record<string, unknown>;
  return { response: template };
}

function convertApi(api: ApiEntry): Omit<ToolDocument, 'id' | 'name'> {
  const doc: Omit<ToolDocument, 'id' | 'name'> = {
    apiName: api.api_name,
    toolName: api.tool_name,
    category: api.category_name,
    description: (api.api_description ?? '').trim(),
    requiredParameters: api.required_parameters.map(convertParam),
    optionalParameters: api.optional_parameters.map(convertParam),
  };
  const outputs = convertOutputs(api.template_response);
  if (outputs !== undefined) doc.outputs = outputs;
  if (api.method) doc.method = api.method;
  return doc;
}

/** Reads the query-id file into a set of ids; problems go to `problems`. */
function readQueryIds(file: StableToolBenchFile, problems: RepoProblem[]): Set<number> | null {
  if (file.queryIds === undefined) return null;
  const name = file.queryIdsFileName ?? `${file.fileName} (query ids)`;
  const raw = file.queryIds;
  const ids = new Set<number>();
  if (Array.isArray(raw)) {
    raw.forEach((value, index) => {
      const id = Number(value);
      if (Number.isInteger(id)) ids.add(id);
      else
        problems.push({
          file: name,
          index,
          path: '(entry)',
          message: `query id ${JSON.stringify(value)} is not an integer`,
        });
    });
    return ids;
  }
  if (raw === null || typeof raw !== 'object') {
    problems.push({
      file: name,
      index: -1,
      path: '(file)',
      message: 'expected an object {"<query_id>": …} or an array of ids',
    });
    return null;
  }
  for (const key of Object.keys(raw)) {
    const id = Number(key);
    if (Number.isInteger(id)) ids.add(id);
    else
      problems.push({
        file: name,
        index: -1,
        path: key,
        message: `key ${JSON.stringify(key)} is not an integer query id`,
      });
  }
  return ids;
}

/** Builds the repository; deterministic in the order of `files` (then sorted by group). */
export function buildStableToolBenchRepo(
  files: readonly StableToolBenchFile[],
  options: StableToolBenchOptions = {},
): StableToolBenchResult {
  const gold: GoldSource = options.gold ?? 'api_list';
  const problems: RepoProblem[] = [];
  const groupOrder = (g: StableToolBenchGroup) => STABLE_TOOL_BENCH_GROUPS.indexOf(g);
  const ordered = [...files].sort((a, b) => groupOrder(a.group) - groupOrder(b.group));

  const docsByKey = new Map<string, Omit<ToolDocument, 'id' | 'name'>>();
  const firstSeenBy = new Map<string, string>();
  const keyOrder: string[] = [];
  interface PendingQuery {
    group: StableToolBenchGroup;
    queryId: number;
    text: string;
    apiKeys: string[];
    relevantKeys: string[];
  }
  const pending: PendingQuery[] = [];
  const queriesPerGroup: Record<string, number> = {};
  let apiMentions = 0;

  for (const file of ordered) {
    if (!Array.isArray(file.instructions)) {
      problems.push({ file: file.fileName, index: -1, path: '(file)', message: 'expected a JSON array of queries' });
      continue;
    }
    const listedIds = readQueryIds(file, problems);
    const seenIds = new Set<number>();
    file.instructions.forEach((entry: unknown, index: number) => {
      const parsed = querySchema.safeParse(entry);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          problems.push({ file: file.fileName, index, path: formatPath(issue.path), message: issue.message });
        }
        return;
      }
      const query = parsed.data;
      if (seenIds.has(query.query_id)) {
        problems.push({
          file: file.fileName,
          index,
          path: 'query_id',
          message: `duplicate query_id ${query.query_id}`,
        });
        return;
      }
      seenIds.add(query.query_id);
      if (listedIds && !listedIds.has(query.query_id)) {
        problems.push({
          file: file.fileName,
          index,
          path: 'query_id',
          message: `query_id ${query.query_id} is not in the query-id file; query skipped`,
        });
        return;
      }
      const apiKeys: string[] = [];
      query.api_list.forEach((api, apiIndex) => {
        const key = makeApiKey(api.category_name, api.tool_name, api.api_name);
        const doc = convertApi(api);
        const known = docsByKey.get(key);
        if (!known) {
          docsByKey.set(key, doc);
          firstSeenBy.set(key, `${file.group}:${query.query_id}`);
          keyOrder.push(key);
        } else if (JSON.stringify(known) !== JSON.stringify(doc)) {
          problems.push({
            file: file.fileName,
            index,
            path: `api_list[${apiIndex}]`,
            message: `differs from the first occurrence of this API (query ${firstSeenBy.get(key)}); first kept`,
          });
        }
        if (!apiKeys.includes(key)) apiKeys.push(key);
      });
      apiMentions += query.api_list.length;
      const relevantKeys: string[] = [];
      query['relevant APIs'].forEach(([toolName, apiName], relIndex) => {
        const match = query.api_list.filter((a) => a.tool_name === toolName && a.api_name === apiName);
        if (match.length === 0) {
          problems.push({
            file: file.fileName,
            index,
            path: `relevant APIs[${relIndex}]`,
            message: `[${JSON.stringify(toolName)}, ${JSON.stringify(apiName)}] is not in api_list`,
          });
          return;
        }
        for (const api of match) {
          const key = makeApiKey(api.category_name, api.tool_name, api.api_name);
          if (!relevantKeys.includes(key)) relevantKeys.push(key);
        }
      });
      pending.push({ group: file.group, queryId: query.query_id, text: query.query, apiKeys, relevantKeys });
      queriesPerGroup[file.group] = (queriesPerGroup[file.group] ?? 0) + 1;
    });
    if (listedIds) {
      for (const id of listedIds) {
        if (!seenIds.has(id)) {
          problems.push({
            file: file.queryIdsFileName ?? `${file.fileName} (query ids)`,
            index: -1,
            path: String(id),
            message: `query id ${id} has no query in ${file.fileName}`,
          });
        }
      }
    }
  }

  const nameByKey = assignUniqueNames(keyOrder, docsByKey);
  const tools: ToolDocument[] = keyOrder.map((key) => {
    const name = nameByKey.get(key)!;
    return { id: name, name, ...docsByKey.get(key)! };
  });
  const categoryByKey = new Map(keyOrder.map((key) => [key, docsByKey.get(key)!.category]));

  const queries: RepoQuery[] = pending.map((q) => {
    const goldKeys = gold === 'api_list' ? q.apiKeys : q.relevantKeys;
    const goldToolIds = goldKeys.map((k) => nameByKey.get(k)!);
    return {
      id: `${q.group}:${q.queryId}`,
      text: q.text,
      level: getGroupLevel(q.group),
      goldToolIds,
      relevantToolIds: q.relevantKeys.map((k) => nameByKey.get(k)!),
      goldCategories: [...new Set(goldKeys.map((k) => categoryByKey.get(k)!))].sort(),
      group: q.group,
      sourceQueryId: q.queryId,
    };
  });

  const categories = [...new Set(tools.map((t) => t.category))].sort();
  const stats: StableToolBenchStats = {
    queries: queries.length,
    queriesPerGroup,
    apiMentions,
    distinctApis: tools.length,
    distinctToolApiPairs: new Set(tools.map((t) => JSON.stringify([t.toolName, t.apiName]))).size,
    categories: categories.length,
    tools: new Set(tools.map((t) => JSON.stringify([t.category, t.toolName]))).size,
    renamedDocuments: tools.filter((t) => t.name !== makeFunctionName(t.apiName, t.toolName)).length,
  };
  return {
    repo: { source: 'stabletoolbench', tools, categories, collections: [], queries },
    problems,
    stats,
  };
}

/**
 * ToolBench names; a name shared by several keys gets `_in_<category>`, then `_2`, `_3`…
 * (in first-seen key order), so every document has a unique name.
 */
function assignUniqueNames(
  keys: readonly string[],
  docs: ReadonlyMap<string, Omit<ToolDocument, 'id' | 'name'>>,
): Map<string, string> {
  const baseName = new Map(keys.map((k) => [k, makeFunctionName(docs.get(k)!.apiName, docs.get(k)!.toolName)]));
  const keysByName = new Map<string, string[]>();
  for (const key of keys) {
    const name = baseName.get(key)!;
    keysByName.set(name, [...(keysByName.get(name) ?? []), key]);
  }
  const names = new Map<string, string>();
  const used = new Set<string>();
  for (const key of keys) {
    const base = baseName.get(key)!;
    if (keysByName.get(base)!.length === 1) {
      names.set(key, base);
      used.add(base);
    }
  }
  for (const key of keys) {
    if (names.has(key)) continue;
    const candidate = `${baseName.get(key)!}_in_${standardizeName(docs.get(key)!.category) || 'category'}`;
    let name = candidate;
    for (let n = 2; used.has(name); n++) name = `${candidate}_${n}`;
    names.set(key, name);
    used.add(name);
  }
  return names;
}
