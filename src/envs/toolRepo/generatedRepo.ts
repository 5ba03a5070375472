/**
 * A seeded, generated stand-in for StableToolBench's repository (ToolSearcher §4.1,
 * App. B.1: 16k RapidAPI APIs in 49 categories, grouped into tools and collections),
 * small enough to build in the browser and large enough that search is needed.
 *
 * Simplifications: English templates only; parameters come from a per-category pool,
 * so inputs are plausible but not domain-exact; gold sets are exactly the APIs the
 * text describes (no distractor APIs in the gold set, unlike StableToolBench's api_list).
 *
 * The words it draws from are data beside it: data/categories.json (each category's 8
 * subjects, 8 input parameters and 8 output fields), data/actions.json (the 8 actions'
 * API-name, description and query-clause templates), data/names.json (brand, tool and
 * collection name parts, value syllables) and data/queryWords.json (query connectors and
 * prefaces).
 *
 * Its structure and queries: docs/envs.md.
 */
import { createRng } from '../../core/rng';
import type { Rng } from '../../core/rng';
import actions from './data/actions.json' with { type: 'json' };
import categories from './data/categories.json' with { type: 'json' };
import names from './data/names.json' with { type: 'json' };
import queryWords from './data/queryWords.json' with { type: 'json' };
import { makeFunctionName } from './toolDoc';
import type { QueryLevel, RepoQuery, ToolCollection, ToolDocument, ToolParam, ToolRepository } from './types';

/** A category's vocabulary: 8 subjects, 8 input parameters, 8 output fields. */
interface CategorySpec {
  name: string;
  subjects: readonly string[];
  params: readonly string[];
  outputs: readonly string[];
}

/** The 49 categories, in RapidAPI's order. */
const CATEGORY_SPECS: readonly CategorySpec[] = categories;

/** The 49 category names of the generator (RapidAPI's list). */
export const GENERATED_CATEGORIES: readonly string[] = CATEGORY_SPECS.map((s) => s.name);

interface ActionSpec {
  key: string;
  /** API-name patterns: `{S}` = subject in PascalCase, `{s}` = camelCase. */
  apiNames: readonly string[];
  /** Description patterns: `{noun}`, `{plural}`, `{inputs}`, `{outputs}`. */
  descriptions: readonly string[];
  /** Query clause patterns: `{noun}`, `{plural}`, `{givens}`, `{wants}`. */
  intents: readonly string[];
}

/** The 8 actions a subject offers, with their templates. */
const ACTIONS: readonly ActionSpec[] = actions;

const BRAND_HEADS: readonly string[] = names.brandHeads;
const BRAND_TAILS: readonly string[] = names.brandTails;
const TOOL_SUFFIXES: readonly string[] = names.toolSuffixes;
const COLLECTION_WORDS: readonly string[] = names.collectionWords;
const VALUE_SYLLABLES: readonly string[] = names.valueSyllables;
/** Words that open every clause of a multi-tool query after the first (the search teacher splits on them). */
export const QUERY_CONNECTORS: readonly string[] = queryWords.connectors;
/** Openings a query may start with (not part of any tool's clause). */
export const QUERY_PREFACES: readonly string[] = queryWords.prefaces;

export interface GeneratedRepoOptions {
  seed: number;
  /** Minimum number of tool documents (APIs). Default 10,000. */
  minTools?: number;
  /** Number of categories used, the first n of the 49. Default 49. */
  categories?: number;
  /** Number of collections. Default 60. */
  collections?: number;
  /** Queries generated per level. Default 100. */
  queriesPerLevel?: number;
}

interface GenTool {
  toolName: string;
  category: string;
  subjectIndex: number;
  apiIds: string[];
}

interface CategoryVocab {
  name: string;
  subjects: string[];
  params: string[];
  outputs: string[];
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)];
}

/** k distinct items, in random order (partial Fisher–Yates on a copy). */
function sample<T>(rng: Rng, items: readonly T[], k: number): T[] {
  const copy = [...items];
  const n = Math.min(k, copy.length);
  for (let i = 0; i < n; i++) {
    const j = i + rng.int(copy.length - i);
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, n);
}

/** Integer in [lo, hi]. */
function drawInt(rng: Rng, lo: number, hi: number): number {
  return lo + rng.int(hi - lo + 1);
}

