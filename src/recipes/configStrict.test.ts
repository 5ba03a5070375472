/**
 * A config's unknown keys and absurd values are errors that name the field, at every level of
 * the config: `model.hiddenSize: 1e9` (no such field: the model's shape comes from its preset)
 * was dropped without a word, and `lr: 1e308` was accepted.
 */
import { describe, expect, it } from 'vitest';
import { CONFIG_MAXIMA, ConfigError, resolveConfig } from './config';

function issuesOf(input: unknown): string[] {
  try {
    resolveConfig(input);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).issues;
  }
  throw new Error(`accepted: ${JSON.stringify(input)}`);
}

describe('unknown keys', () => {
  it('model.hiddenSize is refused, the key named', () => {
    const issues = issuesOf({ model: { preset: 'qwen3-nano', hiddenSize: 1e9 } });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^config\.model: .*"hiddenSize"/);
  });

  it('is refused in every nested object, each named with its path', () => {
    const cases: [unknown, RegExp][] = [
      [{ hiddenSize: 1 }, /^config: .*"hiddenSize"/],
      [{ model: { lora: { rank: 8, alpha: 16, targets: ['q'], dropout: 0.1 } } }, /^config\.model\.lora: .*"dropout"/],
      [{ tasks: { nTrain: 8, nTrian: 8 } }, /^config\.tasks: .*"nTrian"/],
      [{ pact: { sftWeight: 1, sftWieght: 2 } }, /^config\.pact: .*"sftWieght"/],
      [{ pact: { traceComponents: { reasoning: false, tools: false } } }, /^config\.pact\.traceComponents: .*"tools"/],
      [{ toolsearcher: { topK: 3, topk: 3 } }, /^config\.toolsearcher: .*"topk"/],
      [{ gspo: { clipLow: 0.1, clipMid: 0.2 } }, /^config\.gspo: .*"clipMid"/],
    ];
    for (const [input, pattern] of cases) expect(issuesOf(input).join('\n'), JSON.stringify(input)).toMatch(pattern);
  });

  it('the known keys of those objects still resolve', () => {
    const c = resolveConfig({
      model: { preset: 'qwen3-nano', init: 'scratch', vocabTasks: 8, lora: { rank: 4, alpha: 8, targets: ['q', 'v'] } },
      tasks: { source: 'generated', nTrain: 8, nTest: 4, categories: ['single_hop'] },
      pact: { traceComponents: { reasoning: false, toolCalls: true, toolResponses: true } },
    });
    expect(c.model.lora?.rank).toBe(4);
    expect(c.tasks.nTrain).toBe(8);
    expect(c.pact.traceComponents.reasoning).toBe(false);
  });
});

describe('lr', () => {
  it(`has a finite maximum (${CONFIG_MAXIMA.lr}): 1e308 and 2 are refused, the field named`, () => {
    expect(CONFIG_MAXIMA.lr).toBeLessThanOrEqual(1);
    for (const lr of [1e308, 2, Number.MAX_VALUE]) {
      const issues = issuesOf({ lr });
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatch(/^config\.lr: /);
    }
  });

  it('accepts the rates the experiments use, and the maximum itself', () => {
    for (const lr of [1e-12, 3e-5, 1e-4, 2e-3, CONFIG_MAXIMA.lr]) expect(resolveConfig({ lr }).lr).toBe(lr);
  });
});
