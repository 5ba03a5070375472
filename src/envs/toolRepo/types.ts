/**
 * The tool repository ToolSearcher searches (ToolSearcher §3.1): a large set of tool
 * documents d_T = (f, I, O) — a function description f, input constraints I and an
 * output schema O — plus queries whose gold tool sets the policy must select.
 *
 * Vocabulary follows RapidAPI / StableToolBench:
 * - a *tool document* is one API endpoint (what the policy selects; "tool" in the paper),
 * - `toolName` is the RapidAPI *tool*: a provider's service that groups several APIs,
 * - `category` is one of RapidAPI's ~49 coarse categories,
 * - a *collection* is a themed group of RapidAPI tools that may span categories.
 */

/** One input parameter of a tool document. `type` is kept as the source wrote it. */
export interface ToolParam {
  name: string;
  /** e.g. `STRING`, `NUMBER`, `ENUM`, `DATE (YYYY-MM-DD)` (StableToolBench) or `string`, `integer`. */
  type: string;
  description: string;
  /** Example or default value; absent when the source gave none (or an empty string). */
  default?: unknown;
}

export interface ToolDocument {
  /** Unique in its repository; equal to `name` for both builders here. */
  id: string;
  /** The function name the policy writes in `<tool_list>` (ToolBench style `api_for_tool`). */
  name: string;
  /** The API's own name, e.g. `GetRelatedPeople`. */
  apiName: string;
  /** The RapidAPI tool (service/collection of APIs) this API belongs to, e.g. `Vimeo`. */
  toolName: string;
  category: string;
  description: string;
  requiredParameters: ToolParam[];
  optionalParameters: ToolParam[];
  /** Output schema: field → type (StableToolBench's `template_response`), when known. */
  outputs?: Record<string, unknown>;
  /** HTTP method, when known. */
  method?: string;
  /**
   * Generated repositories only: `category/subject/action`. Documents of one family are
   * functionally similar (near-duplicate descriptions, different inputs/outputs/providers).
   */
  family?: string;
}

/** ToolSearcher's three scenarios (StableToolBench I1 / I2 / I3). */
export type QueryLevel = 'single_tool' | 'intra_category' | 'intra_collection';

export const QUERY_LEVELS: readonly QueryLevel[] = ['single_tool', 'intra_category', 'intra_collection'] as const;

/** StableToolBench's six test groups. */
export type StableToolBenchGroup =
  'G1_instruction' | 'G1_category' | 'G1_tool' | 'G2_instruction' | 'G2_category' | 'G3_instruction';

export const STABLE_TOOL_BENCH_GROUPS: readonly StableToolBenchGroup[] = [
  'G1_instruction',
  'G1_category',
  'G1_tool',
  'G2_instruction',
  'G2_category',
  'G3_instruction',
] as const;

export interface RepoQuery {
  /** Unique in the repository, e.g. `G1_category:28` or `gen:7:single_tool:0`. */
  id: string;
  text: string;
  level: QueryLevel;
  /** The ids of the tool documents the selection is scored against. */
  goldToolIds: string[];
  /** Tools the query actually needs (StableToolBench `relevant APIs`); equals gold for generated queries. */
  relevantToolIds: string[];
  /** Categories of the gold tools, sorted (used for category-constrained search). */
  goldCategories: string[];
  /** StableToolBench test group, for imported queries. */
  group?: StableToolBenchGroup;
  /** StableToolBench `query_id`, for imported queries. */
  sourceQueryId?: number;
}

/** A themed group of RapidAPI tools (by `toolName`); may span categories. */
export interface ToolCollection {
  name: string;
  toolNames: string[];
  categories: string[];
}

export interface ToolRepository {
  /** e.g. `stabletoolbench` or `generated:7`. */
  source: string;
  tools: ToolDocument[];
  /** Sorted distinct categories of `tools`. */
  categories: string[];
  collections: ToolCollection[];
  queries: RepoQuery[];
}

/** A problem found while reading input data: which file, which entry, what is wrong. */
export interface RepoProblem {
  file: string;
  /** Index of the entry in the file's top-level array; -1 for the file as a whole. */
  index: number;
  /** Field path inside the entry, e.g. `api_list[2].tool_name`. */
  path: string;
  message: string;
}
