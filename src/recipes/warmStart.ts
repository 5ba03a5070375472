/**
 * The warm-start policy (issue 5 "The embedded default"): a qwen3-nano trained by the
 * project's own pipeline with a short supervised fine-tuning on generated expert traces,
 * so the first RL run starts from a policy that solves some tasks but not most (as the
 * papers start RL from an instruction model, PACT §4 / App. B).
 *
 * SFT objective = full-trace imitation of the assistant turns (the `sft` recipe's L_SFT
 * with every policy-written token kept, PACT Eq. sft-mask with m(s) = 1 on reasoning,
 * tool calls, answers and control tokens, 0 on prompt and observations):
 *
 *   L = − Σ_{b,t} m[b,t] · log π_θ(x[b,t+1] | x[b,≤t]) / Σ_{b,t} m[b,t]
 *
 * (token-mean aggregation over the batch). Episodes are expert traces replayed through
 * RolloutEnv (policyVocab.ts), so the text is exactly rollout-shaped. One AdamW step per
 * batch (src/model/qwen3/train trainStep), warm-up + cosine learning rate.
 *
 * Optional search rows (`npm run pretrain -- --search-tasks N`): expert episodes of
 * ToolSearcher's search environment (envs/toolRepo/searchTeacher.ts) replayed through the
 * search-rollout collector (searchRollouts.ts), mixed into the same rows and the same
 * objective; `evaluateSearchGreedy` scores held-out search queries (F1, match, SRecall).
 * Their text belongs in the pruned vocabulary (`vocabSearchTasks`): the shipped one was
 * built from tool-use text only, where search text still encodes exactly but through the
 * byte-level fallback, ~2.3× as many tokens, so a row cut at maxSeqLen loses its later turns.
 *
 * Evaluation (`evaluateGreedy`): greedy prompt-only rollouts on held-out (test-split)
 * tasks through the trainer's batched rollout collector (rollouts.ts), scored by FTRL's
 * Solve-R/P/F1 and answer correctness.
 *
 * Model shape: the qwen3-nano preset with vocab_size = the pruned vocabulary's size
 * (`createWarmStartConfig`), so every id the policy can emit decodes (with the preset's
 * 4096 rows, ids past the kept count would be undecodable samples).
 *
 * The shipped files, under public/warm-start/: config.json + model.safetensors (F32) +
 * pruned_vocab.json (saveQwen3Folder) + warm_start.json (seed, steps, final loss,
 * evaluation, date, git commit). `loadWarmStart(readFile)` reads them in Node (fs) and in
 * the browser (`createFetchReader('/warm-start/')`).
 *
 * Simplifications: episodes longer than maxSeqLen are cut (the tail turns are not
 * trained); no packing of several episodes into one row; no validation-loss early stop.
 */
import * as tf from '../model/qwen3/tf';
import { answerVerify, ftrlSolveMetrics, meanSolveMetrics, type SolveMetrics } from '../core/metrics';
import { createRng } from '../core/rng';
import { POLICY_KINDS, type TokenTag } from '../core/types';
import { listCallOutputs, type RenderChat, type Transcript } from '../envs/rollout';
import type { ToolExecutor } from '../envs/sandbox/types';
import type { Task } from '../envs/types';
import type { Qwen3Model } from '../model/qwen3/index';
import type { Qwen3Config } from '../model/qwen3/config';
import type { HostTensor } from '../model/qwen3/model';
import { AdamW, computeLearningRate, isNormOrBias, trainStep, type LrSchedule } from '../model/qwen3/train/index';
import { PrunedTokenizer, parsePrunedVocabMapping, type ByteLevelBpeSource, type PrunedVocabMapping } from '../model/tokenizer/prunedVocab';
import type { TextTokenizer } from '../model/tokenizer/types';
import { loadQwen3Folder, saveQwen3Folder, type FolderReader } from '../model/weights/qwen3Folder';
import type { ExpertEpisode } from './policyVocab';
import { collectToolUseRollouts } from './rollouts';
import { generateToolRepo } from '../envs/toolRepo/generatedRepo';
import { createToolSearch } from '../envs/toolRepo/search';
import { buildSearchTeacherEpisode, type SearchTeacherEpisode } from '../envs/toolRepo/searchTeacher';
import type { RepoQuery } from '../envs/toolRepo/types';
import { SEARCH_PRESENTATION, type SearchPresentation } from './config';
import {
  collectToolSearchRollouts,
  createToolSearchPrompts,
  evaluateSearchRollout,
  replaySearchTeacherEpisode,
  type ToolSearchHandle,
} from './searchRollouts';

