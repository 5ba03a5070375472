/**
 * The BFCL multi-turn loop and rule end to end on the fixture backend (src/envs/bfcl/fixtures:
 * SimpleCounterAPI, three entries) with scripted policies: no model, a fake sampler that
 * answers each step with a fixed text, Qwen3's real tokenizer and chat template, the
 * backends in the Node Pyodide sandbox. Accuracies are counted by hand per policy.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodePyodideExecutor } from '../envs/ftrl/pyodideExecutorNode';
import type { PyodideExecutor } from '../envs/ftrl/pyodideExecutor';
import { readBfclBackendSources, readBfclFile, type BfclFileData } from '../envs/bfcl/nodeSource';
import { BfclBackends } from '../envs/bfcl/pythonBackend';
import { loadQwen3TokenizerFromPackage } from '../model/tokenizer/nodeLoader';
import type { Qwen3Tokenizer } from '../model/tokenizer/qwen3Tokenizer';
import type { PolicySampler } from '../recipes/types';
import { evaluatePolicyOnBfcl, readStepCalls, type BfclRenderChat, type BfclRunSettings } from './bfclEval';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'envs', 'bfcl', 'fixtures');

const tc = (name: string, args: Record<string, unknown>) =>
  `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

/** Step texts of a fully correct policy, entry by entry, turn by turn. */
function correctScript(): (string | { cut: string })[] {
  return [
    // multi_turn_simple_0
    tc('increment', { name: 'a', by: 2 }),
    'Done.',
    tc('get_value', { name: 'b' }),
    'Counter b is 5.',
    // multi_turn_simple_1: two calls in one step
    `${tc('increment', { name: 'x', by: 3 })}\n${tc('get_value', { name: 'x' })}`,
    'x is 3.',
    tc('reset', { name: 'x' }),
    'Reset.',
    // multi_turn_simple_2: turn 1 asks for a counter that does not exist; no call
    tc('list_counters', {}),
    'There is c.',
    'There is no counter zeta.',
    tc('increment', { name: 'c', by: 10 }),
    'Done.',
  ];
}

/** A sampler that answers each generate call with the next scripted text (`{cut}` = stopped by length). */
function scriptedPolicy(
  tokenizer: Qwen3Tokenizer,
  script: (string | { cut: string })[],
  prompts: string[],
): PolicySampler {
  let next = 0;
  return {
    generate: async (batch) => {
      prompts.push(tokenizer.decode(batch[0]));
      const item = script[next++];
      if (item === undefined) throw new Error(`the script has no step ${next}`);
      const isCut = typeof item !== 'string';
      const tokens = tokenizer.encode(isCut ? item.cut : `${item}<|im_end|>`);
      return [
        {
          tokens,
          logprobs: tokens.map(() => 0),
          samplingLogprobs: tokens.map(() => 0),
          finishReason: isCut ? 'length' : 'stop',
        },
      ];
    },
  };
}