function pluralize(phrase: string): string {
  const words = phrase.split(' ');
  const last = words[words.length - 1];
  let plural: string;
  if (/[^aeiou]y$/.test(last)) plural = `${last.slice(0, -1)}ies`;
  else if (/(s|x|z|ch|sh)$/.test(last)) plural = `${last}es`;
  else plural = `${last}s`;
  return [...words.slice(0, -1), plural].join(' ');
}

function toPascalCase(phrase: string): string {
  return phrase
    .split(/\s+/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

function toTitleCase(phrase: string): string {
  return phrase
    .split(/\s+/)
    .map((w) =>
      w.length <= 3 && /^(sms|ip|ssl|api|iot|crm|uv|tv|qr|pdf|gif|ocr|sql|iban)$/.test(w)
        ? w.toUpperCase()
        : w.charAt(0).toUpperCase() + w.slice(1),
    )
    .join(' ');
}

function joinList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => values[key] ?? `{${key}}`);
}

/** A JSON-schema-ish type for a parameter, from its name. */
function inferParamType(param: string): string {
  if (/\b(latitude|longitude|temperature|rate|amount|price|threshold|confidence|weight|height)\b/.test(param))
    return 'number';
  if (
    /\b(count|limit|page|size|days|year|age|length|quantity|guests|servings|radius|capacity|duration|interval|iterations|offset|min|max|level|months|hours|round|season|zoom|width|port|top k)\b/.test(
      param,
    )
  ) {
    return 'integer';
  }
  if (/^(is |include |safe )/.test(param)) return 'boolean';
  return 'string';
}

