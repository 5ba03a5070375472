/**
 * The pruned vocabulary of the small policy presets (qwen3-nano, qwen3-micro) and the
 * expert-trace episodes it is built from; the shipped warm start
 * is trained on the same episodes.
 *
 * `replayExpertEpisode` is also the SFT data of the warm start (warmStart/): the ids and
 * TokenTags of one expert episode in rollout form, so imitation trains on the exact text a
 * prompt-only rollout would have produced had the policy acted like the teacher.
 *
 * Simplifications: held-out (test-split) entity names are not in the corpus; they encode
 * through the byte-level fallback of PrunedTokenizer (any text still encodes exactly).
 *
 * The corpus and the kept ids: docs/trainer.md.
 */
import type { TokenTag } from '../core/types';
import { generateTasks, type GeneratorOptions } from '../envs/generator';
import {
  DEFAULT_SYSTEM_PROMPT,
  FTRL_INSTRUCTION,
  RolloutEnv,
  tagSegments,
  tagTokens,
  type RenderChat,
  type Transcript,
} from '../envs/rollout';
import type { ToolExecutor } from '../envs/sandbox/types';
import type { Task } from '../envs/types';
import type { Qwen3Tokenizer } from '../model/tokenizer/qwen3Tokenizer';
import { PrunedTokenizer, selectKeptIds, type PrunedVocabMapping } from '../model/tokenizer/prunedVocab';
import type { TextTokenizer } from '../model/tokenizer/types';
import { bindTaskRunner, buildVerifiedTrace } from '../traces/teacher';
import { renderTraceMessages } from '../traces/render';

/** Default corpus size: tasks of the train split rendered with their expert traces. */
export const DEFAULT_VOCAB_TASKS = 400;

export interface PolicyVocabOptions {
  /** Seed of the task generator (train split) and of the teacher. */
  seed: number;
  /** Number of generated tasks in the corpus. Default DEFAULT_VOCAB_TASKS. */
  nTasks?: number;
  /** Cap on the kept count (the preset's vocab_size, e.g. 4096 for qwen3-nano). */
  maxVocabSize: number;
  /** Extra generator options (length, categories, …); seed/split/n are set here. */
  generator?: Omit<GeneratorOptions, 'seed' | 'split'>;
  /**
   * More corpus texts, appended after the tool-use episodes (the warm start's search
   * episodes, warmStart/search.ts): text outside the corpus still encodes, but through the
   * byte-level fallback (often several tokens per word), so text a policy is trained on
   * belongs in the corpus. The vocabulary of the tool-use corpus alone is always kept
   * whole (the cap drops extra-text tokens first), so it is a subset of this one.
   */
  extraTexts?: readonly string[];
}

export interface PolicyVocab {
  mapping: PrunedVocabMapping;
  tokenizer: PrunedTokenizer;
  /** The corpus token types before the cap (added + byte + corpus tokens); > maxVocabSize means the cap cut some. */
  uncappedSize: number;
  /** Corpus texts used (one per task, then the instruction texts, then `extraTexts`). */
  corpusTexts: number;
}

/** Instruction texts every policy sees (system prompt and FTRL's user instruction). */
export const INSTRUCTION_TEXTS: readonly string[] = [DEFAULT_SYSTEM_PROMPT, FTRL_INSTRUCTION];

/** The chat renderer RolloutEnv needs, bound to Qwen3's template. */
export function bindRenderChat(tokenizer: Qwen3Tokenizer): RenderChat {
  return (messages, options) =>
    tokenizer.renderChat(messages, { tools: options.tools, addGenerationPrompt: options.addGenerationPrompt });
}

/**
 * Attaches the scripted teacher's verified expert trace to each task (trace seed
 * `${seed}/${i}`, as `pact tasks` does). Tasks whose trace fails verification keep it
 * (marked `verified: false`); callers filter on `expertTrace.verified`.
 */
export async function attachTeacherTraces(
  tasks: readonly Task[],
  executor: ToolExecutor,
  seed: number,
): Promise<Task[]> {
  const out: Task[] = [];
  for (const [i, task] of tasks.entries()) {
    const { trace } = await buildVerifiedTrace(task, bindTaskRunner(task, executor), { seed: `${seed}/${i}` });
    out.push({ ...task, expertTrace: trace });
  }
  return out;
}

/**
 * Replays a task's expert trace through the rollout environment: each assistant message
 * of the trace (final answer included) + `<|im_end|>` is one `step`, so the transcript is
 * what a prompt-only rollout imitating the teacher would hold (same prompt, same
 * observation wrapping). Throws when the task has no trace.
 */
