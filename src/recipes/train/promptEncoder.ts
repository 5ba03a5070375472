/**
 * Token ids the trainer needs beside the rollouts: the prompt x (for the privileged
 * context c^h = [x; h*] of PACT's L^h and for component SFT rows) and, for full-SFT
 * recipes, the whole expert episode replayed through the environment (cached per prompt:
 * a replay runs the tool stubs).
 */
import type { TokenTag } from '../../core/types';
import { RolloutEnv, type RenderChat } from '../../envs/rollout';
import type { ToolExecutor } from '../../envs/sandbox/types';
import type { TextTokenizer } from '../../model/tokenizer/types';
import { encodeEpisode, replayExpertEpisode } from '../policyVocab';
import type { TaggedIds } from './privilegedContext';
import type { PromptItem, RolloutGroup } from '../types';

export interface PromptEncoderInit {
  tokenizer: TextTokenizer;
  executor: ToolExecutor;
  renderChat: RenderChat;
  maxTurns: number;
}

export class PromptEncoder {
  private readonly episodeCache = new Map<number, TaggedIds>();

  constructor(private readonly init: PromptEncoderInit) {}

  /** The prompt x as tagged ids: the rollouts' common prefix, or encoded afresh for SFT-only steps. */
  encodePrompt(group: RolloutGroup): TaggedIds {
    const r = group.rollouts[0];
    if (r) return { ids: r.ids.slice(0, r.promptLength), tags: r.tags.slice(0, r.promptLength) };
    if (group.prompt.kind !== 'tool-use') throw new Error('Trainer: SFT steps need tool-use prompts');
    const { executor, renderChat, maxTurns } = this.init;
    const env = new RolloutEnv({ executor, renderChat, maxTurns });
    const ids = this.init.tokenizer.encode(env.reset(group.prompt.task).promptText);
    return { ids, tags: ids.map((): TokenTag => ({ kind: 'prompt', turn: -1 })) };
  }

  /** A whole expert episode (prompt + trace turns + tool responses + final answer), cached per prompt. */
  async encodeExpertEpisode(prompt: PromptItem): Promise<TaggedIds | null> {
    if (prompt.kind !== 'tool-use' || !prompt.trace) return null;
    const cached = this.episodeCache.get(prompt.index);
    if (cached) return cached;
    const { executor, renderChat } = this.init;
    const env = new RolloutEnv({ executor, renderChat, maxTurns: this.init.maxTurns + prompt.trace.turns.length });
    const transcript = await replayExpertEpisode({ ...prompt.task, expertTrace: prompt.trace }, env);
    const { ids, tags } = encodeEpisode(transcript, this.init.tokenizer);
    this.episodeCache.set(prompt.index, { ids, tags });
    return { ids, tags };
  }
}
