/**
 * Search episodes in the warm start (`npm run pretrain -- --search-tasks N`): expert
 * episodes of ToolSearcher's search environment (envs/toolRepo/searchTeacher.ts) replayed
 * through the search-rollout collector (searchRollouts.ts), mixed into the same SFT rows
 * and objective; `evaluateSearchGreedy` scores held-out search queries (F1, match,
 * SRecall). Their text belongs in the pruned vocabulary (`vocabSearchTasks`): the shipped
 * one was built from tool-use text only, where search text still encodes exactly but
 * through the byte-level fallback, ~2.3× as many tokens, so a row cut at maxSeqLen loses
 * its later turns. `resolveSearchWarmStartCounts` reads pretrain's search flags.
 */
import type { RenderChat } from '../../envs/rollout';
import { generateToolRepo } from '../../envs/toolRepo/generatedRepo';
import { createToolSearch } from '../../envs/toolRepo/search';
import { buildSearchTeacherEpisode, type SearchTeacherEpisode } from '../../envs/toolRepo/searchTeacher';
import type { RepoQuery } from '../../envs/toolRepo/types';
import { createRng } from '../../core/rng';
import type { Qwen3Model } from '../../model/qwen3/index';
import type { TextTokenizer } from '../../model/tokenizer/types';
import { SEARCH_PRESENTATION, type SearchPresentation } from '../config';
import type { ExpertEpisode } from '../policyVocab';
import {
  collectToolSearchRollouts,
  createToolSearchPrompts,
  evaluateSearchRollout,
  replaySearchTeacherEpisode,
  type ToolSearchHandle,
} from '../rollouts/searchRollouts';
import type { EvaluateOptions } from './evaluate';

/**
 * Search episodes in the warm start (ToolSearcher's environment, src/envs/toolRepo): the
 * search teacher's expert episodes (searchTeacher.ts) on generated tool repositories,
 * replayed through the search-rollout collector (searchRollouts.ts
 * `replaySearchTeacherEpisode`), so their rows are shaped like the RL rollouts of the
 * `toolsearcher` experiment: same chat template, same instructions (its maxTurns, 4, is
 * written in them), the same observation blocks. Train repositories have seeds
 * seed·1000 + r (150 queries each, taken round-robin over the three query levels), the
 * held-out one seed·1000 + 999; neither is the
 * experiment's own repository (seed tasks.trainSeed). Even-numbered episodes search
 * category-constrained (§3.3, the scope named in the instructions), odd ones globally
 * (what RL ends with and what evaluation uses).
 */
export const SEARCH_WARM_START = {
  /** experiments/toolsearcher.json base.maxTurns: the instructions name it. */
  maxTurns: 4,
  /** runAssets' generated search repositories have ≥ 1000 tools. */
  minTools: 1000,
  queriesPerLevel: 50,
  heldOutRepoIndex: 999,
} as const;

export interface SearchSftTask {
  query: RepoQuery;
  handle: ToolSearchHandle;
  episode: SearchTeacherEpisode;
}

/**
 * The first `n` search-teacher episodes of the train (or held-out) repositories of `seed`,
 * in a fixed order (deterministic by seed); queries the teacher cannot solve within the
 * turn limit are skipped and counted. Searches show what a run's do by default
 * (config.ts SEARCH_PRESENTATION: top-3 hits, short documents), so the warm start reads
 * search results as the `toolsearcher` experiment will give them.
 */