export async function replayExpertEpisode(task: Task, env: RolloutEnv): Promise<Transcript> {
  const trace = task.expertTrace;
  if (!trace) throw new Error(`replayExpertEpisode: task ${task.id} has no expertTrace`);
  env.reset(task);
  const assistantTexts = renderTraceMessages(trace, { includeFinalAnswer: true })
    .filter((m) => m.role === 'assistant')
    .map((m) => `${m.content}<|im_end|>`);
  for (const [t, text] of assistantTexts.entries()) {
    const { done } = await env.step(text);
    if (done) break;
    if (t === assistantTexts.length - 1)
      throw new Error(`replayExpertEpisode: task ${task.id}: the trace ended without the episode ending`);
  }
  return env.transcript;
}

/** An expert episode as ids + tags (tags from the transcript's segments). */
export interface ExpertEpisode {
  taskId: string;
  ids: number[];
  tags: TokenTag[];
  text: string;
}

/** Tokenizes a replayed transcript segment by segment (tagTokens), keeping every token's kind. */
export function encodeEpisode(transcript: Transcript, tokenizer: TextTokenizer): ExpertEpisode {
  const segments = tagSegments(transcript);
  const { ids, tags } = tagTokens(segments, tokenizer);
  return { taskId: transcript.task.id, ids, tags, text: segments.map((s) => s.text).join('') };
}

/** Generated train-split tasks with verified teacher traces (unverified ones dropped). */
export async function generateExpertTasks(
  options: { seed: number; n: number; split?: 'train' | 'test'; generator?: Omit<GeneratorOptions, 'seed' | 'split'> },
  executor: ToolExecutor,
): Promise<Task[]> {
  const tasks = generateTasks({
    ...options.generator,
    seed: options.seed,
    split: options.split ?? 'train',
    n: options.n,
  });
  const traced = await attachTeacherTraces(tasks, executor, options.seed);
  return traced.filter((t) => t.expertTrace?.verified === true);
}

/** The corpus texts: each task's replayed expert episode (prompt + trace + tool responses), then INSTRUCTION_TEXTS. */
export async function buildPolicyCorpus(tasks: readonly Task[], env: RolloutEnv): Promise<string[]> {
  const texts: string[] = [];
  for (const task of tasks) {
    await replayExpertEpisode(task, env);
    texts.push(env.contextText());
  }
  return [...texts, ...INSTRUCTION_TEXTS];
}

/**
 * Builds the pruned vocabulary of a small preset from `options.nTasks` generated train
 * tasks (seeded). `source` is Qwen3's full tokenizer; `executor` runs the tool stubs
 * (InProcessExecutor is enough for the built-in generator's stubs).
 */
export async function buildPolicyVocab(
  options: PolicyVocabOptions,
  source: Qwen3Tokenizer,
  executor: ToolExecutor,
): Promise<PolicyVocab> {
  const nTasks = options.nTasks ?? DEFAULT_VOCAB_TASKS;
  if (!Number.isInteger(nTasks) || nTasks < 1)
    throw new Error(`buildPolicyVocab: nTasks must be a positive integer, got ${nTasks}`);
  if (!Number.isInteger(options.maxVocabSize) || options.maxVocabSize < 1) {
    throw new Error(`buildPolicyVocab: maxVocabSize must be a positive integer, got ${options.maxVocabSize}`);
  }
  const tasks = await generateExpertTasks({ seed: options.seed, n: nTasks, generator: options.generator }, executor);
  const env = new RolloutEnv({ executor, renderChat: bindRenderChat(source) });
  const toolUseCorpus = await buildPolicyCorpus(tasks, env);
  const selectCapped = (corpus: string[], keepIds?: readonly number[]) => {
    const uncapped = selectKeptIds(source, corpus, { keepIds });
    const mapping =
      uncapped.keptIds.length <= options.maxVocabSize
        ? uncapped
        : selectKeptIds(source, corpus, { maxVocabSize: options.maxVocabSize, keepIds });
    return { uncapped, mapping };
  };
  let { uncapped, mapping } = selectCapped(toolUseCorpus);
  const corpus = [...toolUseCorpus, ...(options.extraTexts ?? [])];
  if (corpus.length > toolUseCorpus.length) {
    // The tool-use vocabulary stays inside: a warm start over it can grow into this one (extendWarmStartVocab).
    ({ uncapped, mapping } = selectCapped(corpus, mapping.keptIds));
  }
  return {
    mapping,
    tokenizer: new PrunedTokenizer(source, mapping),
    uncappedSize: uncapped.keptIds.length,
    corpusTexts: corpus.length,
  };
}
