/**
 * Test helper (tests only): a tiny tool-use training setup — two generated train tasks
 * and one test task with teacher traces, Qwen3's tokenizer pruned to the vocabulary of
 * their rendered expert episodes (a few hundred tokens), a 2-layer hidden-32 Qwen3 and
 * the in-process tool executor — so trainer tests run in seconds on the cpu backend.
 */
import { generateTasks } from '../envs/generator';
import { RolloutEnv, type RenderChat } from '../envs/rollout';
import { InProcessExecutor } from '../envs/sandbox';
import type { Task } from '../envs/types';
import { Qwen3Model, type Qwen3Config } from '../model/qwen3';
import { loadQwen3TokenizerFromPackage } from '../model/tokenizer/nodeLoader';
import { PrunedTokenizer, selectKeptIds } from '../model/tokenizer/prunedVocab';
import { attachTeacherTraces, bindRenderChat, buildPolicyCorpus } from './policyVocab';

export interface TinySetup {
  tokenizer: PrunedTokenizer;
  renderChat: RenderChat;
  executor: InProcessExecutor;
  trainTasks: Task[];
  testTasks: Task[];
  modelConfig: Qwen3Config;
  createModel(seed?: number): Qwen3Model;
}

let cached: Promise<TinySetup> | undefined;

/** The shared tiny setup (built once per test file). */
export function createTinySetup(): Promise<TinySetup> {
  cached ??= (async () => {
    const source = await loadQwen3TokenizerFromPackage();
    const executor = new InProcessExecutor();
    const renderChat = bindRenderChat(source);
    const options = { hops: 2, distractors: 0, categories: ['single_hop', 'multi_hop'] as const };
    const trainTasks = await attachTeacherTraces(generateTasks({ ...options, seed: 1, split: 'train', n: 2 }), executor, 1);
    const testTasks = await attachTeacherTraces(generateTasks({ ...options, seed: 2, split: 'test', n: 1 }), executor, 2);
    const env = new RolloutEnv({ executor, renderChat });
    const corpus = await buildPolicyCorpus([...trainTasks, ...testTasks], env);
    const tokenizer = new PrunedTokenizer(source, selectKeptIds(source, corpus));
    const modelConfig: Qwen3Config = {
      vocab_size: tokenizer.vocabSize,
      hidden_size: 32,
      intermediate_size: 64,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      head_dim: 16,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
      tie_word_embeddings: true,
      max_position_embeddings: 2048,
      initializer_range: 0.02,
    };
    return {
      tokenizer,
      renderChat,
      executor,
      trainTasks,
      testTasks,
      modelConfig,
      createModel: (seed = 7) => Qwen3Model.fromConfig(modelConfig, seed),
    };
  })();
  return cached;
}
