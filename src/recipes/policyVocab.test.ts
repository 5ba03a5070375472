// The pruned vocabulary of the small presets and the replayed expert episodes it is built
// from. Independent references: Qwen3's own chat template (renderChat over the trace's
// messages) for the episode text, the full tokenizer for which ids the corpus uses.
import { beforeAll, describe, expect, it } from 'vitest';
import { generateTasks } from '../envs/generator';
import { DEFAULT_SYSTEM_PROMPT, FTRL_INSTRUCTION, RolloutEnv } from '../envs/rollout';
import { InProcessExecutor } from '../envs/sandbox';
import type { Task } from '../envs/types';
import { loadQwen3TokenizerFromPackage } from '../model/tokenizer/nodeLoader';
import { listMandatoryIds } from '../model/tokenizer/prunedVocab';
import type { Qwen3Tokenizer } from '../model/tokenizer/qwen3Tokenizer';
import { renderTraceMessages } from '../traces/render';
import {
  attachTeacherTraces,
  bindRenderChat,
  buildPolicyCorpus,
  buildPolicyVocab,
  encodeEpisode,
  generateExpertTasks,
  INSTRUCTION_TEXTS,
  replayExpertEpisode,
} from './policyVocab';

let source: Qwen3Tokenizer;
const executor = new InProcessExecutor();
let tasks: Task[];

beforeAll(async () => {
  source = await loadQwen3TokenizerFromPackage();
  tasks = await attachTeacherTraces(generateTasks({ seed: 3, split: 'train', n: 4 }), executor, 3);
});

describe('replayExpertEpisode', () => {
  it("gives the text Qwen3's chat template renders for the whole expert conversation", async () => {
    const env = new RolloutEnv({ executor, renderChat: bindRenderChat(source) });
    for (const task of tasks) {
      expect(task.expertTrace?.verified).toBe(true);
      const transcript = await replayExpertEpisode(task, env);
      expect(transcript.done).toBe(true);
      expect(transcript.stopReason).toBe('answer');
      expect(transcript.answer).toBe(task.expertTrace!.finalAnswer);
      const messages = [
        { role: 'system' as const, content: DEFAULT_SYSTEM_PROMPT },
        { role: 'user' as const, content: FTRL_INSTRUCTION + task.question },
        ...renderTraceMessages(task.expertTrace!, { includeFinalAnswer: true }),
      ];
      expect(env.contextText()).toBe(source.renderChat(messages, { tools: task.tools }));
    }
  });

  it('encodeEpisode tags exactly the assistant text as policy-written; the ids decode to the episode', async () => {
    const env = new RolloutEnv({ executor, renderChat: bindRenderChat(source) });
    const transcript = await replayExpertEpisode(tasks[1], env);
    const episode = encodeEpisode(transcript, source);
    expect(source.decode(episode.ids)).toBe(env.contextText());
    expect(episode.tags.length).toBe(episode.ids.length);
    const policyIds = episode.ids.filter((_, n) => !['prompt', 'observation'].includes(episode.tags[n].kind));
    // Segments are encoded one by one, so the policy ids decode to the assistant texts joined.
    expect(source.decode(policyIds)).toBe(transcript.turns.map((t) => t.assistantText).join(''));
    expect(episode.tags[0]).toEqual({ kind: 'prompt', turn: -1 });
  });

  it('fails clearly for a task without a trace', async () => {
    const env = new RolloutEnv({ executor, renderChat: bindRenderChat(source) });
    const bare = generateTasks({ seed: 3, n: 1 })[0];
    await expect(replayExpertEpisode(bare, env)).rejects.toThrow(
      `replayExpertEpisode: task ${bare.id} has no expertTrace`,
    );
  });
});

describe('buildPolicyVocab', () => {
  it('keeps the mandatory ids and every id the corpus uses, deterministically by seed', async () => {
    const a = await buildPolicyVocab({ seed: 5, nTasks: 8, maxVocabSize: 4096 }, source, executor);
    const b = await buildPolicyVocab({ seed: 5, nTasks: 8, maxVocabSize: 4096 }, source, executor);
    expect(b.mapping.keptIds).toEqual(a.mapping.keptIds);
    const kept = new Set(a.mapping.keptIds);
    for (const id of listMandatoryIds(source)) expect(kept.has(id)).toBe(true);
    // Independent recount: every full-tokenizer id of the corpus (the 8 replayed episodes
    // + the instruction texts) is kept, and nothing else beyond the mandatory ids.
    const env = new RolloutEnv({ executor, renderChat: bindRenderChat(source) });
    const corpus = await buildPolicyCorpus(await generateExpertTasks({ seed: 5, n: 8 }, executor), env);
    expect(corpus.length).toBe(a.corpusTexts);
    expect(corpus.slice(-INSTRUCTION_TEXTS.length)).toEqual([...INSTRUCTION_TEXTS]);
    const used = new Set(corpus.flatMap((t) => source.encode(t)));
    for (const id of used) expect(kept.has(id)).toBe(true);
    const expected = new Set([...listMandatoryIds(source), ...used]);
    expect(a.mapping.keptIds.length).toBe(expected.size);
    expect(a.uncappedSize).toBe(expected.size);
    // On the corpus the pruned tokenizer is the full one, renumbered.
    expect(a.tokenizer.encode(corpus[0]).map((id) => a.tokenizer.toFullId(id))).toEqual(source.encode(corpus[0]));
  });

  it('caps the kept set at maxVocabSize and still encodes any text exactly', async () => {
    const mandatory = listMandatoryIds(source).length;
    const capped = await buildPolicyVocab({ seed: 5, nTasks: 8, maxVocabSize: mandatory + 10 }, source, executor);
    expect(capped.mapping.keptIds.length).toBe(mandatory + 10);
    expect(capped.uncappedSize).toBeGreaterThan(mandatory + 10);
    const text = 'Question: What is the elevation of Zürich? <tool_call>';
    expect(capped.tokenizer.decode(capped.tokenizer.encode(text))).toBe(text);
  });

  it('names a bad option', async () => {
    await expect(buildPolicyVocab({ seed: 1, nTasks: 0, maxVocabSize: 4096 }, source, executor)).rejects.toThrow(
      'buildPolicyVocab: nTasks must be a positive integer, got 0',
    );
  });
});