/** Folder of the shipped checkpoint under public/ (served at `/warm-start/`). */
export const WARM_START_DIR = 'warm-start';
export const WARM_START_INFO_FILE = 'warm_start.json';
export const WARM_START_FILES = ['config.json', 'model.safetensors', 'pruned_vocab.json', WARM_START_INFO_FILE] as const;

export interface WarmStartOptions {
  seed: number;
  /** Training stage (1 = from random init; k > 1 continues stage k−1's weights with its own batch stream). */
  stage: number;
  /** Optimiser steps (one batch each). */
  steps: number;
  batchSize: number;
  /** Episodes are cut to this many tokens. */
  maxSeqLen: number;
  lrPeak: number;
  warmupSteps: number;
  /** Cosine floor as a fraction of lrPeak. */
  minLrRatio: number;
  maxGradNorm: number;
  weightDecay: number;
}

export const DEFAULT_WARM_START_OPTIONS: Readonly<WarmStartOptions> = {
  seed: 1,
  stage: 1,
  steps: 300,
  batchSize: 1,
  maxSeqLen: 640,
  lrPeak: 4e-3,
  warmupSteps: 10,
  minLrRatio: 0.2,
  maxGradNorm: 1,
  weightDecay: 0.01,
};

/** The qwen3-nano shape with vocab_size = keptCount (one embedding row per kept token). */
export function createWarmStartConfig(keptCount: number, preset: Qwen3Config): Qwen3Config {
  if (!Number.isInteger(keptCount) || keptCount < 1) throw new Error(`createWarmStartConfig: keptCount must be a positive integer, got ${keptCount}`);
  if (keptCount > preset.vocab_size) {
    throw new Error(`createWarmStartConfig: the pruned vocabulary keeps ${keptCount} tokens, over the preset's vocab_size ${preset.vocab_size}`);
  }
  return { ...preset, vocab_size: keptCount };
}

/** Evaluation of a policy on held-out tasks (means over tasks). */
export interface WarmStartEval {
  nTasks: number;
  solveR: number;
  solveP: number;
  solveF1: number;
  /** Fraction of tasks whose final answer contains the reference answer (answerVerify). */
  answerAccuracy: number;
  /** Fraction of tasks with Solve-R = 1 (every expected sub-answer obtained). */
  fullySolved: number;
  /** Per category: [tasks, answers correct]. */
  byCategory: Record<string, [number, number]>;
}

/** warm_start.json. */
export interface WarmStartInfo {
  preset: string;
  options: WarmStartOptions;
  trainTasks: number;
  /** Generated worlds the train tasks came from (seeds seed·1000 + w; absent = one world, the seed's). */
  trainWorlds?: number;
  vocabTasks: number;
  keptTokens: number;
  finalLoss: number;
  /** Mean loss of the first and last 10 steps. */
  lossStart: number;
  lossEnd: number;
  eval: WarmStartEval;
  /** The warm_start.json of the stage these weights continued (stage > 1). */
  previousStage?: WarmStartInfo;
  /** Search-teacher rows trained (absent: none). */
  searchTasks?: number;
  /** Search-teacher episodes in the vocabulary corpus (absent: 0; the vocabulary depends on it). */
  vocabSearchTasks?: number;
  /** Held-out search evaluation (when search episodes were trained, here or in a previous stage). */
  searchEval?: SearchWarmStartEval;
  evalSettings: { split: 'test'; seed: number } & EvaluateOptions;
  trainSeconds: number;
  backend: string;
  date: string;
  gitCommit: string;
}

