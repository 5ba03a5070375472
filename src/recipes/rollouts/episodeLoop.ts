/**
 * The batched turn loop shared by every rollout collector (tool use: rollouts.ts; tool
 * search: searchRollouts.ts). Each turn, the still-running episodes go to ONE
 * `policy.generate` call that stops at `<|im_end|>`; each episode's environment then
 * takes the turn's text, and its observation tokens are appended, all within the
 * episode's response budget (`maxResponseTokens` counts generated AND observation tokens).
 * Environments differ only in `stepTurn`: what they do with a turn's text.
 */
import type { Rng } from '../../core/rng';
import type { TokenTag } from '../../core/types';
import { IM_END } from '../../envs/rollout';
import type { TextTokenizer } from '../../model/tokenizer/types';
import type { PolicySampler } from '../types';

/** The tokens of one running episode: prompt, generated turns, observations. */
export interface EpisodeTokens {
  ids: number[];
  tags: TokenTag[];
  /** log π_behaviour of generated tokens at temperature 1; 0 elsewhere. */
  behaviourLogprobs: number[];
  promptLength: number;
  generatedLength: number;
  isDone: boolean;
  /** Ended on its own (environment said done, the turn stopped at <|im_end|>, nothing cut). */
  isFinished: boolean;
}

export function pushTokens(
  ep: EpisodeTokens,
  ids: readonly number[],
  tags: readonly TokenTag[],
  logprobs: readonly number[] | null,
): void {
  ids.forEach((id, n) => {
    ep.ids.push(id);
    ep.tags.push(tags[n]);
    ep.behaviourLogprobs.push(logprobs ? logprobs[n] : 0);
  });
}

/** A fresh episode holding the prompt's tokens (tagged prompt, turn −1). */
export function startEpisodeTokens(promptIds: readonly number[]): EpisodeTokens {
  const ep: EpisodeTokens = {
    ids: [],
    tags: [],
    behaviourLogprobs: [],
    promptLength: promptIds.length,
    generatedLength: 0,
    isDone: false,
    isFinished: false,
  };
  pushTokens(
    ep,
    promptIds,
    promptIds.map(() => ({ kind: 'prompt', turn: -1 })),
    null,
  );
  return ep;
}

/** Tokens left in an episode's response budget. */
export function remainingBudget(ep: EpisodeTokens, maxResponseTokens: number): number {
  return maxResponseTokens - (ep.ids.length - ep.promptLength);
}

/** What an environment made of one assistant turn. */
export interface TurnOutcome {
  /** Kinds of the turn's generated tokens. */
  tags: TokenTag[];
  /** The episode ended (answer, selection, no call, turn limit). */
  isDone: boolean;
  /** The ending counts as finished on its own (e.g. an answer or a tool list). */
  isSuccess: boolean;
  /** Text the policy continues from when not done (end-of-turn marker + observations). */
  envText: string;
}

export interface EpisodeLoopOptions {
  policy: PolicySampler;
  tokenizer: TextTokenizer;
  maxTurns: number;
  maxResponseTokens: number;
  temperature: number;
  topP: number;
  rng: Rng;
  isGreedy?: boolean;
  /** Name for error messages (`rollouts`, `searchRollouts`). */
  where: string;
}

/** Runs the turns of all `episodes` in lock-step batches until each is done. */
export async function runEpisodeTurns<E extends EpisodeTokens>(
  episodes: readonly E[],
  options: EpisodeLoopOptions,
  stepTurn: (ep: E, text: string, tokens: number[], turn: number) => Promise<TurnOutcome> | TurnOutcome,
): Promise<void> {
  const { tokenizer, maxResponseTokens } = options;
  const imEndId = tokenizer.tokenId(IM_END);
  if (imEndId === undefined) throw new Error(`${options.where}: the tokenizer has no ${IM_END} token`);
  const random = () => options.rng.next();
  for (let turn = 0; turn < options.maxTurns; turn++) {
    for (const ep of episodes) if (!ep.isDone && remainingBudget(ep, maxResponseTokens) <= 0) ep.isDone = true;
    const active = episodes.filter((ep) => !ep.isDone);
    if (active.length === 0) break;
    const maxNewTokens = Math.max(...active.map((ep) => remainingBudget(ep, maxResponseTokens)));
    const rows = await options.policy.generate(
      active.map((ep) => ep.ids.slice()),
      {
        maxNewTokens,
        temperature: options.isGreedy ? 0 : options.temperature,
        topP: options.topP,
        random: options.isGreedy ? undefined : random,
        stopTokenIds: [[imEndId]],
      },
    );
    for (const [a, ep] of active.entries()) {
      const budget = remainingBudget(ep, maxResponseTokens);
      const row = rows[a];
      const isCut = row.tokens.length > budget;
      const tokens = row.tokens.slice(0, budget);
      const logprobs = row.logprobs.slice(0, budget);
      const outcome = await stepTurn(ep, tokenizer.decode(tokens), tokens, turn);
      pushTokens(ep, tokens, outcome.tags, logprobs);
      ep.generatedLength += tokens.length;
      const isOutOfBudget = isCut || (row.finishReason === 'length' && !outcome.isDone);
      if (outcome.isDone || isOutOfBudget) {
        ep.isDone = true;
        ep.isFinished = outcome.isSuccess && !isCut && row.finishReason === 'stop';
        continue;
      }
      const envIds = tokenizer.encode(outcome.envText);
      const kept = envIds.slice(0, Math.max(0, remainingBudget(ep, maxResponseTokens)));
      pushTokens(
        ep,
        kept,
        kept.map(() => ({ kind: 'observation', turn })),
        null,
      );
      if (kept.length < envIds.length) ep.isDone = true;
    }
  }
}