/** A plausible value for a parameter, as query text. */
function drawParamValue(rng: Rng, param: string): string {
  if (param.includes('date'))
    return `2024-${String(drawInt(rng, 1, 12)).padStart(2, '0')}-${String(drawInt(rng, 1, 28)).padStart(2, '0')}`;
  if (param.includes('time'))
    return `${String(drawInt(rng, 0, 23)).padStart(2, '0')}:${pick(rng, ['00', '15', '30', '45'])}`;
  if (param.includes('email')) return `${pick(rng, VALUE_SYLLABLES)}${pick(rng, VALUE_SYLLABLES)}@example.com`;
  if (param.includes('url')) return `https://example.com/${pick(rng, VALUE_SYLLABLES)}${drawInt(rng, 1, 99)}`;
  const type = inferParamType(param);
  if (type === 'number') return (drawInt(rng, 1, 9000) / 100).toFixed(2);
  if (type === 'integer') return String(drawInt(rng, 1, 50));
  if (type === 'boolean') return pick(rng, ['true', 'false']);
  if (/(id|number|code|symbol|sku|asin|vin|isrc|iban|hash|token|key)$/.test(param)) {
    const chars = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
    let code = '';
    for (let i = 0; i < 6; i++) code += chars[rng.int(chars.length)];
    return code;
  }
  const word = `${pick(rng, VALUE_SYLLABLES)}${pick(rng, VALUE_SYLLABLES)}${pick(rng, VALUE_SYLLABLES)}`;
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function toParamName(param: string): string {
  const parts = param.split(' ');
  return (
    parts[0] +
    parts
      .slice(1)
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join('')
  );
}

/** Builds the repository; the same options give the same repository. */
export function generateToolRepo(options: GeneratedRepoOptions): ToolRepository {
  const minTools = options.minTools ?? 10_000;
  const nCategories = Math.max(1, Math.min(options.categories ?? CATEGORY_SPECS.length, CATEGORY_SPECS.length));
  const nCollections = options.collections ?? 60;
  const queriesPerLevel = options.queriesPerLevel ?? 100;
  const root = createRng(`toolRepo/${options.seed}`);
  const toolRng = root.split('tools');
  const collectionRng = root.split('collections');
  const queryRng = root.split('queries');

  const vocab: CategoryVocab[] = CATEGORY_SPECS.slice(0, nCategories).map(({ name, subjects, params, outputs }) => ({
    name,
    subjects: [...subjects],
    params: [...params],
    outputs: [...outputs],
  }));

  const docs: ToolDocument[] = [];
  const docIndex = new Map<
    string,
    { doc: ToolDocument; action: ActionSpec; subject: string; requiredPhrases: string[] }
  >();
  const tools: GenTool[] = [];
  const usedToolNames = new Set<string>();
  const paramCache = new Map<string, ToolParam>();

  for (let t = 0; docs.length < minTools; t++) {
    const cat = vocab[t % vocab.length];
    const subjectIndex = toolRng.int(cat.subjects.length);
    const subject = cat.subjects[subjectIndex];
    const brand = `${pick(toolRng, BRAND_HEADS)}${pick(toolRng, BRAND_TAILS)}`;
    const baseName = `${brand} ${toTitleCase(subject)} ${pick(toolRng, TOOL_SUFFIXES)}`;
    let toolName = baseName;
    for (let v = 2; usedToolNames.has(toolName); v++) toolName = `${baseName} v${v}`;
    usedToolNames.add(toolName);
    const tool: GenTool = { toolName, category: cat.name, subjectIndex, apiIds: [] };
    const actions = sample(toolRng, ACTIONS, drawInt(toolRng, 3, 6));
    for (const action of actions) {
      const variant = toolRng.int(3);
      const apiName = fillTemplate(action.apiNames[variant], {
        S: toPascalCase(subject),
        s: toPascalCase(subject).charAt(0).toLowerCase() + toPascalCase(subject).slice(1),
      });
      const paramPick = sample(toolRng, cat.params, drawInt(toolRng, 2, 5));
      const nRequired = drawInt(toolRng, 1, Math.min(3, paramPick.length - 1));
      const toParam = (p: string): ToolParam => {
        const key = `${subject}|${p}`;
        let param = paramCache.get(key);
        if (!param) {
          param = { name: toParamName(p), type: inferParamType(p), description: `The ${p} of the ${subject}.` };
          paramCache.set(key, param);
        }
        return { ...param };
      };
      const required = paramPick.slice(0, nRequired).map(toParam);
      const optional = paramPick.slice(nRequired).map(toParam);
      const outputFields = sample(toolRng, cat.outputs, drawInt(toolRng, 3, 5));
      const outputs: Record<string, unknown> = {};
      for (const field of outputFields)
        outputs[field.replace(/ /g, '_')] = inferParamType(field) === 'string' ? 'str' : 'float';
      // (outputs are typed from their names: numbers as float, everything else as str)
      const description = fillTemplate(action.descriptions[toolRng.int(action.descriptions.length)], {
        noun: subject,
        plural: pluralize(subject),
        inputs: joinList(paramPick.slice(0, nRequired)),
        outputs: joinList(outputFields),
      });
      const name = makeFunctionName(apiName, toolName, Number.POSITIVE_INFINITY); // tool names are unique: no truncation, no clash
      const doc: ToolDocument = {
        id: name,
        name,
        apiName,
        toolName,
        category: cat.name,
        description,
        requiredParameters: required,
        optionalParameters: optional,
        outputs,
        method: action.key === 'create' ? 'POST' : 'GET',
        family: `${cat.name}/${subject}/${action.key}`,
      };
      docs.push(doc);
      docIndex.set(name, { doc, action, subject, requiredPhrases: paramPick.slice(0, nRequired) });
      tool.apiIds.push(name);
    }
    tools.push(tool);
  }

  const toolsByCategory = new Map<string, GenTool[]>();
  for (const tool of tools) {
    const group = toolsByCategory.get(tool.category);
    if (group) group.push(tool);
    else toolsByCategory.set(tool.category, [tool]);
  }

  const collections: ToolCollection[] = [];
  const usedCollectionNames = new Set<string>();
  for (let c = 0; c < nCollections && vocab.length >= 2; c++) {
    const cats = sample(collectionRng, vocab, drawInt(collectionRng, 2, Math.min(4, vocab.length))).map((v) => v.name);
    const members: string[] = [];
    for (const cat of cats) {
      for (const tool of sample(collectionRng, toolsByCategory.get(cat) ?? [], drawInt(collectionRng, 4, 8))) {
        members.push(tool.toolName);
      }
    }
    const baseName = `${cats.map((x) => x.split('_')[0]).join(' & ')} ${pick(collectionRng, COLLECTION_WORDS)}`;
    let name = baseName;
    for (let v = 2; usedCollectionNames.has(name); v++) name = `${baseName} ${v}`;
    usedCollectionNames.add(name);
    collections.push({ name, toolNames: members, categories: [...cats].sort() });
  }
  const toolByName = new Map(tools.map((t) => [t.toolName, t]));

  const writeClause = (rng: Rng, id: string): string => {
    const { doc, action, subject, requiredPhrases } = docIndex.get(id)!;
    const givens = joinList(requiredPhrases.map((phrase) => `${phrase} ${drawParamValue(rng, phrase)}`));
    const outputFields = Object.keys(doc.outputs ?? {}).map((k) => k.replace(/_/g, ' '));
    const wants = joinList(sample(rng, outputFields, drawInt(rng, 1, 2)));
    return fillTemplate(pick(rng, action.intents), { noun: subject, plural: pluralize(subject), givens, wants });
  };

  const writeQuery = (rng: Rng, goldIds: readonly string[]): string => {
    const clauses = goldIds.map((id, i) => {
      const clause = writeClause(rng, id);
      const prefix =
        i === 0
          ? ''
          : i === goldIds.length - 1 && goldIds.length > 2
            ? 'Finally, '
            : pick(rng, QUERY_CONNECTORS.slice(0, 4));
      const sentence = prefix ? `${prefix}${clause}` : clause.charAt(0).toUpperCase() + clause.slice(1);
      return /[?.]$/.test(sentence) ? sentence : `${sentence}.`;
    });
    const preface = pick(rng, QUERY_PREFACES);
    const text = clauses.join(' ');
    return preface
      ? `${preface}${preface.endsWith(': ') || preface.endsWith(', ') ? text.charAt(0).toLowerCase() + text.slice(1) : text}`
      : text;
  };

  const queries: RepoQuery[] = [];
  const addQuery = (level: QueryLevel, index: number, goldIds: string[], rng: Rng) => {
    const categories = [...new Set(goldIds.map((id) => docIndex.get(id)!.doc.category))].sort();
    queries.push({
      id: `gen:${options.seed}:${level}:${index}`,
      text: writeQuery(rng, goldIds),
      level,
      goldToolIds: goldIds,
      relevantToolIds: [...goldIds],
      goldCategories: categories,
    });
  };

  const singleRng = queryRng.split('single_tool');
  for (let i = 0; i < queriesPerLevel; i++) {
    const tool = pick(singleRng, tools);
    addQuery(
      'single_tool',
      i,
      sample(singleRng, tool.apiIds, drawInt(singleRng, 1, Math.min(3, tool.apiIds.length))),
      singleRng,
    );
  }

  const categoryRng = queryRng.split('intra_category');
  const categoriesWithTools = vocab.map((v) => v.name).filter((c) => (toolsByCategory.get(c)?.length ?? 0) >= 2);
  for (let i = 0; i < queriesPerLevel && categoriesWithTools.length > 0; i++) {
    const category = pick(categoryRng, categoriesWithTools);
    const inCategory = toolsByCategory.get(category)!;
    // Prefer tools of different subjects, so the query asks for different functions.
    const bySubject = new Map<number, GenTool[]>();
    for (const tool of inCategory)
      bySubject.set(tool.subjectIndex, [...(bySubject.get(tool.subjectIndex) ?? []), tool]);
    const subjects = sample(categoryRng, [...bySubject.keys()], drawInt(categoryRng, 2, 3));
    const chosen =
      subjects.length >= 2
        ? subjects.map((s) => pick(categoryRng, bySubject.get(s)!))
        : sample(categoryRng, inCategory, 2);
    addQuery(
      'intra_category',
      i,
      chosen.map((t) => pick(categoryRng, t.apiIds)),
      categoryRng,
    );
  }

  const collectionQueryRng = queryRng.split('intra_collection');
  const usableCollections = collections.filter((c) => c.categories.length >= 2 && c.toolNames.length >= 2);
  for (let i = 0; i < queriesPerLevel && usableCollections.length > 0; i++) {
    const collection = pick(collectionQueryRng, usableCollections);
    const cats = sample(
      collectionQueryRng,
      collection.categories,
      drawInt(collectionQueryRng, 2, Math.min(3, collection.categories.length)),
    );
    const chosen = cats.map((cat) => {
      const members = collection.toolNames.map((n) => toolByName.get(n)!).filter((t) => t.category === cat);
      return pick(collectionQueryRng, members);
    });
    addQuery(
      'intra_collection',
      i,
      chosen.map((t) => pick(collectionQueryRng, t.apiIds)),
      collectionQueryRng,
    );
  }

  return {
    source: `generated:${options.seed}`,
    tools: docs,
    categories: [...new Set(docs.map((d) => d.category))].sort(),
    collections,
    queries,
  };
}
