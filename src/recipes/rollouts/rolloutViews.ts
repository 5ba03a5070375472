/**
 * What the rollout inspector shows of a step: each rollout of a prompt as
 * decoded text segments with their token kind and advantage, the MatchTIR turn rewards
 * and the gold call each executed call matched (core `turnRewards`, the same matching
 * the reward used), the turn advantages, and the gate z of the prompt.
 * Pure data built from the trainer's last step, posted by the worker to the page.
 */
import { turnRewards } from '../../core/rewards';
import type { TokenKind, TokenTag } from '../../core/types';
import type { TextTokenizer } from '../../model/tokenizer/types';
import type { TrainConfig } from '../config';
import { listRolloutTurns } from '../methods/toolUseScoring';
import { broadcastTokenAdvantages } from '../train/trainer';
import type { GroupScore, PromptRoute, Rollout, RolloutGroup } from '../types';

/** One rollout as the inspector shows it: text segments with kinds, rewards, advantages. */
export interface RolloutView {
  /** Consecutive tokens of one kind and turn, decoded; `advantage` = mean A over its tokens. */
  segments: { kind: TokenKind; turn: number; text: string; nTokens: number; advantage: number }[];
  reward: number;
  turnRewards: number[];
  turnAdvantages: number[];
  /** Each executed call, with its MatchTIR reward and the gold call it matched (index or null). */
  calls: {
    turn: number;
    name: string;
    arguments: string;
    output: string;
    isError: boolean;
    matchedGold: number | null;
    reward: number;
  }[];
  answer?: string;
  stopReason: string;
}

/** The K rollouts of one prompt at one step. */
export interface RolloutGroupView {
  step: number;
  promptIndex: number;
  taskId: string;
  question: string;
  goldCalls: { name: string; arguments: string }[];
  /** The gate z of this prompt (1 = prompt-only anchor), when the recipe samples one. */
  gate?: 0 | 1;
  /** The run's recipe (absent in views recorded before it was kept): its advantages fill `advantages`. */
  recipe?: string;
  rollouts: RolloutView[];
}

/** Runs of equal (kind, turn) over `tags`, after the prompt: [start, end) token ranges. */
export function groupTokenRuns(
  tags: readonly TokenTag[],
  from: number,
): { kind: TokenKind; turn: number; start: number; end: number }[] {
  const runs: { kind: TokenKind; turn: number; start: number; end: number }[] = [];
  for (let n = from; n < tags.length; n++) {
    const last = runs[runs.length - 1];
    if (last && last.kind === tags[n].kind && last.turn === tags[n].turn) last.end = n + 1;
    else runs.push({ kind: tags[n].kind, turn: tags[n].turn, start: n, end: n + 1 });
  }
  return runs;
}

function viewRollout(
  rollout: Rollout,
  k: number,
  group: RolloutGroup,
  score: GroupScore | null,
  config: TrainConfig,
  tokenizer: TextTokenizer,
): RolloutView {
  const advantages = score ? broadcastTokenAdvantages(score, k, rollout.tags) : rollout.tags.map(() => 0);
  const segments = groupTokenRuns(rollout.tags, rollout.promptLength).map((r) => {
    let sum = 0;
    for (let n = r.start; n < r.end; n++) sum += advantages[n];
    return {
      kind: r.kind,
      turn: r.turn,
      text: tokenizer.decode(rollout.ids.slice(r.start, r.end)),
      nTokens: r.end - r.start,
      advantage: sum / (r.end - r.start),
    };
  });
  const transcript = rollout.transcript;
  const task = group.prompt.kind === 'tool-use' ? group.prompt.task : undefined;
  const turns = listRolloutTurns(rollout);
  const matched =
    task && turns.length > 0
      ? turnRewards(turns, task.goldCalls ?? [], task.answer, {
          method: config.matching,
          unmatchedPenalty: config.unmatchedPenalty,
        })
      : undefined;
  const calls: RolloutView['calls'] = [];
  for (const [t, turn] of (transcript?.turns ?? []).entries()) {
    turn.calls.forEach((call, c) => {
      const out = turn.outputs[c];
      calls.push({
        turn: t,
        name: call.name,
        arguments: JSON.stringify(call.arguments),
        output: out?.output ?? '',
        isError: out ? !out.ok : true,
        matchedGold: matched?.assignment[t]?.[c] ?? null,
        reward: matched?.callRewards[t]?.[c] ?? 0,
      });
    });
    // Malformed calls never became a ToolCall: show each parse error as a failed call.
    for (const piece of turn.parsed.calls) {
      if (!piece.call)
        calls.push({
          turn: t,
          name: '(malformed)',
          arguments: '',
          output: piece.error ?? 'malformed tool call',
          isError: true,
          matchedGold: null,
          reward: 0,
        });
    }
  }
  return {
    segments,
    reward: score?.rewards[k] ?? 0,
    turnRewards: matched?.turnRewards ?? [],
    turnAdvantages: score?.turnAdvantages[k] ?? [],
    calls,
    answer: transcript?.answer,
    stopReason: transcript?.stopReason ?? (rollout.isFinished ? 'finished' : 'length'),
  };
}

/** Views of the first `maxGroups` groups of the last step (K rollouts each). */
export function buildRolloutViews(
  step: number,
  groups: readonly RolloutGroup[],
  scores: readonly (GroupScore | null)[],
  routes: readonly PromptRoute[],
  config: TrainConfig,
  tokenizer: TextTokenizer,
  maxGroups = 4,
): RolloutGroupView[] {
  return groups.slice(0, maxGroups).map((g, i) => {
    const task = g.prompt.kind === 'tool-use' ? g.prompt.task : undefined;
    return {
      step,
      promptIndex: i,
      taskId: task?.id ?? (g.prompt.kind === 'tool-search' ? g.prompt.query.id : String(i)),
      question: task?.question ?? (g.prompt.kind === 'tool-search' ? g.prompt.query.text : ''),
      goldCalls: (task?.goldCalls ?? []).map((c) => ({ name: c.name, arguments: JSON.stringify(c.arguments) })),
      gate: routes[i]?.gate,
      recipe: config.recipe,
      rollouts: g.rollouts.map((r, k) => viewRollout(r, k, g, scores[i] ?? null, config, tokenizer)),
    };
  });
}