export interface WarmStart {
  config: Qwen3Config;
  /** Tensors by Hugging Face name, for Qwen3Model.fromTensors. */
  tensors: Map<string, HostTensor>;
  mapping: PrunedVocabMapping;
  info?: WarmStartInfo;
}

/** Reads one file of the warm-start folder by name. */
export type ReadWarmStartFile = (name: string) => Promise<Uint8Array>;

/**
 * Loads the warm start (config, tensors, tokenizer mapping, info). In Node:
 * `loadWarmStart((n) => fs.readFile(path.join('public/warm-start', n)))`; in the browser:
 * `loadWarmStart(createFetchReader('/warm-start/'))`.
 */
export async function loadWarmStart(readFile: ReadWarmStartFile): Promise<WarmStart> {
  const files = new Map<string, Uint8Array>();
  for (const name of WARM_START_FILES) {
    try {
      files.set(name, await readFile(name));
    } catch (e) {
      if (name === WARM_START_INFO_FILE) continue; // optional
      throw new Error(`warm start: cannot read ${name} (${(e as Error).message})`);
    }
  }
  const reader: FolderReader = {
    listFiles: async () => [...files.keys()],
    readFile: async (name) => {
      const bytes = files.get(name);
      if (!bytes) throw new Error(`warm start: no file ${name}`);
      return bytes;
    },
  };
  const folder = await loadQwen3Folder(reader);
  if (!folder.prunedVocab) throw new Error('warm start: pruned_vocab.json is missing');
  const tensors = new Map<string, HostTensor>();
  for (const [name, t] of folder.tensors) tensors.set(name, { shape: t.shape, data: t.data });
  let info: WarmStartInfo | undefined;
  const infoBytes = files.get(WARM_START_INFO_FILE);
  if (infoBytes) {
    try {
      info = JSON.parse(new TextDecoder().decode(infoBytes)) as WarmStartInfo;
    } catch (e) {
      throw new Error(`warm start: ${WARM_START_INFO_FILE} is not valid JSON (${(e as Error).message})`);
    }
  }
  return { config: folder.config, tensors, mapping: parsePrunedVocabMapping(folder.prunedVocab), info };
}