export function generateSearchSftTasks(
  options: { seed: number; n: number; split: 'train' | 'test'; presentation?: SearchPresentation },
  renderChat: RenderChat,
): { tasks: SearchSftTask[]; skipped: number } {
  const { topK, resultLimits } = options.presentation ?? SEARCH_PRESENTATION;
  if (!Number.isInteger(options.n) || options.n < 0) {
    throw new Error(`generateSearchSftTasks: n must be a non-negative integer, got ${options.n}`);
  }
  const tasks: SearchSftTask[] = [];
  let skipped = 0;
  for (let r = 0; tasks.length < options.n; r++) {
    const repoIndex = options.split === 'test' ? SEARCH_WARM_START.heldOutRepoIndex + r * 1000 : r;
    if (options.split === 'train' && r >= SEARCH_WARM_START.heldOutRepoIndex) {
      throw new Error(`generateSearchSftTasks: ${options.n} search tasks need more than ${r} repositories`);
    }
    const repo = generateToolRepo({
      seed: options.seed * 1000 + repoIndex,
      minTools: SEARCH_WARM_START.minTools,
      queriesPerLevel: SEARCH_WARM_START.queriesPerLevel,
    });
    const engine = createToolSearch(repo, { topK, formatLimits: { ...resultLimits } });
    const handle: ToolSearchHandle = { engine, renderChat };
    for (const query of interleaveLevels(repo.queries)) {
      if (tasks.length >= options.n) break;
      const isCategoryConstrained = options.split === 'train' && tasks.length % 2 === 0;
      const maxTurns = SEARCH_WARM_START.maxTurns;
      const result = buildSearchTeacherEpisode(handle.engine, query, { maxTurns, isCategoryConstrained });
      if (result.isOk) tasks.push({ query, handle, episode: result.episode });
      else skipped++;
    }
  }
  return { tasks, skipped };
}

/** Queries round-robin over their levels (single_tool, intra_category, …), so any prefix mixes them. */
function interleaveLevels(queries: readonly RepoQuery[]): RepoQuery[] {
  const byLevel = new Map<string, RepoQuery[]>();
  for (const q of queries) byLevel.set(q.level, [...(byLevel.get(q.level) ?? []), q]);
  const out: RepoQuery[] = [];
  for (let j = 0; out.length < queries.length; j++) {
    for (const group of byLevel.values()) if (j < group.length) out.push(group[j]);
  }
  return out;
}

/** A search-teacher episode as ids + tags, through the search-rollout collector (policy kinds as generated). */
export async function encodeSearchEpisode(task: SearchSftTask, tokenizer: TextTokenizer): Promise<ExpertEpisode> {
  const rollout = await replaySearchTeacherEpisode(task.episode, task.query, task.handle, tokenizer);
  return { taskId: task.query.id, ids: rollout.ids, tags: rollout.tags, text: tokenizer.decode(rollout.ids) };
}

/** Held-out search metrics (means over queries; ToolSearcher App. B.3), as evaluateSearchRollout names them. */
export interface SearchWarmStartEval {
  nTasks: number;
  f1: number;
  recall: number;
  precision: number;
  match: number;
  search_recall: number;
  format: number;
  turns: number;
}

/**
 * Greedy rollouts on held-out search queries (global search, as the trainer evaluates),
 * through the search-rollout collector, scored by evaluateSearchRollout.
 */
export async function evaluateSearchGreedy(
  model: Qwen3Model,
  tokenizer: TextTokenizer,
  tasks: readonly SearchSftTask[],
  options: EvaluateOptions,
): Promise<SearchWarmStartEval> {
  const sums: Record<string, number> = {};
  for (const task of tasks) {
    const [prompt] = createToolSearchPrompts([task.query], task.handle);
    const [group] = await collectToolSearchRollouts({
      prompts: [prompt],
      rolloutsPerPrompt: 1,
      policy: model,
      tokenizer,
      maxTurns: options.maxTurns,
      maxPromptTokens: options.maxPromptTokens,
      maxResponseTokens: options.maxResponseTokens,
      temperature: 0,
      topP: 1,
      rng: createRng('warm-start-search-eval'),
      isGreedy: true,
      isCategoryConstrained: false,
    });
    for (const [k, v] of Object.entries(evaluateSearchRollout(group.rollouts[0], prompt))) sums[k] = (sums[k] ?? 0) + v;
  }
  const n = tasks.length;
  const mean = (k: string) => (n > 0 ? (sums[k] ?? 0) / n : 0);
  return {
    nTasks: n,
    f1: mean('f1'),
    recall: mean('recall'),
    precision: mean('precision'),
    match: mean('match'),
    search_recall: mean('search_recall'),
    format: mean('format'),
    turns: mean('turns'),
  };
}

