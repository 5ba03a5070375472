/**
 * Evaluation of a warm-start policy: greedy prompt-only rollouts on held-out (test-split)
 * tasks through the trainer's batched rollout collector (rollouts.ts), scored by FTRL's
 * Solve-R/P/F1 and answer correctness (answerVerify), overall and per category.
 */
import { answerVerify, ftrlSolveMetrics, meanSolveMetrics, type SolveMetrics } from '../../core/metrics';
import { createRng } from '../../core/rng';
import { listCallOutputs, type RenderChat, type Transcript } from '../../envs/rollout';
import type { ToolExecutor } from '../../envs/sandbox/types';
import type { Task } from '../../envs/types';
import type { Qwen3Model } from '../../model/qwen3/index';
import type { TextTokenizer } from '../../model/tokenizer/types';
import { collectToolUseRollouts } from '../rollouts/rollouts';

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
 * Greedy prompt-only rollouts on `tasks` (the trainer's batched collector, rollouts.ts: all episodes
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
    if (!tr) {
      const id = g.prompt.kind === 'tool-use' ? g.prompt.task.id : '?';
      throw new Error(`evaluateGreedy: the rollout of ${id} has no transcript`);
    }
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