describe('pact eval-bfcl loop on the fixture backend, scripted policies', () => {
  let executor: PyodideExecutor;
  let backends: BfclBackends;
  let data: BfclFileData;
  let tokenizer: Qwen3Tokenizer;
  let renderChat: BfclRenderChat;

  beforeAll(async () => {
    executor = createNodePyodideExecutor({ timeoutMs: 20_000 });
    backends = new BfclBackends(executor, readBfclBackendSources(path.join(fixtures, 'bfcl_src')));
    data = readBfclFile(path.join(fixtures, 'data', 'handmade_multi_turn_simple.json'));
    tokenizer = await loadQwen3TokenizerFromPackage();
    renderChat = (messages, options) => tokenizer.renderChat(messages, options);
  }, 120_000);
  afterAll(() => executor?.close());

  const run = async (script: (string | { cut: string })[], extra: Partial<BfclRunSettings> = {}) => {
    const prompts: string[] = [];
    const settings: BfclRunSettings = {
      policy: scriptedPolicy(tokenizer, script, prompts),
      tokenizer,
      renderChat,
      backends,
      contextTokens: 4096,
      maxResponseTokens: 128,
      ...extra,
    };
    const summary = await evaluatePolicyOnBfcl([data], settings);
    return { summary, prompts };
  };

  it('the correct policy scores 3/3; the prompt holds the docs, the user turns and the tool responses', async () => {
    const script = correctScript();
    const { summary, prompts } = await run(script);
    expect(prompts).toHaveLength(script.length);
    expect(summary.entries.map((e) => [e.id, e.valid, e.status, e.steps])).toEqual([
      ['multi_turn_simple_0', true, 'completed', 4],
      ['multi_turn_simple_1', true, 'completed', 4],
      ['multi_turn_simple_2', true, 'completed', 5],
    ]);
    expect(summary.overall).toMatchObject({ entries: 3, correct: 3, accuracy: 1 });
    expect(summary.rows).toEqual([
      {
        name: 'handmade_multi_turn_simple.json',
        category: 'multi_turn_simple',
        entries: 3,
        correct: 3,
        accuracy: 1,
        promptTooLong: 0,
        errors: 0,
      },
    ]);
    // First prompt: Qwen3's tools block with BFCL's docs as they are, then the first user turn.
    expect(prompts[0]).toContain('<tools>\n{"name": "get_value"');
    expect(prompts[0]).toContain('"type": "dict"');
    expect(prompts[0].endsWith('<|im_start|>user\nIncrease counter a by 2.<|im_end|>\n<|im_start|>assistant\n')).toBe(
      true,
    );
    // After the call: its result as a tool response; the next turn starts after the text answer.
    expect(prompts[1]).toContain('<tool_response>\n{"new_value": 3}\n</tool_response>');
    expect(prompts[2]).toContain('Done.<|im_end|>\n<|im_start|>user\nWhat is the value of counter b?');
    expect(prompts[5]).toContain(
      '<tool_response>\n{"new_value": 3}\n</tool_response>\n<tool_response>\n{"value": 3}\n</tool_response>',
    );
  }, 60_000);

  it('a wrong argument fails the state check: 2/3', async () => {
    const script = correctScript();
    script[0] = tc('increment', { name: 'a', by: 3 });
    const { summary } = await run(script);
    expect(summary.entries[0]).toMatchObject({
      valid: false,
      errorType: 'multi_turn:instance_state_mismatch',
      turn: 0,
    });
    expect(summary.overall).toMatchObject({ correct: 2, accuracy: 2 / 3 });
  }, 60_000);

  it('the right state without the call whose response the ground truth returns fails the response check: 2/3', async () => {
    const script = correctScript();
    script[4] = tc('increment', { name: 'x', by: 3 }); // no get_value: x is 3 all the same
    const { summary } = await run(script);
    expect(summary.entries[1]).toMatchObject({
      valid: false,
      errorType: 'multi_turn:execution_response_mismatch',
      turn: 0,
      missing: ['{"value": 3}'],
    });
    expect(summary.overall).toMatchObject({ correct: 2, accuracy: 2 / 3 });
  }, 60_000);

  it('a cut call and a malformed call are no calls: their turn fails, 1/3', async () => {
    const script = correctScript();
    // Entry 0, turn 0: cut at the length limit; the turn ends (no well-formed call).
    script.splice(0, 2, { cut: '<tool_call>\n{"name": "increment", "arguments": {"na' });
    // Entry 1, turn 0: not JSON; the turn ends.
    const e1 = script.indexOf(`${tc('increment', { name: 'x', by: 3 })}\n${tc('get_value', { name: 'x' })}`);
    script.splice(e1, 2, '<tool_call>\n{"name": "increment", arguments: {"name": "x"}}\n</tool_call>');
    const { summary } = await run(script);
    expect(summary.entries.map((e) => [e.valid, e.errorType, e.turn])).toEqual([
      [false, 'multi_turn:empty_turn_model_response', 0],
      [false, 'multi_turn:empty_turn_model_response', 0],
      [true, undefined, undefined],
    ]);
    expect(summary.overall).toMatchObject({ correct: 1, accuracy: 1 / 3 });
  }, 60_000);

  it('more calling steps than the limit force-terminate the entry', async () => {
    const script = correctScript();
    // Entry 0, turn 0: three calling steps with a limit of 2; its turn 1 is never run.
    script.splice(0, 4, tc('list_counters', {}), tc('list_counters', {}), tc('increment', { name: 'a', by: 2 }));
    const { summary } = await run(script, { maxStepsPerTurn: 2 });
    expect(summary.entries[0]).toMatchObject({
      valid: false,
      status: 'step_limit',
      errorType: 'multi_turn:force_terminated',
    });
    expect(summary.overall.correct).toBe(2);
  }, 60_000);

  it('a window smaller than the first prompt: not run, incorrect', async () => {
    const { summary } = await run([], { contextTokens: 64 });
    expect(summary.entries.map((e) => e.status)).toEqual(['prompt_too_long', 'prompt_too_long', 'prompt_too_long']);
    expect(summary.overall).toMatchObject({ correct: 0, promptTooLong: 3 });
  }, 60_000);

  it('readStepCalls keeps the JSON text of each well-formed block', () => {
    expect(
      readStepCalls(
        '<think>x</think>\n<tool_call>\n{"name": "f", "arguments": {"a": 2.0}}\n</tool_call>\n<tool_call>bad</tool_call>',
      ),
    ).toEqual([{ name: 'f', callJson: '{"name": "f", "arguments": {"a": 2.0}}' }]);
  });
});