/**
 * Search budgets of the held-out evaluation: one search observation (5 documents) is ~650
 * tokens with a vocabulary that holds search text.
 */
export const DEFAULT_SEARCH_EVALUATE_OPTIONS: Readonly<EvaluateOptions> = {
  maxTurns: SEARCH_WARM_START.maxTurns,
  maxPromptTokens: 1024,
  maxResponseTokens: 1536,
};

/** The fields of a warm_start.json (WarmStartInfo, files.ts) that the search options read. */
export interface SearchStageRecord {
  searchTasks?: number;
  vocabSearchTasks?: number;
  previousStage?: SearchStageRecord;
}

export interface SearchWarmStartCounts {
  /** Search-teacher rows to mix into the SFT rows (`--search-tasks`). */
  searchTasks: number;
  /** Search-teacher episodes in the vocabulary corpus (`--vocab-search-tasks`). */
  vocabSearchTasks: number;
  /** Held-out search queries to evaluate (`--search-eval-tasks`). */
  searchEvalTasks: number;
  /** `--init DIR` with more vocabulary search episodes than DIR's: DIR's vocabulary grows (extendWarmStartVocab). */
  isVocabExtended: boolean;
}

/**
 * A `--flag N` count of `npm run pretrain` (scripts/pretrain.ts too): undefined when
 * absent, an error naming the flag when not a non-negative integer.
 */
export function readCount(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`--${flag} must be a non-negative integer, got "${value}"`);
  return Number(value);
}

/**
 * `npm run pretrain`'s search options. The vocabulary corpus holds the first
 * `vocabSearchTasks` search episodes (default: `searchTasks`, so trained search text is in
 * the vocabulary). With `--init DIR` the default is DIR's record (`vocabSearchTasks`, 0
 * when absent: the shipped warm start), i.e. DIR's vocabulary; a larger value grows DIR's
 * vocabulary (`isVocabExtended`, extendWarmStartVocab), a smaller one is an error. The
 * held-out search evaluation runs (8 queries by default) when search episodes are trained
 * now or were in DIR's stages.
 */
export function resolveSearchWarmStartCounts(
  flags: { searchTasks?: string; vocabSearchTasks?: string; searchEvalTasks?: string },
  init?: { dir: string; info?: SearchStageRecord },
): SearchWarmStartCounts {
  const searchTasks = readCount(flags.searchTasks, 'search-tasks') ?? 0;
  const asked = readCount(flags.vocabSearchTasks, 'vocab-search-tasks');
  let vocabSearchTasks: number;
  let isVocabExtended = false;
  if (init) {
    const own = init.info?.vocabSearchTasks ?? 0;
    vocabSearchTasks = asked ?? own;
    if (vocabSearchTasks < own) {
      throw new Error(
        `--vocab-search-tasks ${asked}: --init ${init.dir}'s vocabulary was built with ${own} search episodes ` +
          `and cannot shrink; drop the flag or pass ≥ ${own}`,
      );
    }
    isVocabExtended = vocabSearchTasks > own;
  } else {
    vocabSearchTasks = asked ?? searchTasks;
  }
  const hasTrainedSearch = searchTasks > 0 || hasSearchStage(init?.info);
  const searchEvalTasks = readCount(flags.searchEvalTasks, 'search-eval-tasks') ?? (hasTrainedSearch ? 8 : 0);
  return { searchTasks, vocabSearchTasks, searchEvalTasks, isVocabExtended };
}

function hasSearchStage(info: SearchStageRecord | undefined): boolean {
  for (let i = info; i; i = i.previousStage) if ((i.searchTasks ?? 0) > 0) return true;
  return false;
}