/** A ReadWarmStartFile over HTTP (the app serves public/warm-start/ at `/warm-start/`). */
export function createFetchReader(
  baseUrl = `/${WARM_START_DIR}/`,
  fetchFn: (url: string) => Promise<{ ok: boolean; status: number; arrayBuffer(): Promise<ArrayBuffer> }> = fetch,
): ReadWarmStartFile {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  return async (name) => {
    const response = await fetchFn(base + name);
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${base + name}`);
    return new Uint8Array(await response.arrayBuffer());
  };
}

/** The files of the checkpoint folder (saveQwen3Folder + warm_start.json). */
export async function exportWarmStartFiles(
  model: Qwen3Model,
  mapping: PrunedVocabMapping,
  info: WarmStartInfo,
): Promise<Record<string, string | Uint8Array>> {
  const names = [...model.params.keys()];
  const datas = await Promise.all(names.map((n) => model.params.get(n)!.data()));
  const tensors = names.map((name, i) => ({
    name,
    shape: [...model.params.get(name)!.shape],
    data: Float32Array.from(datas[i] as Float32Array),
  }));
  const files = saveQwen3Folder({ config: model.config, tensors, prunedVocab: mapping });
  return { ...files, [WARM_START_INFO_FILE]: JSON.stringify(info, null, 2) + '\n' };
}

/** An SFT row: ids and, per target position t (predicting ids[t+1]), whether it is trained. */
export interface SftRow {
  ids: number[];
  /** length ids.length − 1: 1 when ids[t+1] is policy-written (POLICY_KINDS), else 0. */
  targetMask: number[];
}

/** Cuts an episode to maxSeqLen and derives the target mask from its tags (STYLE habit 6). */
export function buildSftRow(episode: Pick<ExpertEpisode, 'ids' | 'tags'>, maxSeqLen: number): SftRow {
  if (episode.ids.length !== episode.tags.length) {
    throw new Error(`buildSftRow: ${episode.ids.length} ids but ${episode.tags.length} tags`);
  }
  const n = Math.min(episode.ids.length, maxSeqLen);
  const ids = episode.ids.slice(0, n);
  const targetMask: number[] = [];
  for (let t = 1; t < n; t++) targetMask.push(isPolicyTag(episode.tags[t]) ? 1 : 0);
  return { ids, targetMask };
}

/**
 * SFT rows as bytes, for trainers outside tfjs (scripts/reference/pretrain_torch.py), all
 * little-endian: u32 row count n, then n × u32 row lengths, then every row's tokens as u16,
 * each `id | trained << 15`, where `trained` = targetMask[t − 1] (is token t a trained
 * target; 0 for a row's first token). Ids must be below 2^15.
 */
export function packSftRows(rows: readonly SftRow[]): Uint8Array {
  const total = rows.reduce((s, r) => s + r.ids.length, 0);
  const bytes = new Uint8Array(4 + 4 * rows.length + 2 * total);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, rows.length, true);
  let at = 4 + 4 * rows.length;
  rows.forEach((row, r) => {
    if (row.targetMask.length !== row.ids.length - 1) {
      throw new Error(`packSftRows: row ${r} has ${row.ids.length} ids but ${row.targetMask.length} target-mask entries (want ids − 1)`);
    }
    view.setUint32(4 + 4 * r, row.ids.length, true);
    row.ids.forEach((id, t) => {
      if (!Number.isInteger(id) || id < 0 || id >= 1 << 15) throw new Error(`packSftRows: row ${r} token ${t} id ${id} is not in [0, 32768)`);
      view.setUint16(at, id | ((t > 0 && row.targetMask[t - 1] ? 1 : 0) << 15), true);
      at += 2;
    });
  });
  return bytes;
}

/** Inverse of packSftRows. */
export function unpackSftRows(bytes: Uint8Array): SftRow[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true);
  const rows: SftRow[] = [];
  let at = 4 + 4 * n;
  for (let r = 0; r < n; r++) {
    const len = view.getUint32(4 + 4 * r, true);
    const ids: number[] = [];
    const targetMask: number[] = [];
    for (let t = 0; t < len; t++) {
      const v = view.getUint16(at, true);
      at += 2;
      ids.push(v & 0x7fff);
      if (t > 0) targetMask.push(v >> 15);
    }
    rows.push({ ids, targetMask });
  }
  if (at !== bytes.length) throw new Error(`unpackSftRows: ${bytes.length} bytes but the rows end at ${at}`);
  return rows;
}

function isPolicyTag(tag: TokenTag): boolean {
  return POLICY_KINDS.has(tag.kind);
}

/**
 * The SFT loss of a batch of rows (right-padded): −Σ m·logp / Σ m over the policy-written
 * targets. Returns a scalar built from the model's variables (differentiable).
 */
export function computeSftLoss(model: Qwen3Model, rows: readonly SftRow[]): tf.Scalar {
  const B = rows.length;
  const T = Math.max(...rows.map((r) => r.ids.length));
  const ids = new Int32Array(B * T);
  const attn = new Float32Array(B * T);
  const m = new Float32Array(B * (T - 1));
  rows.forEach((row, b) => {
    row.ids.forEach((id, t) => {
      ids[b * T + t] = id;
      attn[b * T + t] = 1;
    });
    row.targetMask.forEach((v, t) => (m[b * (T - 1) + t] = v));
  });
  return tf.tidy(() => {
    const inputIds = tf.tensor2d(ids, [B, T], 'int32');
    const attentionMask = tf.tensor2d(attn, [B, T]);
    const lossMask = tf.tensor2d(m, [B, T - 1]); // [B, T−1], aligned with the targets ids[:, 1:]
    const { logprobs } = model.computeTokenLogprobs(inputIds, attentionMask); // [B, T−1]
    return logprobs.mul(lossMask).sum().neg().div(lossMask.sum().maximum(1)) as tf.Scalar;
  });
}

export interface SftProgress {
  step: number;
  loss: number;
  gradNorm: number;
  lr: number;
  seconds: number;
}

/**
 * Runs `options.steps` AdamW steps of SFT on `rows`, drawing batchSize rows per step
 * with a seeded RNG (`${seed}/warm-start-batches`). Returns the per-step losses.
 */
export async function runWarmStartSft(
  model: Qwen3Model,
  rows: readonly SftRow[],
  options: WarmStartOptions,
  onStep?: (p: SftProgress) => void,
): Promise<number[]> {
  if (rows.length === 0) throw new Error('runWarmStartSft: no training rows');
  if (!Number.isInteger(options.steps) || options.steps < 1) throw new Error(`runWarmStartSft: steps must be a positive integer, got ${options.steps}`);
  if (!Number.isInteger(options.batchSize) || options.batchSize < 1) {
    throw new Error(`runWarmStartSft: batchSize must be a positive integer, got ${options.batchSize}`);
  }
  const stream = createRng(options.seed).split('warm-start-batches');
  const rng = options.stage > 1 ? stream.split(`stage${options.stage}`) : stream;
  const optimizer = new AdamW(model.params, { beta1: 0.9, beta2: 0.95, weightDecay: options.weightDecay, isNoDecay: isNormOrBias });
  const schedule: LrSchedule = {
    kind: 'cosine',
    lrPeak: options.lrPeak,
    warmupSteps: Math.min(options.warmupSteps, options.steps),
    totalSteps: options.steps,
    minLrRatio: options.minLrRatio,
  };
  const losses: number[] = [];
  const t0 = Date.now();
  try {
    for (let step = 0; step < options.steps; step++) {
      const batch = Array.from({ length: options.batchSize }, () => rows[rng.int(rows.length)]);
      const lr = computeLearningRate(step, schedule);
      const { loss, gradNorm } = await trainStep({
        params: model.params,
        lossFn: () => computeSftLoss(model, batch),
        nMicro: 1,
        optimizer,
        maxGradNorm: options.maxGradNorm,
        lr,
      });
      if (!Number.isFinite(loss)) throw new Error(`runWarmStartSft: loss is ${loss} at step ${step}`);
      losses.push(loss);
      onStep?.({ step, loss, gradNorm, lr, seconds: (Date.now() - t0) / 1000 });
    }
  } finally {
    optimizer.dispose();
  }
  return losses;
}

export interface EvaluateOptions {
  maxTurns: number;
  /** Prompts longer than this are an error (generated tasks are shorter). */
  maxPromptTokens: number;
  /** Tokens after the prompt, all turns together (generated + observations). */
  maxResponseTokens: number;
}

export const DEFAULT_EVALUATE_OPTIONS: Readonly<EvaluateOptions> = {
  maxTurns: 6,
  maxPromptTokens: 1024,
  maxResponseTokens: 768,
};

/**
 * Greedy prompt-only rollouts on `tasks` (T1's batched collector, rollouts.ts: all episodes
 * advance turn by turn, one model.generate call per turn with the KV cache, stop at
 * `<|im_end|>`), scored by scoreTranscripts.
 */
export async function evaluateGreedy(
  model: Qwen3Model,
  tokenizer: TextTokenizer,
  tasks: readonly Task[],
  env: { executor: ToolExecutor; renderChat: RenderChat },
  options: EvaluateOptions = DEFAULT_EVALUATE_OPTIONS,
): Promise<{ metrics: WarmStartEval; transcripts: Transcript[] }> {
  const groups = await collectToolUseRollouts({
    prompts: tasks.map((task, index) => ({ kind: 'tool-use' as const, index, task })),
    rolloutsPerPrompt: 1,
    policy: model,
    tokenizer,
    executor: env.executor,
    renderChat: env.renderChat,
    maxTurns: options.maxTurns,
    maxPromptTokens: options.maxPromptTokens,
    maxResponseTokens: options.maxResponseTokens,
    temperature: 0,
    topP: 1,
    rng: createRng('warm-start-eval'),
    isGreedy: true,
  });
  const transcripts = groups.map((g) => {
    const tr = g.rollouts[0].transcript;
    if (!tr) throw new Error(`evaluateGreedy: the rollout of ${g.prompt.kind === 'tool-use' ? g.prompt.task.id : '?'} has no transcript`);
    return tr;
  });
  return { metrics: scoreTranscripts(transcripts), transcripts };
}

/** Solve-R/P/F1 (FTRL), answer accuracy and per-category counts over finished or cut episodes. */
export function scoreTranscripts(transcripts: readonly Transcript[]): WarmStartEval {
  const perTask: SolveMetrics[] = [];
  const byCategory: Record<string, [number, number]> = {};
  let correct = 0;
  let fullySolved = 0;
  for (const tr of transcripts) {
    const m = ftrlSolveMetrics(listCallOutputs(tr), tr.task.unsolvedSet);
    perTask.push(m);
    const isCorrect = tr.answer !== undefined && answerVerify(tr.answer, tr.task.answer);
    if (isCorrect) correct++;
    if (m.solveR === 1) fullySolved++;
    const c = (byCategory[tr.task.category] ??= [0, 0]);
    c[0]++;
    if (isCorrect) c[1]++;
  }
  const mean = meanSolveMetrics(perTask);
  const n = transcripts.length;
  return {
    nTasks: n,
    solveR: mean?.solveR ?? 0,
    solveP: mean?.solveP ?? 0,
    solveF1: mean?.solveF1 ?? 0,
    answerAccuracy: n > 0 ? correct / n : 0,
    fullySolved: n > 0 ? fullySolved / n : 0,
    byCategory,
  };
}

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
  if (!Number.isInteger(options.n) || options.n < 0) throw new Error(`generateSearchSftTasks: n must be a non-negative integer, got ${options.n}`);
  const tasks: SearchSftTask[] = [];
  let skipped = 0;
  for (let r = 0; tasks.length < options.n; r++) {
    const repoIndex = options.split === 'test' ? SEARCH_WARM_START.heldOutRepoIndex + r * 1000 : r;
    if (options.split === 'train' && r >= SEARCH_WARM_START.heldOutRepoIndex) throw new Error(`generateSearchSftTasks: ${options.n} search tasks need more than ${r} repositories`);
    const repo = generateToolRepo({ seed: options.seed * 1000 + repoIndex, minTools: SEARCH_WARM_START.minTools, queriesPerLevel: SEARCH_WARM_START.queriesPerLevel });
    const handle: ToolSearchHandle = { engine: createToolSearch(repo, { topK, formatLimits: { ...resultLimits } }), renderChat };
    for (const query of interleaveLevels(repo.queries)) {
      if (tasks.length >= options.n) break;
      const isCategoryConstrained = options.split === 'train' && tasks.length % 2 === 0;
      const result = buildSearchTeacherEpisode(handle.engine, query, { maxTurns: SEARCH_WARM_START.maxTurns, isCategoryConstrained });
      if (result.isOk) tasks.push({ query, handle, episode: result.episode });
      else skipped++;
    }
  }
  return { tasks, skipped };
}

/** Queries round-robin over their levels (single_tool, intra_category, intra_collection, …), so any prefix mixes them. */
function interleaveLevels(queries: readonly RepoQuery[]): RepoQuery[] {
  const byLevel = new Map<string, RepoQuery[]>();
  for (const q of queries) byLevel.set(q.level, [...(byLevel.get(q.level) ?? []), q]);
  const out: RepoQuery[] = [];
  for (let j = 0; out.length < queries.length; j++) for (const group of byLevel.values()) if (j < group.length) out.push(group[j]);
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
  return { nTasks: n, f1: mean('f1'), recall: mean('recall'), precision: mean('precision'), match: mean('match'), search_recall: mean('search_recall'), format: mean('format'), turns: mean('turns') };
}

/** Search budgets of the held-out evaluation: one search observation (5 documents) is ~650 tokens with a vocabulary that holds search text. */
export const DEFAULT_SEARCH_EVALUATE_OPTIONS: Readonly<EvaluateOptions> = {
  maxTurns: SEARCH_WARM_START.maxTurns,
  maxPromptTokens: 1024,
  maxResponseTokens: 1536,
};

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

/** A `--flag N` count of `npm run pretrain` (scripts/pretrain.ts too): undefined when absent, an error naming the flag when not a non-negative integer. */
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
  init?: { dir: string; info?: WarmStartInfo },
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
        `--vocab-search-tasks ${asked}: --init ${init.dir}'s vocabulary was built with ${own} search episodes and cannot shrink; drop the flag or pass ≥ ${own}`,
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

function hasSearchStage(info: WarmStartInfo | undefined): boolean {
  for (let i = info; i; i = i.previousStage) if ((i.searchTasks ?? 0) > 0) return true;
  return false;
}

/**
 * Grows a warm start's pruned vocabulary to `mapping`, a superset of its own (continued
 * training on text its corpus lacked, e.g. search episodes over the shipped tool-use
 * vocabulary): the row of a token the old vocabulary kept is copied (matched by full id);
 * a new token's row is the mean of the old rows that spelled it (its byte-level fallback
 * split under the old vocabulary), so the input side starts where the old encoding pointed.
 * Tied embeddings only (lm_head = embed_tokens, as qwen3-nano/micro). The optimiser state
 * is not carried (runWarmStartSft starts a fresh AdamW per stage anyway).
 */
export function extendWarmStartVocab(warm: WarmStart, mapping: PrunedVocabMapping, source: ByteLevelBpeSource): WarmStart {
  if (!warm.config.tie_word_embeddings) throw new Error('extendWarmStartVocab: only tied embeddings (lm_head = embed_tokens) are supported');
  const newIds = parsePrunedVocabMapping(mapping).keptIds;
  const kept = new Set(newIds);
  const lost = warm.mapping.keptIds.filter((id) => !kept.has(id));
  if (lost.length > 0) {
    throw new Error(`extendWarmStartVocab: the new vocabulary lacks ${lost.length} of the warm start's ${warm.mapping.keptIds.length} tokens (e.g. full id ${lost[0]}); it must be a superset (is it capped?)`);
  }
  const name = 'model.embed_tokens.weight';
  const embed = warm.tensors.get(name);
  if (!embed) throw new Error(`extendWarmStartVocab: the warm start has no ${name}`);
  const [oldV, H] = embed.shape; // [V_old, H]
  if (oldV !== warm.mapping.keptIds.length) throw new Error(`extendWarmStartVocab: ${name} has ${oldV} rows but pruned_vocab.json keeps ${warm.mapping.keptIds.length} tokens`);
  const oldTokenizer = new PrunedTokenizer(source, warm.mapping);
  const data = new Float32Array(newIds.length * H); // [V_new, H]
  newIds.forEach((fullId, row) => {
    const pieces = oldTokenizer.expressFullId(fullId); // compact ids of the old vocabulary
    for (const piece of pieces) {
      for (let h = 0; h < H; h++) data[row * H + h] += embed.data[piece * H + h] / pieces.length;
    }
  });
  const tensors = new Map(warm.tensors);
  tensors.set(name, { shape: [newIds.length, H], data });
  tensors.delete('lm_head.weight'); // tied: a stale copy would have the old row count
  return { ...warm, config: { ...warm.config, vocab_size: newIds.length }, tensors, mapping: { keptIds: [...newIds] } };
}
