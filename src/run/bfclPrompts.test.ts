// The first-prompt count the app shows before a BFCL evaluation: the same tokens as the first
// prompt runBfclEntry renders (fixture entries, Qwen3's real tokenizer and template), and the
// fit summary on hand-computed numbers.
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { readBfclFile } from '../envs/bfcl/nodeSource';
import type { BfclBackends } from '../envs/bfcl/pythonBackend';
import { loadQwen3TokenizerFromPackage } from '../model/tokenizer/nodeLoader';
import type { Qwen3Tokenizer } from '../model/tokenizer/qwen3Tokenizer';
import { runBfclEntry, type BfclRenderChat } from './bfclEval';
import { countBfclFirstPromptTokens, summariseBfclPromptFit } from './bfclPrompts';

const entries = fileURLToPath(new URL('../envs/bfcl/fixtures/data/handmade_multi_turn_simple.json', import.meta.url));

describe('countBfclFirstPromptTokens', () => {
  let tokenizer: Qwen3Tokenizer;
  let renderChat: BfclRenderChat;
  beforeAll(async () => {
    tokenizer = await loadQwen3TokenizerFromPackage();
    renderChat = (m, o) => tokenizer.renderChat(m, o);
  });

  it('equals the length of the first prompt the loop renders, entry by entry', async () => {
    const data = readBfclFile(entries);
    // No backend is needed: the policy answers in text, so no call is executed.
    const backends = { open: async () => {}, close: async () => {} } as unknown as BfclBackends;
    for (const pair of data.pairs) {
      const lengths: number[] = [];
      const end = tokenizer.encode('Done.<|im_end|>');
      await runBfclEntry(pair, data.docsByClass, {
        policy: {
          generate: async (batch) => {
            lengths.push(batch[0].length);
            return [{ tokens: end, logprobs: end.map(() => 0) }] as never;
          },
        },
        tokenizer,
        renderChat,
        backends,
        contextTokens: 8192,
        maxResponseTokens: 16,
      });
      expect(countBfclFirstPromptTokens(pair, data.docsByClass, tokenizer, renderChat)).toBe(lengths[0]);
      expect(lengths[0]).toBeGreaterThan(300); // four function docs in <tools>
    }
  });
});

describe('summariseBfclPromptFit', () => {
  it('counts prompts shorter than the window; min, lower median, max', () => {
    // Sorted 3, 5, 7, 9: under a 7-token window only 3 and 5 leave room (7 leaves none).
    expect(summariseBfclPromptFit([5, 3, 9, 7], 7)).toEqual({
      entries: 4,
      fit: 2,
      minTokens: 3,
      medianTokens: 5,
      maxTokens: 9,
    });
    expect(summariseBfclPromptFit([], 7)).toEqual({ entries: 0, fit: 0, minTokens: 0, medianTokens: 0, maxTokens: 0 });
  });
});
