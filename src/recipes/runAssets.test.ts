// The search prompts a run builds from its config: the engine behind them returns
// config.toolsearcher.topK hits shown within config.toolsearcher.resultLimits.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config';
import { createGeneratedSearchPrompts } from './runAssets';
import { readToolSearchPrompt } from './searchRollouts';
import type { RenderChat } from '../envs/rollout';

const renderChat: RenderChat = (messages) => messages.map((m) => `${m.role}: ${m.content}`).join('\n');

describe('createGeneratedSearchPrompts', () => {
  it("searches with the run's topK and result limits", () => {
    const base = { recipe: 'toolsearcher', tasks: { nTrain: 4, nTest: 2 } } as const;
    const compact = createGeneratedSearchPrompts(resolveConfig(base), renderChat);
    expect(compact.trainPrompts).toHaveLength(4);
    expect(compact.testPrompts).toHaveLength(2);
    const { query, handle } = readToolSearchPrompt(compact.trainPrompts[0]);
    const hits = handle.engine.search(query.text);
    expect(hits.hits).toHaveLength(3);
    expect(hits.text).not.toContain('outputs:');

    const wide = createGeneratedSearchPrompts(
      resolveConfig({ ...base, toolsearcher: { topK: 5, resultLimits: { maxParamDescriptionChars: 96, maxOutputChars: 240 } } }),
      renderChat,
    );
    const wideHandle = readToolSearchPrompt(wide.trainPrompts[0]);
    expect(wideHandle.query.id).toBe(query.id); // same split, only the presentation differs
    const wideHits = wideHandle.handle.engine.search(query.text);
    expect(wideHits.hits).toHaveLength(5);
    expect(wideHits.text.match(/^ {3}outputs: /gm)).toHaveLength(5);
  }, 60_000);
});
